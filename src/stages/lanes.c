/* Lanes: which chain has room and what its next job waits for. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "search/best.h"
#include "stages/lanes.h"
#include "loop.h"
#include "stages/quota.h"
#include "runs.h"
#include "slurm/slurm.h"
#include "jobs/submit.h"
#include "lib/util.h"

/* Note one live job of the study. */
void lanes_see(struct lanes *l, long long lane, long long attempt_id, const char *job_id,
	       const char *after)
{
	struct lane *x;
	struct lane_job *j;

	if (strchr(job_id, '_')) {
		l->array_tasks++;	/* an array holds lanes, not a place in one */
		return;
	}
	if (lane < 0 || lane >= CONFIG_MAX_LANES)
		lane = 0;
	if ((size_t)lane >= l->n) {
		l->v = xreallocarray(l->v, (size_t)lane + 1, sizeof(*l->v));
		memset(l->v + l->n, 0, ((size_t)lane + 1 - l->n) * sizeof(*l->v));
		l->n = (size_t)lane + 1;
	}
	x = &l->v[lane];
	x->v = xreallocarray(x->v, x->live + 1, sizeof(*x->v));
	j = &x->v[x->live++];
	j->attempt_id = attempt_id;
	j->job_id = xstrdup(job_id);
	j->after = xstrdup(after);
}

/*
 * The end of a lane's line: its newest job that no other job of the lane
 * waits for (`prioritize` may have moved the newest to the front), else
 * its newest; NULL for an empty lane.
 */
static const char *lane_tail(const struct lane *x)
{
	const struct lane_job *best = NULL, *newest = NULL;
	size_t i, k;

	for (i = 0; i < x->live; i++) {
		const struct lane_job *j = &x->v[i];
		int waited = 0;

		if (!newest || j->attempt_id > newest->attempt_id)
			newest = j;
		for (k = 0; k < x->live && !waited; k++)
			waited = k != i && strcmp(x->v[k].after, j->job_id) == 0;
		if (!waited && (!best || j->attempt_id > best->attempt_id))
			best = j;
	}
	return best ? best->job_id : newest ? newest->job_id : NULL;
}

/* Free the lanes. */
void lanes_release(struct lanes *l)
{
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		for (k = 0; k < l->v[i].live; k++) {
			free(l->v[i].v[k].job_id);
			free(l->v[i].v[k].after);
		}
		free(l->v[i].v);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* queue.lanes, "auto" resolved from the limits Slurm tells. */
size_t lanes_count(struct xl_ctx *ctx)
{
	long long n = ctx->cfg.lanes;

	if (n == 0)
		n = quota_auto_lanes(ctx);
	return n < 1 ? 1 : n > CONFIG_MAX_LANES ? CONFIG_MAX_LANES : (size_t)n;
}

/* The user's live jobs, whoever submitted them. */
size_t lanes_user_live(const struct slurm_jobs *q)
{
	size_t i, n = 0;

	for (i = 0; i < q->nr; i++)
		n += !slurm_state_is_final(q->v[i].state);
	return n;
}

/* Jobs the study may still have live: the submit limit less the user's other jobs. */
long long lanes_room(struct xl_ctx *ctx, const struct refresh *ref)
{
	long long limit = quota_submit_limit(ctx);
	size_t mine = ref->running + ref->pending;
	size_t others = ref->user_live > mine ? ref->user_live - mine : 0;

	if (limit < 0)
		return -1;
	return limit > (long long)others ? limit - (long long)others : 0;
}

/* depth + 1 jobs a lane, fewer when a submit limit cannot hold them all. */
size_t lanes_per_lane(struct xl_ctx *ctx, const struct refresh *ref, size_t nlanes)
{
	size_t per = (size_t)ctx->cfg.depth + 1;
	long long room = lanes_room(ctx, ref);

	if (room >= 0 && (long long)(nlanes * per) > room)
		per = (size_t)room / nlanes;	/* lanes win: fewer wait in each */
	return per ? per : 1;
}

/*
 * Lanes the study's live sweeps hold: a sweep with %K holds K of them (its
 * tasks run K at a time), one without holds one per live task; at most
 * the live tasks squeue showed.
 */
static size_t arrays_hold(struct xl_ctx *ctx, const struct lanes *l)
{
	struct stmt q;
	long long hold = 0;

	if (l->array_tasks == 0)
		return 0;
	if (db_prepare(&ctx->db, &q, "SELECT s.max_parallel, count(*) FROM sweep s"
		       " JOIN sweep_task t ON t.sweep_id = s.id"
		       " JOIN attempt a ON a.run_id = t.run_id"
		       " WHERE s.study = :study AND a.verdict IS NULL GROUP BY s.id") < 0)
		return l->array_tasks;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW) {
		long long k = db_col_int64(&q, 0), n = db_col_int64(&q, 1);

		hold += k > 0 && k < n ? k : n;
	}
	db_finalize(&q);
	if (hold == 0)
		return l->array_tasks;	/* no sweep of ours knows them: a lane each */
	return hold < (long long)l->array_tasks ? (size_t)hold : l->array_tasks;
}

