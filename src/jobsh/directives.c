/* The #SBATCH lines of a job script (directives.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jobsh/directives.h"
#include "lib/util.h"

/* sbatch's short options that take a value, and their long names. */
static const struct {
	char c;
	const char *name;
} shorts[] = {
	{ 'a', "array" }, { 'A', "account" }, { 'b', "begin" }, { 'c', "cpus-per-task" },
	{ 'C', "constraint" }, { 'd', "dependency" }, { 'D', "chdir" }, { 'e', "error" },
	{ 'G', "gpus" }, { 'i', "input" }, { 'J', "job-name" }, { 'L', "licenses" },
	{ 'M', "clusters" }, { 'n', "ntasks" }, { 'N', "nodes" }, { 'o', "output" },
	{ 'p', "partition" }, { 'q', "qos" }, { 't', "time" }, { 'w', "nodelist" },
	{ 'x', "exclude" },
};

/* sbatch's long options that take no value (the next word is not theirs). */
static const char *const flags[] = {
	"exclusive", "requeue", "no-requeue", "hold", "overcommit", "oversubscribe",
	"contiguous", "parsable", "wait", "test-only", "verbose", "quiet", "spread-job",
	"use-min-nodes", "ignore-pbs", "no-kill", "reboot",
};

/* The next word of a directive line at *p (quotes removed); NULL at its end. */
static char *next_word(const char **p)
{
	struct buf w = BUF_INIT;
	const char *s = *p;
	char q = 0;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	if (*s == '\0' || *s == '\n' || *s == '#') {
		*p = s;
		return NULL;
	}
	for (; *s && *s != '\n' && *s != '\r'; s++) {
		if (q) {
			if (*s == q)
				q = 0;
			else
				buf_addc(&w, *s);
		} else if (*s == '"' || *s == '\'') {
			q = *s;
		} else if (*s == ' ' || *s == '\t') {
			break;
		} else {
			buf_addc(&w, *s);
		}
	}
	*p = s;
	return buf_detach(&w, NULL);
}

/* Whether a long option takes no value. */
static int is_flag(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flags); i++)
		if (strcmp(flags[i], name) == 0)
			return 1;
	return 0;
}

/* Append one directive. */
static void add(struct sbatch_directives *d, const char *name, size_t n,
		const char *value, const char *text, int line)
{
	struct sbatch_directive *e;

	d->v = xreallocarray(d->v, d->nr + 1, sizeof(*d->v));
	e = &d->v[d->nr++];
	e->option = xstrndup(name, n);
	e->value = xstrdup(value ? value : "");
	e->text = xstrdup(text);
	e->line = line;
}

/* The options of one "#SBATCH ..." line (after the keyword). */
static void parse_line(const char *p, int line, struct sbatch_directives *d)
{
	char *w, *val;
	size_t i;

	while ((w = next_word(&p)) != NULL) {
		if (w[0] == '-' && w[1] == '-' && w[2] && w[2] != '=') {
			char *eq = strchr(w, '=');

			if (eq) {
				add(d, w + 2, (size_t)(eq - w - 2), eq + 1, w, line);
			} else if (is_flag(w + 2)) {
				add(d, w + 2, strlen(w + 2), NULL, w, line);
			} else {
				const char *save = p;
				char *text;

				val = next_word(&p);
				if (val && val[0] == '-') {
					free(val);
					val = NULL;
					p = save;
				}
				text = val ? xasprintf("%s %s", w, val) : xstrdup(w);
				add(d, w + 2, strlen(w + 2), val, text, line);
				free(text);
				free(val);
			}
		} else if (w[0] == '-' && w[1] && w[1] != '-') {
			const char *name = NULL;

			for (i = 0; i < ARRAY_SIZE(shorts); i++)
				if (shorts[i].c == w[1])
					name = shorts[i].name;
			if (name == NULL) {
				char n[2] = { w[1], '\0' };

				add(d, n, 1, NULL, w, line);	/* -h, -v, -Q, ... */
			} else if (w[2]) {
				add(d, name, strlen(name), w[2] == '=' ? w + 3 : w + 2, w, line);
			} else {
				char *text;

				val = next_word(&p);
				text = val ? xasprintf("%s %s", w, val) : xstrdup(w);
				add(d, name, strlen(name), val, text, line);
				free(text);
				free(val);
			}
		}
		free(w);
	}
}

/*
 * Call fn for each #SBATCH line at the head of text (sbatch reads them up
 * to the first command) with the line, its length and its number.
 */
static void each_line(const char *text, void (*fn)(const char *, size_t, int, void *),
		      void *arg)
{
	const char *p = text;
	int line = 1;

	while (*p) {
		size_t len = strcspn(p, "\n");

		if (starts_with(p, "#SBATCH") && (len == 7 || p[7] == ' ' || p[7] == '\t'))
			fn(p, len, line, arg);
		else if (*p != '#' && strspn(p, " \t\r") < len)
			break;	/* sbatch stops at the first command */
		p += len + (p[len] == '\n');
		line++;
	}
}

/* each_line's callback for sbatch_directives_parse. */
static void parse_cb(const char *p, size_t len, int line, void *arg)
{
	char *copy = xstrndup(p + 7, len - 7);

	parse_line(copy, line, arg);
	free(copy);
}

/* Read the directives at the head of a job script. */
void sbatch_directives_parse(const char *text, struct sbatch_directives *out)
{
	memset(out, 0, sizeof(*out));
	each_line(text, parse_cb, out);
}

/* each_line's callback for sbatch_header_lines. */
static void copy_cb(const char *p, size_t len, int line, void *arg)
{
	(void)line;
	buf_addf(arg, "%.*s\n", (int)len, p);
}

/* The #SBATCH lines themselves. */
void sbatch_header_lines(const char *text, struct buf *out)
{
	each_line(text, copy_cb, out);
}

/* Free the directives. */
void sbatch_directives_release(struct sbatch_directives *d)
{
	size_t i;

	for (i = 0; i < d->nr; i++) {
		free(d->v[i].option);
		free(d->v[i].value);
		free(d->v[i].text);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/*
 * The fewest nodes the last --nodes (-N) asks: "2" 2, "2-4" 2, "4,2" 2;
 * 1 when none is given or it names no count.
 */
long long sbatch_directives_nodes(const struct sbatch_directives *d)
{
	const char *v = NULL, *p;
	long long least = 0;
	size_t i;

	for (i = 0; i < d->nr; i++)
		if (strcmp(d->v[i].option, "nodes") == 0)
			v = d->v[i].value;
	for (p = v; p && *p; ) {
		long long n = 0;
		size_t k = strspn(p, "0123456789");

		if (k == 0 || k > 9) {
			p += k ? k : 1;
			continue;
		}
		for (; k; k--, p++)
			n = n * 10 + (*p - '0');
		if (n > 0 && (least == 0 || n < least))
			least = n;
	}
	return least > 0 ? least : 1;
}
