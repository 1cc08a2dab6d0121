/*
 * Failure-aware retries (seed 003): infrastructure failures (NODE_FAIL,
 * BOOT_FAIL, PREEMPTED, lost) are retried automatically up to
 * retry.infra_max times; TIMEOUT and OUT_OF_MEMORY get a proposal with the
 * resource that ran out raised (done once automatically with
 * retry.auto_resources); program failures are only ever reported.
 */
#ifndef XLOOP_RETRY_H
#define XLOOP_RETRY_H

#include "memsample.h"
#include "loop.h"
#include "stages/fed.h"
#include "stages/lanes.h"	/* struct refresh */

/* What a retry of a failed attempt should ask for. */
struct proposal {
	char *mem;		/* raised --mem, or NULL */
	char *time;		/* raised --time, or NULL */
	char *why;		/* one line: where the numbers come from */
};
void proposal_release(struct proposal *p);

/*
 * The raised resources for failed attempt a: TIMEOUT gives its time x1.5
 * (whole minutes) capped at the partition's MaxTime; OUT_OF_MEMORY gives
 * the larger of its limit and the sampler's peak x1.5, or the limit x2
 * without samples, capped at the nodes' RealMemory. Returns 1 with *p
 * filled when something can be raised, else 0 (p->why says why not).
 */
int retry_proposal(struct xl_ctx *ctx, const struct attempt *a, struct proposal *p);

/*
 * The sampler's summary for attempt a (its .mem file beside the log).
 * 0, 1 when there is none, -1 with *cause when it cannot be read.
 */
int retry_mem_samples(const struct attempt *a, struct mem_summary *sum, char **cause);

/*
 * Submit the automatic retries: each run whose latest attempt is an infra
 * failure (while fewer than retry.infra_max automatic infra retries were
 * made for it) and, with retry.auto_resources, each TIMEOUT or
 * OUT_OF_MEMORY once with raised resources. Chained like any submission;
 * recorded in *res (change "retry: ...") and as "auto-retry" events.
 * Returns an exit code.
 */
int retry_auto(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       struct feed_result *res, char **cause);

/*
 * Release the study's jobs that Slurm held after failing to launch them
 * (reason_slurm_held: a node or the controller died at their start), at
 * most RETRY_RELEASE_MAX times per attempt, each recorded as a "released"
 * event; a hold a person made is left alone. Without this, the job and
 * every job chained behind it wait forever. Returns the jobs released.
 */
#define RETRY_RELEASE_MAX 3
int retry_release_held(struct xl_ctx *ctx, struct slurm *s);

#endif
