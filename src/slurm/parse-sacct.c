/*
 * Parser for sacct -P output, and the verdict of a job from its rows.
 * See slurm-parse.h for the contract of each entry point.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* ----------------------------------------------------------------- sacct */

/* The field list xloop asks sacct for. */
static const char *const xloop_sacct_fields[] = {
	"JobID", "JobIDRaw", "JobName", "State", "ExitCode", "Start", "End",
	"Elapsed", "MaxRSS", "ReqMem", "Comment", "NodeList", "Partition",
	"Submit",
};

/* The sacct fields xloop asks for, as an array. */
const char *const *slurm_sacct_fields(size_t *nr)
{
	*nr = ARRAY_SIZE(xloop_sacct_fields);
	return xloop_sacct_fields;
}

/* What slurm_parse_sacct knows about a field name. */
static void sacct_field_kind(const char *name, enum check *check, int *absorb)
{
	static const struct {
		const char *name;
		enum check check;
	} checks[] = {
		{ "JobID", CHECK_JOBID }, { "JobIDRaw", CHECK_JOBID },
		{ "State", CHECK_STATE }, { "ExitCode", CHECK_EXIT },
		{ "DerivedExitCode", CHECK_EXIT }, { "Start", CHECK_TIME },
		{ "End", CHECK_TIME }, { "Submit", CHECK_TIME },
		{ "Eligible", CHECK_TIME }, { "Elapsed", CHECK_DURATION },
		{ "Timelimit", CHECK_DURATION }, { "TotalCPU", CHECK_DURATION },
		{ "CPUTime", CHECK_DURATION }, { "UserCPU", CHECK_DURATION },
		{ "SystemCPU", CHECK_DURATION }, { "NNodes", CHECK_NUMBER },
		{ "NCPUS", CHECK_NUMBER }, { "AllocCPUS", CHECK_NUMBER },
		{ "NTasks", CHECK_NUMBER }, { "TimelimitRaw", CHECK_NUMBER },
		{ "ElapsedRaw", CHECK_NUMBER }, { "Partition", CHECK_WORD },
		{ "User", CHECK_WORD }, { "Account", CHECK_WORD },
		{ "Cluster", CHECK_WORD },
	};
	static const char *const prefs[] = {
		"Comment", "AdminComment", "SystemComment", "Extra",
		"SubmitLine", "JobName", "WorkDir", "Constraints", "Reason",
		"Container", "StdOut", "StdErr", "StdIn",
	};
	size_t i;

	*check = CHECK_NONE;
	*absorb = 0;
	for (i = 0; i < ARRAY_SIZE(checks); i++)
		if (strcasecmp(name, checks[i].name) == 0)
			*check = checks[i].check;
	for (i = 0; i < ARRAY_SIZE(prefs); i++)
		if (strcasecmp(name, prefs[i]) == 0)
			*absorb = (int)i + 1;
}

/* Free the rows and field names. */
void slurm_acct_release(struct slurm_acct *acct)
{
	size_t i, f;

	for (i = 0; i < acct->nr; i++) {
		slurm_jobid_release(&acct->rows[i].id);
		for (f = 0; f < acct->nr_fields; f++)
			free(acct->rows[i].values[f]);
		free(acct->rows[i].values);
	}
	free(acct->rows);
	for (f = 0; f < acct->nr_fields; f++)
		free(acct->fields[f]);
	free(acct->fields);
	memset(acct, 0, sizeof(*acct));
}

/* Index of field in the request (case-insensitive), or -1. */
static long field_index(const struct slurm_acct *acct, const char *field)
{
	size_t i;

	for (i = 0; i < acct->nr_fields; i++)
		if (strcasecmp(acct->fields[i], field) == 0)
			return (long)i;
	return -1;
}

/* A row's value of field, or NULL. */
const char *slurm_acct_get(const struct slurm_acct *acct,
			   const struct slurm_acct_row *row, const char *field)
{
	long i = field_index(acct, field);

	return i < 0 ? NULL : row->values[i];
}

/* Build the sacct line template for the requested fields. */
static void sacct_tmpl(const struct slurm_acct *acct, const char *delim,
		       unsigned flags, struct tmpl *t)
{
	size_t i;

	t->prefix = xstrdup("");
	t->n = acct->nr_fields;
	t->f = xcalloc(t->n, sizeof(*t->f));
	for (i = 0; i < t->n; i++) {
		t->f[i].name = xstrdup(acct->fields[i]);
		sacct_field_kind(acct->fields[i], &t->f[i].check,
				 &t->f[i].absorb);
		if (i + 1 < t->n || (flags & SLURM_SACCT_TRAILING_DELIM))
			t->f[i].sep = xstrdup(delim);
		else
			t->f[i].sep = xstrdup("");
	}
}

