/* Configurations: canonical text and key of a job script's assignments. */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "search/confkey.h"
#include "jobsh/jobsh.h"
#include "lib/sha256.h"
#include "tags.h"

struct line {
	char *name;
	char *text;	/* the whole line, without '\n' */
	size_t order;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* One line for an assignment. */
static char *line_for(const char *name, const char *value, int expands)
{
	char *canon = expands ? xstrdup(value) : value_canon(value);
	char *word = jobsh_quote(canon);
	char *s = xasprintf("%s%s=%s", name, expands ? ":" : "", word);

	free(word);
	free(canon);
	return s;
}

/* Sort lines and join them. */
static char *join_lines(struct line *v, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i;

	qsort(v, n, sizeof(*v), line_cmp);
	for (i = 0; i < n; i++) {
		buf_adds(&b, v[i].text);
		buf_addc(&b, '\n');
	}
	return buf_detach(&b, NULL);
}

static void lines_free(struct line *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].text);
	}
	free(v);
}

/* The configuration text of a script. */
int confkey_config(const char *text, size_t len, char **out, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	struct line *v;
	size_t i, n = 0;

	*out = NULL;
	if (jobsh_scan(text, len, &vars, cause) < 0)
		return -1;
	v = xcalloc(vars.nr + 1, sizeof(*v));
	for (i = 0; i < vars.nr; i++) {
		const struct jobsh_var *jv = &vars.v[i];

		if (jv->place != JOBSH_TOP)
			continue;
		v[n].name = xstrdup(jv->name);
		v[n].text = jv->value ? line_for(jv->name, jv->value, 0) :
			    line_for(jv->name, jv->raw, 1);
		v[n].order = n;
		n++;
	}
	*out = join_lines(v, n);
	lines_free(v, n);
	jobsh_vars_release(&vars);
	return 0;
}

/* Length of the name at the start of a line ("NAME=" or "NAME:="). */
static size_t name_len(const char *line)
{
	size_t k = 0;

	while (line[k] && line[k] != '=' && line[k] != ':' && line[k] != '\n')
		k++;
	return k;
}

/* 1 when the line at p assigns var. */
static int line_is(const char *p, const char *var)
{
	size_t k = name_len(p);

	return var && *var && k == strlen(var) && strncmp(p, var, k) == 0;
}

/* The key without the seed. */
void confkey_key(const char *config, const char *seed, char hex[65])
{
	struct buf b = BUF_INIT;
	const char *p = config;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (!line_is(p, seed))
			buf_add(&b, p, l);
		p += l;
	}
	sha256_hex(b.s, b.len, hex);
	buf_release(&b);
}

/* Undo jobsh_quote for the words it makes: bare, '...' with '\'' inside. */
static char *unquote(const char *w, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i = 0;

	if (n == 0 || (w[0] != '\'' && w[0] != '$'))
		return xstrndup(w, n);
	if (w[0] == '$')	/* $'...' (control bytes): keep it as written */
		return xstrndup(w, n);
	while (i < n) {
		if (w[i] == '\'') {
			i++;
			while (i < n && w[i] != '\'')
				buf_addc(&b, w[i++]);
			i++;
		} else if (w[i] == '\\' && i + 1 < n) {
			buf_addc(&b, w[i + 1]);
			i += 2;
		} else {
			buf_addc(&b, w[i++]);
		}
	}
	return buf_detach(&b, NULL);
}

/* The value of var. */
char *confkey_value(const char *config, const char *var)
{
	const char *p = config;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (line_is(p, var)) {
			size_t k = name_len(p);

			if (p[k] == ':')
				k++;
			return unquote(p + k + 1, l - k - 1);
		}
		p += l + (nl != NULL);
	}
	return NULL;
}

/* config with var set to value. */
char *confkey_with(const char *config, const char *var, const char *value)
{
	struct line *v = NULL;
	const char *p = config;
	size_t n = 0;
	int seen = 0;
	char *out;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		v = xreallocarray(v, n + 2, sizeof(*v));
		v[n].name = xstrndup(p, name_len(p));
		if (line_is(p, var) && !seen) {
			v[n].text = line_for(var, value, 0);
			seen = 1;
		} else {
			v[n].text = xstrndup(p, l);
		}
		v[n].order = n;
		n++;
		p += l + (nl != NULL);
	}
	if (!seen) {
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].name = xstrdup(var);
		v[n].text = line_for(var, value, 0);
		v[n].order = n;
		n++;
	}
	out = join_lines(v, n);
	lines_free(v, n);
	return out;
}
