/*
 * Slurm's own restarts of an attempt's job (issue 34): a job Slurm requeues
 * (a node lost under it, a preemption with PreemptMode=REQUEUE) keeps its
 * id and starts again; xloop submits with --open-mode=append, so every
 * start's output stays in the attempt's log, counts the starts
 * (attempt.restarts) and judges the job once, at its real end.
 */
#ifndef XLOOP_REQUEUE_H
#define XLOOP_REQUEUE_H

#include <time.h>

#include "ctx.h"
#include "runs.h"

/* The job of a started again at start: a line in its log, an event. */
void requeue_note(struct xl_ctx *ctx, const struct attempt *a, time_t start);
/* The verdict's reason with how often Slurm started the job (malloc'd). */
char *requeue_reason(const char *reason, long long restarts);

#endif