/* Fill a row from its field values. */
static int sacct_row(struct slurm_acct *acct, struct slurm_acct_row *row,
		     const struct span *vals, char **cause)
{
	long jid = field_index(acct, "JobID");
	long raw = field_index(acct, "JobIDRaw");
	long st = field_index(acct, "State");
	long ec = field_index(acct, "ExitCode");
	struct slurm_jobid rid;
	size_t f;

	row->raw_id = -1;
	row->exit_code = row->exit_signal = -1;
	row->values = xcalloc(acct->nr_fields, sizeof(*row->values));
	for (f = 0; f < acct->nr_fields; f++)
		row->values[f] = xstrndup(vals[f].s, vals[f].n);
	if (slurm_parse_jobid(row->values[jid >= 0 ? jid : raw], &row->id,
			      cause))
		return -1;
	if (raw >= 0) {
		if (slurm_parse_jobid(row->values[raw], &rid, cause))
			return -1;
		row->raw_id = rid.id;
		slurm_jobid_release(&rid);
	}
	if (st >= 0)
		row->state = slurm_state_parse(row->values[st], 0);
	if (ec >= 0 && row->values[ec][0] &&
	    slurm_parse_exit_code(row->values[ec], &row->exit_code,
				  &row->exit_signal, cause))
		return -1;
	return 0;
}

/* Parse sacct -P/-p output for the requested fields. */
int slurm_parse_sacct(const char *out, const char *const *fields,
		      size_t nr_fields, const char *delim, unsigned flags,
		      struct slurm_acct *acct, char **cause)
{
	struct slurm_acct res = SLURM_ACCT_INIT;
	const char *p = out ? out : "";
	struct span line, *vals = NULL;
	struct tmpl t;
	size_t i, cap = 0;
	int ret = -1;

	memset(acct, 0, sizeof(*acct));
	memset(&t, 0, sizeof(t));
	if (delim == NULL)
		delim = "|";
	if (nr_fields == 0 || *delim == '\0')
		return fail(cause, "sacct needs fields and a delimiter");
	res.nr_fields = nr_fields;
	res.fields = xcalloc(nr_fields, sizeof(*res.fields));
	for (i = 0; i < nr_fields; i++) {
		const char *pct = strchr(fields[i], '%');

		res.fields[i] = xstrndup(fields[i], pct ? (size_t)(pct -
					 fields[i]) : strlen(fields[i]));
	}
	if (field_index(&res, "JobID") < 0 &&
	    field_index(&res, "JobIDRaw") < 0) {
		fail(cause, "sacct fields need JobID or JobIDRaw");
		goto out;
	}
	sacct_tmpl(&res, delim, flags, &t);
	vals = xreallocarray(NULL, t.n, sizeof(*vals));
	while (next_line(&p, &line)) {
		struct span tl = trim(line);
		struct slurm_acct_row *row;

		if (tl.n == 0)
			continue;
		if (span_starts(tl, "Slurm accounting storage is disabled")) {
			ret = SLURM_PARSE_NO_ACCOUNTING;
			slurm_acct_release(&res);
			goto out;
		}
		if (span_starts(tl, "sacct: error:") ||
		    span_starts(tl, "sacct: fatal:")) {
			fail(cause, "sacct failed: '%.*s'", QLEN(tl.n), tl.s);
			goto out;
		}
		if (tmpl_match(&t, line, vals, cause))
			goto out;
		if (res.nr == 0 && is_header(&t, vals))
			continue;
		GROW(res.rows, res.nr, cap);
		row = &res.rows[res.nr++];
		memset(row, 0, sizeof(*row));
		if (sacct_row(&res, row, vals, cause))
			goto out;
	}
	*acct = res;
	memset(&res, 0, sizeof(res));
	ret = 0;
out:
	free(vals);
	tmpl_release(&t);
	slurm_acct_release(&res);
	return ret;
}

/* How telling a final state is when steps and allocation disagree. */
static int failure_rank(enum slurm_state st)
{
	switch (st) {
	case SLURM_STATE_OUT_OF_MEMORY:
		return 5;
	case SLURM_STATE_NODE_FAIL:
	case SLURM_STATE_BOOT_FAIL:
		return 4;
	case SLURM_STATE_TIMEOUT:
	case SLURM_STATE_DEADLINE:
	case SLURM_STATE_PREEMPTED:
		return 3;
	case SLURM_STATE_FAILED:
		return 2;
	case SLURM_STATE_REVOKED:
	case SLURM_STATE_CANCELLED:
		return 1;
	default:
		return 0;
	}
}

