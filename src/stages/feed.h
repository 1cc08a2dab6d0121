/*
 * Feeding the queue (SPEC rule 3): after reconcile has brought the DB up to
 * date with Slurm and judged what ended, decide what to submit next, from
 * automatic retries, an explicit request, then the plan.
 */
#ifndef XLOOP_FEED_H
#define XLOOP_FEED_H

#include "ctx.h"
#include "stages/fed.h"
#include "stages/reconcile.h"
#include "slurm/slurm.h"

/* An explicit request from `next --set` (NULL fields: none). */
struct feed_request {
	const char *var, *value, *from, *tag;
};

/*
 * Keep the queue fed (SPEC rule 3), unless the circuit breaker is open
 * (then nothing, and res->breaker says why): first the automatic retries
 * (retry_auto), then, while fewer than depth jobs wait behind the running
 * one (or nothing runs), turn the request, then plan entries, into runs
 * and submit them chained afterany. Returns an exit code; what
 * was submitted is in *res even on failure.
 */
int feed_queue(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       const struct feed_request *req, struct feed_result *res, char **cause);
void feed_result_release(struct feed_result *res);

/*
 * Who feeds the queue once the session that calls xloop ends: the one
 * place that answers it (next, resume and status ask here). kind is
 * "slurm" with driver.mode slurm (a feeder job, driver_who), "cron" while
 * `xloop tick` ran in the last FEED_CRON_FRESH_SECS (its .xloop/tick.log
 * says when), else "none". Later feeders (Slurm feeder
 * jobs, scrontab, autopilot) are added here.
 */
#define FEED_CRON_FRESH_SECS (20 * 60)
struct feeder {
	const char *kind;	/* "none", "cron", "slurm" (driver.h) */
	long long last_at;	/* when it last ran (epoch s), 0: never */
	char *text;		/* one line: who, and how to get one when none */
};
void feed_who(struct xl_ctx *ctx, struct feeder *f);
void feeder_release(struct feeder *f);
/* Print "after this session: TEXT", with how long ago the last tick ran. */
void feed_print_who(const char *text, long long last_at);
/* How long ago secs is, in words ("4 min"), malloc'd. */
char *feed_ago(long long secs);

/* Sweep tasks submitted and not started yet (pending array tasks); -1 on error. */
long long feed_sweep_queued(struct xl_ctx *ctx);

#endif
