/*
 * The steps of a sweep (issue 28): each later step of an array runs as an
 * array of its own, each task waiting for its own task of the step before
 * (--dependency=aftercorr:ARRAY with --kill-on-invalid-dep=yes). Every
 * task's step is a step_job row as for single runs; the rows of one step
 * array share one token, "<array token>_<index>" each, so a crash leaves
 * one job per (attempt, step): what squeue shows by the token is adopted,
 * the rest submitted as one array.
 */
#ifndef XLOOP_STEPS_ARRAY_H
#define XLOOP_STEPS_ARRAY_H

#include "ctx.h"
#include "slurm/slurm.h"

/* One array task whose attempt was just recorded. */
struct steps_array_task {
	long long run_id, attempt_id, n, idx;
	const char *tag;
};

/*
 * The intents of every later step of the tasks (a sweep's new array), in
 * the caller's transaction: one token per step array, tokens[0..*nsteps)
 * (room for STEPS_MAX). 0 or -1.
 */
int steps_array_intents(struct xl_ctx *ctx, const struct steps_array_task *t, size_t n,
			char (*tokens)[27], size_t *nsteps);

/* 1 when a step row's token is a step array's ("<token>_<index>"). */
int steps_array_token(const char *token);

/*
 * Submit the step array whose rows carry token prefix (the part before
 * "_") and still wait, as one sbatch, once every task's step before has
 * its job; 0 when submitted or when it must wait, or an exit code with
 * *cause (the rows are then submit_failed when sbatch clearly refused).
 */
int steps_array_submit(struct xl_ctx *ctx, struct slurm *s, const char *token, char **cause);

/*
 * The job of q that carries a step array token "<prefix>_<index>" (its
 * array's comment ends in ":<prefix>", its task id is the index), or NULL.
 */
const struct slurm_job *steps_array_find(const struct slurm_jobs *q, const char *token);

#endif
