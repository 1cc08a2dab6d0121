/* Option parsing shared by every command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"

static const struct opt *find(const struct opt *opts, const char *name, size_t len)
{
	for (; opts && opts->name; opts++)
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

/* Parse one command's arguments. */
int opts_parse(struct xl_ctx *ctx, const struct cmd_entry *cmd,
	       const struct opt *opts, int argc, char **argv,
	       char ***pos, int *npos)
{
	char **p = xcalloc((size_t)argc + 1, sizeof(*p));
	int i, n = 0, only_pos = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *val = NULL;
		const struct opt *o;
		size_t len;

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			p[n++] = argv[i];
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (a[1] != '-' && a[2] != '\0')
			goto unknown;	/* no bundled short options */
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (eq)
			val = eq + 1;
		if (!eq && (strcmp(name, "help") == 0 || strcmp(name, "h") == 0)) {
			cmd_print_help(cmd);
			free(p);
			return 1;
		}
		if (!eq && strcmp(name, "json") == 0) {
			ctx->json = 1;
			continue;
		}
		if (!eq && strcmp(name, "allow-root") == 0) {
			ctx->allow_root = 1;
			continue;
		}
		if (!eq && strcmp(name, "allow-secret") == 0) {
			ctx->allow_secret = 1;
			continue;
		}
		o = find(opts, name, len);
		if (o == NULL)
			goto unknown;
		if (o->kind == OPT_FLAG) {
			if (eq) {
				cmd_usage_error(cmd, "option '--%.*s' takes no value",
						(int)len, name);
				goto fail;
			}
			*(int *)o->out = 1;
			continue;
		}
		if (!eq) {
			if (i + 1 >= argc) {
				cmd_usage_error(cmd, "option '%s' needs a value", a);
				goto fail;
			}
			val = argv[++i];
		}
		if (o->kind == OPT_STRING) {
			*(const char **)o->out = val;
		} else {
			struct opt_list *l = o->out;

			l->v = xreallocarray(l->v, (size_t)l->n + 1, sizeof(*l->v));
			l->v[l->n++] = val;
		}
	}
	p[n] = NULL;
	*pos = p;
	*npos = n;
	return 0;
unknown:
	cmd_usage_error(cmd, "unknown option '%s'", argv[i]);
fail:
	free(p);
	return -1;
}

/* Check the number of positional arguments. */
int opts_npos(const struct cmd_entry *cmd, char **pos, int npos, int min,
	      int max)
{
	if (npos < min)
		return cmd_usage_error(cmd, "missing argument");
	if (max >= 0 && npos > max)
		return cmd_usage_error(cmd, "unexpected argument '%s'", pos[max]);
	return 0;
}

/* Free a repeatable option's values array. */
void opt_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
