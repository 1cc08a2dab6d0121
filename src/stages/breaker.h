/*
 * The circuit breaker (seed 000 §10.1): a job submitted without its GPU
 * failed in seconds, every afterany job behind it failed the same way and
 * the GPU idled for hours. After breaker.program consecutive program
 * failures, or breaker.infra consecutive infra failures, or as soon as a
 * GPU job's START line shows no GPU (breaker.no_gpu), feeding stops (plan, requests and
 * automatic retries) until `xloop breaker reset` or `xloop resume --feed`.
 * State: kv "breaker_event" (the event that opened it; 0: closed) and
 * "breaker_reset_at" (verdicts before it do not count).
 */
#ifndef XLOOP_BREAKER_H
#define XLOOP_BREAKER_H

#include "ctx.h"

struct breaker {
	int open;
	int opened_now;		/* this check opened it (notified once) */
	char *reason;		/* why it is open; NULL when closed */
};

/*
 * Look at the latest verdicts and open the breaker when they call for it
 * (an event, and a "breaker" notification queued once). Returns 0, or -1
 * on a database error.
 */
int breaker_check(struct xl_ctx *ctx, struct breaker *b);

/* Why the breaker is open (malloc'd), or NULL when it is closed. */
char *breaker_open_reason(struct xl_ctx *ctx);

/* Close it; verdicts so far no longer count. 0 or -1. */
int breaker_reset(struct xl_ctx *ctx, const char *why);

void breaker_release(struct breaker *b);

#endif