/* The lane with room (or the emptiest, with force) for the next job. */
int lanes_next(struct xl_ctx *ctx, struct refresh *ref, int force, struct submit_opts *o)
{
	struct lanes *l = &ref->lanes;
	size_t n = lanes_count(ctx), per = lanes_per_lane(ctx, ref, n), held, i, best = n;
	long long room = lanes_room(ctx, ref);

	if (room >= 0 && (long long)(ref->running + ref->pending) >= room)
		return 0;	/* the user's submit limit is reached: sbatch would refuse */
	if (n == 1) {
		/* one lane: the end of the study's line (any job of the user's
		 * with slurm.chain any-user, a whole array), as before lanes; a
		 * run whose later steps alone live (an evaluation) is not in it */
		if (!force && ref->running + ref->pending - ref->stepping >= per)
			return 0;
		o->lane = 0;
		if (*ref->newest_live_job)
			o->after = ref->newest_live_job;
		else if (!ctx->cfg.chain_any_user)
			o->no_chain = 1;
		return 1;
	}
	/* a sweep's tasks run side by side: each holds a lane while it lives */
	held = arrays_hold(ctx, l);
	if (held > n)
		held = n;
	for (i = held; i < n; i++) {
		size_t live = i < l->n ? l->v[i].live : 0;

		if (live >= per && !force)
			continue;
		if (best == n || live < (best < l->n ? l->v[best].live : 0))
			best = i;
	}
	if (best == n && force)
		best = 0;
	if (best == n)
		return 0;
	o->lane = (long long)best;
	if (best < l->n && lane_tail(&l->v[best]))
		o->after = lane_tail(&l->v[best]);
	else
		o->no_chain = 1;	/* an empty lane starts at once */
	return 1;
}

/* Free the refresh summary. */
void refresh_release(struct refresh *r)
{
	free(r->newest_live_job);
	r->newest_live_job = NULL;
	lanes_release(&r->lanes);
}

/* Record what feeding put into lane. */
void lanes_submitted(struct refresh *ref, long long lane, const char *job_id, const char *after)
{
	free(ref->newest_live_job);
	ref->newest_live_job = xstrdup(job_id);
	if (ref->running + ref->pending == 0)
		ref->running++;	/* it will start at once */
	else
		ref->pending++;
	lanes_see(&ref->lanes, lane, LLONG_MAX, job_id, after);
}

/* Ask Slurm which GPUs the newly started jobs got. */
void lanes_record_gpus(struct xl_ctx *ctx, struct slurm *s, struct attempt *v, size_t n,
		       const struct slurm_jobs *q)
{
	size_t i, asked = 0;

	if (slurm_gres_request_gpus(ctx->cfg.res.gres) == 0)
		return;		/* a CPU job has no GPU to ask about */
	for (i = 0; i < n && asked < LANES_GPU_LOOKUPS; i++) {
		const struct slurm_job *j = *v[i].job_id ? slurm_jobs_find(q, v[i].job_id) : NULL;
		char *idx = NULL, *cause = NULL;

		if (!j || j->state != SLURM_STATE_RUNNING || *v[i].gpus)
			continue;
		asked++;
		if (slurm_job_gpus(s, v[i].job_id, &idx, &cause) == 0 && idx &&
		    attempts_set_gpus(&ctx->db, v[i].id, idx) == 0) {
			free(v[i].gpus);
			v[i].gpus = idx;
			idx = NULL;
		} else {
			/* Slurm names none (or failed): not asked again for this attempt */
			attempts_set_gpus(&ctx->db, v[i].id, "?");
		}
		free(idx);
		free(cause);
	}
}

/* The same configuration already queued or running in another lane. */
int lanes_in_flight(struct xl_ctx *ctx, const char *parent, const char *var, const char *value)
{
	struct stmt q;
	struct run best;
	int found = 0, have_best = 0;

	if (lanes_count(ctx) < 2)
		return 0;
	if (strcmp(parent, "best") == 0) {
		if (best_get(ctx, &best, NULL) != 0)
			return 0;
		have_best = 1;
		parent = best.tag;
	}
	if (db_prepare(&ctx->db, &q, "SELECT 1 FROM run r JOIN run p ON p.id = r.parent_id"
		       " JOIN attempt a ON a.run_id = r.id"
		       " WHERE r.study = :study AND p.tag = :parent AND r.var = :var"
		       " AND r.new_value = :value AND a.verdict IS NULL LIMIT 1") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		db_bind_text(&q, ":parent", parent);
		db_bind_text(&q, ":var", var);
		db_bind_text(&q, ":value", value);
		found = db_step(&q) == SQLITE_ROW;
		db_finalize(&q);
	}
	if (have_best)
		run_release(&best);
	return found;
}
