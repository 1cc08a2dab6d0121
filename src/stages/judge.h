/*
 * The strict verdict (SPEC rule 4), as a pure function: success only for
 * COMPLETED + ExitCode 0:0 + a valid cv.json written after the attempt
 * started. Everything else is a failure with a reason, classed infra
 * (the machine's fault: retry) or program (the job's fault: surface it).
 * An attempt with a stop record (issue 45) is neither: "stopped early at
 * epoch K (WHY)", whatever Slurm's final state.
 */
#ifndef XLOOP_JUDGE_H
#define XLOOP_JUDGE_H

#include <time.h>

#include "slurm/parse.h"

enum cv_status { CV_OK, CV_MISSING, CV_INVALID };

struct judge_input {
	int lost;		/* Slurm forgot the job without a final state */
	enum slurm_state state;	/* final state (sacct summary or scontrol) */
	int exit_code;		/* ExitCode status; -1 unknown */
	int exit_signal;
	/* the worst srun step's, where only scontrol's DerivedExitCode tells; -1 unknown */
	int step_exit_code, step_exit_signal;
	const char *step_note;	/* the failed step that set state (accounting), or NULL */
	enum cv_status cv;
	const char *cv_error;	/* why CV_INVALID */
	double score;		/* with CV_OK */
	time_t cv_mtime;	/* with CV_OK */
	time_t started_at;	/* when the attempt started (0: unknown) */
	const char *stop_why;	/* the attempt's stop record (watch.h), or NULL */
	long long stop_epoch;	/* with stop_why */
	long long stop_planned;	/* the epochs the job planned (0: not said) */
	time_t ended_at;	/* when the attempt ended (0: unknown) */
};

struct verdict {
	int success;
	int stopped;			/* stopped early: neither success nor failure */
	const char *failure_class;	/* "infra", "program"; NULL on success */
	char *reason;			/* one line; malloc'd */
};

/* Judge one finished attempt. */
void judge_attempt(const struct judge_input *in, struct verdict *out);
void verdict_release(struct verdict *v);

/* "infra" for NODE_FAIL, BOOT_FAIL, PREEMPTED (and lost), else "program". */
const char *judge_class(enum slurm_state st);

#endif
