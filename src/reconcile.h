/*
 * Reconcile the state DB with Slurm and judge what ended (SPEC rules 4-6):
 * a constant number of Slurm calls per cycle (one squeue; one sacct or
 * scontrol only when something left the queue), verdicts stored the first
 * time they are seen, each verdict appended to ops/decisions.md.
 */
#ifndef XLOOP_RECONCILE_H
#define XLOOP_RECONCILE_H

#include "ctx.h"
#include "lanes.h"
#include "slurm/slurm.h"

#define LOST_AFTER_SECS 60	/* missing everywhere on two polls this far apart */
#define SUBMIT_ORPHAN_SECS 120	/* an intent older than this with no job: failed */
/* its submit_error (a crash between the intent and sbatch, most likely) */
#define SUBMIT_ORPHAN_ERROR "sbatch never answered and no job carries this attempt's token"

struct refresh {
	size_t pending;		/* our jobs waiting */
	size_t running;		/* our jobs running (or completing) */
	size_t judged;		/* verdicts reached in this call */
	char *newest_live_job;	/* the job a new submission chains onto, "" */
	struct lanes lanes;	/* the study's live jobs by lane (queue.lanes) */
	size_t user_live;	/* all of the user's live jobs, the study's among them */
	int calls;		/* Slurm commands run */
};

/*
 * Refresh all unfinished attempts of the study and judge those that ended.
 * Returns 0 or an exit code (XL_TEMPFAIL when Slurm cannot be reached).
 */
int reconcile(struct xl_ctx *ctx, struct slurm *s, struct refresh *out,
	      char **cause);
void refresh_release(struct refresh *r);
/* One statement on row :id (bound), with :text and :num when the SQL names them. 0 or -1. */
int reconcile_exec(struct xl_ctx *ctx, const char *sql, long long id, const char *text,
		   long long num);
/* How long an intent may wait for its sbatch (SUBMIT_ORPHAN_SECS; tests shorten it). */
long long reconcile_orphan_secs(void);

#endif
