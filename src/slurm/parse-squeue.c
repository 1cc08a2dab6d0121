/*
 * Parser for squeue -o FORMAT output.
 * See slurm-parse.h for the contract of each entry point.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* ---------------------------------------------------------------- squeue */

/* What slurm_parse_squeue knows about a format letter. */
static void squeue_field_kind(char c, enum check *check, int *absorb)
{
	static const char *const prefs = "kjrREZo";
	const char *p = strchr(prefs, c);

	*absorb = p ? (int)(p - prefs) + 1 : 0;
	switch (c) {
	case 'i':
		*check = CHECK_JOBID;
		break;
	case 'A': case 'C': case 'D':
		*check = CHECK_NUMBER;
		break;
	case 'T':
		*check = CHECK_STATE;
		break;
	case 't':
		*check = CHECK_COMPACT_STATE;
		break;
	case 'S': case 'e': case 'V':
		*check = CHECK_TIME;
		break;
	case 'M': case 'l':
		*check = CHECK_DURATION;
		break;
	case 'P': case 'u':
		*check = CHECK_WORD;
		break;
	default:
		*check = CHECK_NONE;
		break;
	}
}

/* Turn a squeue -o format into a template. */
static int squeue_tmpl(const char *format, struct tmpl *t, char **cause)
{
	struct buf lit = BUF_INIT;
	const char *p = format;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	while (*p) {
		const char *start = p;

		if (*p != '%') {
			buf_addc(&lit, *p++);
			continue;
		}
		p++;
		if (*p == '%') {
			buf_addc(&lit, *p++);
			continue;
		}
		if (*p == '.')
			p++;
		while (isdigit((unsigned char)*p))
			p++;
		if (!isalpha((unsigned char)*p)) {
			buf_release(&lit);
			tmpl_release(t);
			return fail(cause, "bad squeue format '%s' at '%s'",
				    format, start);
		}
		if (t->n == 0) {
			t->prefix = buf_detach(&lit, NULL);
		} else {
			if (lit.len == 0) {
				buf_release(&lit);
				tmpl_release(t);
				return fail(cause, "squeue format '%s' has no "
					    "separator before '%s'", format,
					    start);
			}
			t->f[t->n - 1].sep = buf_detach(&lit, NULL);
		}
		GROW(t->f, t->n, cap);
		memset(&t->f[t->n], 0, sizeof(t->f[t->n]));
		t->f[t->n].name = xasprintf("%%%c", *p);
		squeue_field_kind(*p, &t->f[t->n].check, &t->f[t->n].absorb);
		t->n++;
		p++;
	}
	if (t->n == 0) {
		buf_release(&lit);
		return fail(cause, "squeue format '%s' has no fields", format);
	}
	t->f[t->n - 1].sep = buf_detach(&lit, NULL);
	return 0;
}

