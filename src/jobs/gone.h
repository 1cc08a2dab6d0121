/*
 * Jobs xloop is done with that Slurm shows live again (issue 34). A
 * slurmctld killed between two state saves comes back from the older one:
 * a continuation a segment's wrapper cancelled is pending and held again,
 * a job whose attempt was judged runs again, and a run chained behind one
 * of them (afterany) waits for it forever. xloop knows each of its jobs by
 * the token in its comment; a live job whose token names an attempt
 * already judged, a segment not needed, continued or last, a step that
 * ended, was dropped or retried, a superseded or ended --then step, or an
 * intent given up (submit_failed, a new try made) is cancelled, whatever
 * its id (a controller that lost state gives ids again). So is a pending
 * feeder of the driver (driver.c) whose row ended or was given up: it
 * would be kept as the study's feeder, waiting on jobs long gone. A
 * running feeder is left alone: its row is done before its job ends.
 */
#ifndef XLOOP_GONE_H
#define XLOOP_GONE_H

#include <stddef.h>

#include "ctx.h"
#include "slurm/slurm.h"

/*
 * scancel every live job of q (the user's squeue) that xloop is done with,
 * each with a "repaired" event, and mark it CANCELLED in q, so that
 * nothing read from q afterwards (a line's tail, a lane) counts it or
 * chains onto it. How many were cancelled.
 */
size_t gone_cancel(struct xl_ctx *ctx, struct slurm *s, struct slurm_jobs *q);

#endif
