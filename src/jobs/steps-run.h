/*
 * Steps on Slurm (issue 28): each of a run's steps after job.sh is its own
 * job of the attempt, afterok on the step before with
 * --kill-on-invalid-dep=yes. Each is recorded as an intent (table
 * step_job, its own token) in the attempt's intent transaction and
 * submitted after the step before has its job id; reconcile finds a job
 * sbatch never told by its token, submits what a crash left, and asks
 * steps_on_end before a verdict: one strict verdict for every step.
 */
#ifndef XLOOP_STEPS_RUN_H
#define XLOOP_STEPS_RUN_H

#include <time.h>

#include "ctx.h"
#include "runs.h"
#include "slurm/slurm.h"

/*
 * The intents of steps 2.. of attempt n (id attempt_id) of run r, in the
 * caller's transaction; 0 (none when r has no steps) or -1.
 */
int steps_record_intents(struct xl_ctx *ctx, const struct run *r, long long attempt_id,
			 long long n);

/*
 * Submit the step intents of attempt a (its job id known) in order, each
 * afterok on its step before; with q (squeue, from reconcile), an intent
 * whose job q shows by its token is adopted instead. 0, or an exit code
 * with *cause (the intent then waits for the next reconcile, or is marked
 * submit_failed when sbatch clearly refused).
 */
int steps_submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			 const struct slurm_jobs *q, char **cause);

/*
 * In reconcile, for a live segmented attempt: its first later step waits
 * afterok on the current segment or its queued continuation (scontrol
 * update when a new continuation was queued). Not segmented: nothing.
 */
void steps_follow_segments(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			   const struct slurm_jobs *q);

/* What the steps after job.sh say once job.sh's job has ended. */
enum steps_next {
	STEPS_NONE,	/* the run has no steps: judge job.sh as ever */
	STEPS_RUNNING,	/* a later step runs */
	STEPS_PENDING,	/* a later step waits (or was submitted again) */
	STEPS_DONE,	/* every step has ended, or one failed: judge now */
};

/* The verdict's inputs from the steps (STEPS_DONE). */
struct steps_verdict {
	char *reason;		/* a step failed: why (malloc'd), NULL otherwise */
	const char *failure_class;	/* with reason */
	char *log;		/* the failed step's log (its tail is the evidence) */
	char *note;		/* appended to job.sh's own failure: "not run: ..." */
	time_t last_start;	/* the last step's start: cv.json must be newer */
	enum slurm_state state;	/* the failed step's state (with reason) */
	int exit_code, exit_signal;
};
void steps_verdict_release(struct steps_verdict *v);

/*
 * Attempt a's job.sh job ended with (state, exit_code); q is squeue's
 * answer. Reads the later steps' ends (sacct, else scontrol, for those
 * that left the queue), retries a step that failed for the machine's
 * fault once per retry.infra_max, and says whether to judge now.
 */
enum steps_next steps_on_end(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			     const struct attempt *a, enum slurm_state state, int exit_code,
			     int exit_signal, struct steps_verdict *out);

/* Record the states squeue q shows of a's live step jobs (for the briefing). */
void steps_note_live(struct xl_ctx *ctx, const struct attempt *a, const struct slurm_jobs *q);
/*
 * Which later step of an attempt is live or waits, "step 2 'eval' PENDING
 * (Dependency), job 12" (malloc'd), or NULL when none; from squeue q, or
 * with q NULL from what reconcile last recorded.
 */
char *steps_live_text(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q);

/*
 * The job of a later step of an attempt that squeue q shows unfinished
 * (malloc'd), or NULL: live work the driver's feeder waits for.
 */
char *steps_live_job(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q);
/* Its status word, "eval:RUNNING" (malloc'd), or NULL: what status's table shows. */
char *steps_live_word(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q);

/*
 * What Slurm says finally of job (sacct, else scontrol): 1 with its state,
 * exit, start and end (*why: scontrol's reason, malloc'd, or untouched), 0
 * when not ended or unknown.
 */
int steps_read_end(struct slurm *s, const char *job, enum slurm_state *st, int *code,
		   int *sig, time_t *start, time_t *end, char **why);

struct step_span;
/*
 * The later steps of the study's attempts that started, in attempt and
 * step order, their last try (a live one ends now): for the timeline. 0 or -1.
 */
int steps_spans(struct xl_ctx *ctx, struct step_span **v, size_t *n);

/* scancel attempt a's later steps that have a job and have not ended; how many. */
int steps_cancel(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a);

#endif
