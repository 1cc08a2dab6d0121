/* Proposed and automatic retries of failed attempts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fsutil.h"
#include "loop.h"
#include "slurm/reasons.h"
#include "stages/retry.h"
#include "jobs/submit.h"

/* Free a proposal. */
void proposal_release(struct proposal *p)
{
	free(p->mem);
	free(p->time);
	free(p->why);
	memset(p, 0, sizeof(*p));
}

/* Seconds as Slurm reads a time limit: "H:MM:SS" or "D-HH:MM:SS". */
static char *format_secs(long long s)
{
	if (s >= 86400)
		return xasprintf("%lld-%02lld:%02lld:%02lld", s / 86400, s % 86400 / 3600,
				 s % 3600 / 60, s % 60);
	return xasprintf("%lld:%02lld:%02lld", s / 3600, s % 3600 / 60, s % 60);
}

/* Read the samples beside an attempt's log. */
int retry_mem_samples(const struct attempt *a, struct mem_summary *sum, char **cause)
{
	size_t len = strlen(a->log_path);
	struct buf b = BUF_INIT;
	char *path;
	int err, rc;

	if (len < 4 || strcmp(a->log_path + len - 4, ".out") != 0)
		return 1;
	path = xasprintf("%.*s.mem", (int)(len - 4), a->log_path);
	rc = read_file(path, 64 << 20, &b, &err, cause);
	if (rc < 0 && err == ENOENT) {
		FREE_AND_NULL(*cause);
		rc = 1;
	} else if (rc == 0) {
		rc = mem_summarize(b.s, sum, cause);
	}
	free(path);
	buf_release(&b);
	return rc;
}

/* Raise what ran out. */
int retry_proposal(struct xl_ctx *ctx, const struct attempt *a, struct proposal *p)
{
	struct part_limits lim;

	memset(p, 0, sizeof(*p));
	submit_known_limits(ctx, &lim);
	if (strcmp(a->state, "TIMEOUT") == 0) {
		long long was = config_time_secs(*a->time_limit ? a->time_limit :
						 ctx->cfg.res.time);
		long long want = (was * 3 / 2 + 59) / 60 * 60;

		if (was <= 0) {
			p->why = xstrdup("its time limit is not known");
			return 0;
		}
		if (lim.max_secs > 0 && want > lim.max_secs) {
			if (was >= lim.max_secs) {
				p->why = xasprintf("it already had the partition's MaxTime; "
						   "checkpoint and resume, or do less per run");
				return 0;
			}
			want = lim.max_secs;
		}
		p->time = format_secs(want);
		p->why = xasprintf("time %s x1.5%s", *a->time_limit ? a->time_limit :
				   ctx->cfg.res.time, want == lim.max_secs ?
				   ", capped at the partition's MaxTime" : "");
		return 1;
	}
	if (strcmp(a->state, "OUT_OF_MEMORY") == 0) {
		long long was = config_mem_mb(*a->mem ? a->mem : ctx->cfg.res.mem), want;
		struct mem_summary sum;
		char *cause = NULL;
		int measured = retry_mem_samples(a, &sum, &cause) == 0 &&
			       sum.peak_nonreclaim > 0;

		free(cause);
		if (measured) {
			long long peak = (sum.peak_nonreclaim + (1 << 20) - 1) >> 20;

			want = mem_round_up_mb((long long)((peak > was ? peak : was) *
							   MEM_OOM_GROWTH));
			p->why = xasprintf("the sampler saw %lldM anon+shmem against a %lldM "
					   "limit; x%.1f", peak, was, MEM_OOM_GROWTH);
		} else {
			want = mem_round_up_mb(was * 2);
			p->why = xasprintf("%lldM x2 (no sampler data: run `xloop sample` "
					   "in job.sh to size it from measurement)", was);
		}
		if (lim.real_mb > 0 && want > lim.real_mb) {
			if (was >= lim.real_mb) {
				free(p->why);
				p->why = xasprintf("it already had all of a node's memory "
						   "(%lldM); use less", lim.real_mb);
				return 0;
			}
			want = lim.real_mb;
		}
		p->mem = mem_format_mb(want);
		return 1;
	}
	p->why = xasprintf("%s is not a resource failure", *a->state ? a->state : "it");
	return 0;
}

