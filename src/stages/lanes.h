/*
 * Lanes (queue.lanes, SPEC rule 12): N afterany chains side by side, each
 * keeping queue.depth jobs waiting behind its running job, so that every
 * GPU the user may use is busy. reconcile() tells the lanes what squeue
 * shows (lanes_see); feeding asks which lane has room and what its next
 * submission chains onto (lanes_next) and tells what it submitted
 * (lanes_submitted). The lane of each attempt is recorded in the DB.
 */
#ifndef XLOOP_LANES_H
#define XLOOP_LANES_H

#include <stddef.h>

struct xl_ctx;
struct submit_opts;

struct lane_job {
	long long attempt_id;
	char *job_id, *after;	/* the job, and the job it waits for ("" none) */
};

struct lane {
	size_t live;		/* its jobs queued or running */
	struct lane_job *v;	/* them */
};

struct lanes {
	struct lane *v;
	size_t n;		/* lanes seen (not all of them in use) */
	size_t array_tasks;	/* live tasks of the study's job arrays (sweeps) */
};

/*
 * What reconcile() saw of the study's queue (reconcile.h), which feeding
 * reads and adds its submissions to (lanes_submitted).
 */
struct refresh {
	size_t pending;		/* our jobs waiting */
	size_t running;		/* our jobs running (or completing) */
	size_t stepping;	/* of those two, runs past job.sh: only a later step lives */
	size_t judged;		/* verdicts reached in this call */
	char *newest_live_job;	/* the job a new submission chains onto, "" */
	struct lanes lanes;	/* the study's live jobs by lane (queue.lanes) */
	size_t user_live;	/* all of the user's live jobs, the study's among them */
	int calls;		/* Slurm commands run */
};
void refresh_release(struct refresh *r);

/* A live job of the study: attempt attempt_id, in lane, as Slurm names it, waiting for after. */
void lanes_see(struct lanes *l, long long lane, long long attempt_id, const char *job_id,
	       const char *after);
void lanes_release(struct lanes *l);

/* How many lanes the study feeds: queue.lanes, or what "auto" resolves to. */
size_t lanes_count(struct xl_ctx *ctx);

/*
 * How many jobs one lane holds: queue.depth + 1, fewer when the user's
 * submit limit (quota_submit_limit) cannot hold that many in every lane;
 * never less than 1.
 */
size_t lanes_per_lane(struct xl_ctx *ctx, const struct refresh *ref, size_t nlanes);

/*
 * How many jobs the study may still have live at once under the user's
 * submit limit, all of the user's jobs counted; -1 for no limit.
 */
long long lanes_room(struct xl_ctx *ctx, const struct refresh *ref);

struct slurm;
struct slurm_jobs;
struct attempt;

#define LANES_GPU_LOOKUPS 4	/* scontrol calls a tick spends on new starts, at most */

/*
 * Record the GPU indexes of the study's jobs that squeue shows running and
 * whose GPUs are not known yet (one `scontrol -d show job` each, at most
 * LANES_GPU_LOOKUPS a call; none when nothing new started): the report
 * draws one timeline row per GPU from them.
 */
void lanes_record_gpus(struct xl_ctx *ctx, struct slurm *s, struct attempt *v, size_t n,
		       const struct slurm_jobs *q);

/* The user's live jobs in squeue's answer (all of them, not only xloop's). */
size_t lanes_user_live(const struct slurm_jobs *q);

/*
 * The lane the next submission goes into: 1 with o->lane and o->after (or
 * o->no_chain) set, 0 when every lane is full or the user's submit limit
 * is reached. force (automatic retries): the emptiest lane even when it is
 * full (but never over the submit limit).
 */
int lanes_next(struct xl_ctx *ctx, struct refresh *ref, int force, struct submit_opts *o);

/*
 * 1 when, with more than one lane, a run of the same configuration (the
 * same parent, "best" resolved, and VAR=VALUE) is in flight: the plan
 * entry waits rather than run twice side by side. 0 otherwise.
 */
int lanes_in_flight(struct xl_ctx *ctx, const char *parent, const char *var, const char *value);

/* Feeding submitted job_id (waiting for after) into lane: the lane's end now. */
void lanes_submitted(struct refresh *ref, long long lane, const char *job_id, const char *after);

#endif
