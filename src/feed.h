/*
 * Feeding the queue (SPEC rule 3): after reconcile has brought the DB up to
 * date with Slurm and judged what ended, decide what to submit next, from
 * automatic retries, an explicit request, then the plan.
 */
#ifndef XLOOP_FEED_H
#define XLOOP_FEED_H

#include "cmd.h"
#include "reconcile.h"
#include "slurm.h"

/* One submission that feeding made. */
struct fed {
	char *tag;
	char *change;		/* "VAR=VALUE" */
	char *job_id;
	long long attempt;
	char *after;
};

struct feed_result {
	struct fed *v;
	size_t nr;
	char *breaker;		/* why feeding is stopped (breaker.h), or NULL */
	int breaker_opened;	/* this call opened the breaker */
	char **skipped;		/* plan entries that could not become runs */
	size_t nr_skipped;
	char *held_back;	/* a Slurm limit refused a submission: which and what, or NULL */
};

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

#endif
