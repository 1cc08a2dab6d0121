/* The chain of live jobs: see chain.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/chain.h"
#include "loop.h"
#include "runs.h"

/* Free the chain. */
void chain_release(struct chain *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].id);
		free(c->v[i].tag);
		free(c->v[i].after);
		free(c->v[i].dependency);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* The chain job named id (an array task's id names its array). */
struct chain_job *chain_find(struct chain *c, const char *id)
{
	size_t i, len = strcspn(id, "_");

	for (i = 0; i < c->n; i++)
		if (strlen(c->v[i].id) == len && memcmp(c->v[i].id, id, len) == 0)
			return &c->v[i];
	return NULL;
}

/* A job whose dependency names id. */
struct chain_job *chain_waiting_for(struct chain *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->v[i].after, id) == 0)
			return &c->v[i];
	return NULL;
}

/* Add one squeue line to its chain job (an array's tasks fold into one). */
static void add_task(struct chain *c, const struct slurm_job *j)
{
	struct chain_job *cj;
	char *base = xstrndup(j->job_id, strcspn(j->job_id, "_"));
	long long secs;
	char **ids;
	size_t nids, i;

	if (slurm_state_is_final(j->state)) {
		free(base);
		return;
	}
	cj = chain_find(c, base);
	if (!cj) {
		c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
		cj = &c->v[c->n++];
		memset(cj, 0, sizeof(*cj));
		cj->id = base;
		cj->tag = xstrdup("");
		cj->after = xstrdup("");
		cj->dependency = xstrdup("");
		cj->elapsed = -1;
	} else {
		free(base);
	}
	if (strchr(j->job_id, '_'))
		cj->array = 1;
	if (j->state == SLURM_STATE_PENDING) {
		cj->pending++;
		slurm_dependency_ids(j->dependency, &ids, &nids);
		if (nids && !*cj->after) {
			free(cj->after);
			cj->after = xstrndup(ids[0], strcspn(ids[0], "_"));
			free(cj->dependency);
			cj->dependency = xstrdup(j->dependency);
		}
		for (i = 0; i < nids; i++)
			free(ids[i]);
		free(ids);
	} else {
		cj->running = 1;
		if (slurm_parse_duration(j->run_time, &secs, NULL) == 0 && secs > cj->elapsed)
			cj->elapsed = secs;
	}
}

/* Read the user's live jobs and name the study's. */
int chain_load(struct xl_ctx *ctx, struct slurm *s, struct chain *c, char **cause)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt *v = NULL;
	size_t n = 0, i;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = slurm_squeue_line(s, &q, cause);
	if (rc)
		return rc;
	for (i = 0; i < q.nr; i++)
		add_task(c, &q.v[i]);
	slurm_jobs_release(&q);
	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0) {
		*cause = xasprintf("unable to read the state DB");
		chain_release(c);
		return XL_ERR;
	}
	for (i = 0; i < n; i++) {
		struct chain_job *cj = *v[i].job_id ? chain_find(c, v[i].job_id) : NULL;
		char *name;

		if (!cj || *cj->tag)
			continue;
		free(cj->tag);
		if (strchr(v[i].job_id, '_')) {
			name = sweeps_of_run(&ctx->db, v[i].run_id);
			cj->tag = name ? name : xstrdup("a sweep");
		} else {
			name = runs_tag(&ctx->db, v[i].run_id);
			cj->tag = name ? name : xstrdup("");
			cj->attempt_id = v[i].id;
		}
	}
	attempts_free(v, n);
	return 0;
}

/* Order two numbers for qsort. */
static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* The median run time of the latest successes. */
long long chain_typical_secs(struct xl_ctx *ctx, size_t *samples)
{
	long long *secs, median;
	size_t n;

	*samples = 0;
	if (attempts_recent_elapsed(&ctx->db, ctx->cfg.study, 20, &secs, &n) < 0 || n == 0)
		return -1;
	qsort(secs, n, sizeof(*secs), cmp_ll);
	median = n % 2 ? secs[n / 2] : (secs[n / 2 - 1] + secs[n / 2] + 1) / 2;
	free(secs);
	*samples = n;
	return median;
}

/* A short duration for people. */
char *chain_duration(long long secs)
{
	if (secs < 90)
		return xasprintf("%lld s", secs < 0 ? 0 : secs);
	if (secs < 90 * 60)
		return xasprintf("%lld min", (secs + 30) / 60);
	return xasprintf("%.1f h", (double)secs / 3600);
}

/* Release the job a `prioritize` that died held (CHAIN_HELD_KEY). */
void chain_release_held(struct xl_ctx *ctx, struct slurm *s)
{
	long long id = db_kv_get(&ctx->db, CHAIN_HELD_KEY);
	char jid[24], *cause = NULL, *d;
	int rc;

	if (id <= 0)
		return;
	xsnprintf(jid, sizeof(jid), "%lld", id);
	rc = slurm_scontrol_hold(s, jid, 0, &cause);
	if (rc == XL_TEMPFAIL) {	/* Slurm is away: the next call tries again */
		free(cause);
		return;
	}
	/* released, or it has ended: either way nothing is held any more */
	db_kv_set(&ctx->db, CHAIN_HELD_KEY, 0);
	d = rc == 0 ? xasprintf("job %s, held by a `prioritize` that died before "
				"releasing it, was released", jid) :
		xasprintf("job %s, held by a `prioritize` that died before releasing "
			  "it, could not be released (%s)", jid, cause ? cause : "?");
	loop_event(ctx, "repaired", 0, 0, d);
	free(d);
	free(cause);
}
