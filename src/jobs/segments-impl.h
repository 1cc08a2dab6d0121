/*
 * What segments.c (queuing and adopting segments, dropping the unneeded)
 * and segments-end.c (what the end of a segment means) share.
 */
#ifndef XLOOP_SEGMENTS_IMPL_H
#define XLOOP_SEGMENTS_IMPL_H

#include "jobs/segments.h"

/* One segment row. */
struct seg {
	long long id, k, try_, max, intent_at, started_at;
	char *token, *job_id, *state;
};

/* The attempt row's fields segment k+1's sbatch needs. */
struct seg_att {
	char *tag, *token, *log, *partition, *gres, *mem, *time_, *over;
	long long n, cpus;
};

void seg_release(struct seg *g);
/* The newest try of segment k of an attempt (k 0: the current one). 0, 1 none, -1. */
int seg_get(struct xl_ctx *ctx, long long attempt_id, long long k, struct seg *g);
void seg_att_release(struct seg_att *t);
/* The attempt's fields (t: release it). 0 or -1. */
int seg_att_get(struct xl_ctx *ctx, long long attempt_id, struct seg_att *t);
/* The nodes a next segment of attempt t must not run on (malloc'd, or NULL); lost first. */
char *seg_exclude(struct xl_ctx *ctx, const struct seg_att *t, const char *lost);
/* Tries of one segment's job: an sbatch that failed, a job that left Slurm unstarted. */
#define SEG_TRIES_MAX 3
/* Queue segment cur->k + 1 (or adopt it after a crash), away from lost (NULL: none). */
void seg_keep_next(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
		   long long attempt_id, const struct seg *cur, const char *cur_job,
		   const char *lost);
/* Mark the rows after segment k not needed (outcome why), cancelling their live jobs. */
void seg_drop_after(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
		    long long attempt_id, long long k, const char *why);
/* The one number a query over attempt :att's segments answers (0 on error). */
long long seg_att_number(struct xl_ctx *ctx, const char *sql, long long attempt_id);
/* When segment 1 of the attempt started (0: unknown). */
time_t seg_first_start(struct xl_ctx *ctx, long long attempt_id);

#endif
