/*
 * The environment xloop gives every job of a run (SPEC "The job's
 * environment", issue 36): XLOOP_RUN_DIR, XLOOP_TAG, XLOOP_ATTEMPT,
 * XLOOP_STUDY, XLOOP_ROOT, XLOOP_STEP, XLOOP_SEGMENT, XLOOP_RUN_ID (the same
 * over every attempt, segment, step and Slurm requeue), then the variables
 * xloop.json's tracker names: each of tracker.run_id_vars set to the run id,
 * and tracker.env as written. Slurm keeps a job's environment over a requeue,
 * so what sbatch was given is what every start of the job sees.
 */
#ifndef XLOOP_JOBENV_H
#define XLOOP_JOBENV_H

#include "lib/buf.h"
#include "config.h"

#define JOBENV_MAX (8 + 2 * CONFIG_TRACKER_MAX)

struct jobenv {
	char *v[JOBENV_MAX + 1];	/* "NAME=VALUE", NULL-terminated */
	size_t n;
};

/* What one job of a run is. */
struct jobenv_job {
	const char *tag;
	const char *run_id;	/* runs_ident */
	long long attempt;
	const char *step;	/* STEP_FIRST for job.sh */
	long long segment;	/* 1 when the run is not segmented, and in later steps */
};

/* Fill e for job j of the study in root (config c). */
void jobenv_init(struct jobenv *e, const struct config *c, const char *root,
		 const struct jobenv_job *j);
/* e's entries, for slurm_submit.env. */
const char *const *jobenv_vec(const struct jobenv *e);
void jobenv_release(struct jobenv *e);

/*
 * Shell lines for an array's batch script, after it set $tag, $n and $rid
 * (the task's run id) for the task: XLOOP_RUN_ID and the tracker's
 * variables exported.
 */
void jobenv_shell(const struct config *c, struct buf *b);

#endif