/* True when a row belongs to job (by JobID or JobIDRaw). */
static int row_is_job(const struct slurm_acct_row *row, const char *job,
		      long long num)
{
	if (strcmp(row->id.job, job) == 0)
		return 1;
	return num > 0 && row->raw_id == num;
}

/* Fold the rows of one job into a verdict-ready summary. */
int slurm_acct_summarize(const struct slurm_acct *acct, const char *job,
			 struct slurm_acct_summary *sum, char **cause)
{
	long long num = -1;
	size_t i;

	memset(sum, 0, sizeof(*sum));
	sum->exit_code = sum->exit_signal = -1;
	if (span_uint(span_of(job), 999999999999LL, &num))
		num = -1;
	for (i = 0; i < acct->nr; i++) {
		const struct slurm_acct_row *row = &acct->rows[i];

		if (!row_is_job(row, job, num))
			continue;
		if (row->id.step == NULL) {
			/* with -D, a later run starts over */
			sum->alloc = row;
			sum->worst_step = NULL;
			sum->nr_steps = 0;
			sum->nodes = slurm_acct_get(acct, row, "NodeList");
			continue;
		}
		sum->nr_steps++;
		if (strcmp(row->id.step, "batch") != 0 && strcmp(row->id.step, "extern") != 0) {
			const char *n = slurm_acct_get(acct, row, "NodeList");

			if (n && sum->alloc &&
			    slurm_hostlist_count(n) > slurm_hostlist_count(sum->nodes))
				sum->nodes = n;
		}
		/*
		 * The extern step is Slurm's own (it holds the allocation for
		 * adopted processes) and no part of the job's program: slurmd
		 * ends it when the job ends, and one whose slurmd was down then
		 * is CANCELLED minutes after a job that COMPLETED 0:0. Only
		 * an OOM there still counts: the allocation's memory ran out.
		 */
		if (strcmp(row->id.step, "extern") == 0 &&
		    row->state != SLURM_STATE_OUT_OF_MEMORY)
			continue;
		if (slurm_state_is_final(row->state) &&
		    row->state != SLURM_STATE_COMPLETED &&
		    (sum->worst_step == NULL || failure_rank(row->state) >
		     failure_rank(sum->worst_step->state)))
			sum->worst_step = row;
	}
	if (sum->alloc == NULL)
		return fail(cause, "sacct has no allocation row for job '%s'",
			    job);
	{
		const char *name = slurm_acct_get(acct, sum->alloc, "JobName");
		const char *part = slurm_acct_get(acct, sum->alloc, "Partition");

		sum->partial = (name && strcmp(name, "allocation") == 0) || (part && !*part);
	}
	sum->alloc_state = sum->state = sum->alloc->state;
	sum->exit_code = sum->alloc->exit_code;
	sum->exit_signal = sum->alloc->exit_signal;
	if (sum->worst_step == NULL || !slurm_state_is_final(sum->state))
		return 0;
	if (failure_rank(sum->worst_step->state) > failure_rank(sum->state))
		sum->state = sum->worst_step->state;
	if (sum->exit_code <= 0 && sum->exit_signal <= 0) {
		sum->exit_code = sum->worst_step->exit_code;
		sum->exit_signal = sum->worst_step->exit_signal;
	}
	return 0;
}

/* Say which step failed. */
char *slurm_acct_step_note(const struct slurm_acct *acct,
			   const struct slurm_acct_summary *sum)
{
	const struct slurm_acct_row *w = sum->worst_step;
	const char *nodes, *name;

	if (w == NULL || sum->alloc == NULL)
		return NULL;
	nodes = slurm_acct_get(acct, w, "NodeList");
	name = slurm_acct_get(acct, w, "JobName");
	return xasprintf("step %s.%s%s%s%s on %s ended %s %d:%d, the batch script's "
			 "allocation %s %d:%d", w->id.job, w->id.step, name ? " (" : "",
			 name ? name : "", name ? ")" : "", nodes && *nodes ? nodes : "?",
			 slurm_state_name(w->state), w->exit_code < 0 ? 0 : w->exit_code,
			 w->exit_signal < 0 ? 0 : w->exit_signal,
			 slurm_state_name(sum->alloc_state),
			 sum->alloc->exit_code < 0 ? 0 : sum->alloc->exit_code,
			 sum->alloc->exit_signal < 0 ? 0 : sum->alloc->exit_signal);
}
