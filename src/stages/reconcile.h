/*
 * Reconcile the state DB with Slurm and judge what ended (SPEC rules 4-6):
 * a constant number of Slurm calls per cycle (one squeue; one sacct or
 * scontrol only when something left the queue), verdicts stored the first
 * time they are seen, each verdict appended to ops/decisions.md.
 */
#ifndef XLOOP_RECONCILE_H
#define XLOOP_RECONCILE_H

#include "ctx.h"
#include "stages/lanes.h"	/* struct refresh */
#include "slurm/slurm.h"

#define LOST_AFTER_SECS 60	/* missing everywhere on two polls this far apart */

/*
 * Refresh all unfinished attempts of the study and judge those that ended.
 * Returns 0 or an exit code (XL_TEMPFAIL when Slurm cannot be reached).
 */
int reconcile(struct xl_ctx *ctx, struct slurm *s, struct refresh *out,
	      char **cause);

#endif
