/* Option parsing shared by every command, and the getters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/opts.h"
#include "lib/util.h"

/* The entry of the table named name[0, n), or NULL. */
const struct opt *opts_find(const struct opt *opts, const char *name, size_t n)
{
	for (; opts && opts->name; opts++)
		if (strlen(opts->name) == n && strncmp(opts->name, name, n) == 0)
			return opts;
	return NULL;
}

/* The options every command takes, in the order of cmd_args' fields. */
const struct opt opts_common[] = {
	{ "help", OPT_FLAG, NULL, "show the command's usage and options (also -h)", 0 },
	{ "json", OPT_FLAG, NULL, "print one JSON document (schemas/COMMAND.schema.json)", 0 },
	{ "allow-root", OPT_FLAG, NULL, "run as root all the same", 0 },
	{ "allow-secret", OPT_FLAG, NULL, "commit a job script that holds a credential, with a warning", 0 },
	OPT_END,
};

/* One of the options every command takes: 1 when a is one. */
static int global_opt(struct cmd_args *a, const char *name)
{
	int *field[] = { &a->help, &a->json, &a->allow_root, &a->allow_secret };
	size_t i;

	_Static_assert(sizeof(field) / sizeof(*field) ==
		       sizeof(opts_common) / sizeof(*opts_common) - 1,
		       "opts_common and cmd_args' fields disagree");
	if (strcmp(name, "h") == 0)
		return a->help = 1;
	for (i = 0; i < sizeof(field) / sizeof(*field); i++)
		if (strcmp(name, opts_common[i].name) == 0)
			return *field[i] = 1;
	return 0;
}

/* Parse one command's arguments. */
int opts_parse(const struct opt *opts, int argc, char **argv, struct cmd_args *a,
	       char **cause)
{
	int i, only_pos = 0;

	memset(a, 0, sizeof(*a));
	a->opts = opts;
	while (opts && opts[a->nopts].name)
		a->nopts++;
	a->val = xcalloc((size_t)a->nopts + 1, sizeof(*a->val));
	a->list = xcalloc((size_t)a->nopts + 1, sizeof(*a->list));
	a->pos = xcalloc((size_t)argc + 1, sizeof(*a->pos));
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val = NULL;
		const struct opt *o;
		size_t len;
		int k;

		if (only_pos || arg[0] != '-' || arg[1] == '\0') {
			a->pos[a->npos++] = argv[i];
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (arg[1] != '-' && arg[2] != '\0')
			goto unknown;	/* no bundled short options */
		name = arg + (arg[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		if (eq)
			val = eq + 1;
		if (!eq && global_opt(a, name))
			continue;
		o = opts_find(opts, name, len);
		if (o == NULL)
			goto unknown;
		k = (int)(o - opts);
		if (o->kind == OPT_FLAG) {
			if (eq) {
				*cause = xasprintf("option '--%.*s' takes no value", (int)len, name);
				return -1;
			}
			a->val[k] = "";
			continue;
		}
		if (!eq) {
			if (i + 1 >= argc) {
				*cause = xasprintf("option '%s' needs a value", arg);
				return -1;
			}
			val = argv[++i];
		}
		a->val[k] = val;
		if (o->kind == OPT_LIST) {
			struct opt_list *l = &a->list[k];

			l->v = xreallocarray(l->v, (size_t)l->n + 1, sizeof(*l->v));
			l->v[l->n++] = val;
		}
	}
	a->pos[a->npos] = NULL;
	return 0;
unknown:
	*cause = xasprintf("unknown option '%s'", argv[i]);
	return -1;
}

/* Check the number of positional arguments. */
int opts_check_npos(const struct cmd_args *a, int min, int max, char **cause)
{
	if (a->npos < min) {
		*cause = xstrdup("missing argument");
		return -1;
	}
	if (max >= 0 && a->npos > max) {
		*cause = xasprintf("unexpected argument '%s'", a->pos[max]);
		return -1;
	}
	return 0;
}

/* Check the options the command cannot run without. */
int opts_check_required(const struct cmd_args *a, char **cause)
{
	int i;

	for (i = 0; i < a->nopts; i++)
		if ((a->opts[i].flags & OPT_REQUIRED) && a->val[i] == NULL) {
			*cause = xasprintf("option '--%s' is required", a->opts[i].name);
			return -1;
		}
	return 0;
}

/* Free what the parser allocated (the strings belong to argv). */
void cmd_args_release(struct cmd_args *a)
{
	int i;

	for (i = 0; a->list && i < a->nopts; i++)
		free(a->list[i].v);
	free(a->list);
	free(a->val);
	free(a->pos);
	a->list = NULL;
	a->val = NULL;
	a->pos = NULL;
}

/* The index of option name in a's table, which must be of kind. */
static int slot(const struct cmd_args *a, const char *name, enum opt_kind kind)
{
	const struct opt *o = opts_find(a->opts, name, strlen(name));

	if (o == NULL)
		BUG("a command asked for an option not in its table: '%s'", name);
	if (o->kind != kind)
		BUG("a command asked for an option of another kind: '%s'", name);
	return (int)(o - a->opts);
}

/* A string option's value, NULL when not given. */
const char *args_get(const struct cmd_args *a, const char *name)
{
	return a->val[slot(a, name, OPT_STRING)];
}

/* Whether a flag was given. */
int args_flag(const struct cmd_args *a, const char *name)
{
	return a->val[slot(a, name, OPT_FLAG)] != NULL;
}

/* A list option's values, in the order given. */
const struct opt_list *args_list(const struct cmd_args *a, const char *name)
{
	return &a->list[slot(a, name, OPT_LIST)];
}
