/* job.sh variables: the API (scan, find, quoting, the one-change rewriter). */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jobsh/jobsh.h"
#include "jobsh/jobsh-impl.h"
#include "lib/util.h"

/* Line numbers listed in one message. */
#define MAX_LISTED 10

/* Hand a message to the caller's cause (or drop it); returns -1. */
static int XL_PRINTF(2, 3) fail(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (cause)
		*cause = msg;
	else
		free(msg);
	return -1;
}

/* True when name is a shell variable name. */
int jobsh_valid_name(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && jobsh_name_len(name, n) == n;
}

/* Free the records; vars is empty (and reusable) afterwards. */
void jobsh_vars_release(struct jobsh_vars *vars)
{
	size_t i;

	for (i = 0; i < vars->nr; i++) {
		free(vars->v[i].name);
		free(vars->v[i].raw);
		free(vars->v[i].value);
	}
	free(vars->v);
	vars->v = NULL;
	vars->nr = vars->alloc = 0;
}

/* Record every assignment of the script text[0, len). */
int jobsh_scan(const char *text, size_t len, struct jobsh_vars *out,
	       char **cause)
{
	const char *nul;
	char *err;
	size_t i;

	if (len >= INT_MAX)
		return fail(cause, "the script is too large (%zu bytes)", len);
	nul = memchr(text, '\0', len);
	if (nul != NULL) {
		int line = 1;

		for (i = 0; text + i < nul; i++)
			line += text[i] == '\n';
		return fail(cause, "a NUL byte at line %d", line);
	}
	if (jobsh_parse(text, len, out, &err) < 0) {
		jobsh_vars_release(out);
		if (cause)
			*cause = err;
		else
			free(err);
		return -1;
	}
	return 0;
}

/* Append "line N" or "lines N, M, ..." for name's assignments in place. */
static void add_lines(struct buf *b, const struct jobsh_vars *vars,
		      const char *name, enum jobsh_place place, size_t count)
{
	size_t i, listed = 0;

	buf_adds(b, count == 1 ? "(line " : "(lines ");
	for (i = 0; i < vars->nr; i++) {
		const struct jobsh_var *v = &vars->v[i];

		if (v->place != place || strcmp(v->name, name) != 0)
			continue;
		if (listed == MAX_LISTED) {
			buf_adds(b, ", ...");
			break;
		}
		buf_addf(b, "%s%d", listed ? ", " : "", v->line);
		listed++;
	}
	buf_addc(b, ')');
}

/* The one rewritable top-level assignment of name, or why there is none. */
int jobsh_find(const struct jobsh_vars *vars, const char *name,
	       const struct jobsh_var **out, char **cause)
{
	const struct jobsh_var *only = NULL;
	size_t i, ntop = 0, nblock = 0, nprefix = 0;
	struct buf b = BUF_INIT;

	*out = NULL;
	for (i = 0; i < vars->nr; i++) {
		const struct jobsh_var *v = &vars->v[i];

		if (strcmp(v->name, name) != 0)
			continue;
		if (v->place == JOBSH_TOP) {
			if (ntop++ == 0)
				only = v;
		} else if (v->place == JOBSH_BLOCK) {
			nblock++;
		} else {
			nprefix++;
		}
	}
	if (ntop == 1 && only->why == NULL) {
		*out = only;
		return 0;
	}
	if (ntop == 1)
		return fail(cause, "'%s' at line %d cannot be rewritten: %s",
			    name, only->line, only->why);
	if (ntop > 1) {
		buf_addf(&b, "'%s' is assigned %zu times at top level ", name, ntop);
		add_lines(&b, vars, name, JOBSH_TOP, ntop);
	} else if (nblock || nprefix) {
		buf_addf(&b, "'%s' is only assigned ", name);
		if (nblock) {
			buf_adds(&b, "inside a function/block ");
			add_lines(&b, vars, name, JOBSH_BLOCK, nblock);
		}
		if (nblock && nprefix)
			buf_adds(&b, " and ");
		if (nprefix) {
			buf_adds(&b, "as a command's environment prefix ");
			add_lines(&b, vars, name, JOBSH_PREFIX, nprefix);
		}
	} else {
		buf_addf(&b, "'%s' is not assigned at top level", name);
	}
	if (cause)
		*cause = buf_detach(&b, NULL);
	buf_release(&b);
	return -1;
}

/* True when c may appear in a bare word. */
static int bare_char(int c)
{
	return jobsh_name_char(c) || (c != '\0' && strchr("./:,+@%-", c) != NULL);
}

/* A one-line shell word that bash reads as exactly value. */
char *jobsh_quote(const char *value)
{
	static const char esc[] = "\nn\rr\tt\\\\''";
	const unsigned char *v = (const unsigned char *)value;
	const char *e;
	struct buf b = BUF_INIT;
	int bare = *v != '\0', ctl = 0;
	size_t i;

	for (i = 0; v[i]; i++) {
		if (!bare_char(v[i]))
			bare = 0;
		if (v[i] < 0x20 || v[i] == 0x7f)
			ctl = 1;
	}
	if (bare)
		return xstrdup(value);
	if (!ctl) {
		buf_addc(&b, '\'');
		for (i = 0; v[i]; i++) {
			if (v[i] == '\'')
				buf_adds(&b, "'\\''");
			else
				buf_addc(&b, (char)v[i]);
		}
		buf_addc(&b, '\'');
		return buf_detach(&b, NULL);
	}
	buf_adds(&b, "$'");
	for (i = 0; v[i]; i++) {
		for (e = esc; *e && *e != (char)v[i]; e += 2)
			;
		if (*e) {
			buf_addc(&b, '\\');
			buf_addc(&b, e[1]);
		} else if (v[i] < 0x20 || v[i] == 0x7f) {
			buf_addf(&b, "\\x%02x", v[i]);
		} else {
			buf_addc(&b, (char)v[i]);
		}
	}
	buf_addc(&b, '\'');
	return buf_detach(&b, NULL);
}