/* Fill a job's named members from one squeue line's fields. */
static int squeue_fill(struct slurm_job *j, const struct tmpl *t,
		       const struct span *vals, char **cause)
{
	size_t i, cap = 0;
	long long x;

	for (i = 0; i < t->n; i++)
		job_add_kv(j, &cap, span_of(t->f[i].name), vals[i]);
	for (i = 0; i < t->n; i++) {
		const char *v = j->kv[i].value;
		struct slurm_jobid id;

		switch (t->f[i].name[1]) {
		case 'i':
			if (slurm_parse_jobid(v, &id, cause))
				return -1;
			set_str(&j->job_id, v);
			if (id.array_task) {
				j->array_job_id = xasprintf("%lld", id.id);
				set_str(&j->array_task_id, id.array_task);
			} else if (j->id < 0 && id.het_offset < 0) {
				j->id = id.id;
			}
			slurm_jobid_release(&id);
			break;
		case 'A':
			if (span_uint(span_of(v), 999999999999LL, &x))
				return fail(cause, "bad job id '%.*s'",
					    QLEN(strlen(v)), v);
			j->id = x;
			break;
		case 'F':
			if (!j->array_job_id)
				set_str(&j->array_job_id, v);
			break;
		case 'K':
			if (!j->array_task_id && !is_no_value(span_of(v)))
				set_str(&j->array_task_id, v);
			break;
		case 'j':
			set_str(&j->name, v);
			break;
		case 'u':
			set_str(&j->user, v);
			break;
		case 'T':
			j->state = slurm_state_parse(v, 0);
			set_str(&j->state_raw, v);
			break;
		case 't':
			j->state = slurm_state_parse(v, SLURM_STATE_COMPACT);
			set_str(&j->state_raw, v);
			break;
		case 'r':
			set_str(&j->reason, v);
			break;
		case 'R':
			if (strlen(v) >= 2 && v[0] == '(' &&
			    v[strlen(v) - 1] == ')') {
				free(j->reason);
				j->reason = xstrndup(v + 1, strlen(v) - 2);
			} else {
				set_str(&j->nodes, v);
			}
			break;
		case 'N':
			set_str(&j->nodes, v);
			break;
		case 'S':
			set_time(&j->start_time, v);
			break;
		case 'e':
			set_time(&j->end_time, v);
			break;
		case 'V':
			set_time(&j->submit_time, v);
			break;
		case 'k':
			set_str(&j->comment, v);
			break;
		case 'P':
			set_str(&j->partition, v);
			break;
		case 'M':
			set_str(&j->run_time, v);
			break;
		case 'l':
			set_str(&j->time_limit, v);
			break;
		case 'E':
			set_str(&j->dependency, v);
			break;
		case 'Z':
			set_str(&j->work_dir, v);
			break;
		default:
			break;
		}
	}
	job_fill_empty(j);
	return 0;
}

/* Parse squeue -h -o FORMAT output. */
int slurm_parse_squeue(const char *out, const char *format,
		       struct slurm_jobs *jobs, char **cause)
{
	struct slurm_jobs res = SLURM_JOBS_INIT;
	const char *p = out ? out : "";
	struct span line, *vals;
	struct tmpl t;
	size_t cap = 0;
	int unknown = 0;

	jobs->v = NULL;
	jobs->nr = 0;
	if (squeue_tmpl(format ? format : SLURM_SQUEUE_FORMAT, &t, cause))
		return -1;
	vals = xreallocarray(NULL, t.n, sizeof(*vals));
	while (next_line(&p, &line)) {
		struct span tl = trim(line);

		if (tl.n == 0)
			continue;
		if (span_starts(tl, "squeue: error:") ||
		    span_starts(tl, "slurm_load_jobs error:") ||
		    span_starts(tl, "squeue: fatal:")) {
			if (mem_find(tl.s, tl.n, "Invalid job id specified",
				     24)) {
				unknown = 1;
				continue;
			}
			fail(cause, "squeue failed: '%.*s'", QLEN(tl.n), tl.s);
			goto err;
		}
		if (tmpl_match(&t, line, vals, cause))
			goto err;
		if (res.nr == 0 && is_header(&t, vals))
			continue;
		if (squeue_fill(jobs_add(&res, &cap), &t, vals, cause))
			goto err;
	}
	free(vals);
	tmpl_release(&t);
	if (unknown) {
		slurm_jobs_release(&res);
		return SLURM_PARSE_UNKNOWN_JOB;
	}
	*jobs = res;
	return 0;
err:
	free(vals);
	tmpl_release(&t);
	slurm_jobs_release(&res);
	return -1;
}
/* The job ids of a dependency list. */
void slurm_dependency_ids(const char *dep, char ***ids, size_t *n)
{
	const char *p = dep ? dep : "";

	*ids = NULL;
	*n = 0;
	while (*p) {
		size_t clause = strcspn(p, ",?");
		const char *colon = memchr(p, ':', clause), *end = p + clause;

		/* "type:id[+time][:id...][(state)]" */
		while (colon && colon < end) {
			const char *id = colon + 1;
			size_t len = strspn(id, "0123456789_");

			if (len && len <= 40 && id + len <= end) {
				*ids = xreallocarray(*ids, *n + 1, sizeof(**ids));
				(*ids)[(*n)++] = xstrndup(id, len);
			}
			colon = memchr(id, ':', (size_t)(end - id));
		}
		p = *end ? end + 1 : end;
	}
}
