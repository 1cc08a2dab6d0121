/*
 * A sweep's --then step (issue 28, seed 000 §7.2's summary-and-post): one
 * CPU job (a GPU only when its own #SBATCH --gres asks) afterany on every
 * array of the sweep (its own and each step's), so it runs whatever
 * happens to the tasks. Its
 * batch script first writes the sweep's results (`sweep show --json`: per
 * task tag, value, verdict, score) to the file named by
 * XLOOP_SWEEP_RESULTS, then execs the user's script; its log is
 * .xloop/sweeps/NAME/then.out. Recorded as an intent (table sweep_then,
 * its own token) with the sweep's attempts; reconcile adopts it by token
 * or submits it once every array has its job. While it is pending,
 * reconcile adds to its Dependency every job of the sweep not covered (a
 * step retried alone for the machine's fault is a plain job); should it
 * start before xloop saw the retry, its batch script waits (`sweep show
 * --final`) until every task is judged, so the results it gives are final.
 * `sweep retry` of failed tasks records a new try afterany on the retry's
 * arrays and supersedes (cancels) an older try that has not started. Its
 * outcome is shown by `sweep show`, never a run's verdict.
 */
#ifndef XLOOP_SWEEP_THEN_H
#define XLOOP_SWEEP_THEN_H

#include "ctx.h"
#include "slurm/slurm.h"

/*
 * Copy script to .xloop/sweeps/NAME/then.sh (checked: readable, a
 * script). 0, or an exit code with *cause.
 */
int sweep_then_prepare(struct xl_ctx *ctx, const char *sweep, const char *script,
		       char **cause);

/*
 * Record the --then intent of sweep (id sweep_id), its next try, in the
 * caller's transaction; after: the tokens of its arrays in step order,
 * separated by spaces. 0 or -1.
 */
int sweep_then_intent(struct xl_ctx *ctx, long long sweep_id, const char *sweep,
		      const char *after);

/*
 * Submit (or adopt by its token from squeue q, when given) every --then
 * intent of the study whose sweep's arrays have their jobs; keep each
 * newest try's pending job waiting for every unfinished job of its sweep;
 * supersede older tries that have not started (q NULL: squeue is asked
 * when a try has a job). 0, or an exit code with *cause.
 */
int sweep_then_submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			      char **cause);

/* The script of sweep_id's newest --then try (malloc'd), or NULL when it has none. */
char *sweep_then_script(struct xl_ctx *ctx, long long sweep_id);

/* A sweep's --then step as `sweep show` reports it. */
struct sweep_then {
	char *phase, *job_id, *state, *exit_code, *log, *results, *script;
	long long try_;		/* 1, then one more per `sweep retry` */
};
void sweep_then_release(struct sweep_then *t);
/*
 * Read sweep_id's newest --then try into t (its end read from Slurm once it has
 * ended): 0, 1 when the sweep has none, -1.
 */
int sweep_then_get(struct xl_ctx *ctx, struct slurm *s, long long sweep_id,
		   struct sweep_then *t);

#endif
