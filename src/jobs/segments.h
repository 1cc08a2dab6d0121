/*
 * Segments: an attempt longer than the partition's time limit runs as jobs
 * 1..max in one run directory. Segment k+1 is queued while k runs
 * (afternotok:k, kill-on-invalid-dep), held: k's wrapper releases it when
 * k asked to go on and its checkpoint changed (a checkpointed one continues
 * at once), and cancels it when k ended by itself or saved nothing (the
 * line goes on, and no continuation starts for nothing); reconcile does
 * either when the wrapper could not (killed from outside). The batch script is a
 * wrapper (.xloop/segments/<token>.sh) that writes a header line into the
 * attempt's log, forwards segments.signal to job.sh, records what happened
 * in slurm/attemptN.seg, and refuses to continue when the checkpoint did
 * not change during the previous segment. One verdict per attempt, from
 * its last segment.
 *
 * Sweeps continue task by task. An array task is segment 1 of its run's
 * attempt (the array's script execs that attempt's own wrapper); its
 * continuation is a plain job (afternotok on "ARRAY_INDEX"), queued once
 * the task runs. That is the simplest correct design: an array cannot grow
 * a task, a new array per continuation would break "index i is always the
 * same run", and a single job already carries an attempt's log, directory
 * and (attempt, segment, try) row as every other segment does. Runs queued
 * behind the sweep wait for the array and for each live continuation.
 *
 * An infra failure of a segment (NODE_FAIL, BOOT_FAIL, PREEMPTED, not
 * requeued by Slurm) is retried as that segment: the next job redoes it
 * from the checkpoint without the no-progress guard, and the attempt's max
 * grows by one (counted toward retry.infra_max instead).
 */
#ifndef XLOOP_SEGMENTS_H
#define XLOOP_SEGMENTS_H

#include "ctx.h"
#include "jobs/segments-wrapper.h"	/* the wrapper, what sbatch gets */
#include "runs.h"
#include "slurm/slurm.h"
#include "timeline.h"

/* Record segment 1 of attempt_id, inside the attempt's intent transaction. */
int segments_insert_first(struct xl_ctx *ctx, long long attempt_id, const char *token,
			  long long max);

/*
 * After segment 1's sbatch answered with job_id: record it, then queue
 * segment 2 behind it. *tail (malloc'd) is the job a next run chains onto.
 */
void segments_started(struct xl_ctx *ctx, struct slurm *s, long long attempt_id,
		      const char *job_id, char **tail);

/*
 * In reconcile, for a live segmented attempt: adopt or queue its next
 * segment (q is this tick's squeue). Not segmented: nothing.
 */
void segments_keep_next(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			const struct attempt *a);

/*
 * The job a next run chains onto when job_id is attempt_id's segment: its
 * newest queued segment that q shows live or that was queued after q was
 * read (q->read_at); one q no longer shows is no tail.
 */
void segments_tail(struct xl_ctx *ctx, const struct slurm_jobs *q, long long attempt_id,
		   char **job_id);

/* When *tail (submit_line_tail's answer) is a segmented attempt's job: its queued segment. */
void segments_line_tail(struct xl_ctx *ctx, const struct slurm_jobs *q,
			const struct attempt *v, size_t n, char **tail);

/*
 * xloop cancel, or a lost attempt: scancel the attempt's queued segments
 * (they would start once the current one ends, afternotok) and mark them
 * unneeded (outcome why); a cancel then cancels the current job.
 */
void segments_cancel_queued(struct xl_ctx *ctx, struct slurm *s, long long attempt_id,
			    const char *why);

/* How segment k of an attempt ended, as reconcile read it from Slurm. */
struct segment_end {
	enum slurm_state state;
	int exit_code;
	time_t start, end;
	const char *node;	/* the nodes it ran on (NodeList), or NULL */
};

/* A segment's outcome when an infra failure ended it and the next went on (SQL). */
#define SEGMENT_INFRA_OUTCOMES "('NODE_FAIL', 'BOOT_FAIL', 'PREEMPTED')"

/* What the verdict of the last segment takes from the segments. */
struct segment_verdict {
	time_t first_start;	/* when segment 1 started: cv.json must be newer */
	char *reason;		/* replaces the judge's reason (malloc'd), or NULL */
};

/* What the end of a segment means for its attempt. */
enum segment_next {
	SEGMENT_VERDICT,	/* the verdict is due now */
	SEGMENT_RUNNING,	/* the next segment is the attempt's job now: it runs */
	SEGMENT_PENDING,	/* the next segment is queued, or about to start: decide then */
};

/*
 * The attempt's current job ended: whether its verdict is due
 * (SEGMENT_VERDICT, sv filled; not segmented: sv zeroed) or the attempt
 * goes on (no verdict now; reconcile counts it as running or pending).
 */
enum segment_next segments_on_end(struct xl_ctx *ctx, struct slurm *s,
				  const struct slurm_jobs *q, const struct attempt *a,
				  const struct segment_end *e, struct segment_verdict *sv);

/*
 * The study's segments that ran and ended (continued or last), ordered
 * by attempt and segment; *v malloc'd. 0 or -1.
 */
int segments_spans(struct xl_ctx *ctx, struct segment_span **v, size_t *n);

/*
 * What a step after a segmented job.sh waits for: "CUR" or "CUR?NEXT",
 * the attempt's current segment and its queued continuation (each may
 * end the training: afterok on either, Slurm's '?'), malloc'd; NULL when
 * the attempt is not segmented or its current segment has no job yet.
 */
char *segments_step_after(struct xl_ctx *ctx, long long attempt_id);

/*
 * "segment 1 ended PREEMPTED on node1: segment 2 went on from the
 * checkpoint" for every segment an infra failure ended (the next segment
 * did its work again), "; "-joined, malloc'd; NULL when none did.
 */
char *segments_infra_note(struct xl_ctx *ctx, long long attempt_id);

/*
 * The attempts of the study that segments_infra_note has something to say
 * about, in increasing id order, into *ids (malloc'd): one query for a
 * whole study, so that status asks per attempt only for these. 0 or -1.
 */
int segments_infra_attempts(struct xl_ctx *ctx, long long **ids, size_t *n);

/* "segment 3 (at most 20), 2 h 40 min so far" for a segmented open attempt, or NULL. */
char *segments_progress(struct xl_ctx *ctx, long long attempt_id);

#endif
