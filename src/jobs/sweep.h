/*
 * Sweeps (seed 002): one run per value of one variable, each a one-change
 * child of the same parent, submitted together as one job array. Array
 * index i always means the same run; each task execs its own run's job.sh
 * with its own attempt number and log, so attempts and verdicts work as
 * for single runs. Resubmitting failed indices is a new array of just them.
 */
#ifndef XLOOP_SWEEP_H
#define XLOOP_SWEEP_H

#include "jobs/submit.h"

#define SWEEP_MAX_VALUES 1000	/* Slurm's default MaxArraySize is 1001 */

/*
 * Split "V1,V2,..." into values (no empty one, no duplicate; "\," is a
 * literal comma). *v malloc'd (strv_free). 0, or XL_USAGE with *cause.
 */
int sweep_split_values(const char *list, char ***v, size_t *n, char **cause);

/*
 * Create sweep name from parent from ("best" allowed): the sweep row, then
 * one run per value (committed like `xloop new`), each given its index and
 * tagged tag_prefix--VAR-VALUE (VAR-VALUE when tag_prefix is NULL).
 * The parent must be proven unless force. On success *sw holds the sweep
 * with its tasks. An exit code with *cause otherwise; runs made before a
 * failure stay (as tasks of the sweep) and `sweep retry` submits them.
 * A parent with steps is refused (XL_DATAERR, nothing made) when the tasks
 * would run as segments (segs > 0): steps over segments are not supported.
 */
int sweep_create(struct xl_ctx *ctx, const char *name, const char *from,
		 const char *var, char **values, size_t n, long long max_parallel,
		 int force, const char *tag_prefix, long long segs, struct sweep *sw,
		 char **cause);

/* What one array submission made. */
struct sweep_submitted {
	char *array_id;		/* "" when sbatch gave none */
	char *after;		/* the job it waits for, "" if none */
	char *array_spec;	/* "0-5%2", "3,5" */
	long long *attempt;	/* the attempt number per submitted task */
	size_t nr;
	int ambiguous;
	const char *limit;	/* the Slurm limit that refused the array (static), or NULL */
};
void sweep_submitted_release(struct sweep_submitted *res);

/*
 * Submit the tasks of sw at positions pick[0..n) (indexes into sw->tasks)
 * as one job array: every job.sh checked, one intent row per task, one
 * sbatch, then each attempt gets job id "<array>_<index>". A run's later
 * steps run as arrays of their own, aftercorr on the step before
 * (steps-array.h). With then (a script), one CPU step afterany on the
 * sweep's arrays (sweep-then.h). An exit code.
 */
int sweep_submit(struct xl_ctx *ctx, struct slurm *s, const struct sweep *sw,
		 const size_t *pick, size_t n, const struct submit_opts *o,
		 const char *then, struct sweep_submitted *res, char **cause);

/* A free, tag-safe sweep name from base ("lr-sweep", "lr-sweep-2"...). */
char *sweep_auto_name(struct xl_ctx *ctx, const char *base);

#endif
