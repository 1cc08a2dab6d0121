/*
 * Parsers for sbatch: --parsable (and its human form), --test-only.
 * See slurm-parse.h for the contract of each entry point.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* ---------------------------------------------------------------- sbatch */

/* True when the line is "N" or "N;cluster" with a sane cluster name. */
static int sbatch_line(struct span line, long long *jobid, struct span *cl)
{
	const char *semi = memchr(line.s, ';', line.n);
	struct span num = line;
	size_t i;

	cl->s = NULL;
	cl->n = 0;
	if (semi) {
		num.n = (size_t)(semi - line.s);
		cl->s = semi + 1;
		cl->n = line.n - num.n - 1;
		if (cl->n == 0)
			return 0;
		for (i = 0; i < cl->n; i++)
			if (!isalnum((unsigned char)cl->s[i]) &&
			    !in_set(cl->s[i], "_-."))
				return 0;
	}
	return span_uint(num, 4294967294LL, jobid) == 0 && *jobid > 0;
}

/* "Submitted batch job N[ on cluster C]" from a wrapper. */
static int sbatch_human(struct span line, long long *jobid, struct span *cl)
{
	static const char pre[] = "Submitted batch job ";
	static const char on[] = " on cluster ";
	struct span num;
	const char *sp;

	if (!span_starts(line, pre))
		return 0;
	num.s = line.s + strlen(pre);
	num.n = line.n - strlen(pre);
	cl->s = NULL;
	cl->n = 0;
	sp = mem_find(num.s, num.n, on, strlen(on));
	if (sp) {
		cl->s = sp + strlen(on);
		cl->n = num.n - (size_t)(cl->s - num.s);
		num.n = (size_t)(sp - num.s);
		if (cl->n == 0 || memchr(cl->s, ' ', cl->n))
			return 0;
	}
	return span_uint(num, 4294967294LL, jobid) == 0 && *jobid > 0;
}

/* True when a line is a job id in either form sbatch prints. */
static int sbatch_id(struct span line, long long *jobid, struct span *cl)
{
	return sbatch_line(line, jobid, cl) || sbatch_human(line, jobid, cl);
}

/* Parse sbatch --parsable stdout. */
int slurm_parse_sbatch(const char *out, long long *jobid, char **cluster,
		       char **cause)
{
	const char *p = out ? out : "";
	struct span line, last = { NULL, 0 }, first_id = { NULL, 0 }, cl;
	long long v;

	if (cluster)
		*cluster = NULL;
	while (next_line(&p, &line)) {
		line = trim(line);
		if (line.n == 0)
			continue;
		if (sbatch_id(line, &v, &cl)) {
			if (first_id.s)
				return fail(cause, "sbatch printed more than "
					    "one job id: '%.*s' and '%.*s'",
					    QLEN(first_id.n), first_id.s,
					    QLEN(line.n), line.s);
			first_id = line;
		}
		last = line;
	}
	if (last.s == NULL)
		return fail(cause, "sbatch printed no job id");
	if (first_id.s && first_id.s != last.s)
		return fail(cause, "sbatch printed '%.*s' after job id '%.*s'",
			    QLEN(last.n), last.s, QLEN(first_id.n),
			    first_id.s);
	if (!sbatch_id(last, &v, &cl))
		return fail(cause, "sbatch printed '%.*s', not a job id",
			    QLEN(last.n), last.s);
	*jobid = v;
	if (cluster && cl.n)
		*cluster = xstrndup(cl.s, cl.n);
	return 0;
}


/* When sbatch --test-only expects the job to start. */
int slurm_parse_test_only(const char *out, time_t *start, char **cause)
{
	const char *p = strstr(out, " to start at ");
	const char *err = strstr(out, "error: ");
	char *when;
	size_t n;
	int rc;

	if (!p) {
		if (err) {
			n = strcspn(err + 7, "\n");
			return fail(cause, "%.*s", QLEN(n), err + 7);
		}
		return fail(cause, "no start time in sbatch --test-only's answer '%.*s'",
			    QLEN(strcspn(out, "\n")), out);
	}
	p += strlen(" to start at ");
	n = strcspn(p, " \n");
	when = xstrndup(p, n);
	rc = slurm_parse_time(when, start, NULL);
	free(when);
	if (rc < 0 || *start == 0)
		return fail(cause, "bad start time in '%.*s'", QLEN(strcspn(p, "\n")), p);
	return 0;
}