/* One failed latest attempt that may be retried on its own. */
struct candidate {
	long long run_id;
	char *tag;
	long long n;
	char *cls, *state;
	long long infra_retries, resource_retries;
};

/* The runs whose latest attempt failed, with their automatic retry counts. */
static int candidates(struct xl_ctx *ctx, struct candidate **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	/*
	 * from each run to its latest attempt (attempt_latest): a long study's
	 * history holds many failed attempts that were retried since, and
	 * reading each of them (the partial index attempt_retryable) cost a
	 * 10,000-run study more than its runs do; a candidate's automatic
	 * retries are counted from the index attempt_auto_retry (migration 17)
	 */
	if (db_prepare(&ctx->db, &q, "SELECT r.id, r.tag, t.n, coalesce(t.failure_class, ''),"
		       " coalesce(t.state, ''),"
		       " (SELECT count(*) FROM attempt x WHERE x.run_id = r.id"
		       "  AND x.auto_retry = 'infra'),"
		       " (SELECT count(*) FROM attempt x WHERE x.run_id = r.id"
		       "  AND x.auto_retry = 'resources')"
		       " FROM run r CROSS JOIN attempt t ON t.run_id = r.id"
		       " AND t.n = (SELECT max(n) FROM attempt WHERE run_id = r.id)"
		       " WHERE r.study = :study AND t.verdict = 'failure'"
		       " AND (t.failure_class = 'infra' OR t.state IN ('TIMEOUT', 'OUT_OF_MEMORY'))"
		       " AND t.cancelled_by_user = 0"
		       " ORDER BY t.judged_at, t.id") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct candidate *c;

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		c = &(*v)[(*n)++];
		c->run_id = db_col_int64(&q, 0);
		c->tag = xstrdup(db_col_text(&q, 1));
		c->n = db_col_int64(&q, 2);
		c->cls = xstrdup(db_col_text(&q, 3));
		c->state = xstrdup(db_col_text(&q, 4));
		c->infra_retries = db_col_int64(&q, 5);
		c->resource_retries = db_col_int64(&q, 6);
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Submit one automatic retry and record it. */
static int retry_one(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		     const struct candidate *c, const struct attempt *a,
		     const char *kind, const struct proposal *p,
		     struct feed_result *res, char **cause)
{
	struct submit_opts o;
	struct submit_result sr;
	struct run r;
	char *detail, *segs;
	int rc;

	if (runs_get(&ctx->db, ctx->cfg.study, c->tag, &r) != 0)
		return XL_ERR;
	memset(&o, 0, sizeof(o));
	o.auto_retry = kind;
	/* the same resources as the failed attempt, with what ran out raised */
	o.mem = p && p->mem ? p->mem : *a->mem ? a->mem : NULL;
	o.time = p && p->time ? p->time : *a->time_limit ? a->time_limit : NULL;
	/* and the segments it was given (--segments, or the run's own) */
	segs = submit_override_value(a->overrides, "segments");
	o.segments = segs;
	/* the node that failed under it is not the retry's (issue 34) */
	if ((strcmp(a->state, "NODE_FAIL") == 0 || strcmp(a->state, "BOOT_FAIL") == 0) &&
	    *a->node && submit_partition_nodes(ctx) > 1)
		o.exclude = a->node;
	if (!lanes_next(ctx, ref, 1, &o)) {	/* what failed was due already, */
		run_release(&r);		/* but the submit limit holds */
		free(segs);
		return 0;
	}
	rc = submit_attempt(ctx, s, &r, &o, &sr, cause);
	if (sr.limit) {
		/* back-pressure: the retry goes on a later tick */
		free(res->held_back);
		res->held_back = xasprintf("%s: %s", c->tag, *cause);
		FREE_AND_NULL(*cause);
		rc = 0;
	}
	if (rc == 0 || *sr.job_id) {
		struct fed *f;

		detail = xasprintf("%s attempt %lld ended %s: retried automatically as "
				   "attempt %lld (job %s)%s%s%s%s%s", c->tag, c->n, c->state,
				   sr.n, sr.job_id, p ? " with " : "",
				   p ? (p->mem ? "--mem " : "--time ") : "",
				   p ? (p->mem ? p->mem : p->time) : "",
				   o.exclude ? " away from node " : "",
				   o.exclude ? o.exclude : "");
		loop_event(ctx, "auto-retry", r.id, 0, detail);
		free(detail);
		res->v = xreallocarray(res->v, res->nr + 1, sizeof(*res->v));
		f = &res->v[res->nr++];
		f->tag = xstrdup(c->tag);
		f->change = xasprintf("retry: %s %s", kind, c->state);
		f->job_id = xstrdup(sr.job_id);
		f->attempt = sr.n;
		f->after = xstrdup(sr.after);
		lanes_submitted(ref, o.lane, sr.tail ? sr.tail : sr.job_id, sr.after);
	}
	submit_result_release(&sr);
	run_release(&r);
	free(segs);
	return rc;
}

/* Retry what the machine broke, and (when allowed) what ran out. */
int retry_auto(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       struct feed_result *res, char **cause)
{
	struct candidate *v;
	size_t n, i;
	int rc = 0;

	if (candidates(ctx, &v, &n) < 0)
		return XL_ERR;
	for (i = 0; i < n && rc == 0 && !res->held_back; i++) {
		struct attempt a;
		struct proposal p;
		int infra = strcmp(v[i].cls, "infra") == 0;

		if (infra ? v[i].infra_retries >= ctx->cfg.retry_infra_max :
		    !ctx->cfg.retry_auto_resources || v[i].resource_retries > 0)
			continue;
		if (attempts_latest(&ctx->db, v[i].run_id, &a) != 0)
			continue;
		if (infra) {
			rc = retry_one(ctx, s, ref, &v[i], &a, "infra", NULL, res, cause);
		} else if (retry_proposal(ctx, &a, &p)) {
			rc = retry_one(ctx, s, ref, &v[i], &a, "resources", &p, res, cause);
			proposal_release(&p);
		} else {
			proposal_release(&p);
		}
		attempt_release(&a);
	}
	for (i = 0; i < n; i++) {
		free(v[i].tag);
		free(v[i].cls);
		free(v[i].state);
	}
	free(v);
	return rc;
}

/* Release what Slurm held after a failed launch. */
int retry_release_held(struct xl_ctx *ctx, struct slurm *s)
{
	struct attempt *v = NULL;
	size_t n = 0, i;
	int released = 0;

	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		char key[64], *cause = NULL, *detail;
		long long times;

		if (!v[i].state || strcmp(v[i].state, "PENDING") != 0 || !*v[i].job_id ||
		    !reason_slurm_held(v[i].slurm_reason))
			continue;
		xsnprintf(key, sizeof(key), "released_%lld", v[i].id);
		times = db_kv_get(&ctx->db, key);
		if (times >= RETRY_RELEASE_MAX)
			continue;	/* the tick's "stuck" alert says it */
		if (slurm_scontrol_hold(s, v[i].job_id, 0, &cause) != 0) {
			warning("unable to release job %s (held by Slurm after a failed "
				"launch): %s", v[i].job_id, cause ? cause : "?");
			free(cause);
			continue;
		}
		db_kv_set(&ctx->db, key, times + 1);
		detail = xasprintf("job %s released (%lld of %d): Slurm held it after a "
				   "failed launch", v[i].job_id, times + 1, RETRY_RELEASE_MAX);
		loop_event(ctx, "released", v[i].run_id, v[i].id, detail);
		free(detail);
		released++;
	}
	attempts_free(v, n);
	return released;
}
