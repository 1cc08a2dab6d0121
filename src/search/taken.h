/*
 * Configurations taken already (issue 17: two runs with the same
 * configuration are the same experiment, so "already run or queued" means
 * the same configuration, whatever parent and change lead to it). Taken
 * is: a run of the study (any verdict, or none yet), a proposal of
 * autopilot whose run is not made yet, or (when asked) a queued plan entry.
 * A change of the seed variable (a replicate) is taken only when its
 * configuration has that seed already. Reads only (best_load).
 */
#ifndef XLOOP_TAKEN_H
#define XLOOP_TAKEN_H

#include "search/best.h"
#include "ctx.h"
#include "runs.h"

/* Check the plan's queued entries too (all but the entry skip_plan, 0: none). */
#define TAKEN_PLAN 1

/*
 * Whether var=value from parent makes a configuration taken already: 0
 * free, XL_DATAERR with *cause naming what has it (and what to do), or
 * XL_ERR. A plan entry from "best" counts from the run best stands for now.
 */
int taken_check(struct xl_ctx *ctx, const struct run *parent, const char *var,
		const char *value, int flags, long long skip_plan, char **cause);

/*
 * The configuration keys of the plan's queued entries (their parents as
 * they resolve in bs; one from "best" while there is none is left out), for
 * autopilot, which never proposes one of them. malloc'd; best_strings_free.
 */
char **taken_plan_keys(struct xl_ctx *ctx, const struct best_state *bs, size_t *n);

#endif