/* Free what a change holds; ch is empty afterwards. */
void jobsh_change_release(struct jobsh_change *ch)
{
	FREE_AND_NULL(ch->name);
	FREE_AND_NULL(ch->old_raw);
	FREE_AND_NULL(ch->old_value);
	FREE_AND_NULL(ch->new_value);
	FREE_AND_NULL(ch->new_text);
	ch->line = 0;
}

/* Defence: out holds only the one change and reads back as value. */
static int check_rewrite(const char *text, size_t len, const struct buf *out,
			 const char *name, const char *value, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *why = NULL;
	int n = jobsh_lines_differ(text, len, out->s, out->len, NULL);

	if (n != 1)
		return fail(cause, "internal error: rewriting '%s' changed %d lines",
			    name, n);
	if (jobsh_scan(out->s, out->len, &vars, &why) < 0 ||
	    jobsh_find(&vars, name, &v, &why) < 0) {
		fail(cause, "internal error: the rewritten script does not scan: %s",
		     why);
		free(why);
		jobsh_vars_release(&vars);
		return -1;
	}
	if (v->value == NULL || strcmp(v->value, value) != 0) {
		jobsh_vars_release(&vars);
		return fail(cause, "internal error: the new '%s' does not read back",
			    name);
	}
	jobsh_vars_release(&vars);
	return 0;
}

/* Copy text with the value of name's one top-level assignment replaced. */
int jobsh_rewrite(const char *text, size_t len, const char *name,
		  const char *value, struct buf *out,
		  struct jobsh_change *change, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *quoted;

	buf_reset(out);
	if (!jobsh_valid_name(name))
		return fail(cause, "'%s' is not a valid variable name", name);
	if (jobsh_scan(text, len, &vars, cause) < 0)
		return -1;
	if (jobsh_find(&vars, name, &v, cause) < 0) {
		jobsh_vars_release(&vars);
		return -1;
	}
	quoted = jobsh_quote(value);
	if (v->value ? strcmp(v->value, value) == 0 : strcmp(v->raw, quoted) == 0) {
		fail(cause, "'%s' already has the value %s (line %d)", name,
		     quoted, v->line);
		free(quoted);
		jobsh_vars_release(&vars);
		return -1;
	}
	buf_add(out, text, v->start);
	buf_adds(out, quoted);
	buf_add(out, text + v->end, len - v->end);
	if (check_rewrite(text, len, out, name, value, cause) < 0) {
		buf_reset(out);
		free(quoted);
		jobsh_vars_release(&vars);
		return -1;
	}
	change->name = xstrdup(name);
	change->line = v->line;
	change->old_raw = xstrdup(v->raw);
	change->old_value = v->value ? xstrdup(v->value) : NULL;
	change->new_value = xstrdup(value);
	change->new_text = quoted;
	jobsh_vars_release(&vars);
	return 0;
}

/* Count the lines that differ between a and b, position by position. */
int jobsh_lines_differ(const char *a, size_t alen, const char *b, size_t blen,
		       int *first)
{
	size_t ia = 0, ib = 0;
	int line = 1, n = 0;

	if (first)
		*first = 0;
	while (ia < alen || ib < blen) {
		const char *ea = ia < alen ? memchr(a + ia, '\n', alen - ia) : NULL;
		const char *eb = ib < blen ? memchr(b + ib, '\n', blen - ib) : NULL;
		size_t la = ea ? (size_t)(ea - a) + 1 - ia : alen - ia;
		size_t lb = eb ? (size_t)(eb - b) + 1 - ib : blen - ib;

		if (la != lb || memcmp(a + ia, b + ib, la) != 0) {
			if (first && *first == 0)
				*first = line;
			if (n < INT_MAX)
				n++;
		}
		ia += la;
		ib += lb;
		if (line < INT_MAX)
			line++;
	}
	return n;
}

/* Whether (and on which line) text contains needle. */
int jobsh_mentions(const char *text, const char *needle, int *line)
{
	const char *hit, *p;
	int n = 1;

	if (*needle == '\0' || (hit = strstr(text, needle)) == NULL)
		return 0;
	for (p = text; (p = memchr(p, '\n', (size_t)(hit - p))) != NULL; p++)
		if (n < INT_MAX)
			n++;
	*line = n;
	return 1;
}

/* Split a VAR=VALUE argument. */
int jobsh_parse_setting(const char *arg, char **name, char **value,
			char **cause)
{
	const char *eq = strchr(arg, '=');
	char *n;

	*name = *value = NULL;
	if (eq == NULL)
		return fail(cause, "'%s' is not VAR=VALUE", arg);
	if (eq == arg)
		return fail(cause, "'%s' has no variable name before '='", arg);
	n = xstrndup(arg, (size_t)(eq - arg));
	if (!jobsh_valid_name(n)) {
		fail(cause, "'%s' is not a valid variable name (letters, digits "
		     "and '_', not starting with a digit)", n);
		free(n);
		return -1;
	}
	if (!utf8_valid(eq + 1, strlen(eq + 1))) {
		fail(cause, "the value of %s is not valid UTF-8 text", n);
		free(n);
		return -1;
	}
	*name = n;
	*value = xstrdup(eq + 1);
	return 0;
}
