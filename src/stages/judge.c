/* The verdict on a finished attempt. */
#include <stdlib.h>

#include "stages/judge.h"
#include "jobs/progress.h"
#include "lib/util.h"

/* Which side a final state blames. */
const char *judge_class(enum slurm_state st)
{
	switch (st) {
	case SLURM_STATE_NODE_FAIL:
	case SLURM_STATE_BOOT_FAIL:
	case SLURM_STATE_PREEMPTED:
		return "infra";
	default:
		return "program";
	}
}

static const char *state_reason(enum slurm_state st)
{
	switch (st) {
	case SLURM_STATE_FAILED:
		return "the job exited non-zero";
	case SLURM_STATE_TIMEOUT:
		return "the job ran past its time limit";
	case SLURM_STATE_OUT_OF_MEMORY:
		return "the job used more memory than it asked for";
	case SLURM_STATE_CANCELLED:
		return "the job was cancelled";
	case SLURM_STATE_NODE_FAIL:
		return "the node failed under the job";
	case SLURM_STATE_BOOT_FAIL:
		return "the node failed to boot for the job";
	case SLURM_STATE_PREEMPTED:
		return "the job was preempted";
	case SLURM_STATE_DEADLINE:
		return "the job missed its deadline";
	default:
		return "it did not complete";
	}
}

/*
 * After a stop's reason: the epochs it did not run of those the job
 * planned, and about how much of its run time that saved (at the pace of
 * the epochs it ran).
 */
static void stop_saved(const struct judge_input *in, char **reason)
{
	long long k = in->stop_epoch, left = in->stop_planned - k;
	double secs;
	char *t;

	if (k <= 0 || left <= 0)
		return;
	if (in->started_at <= 0 || in->ended_at <= in->started_at) {
		t = xasprintf("%s; %lld of %lld planned epochs not run", *reason, left,
			      in->stop_planned);
	} else {
		secs = progress_saved_secs(k, in->stop_planned, in->ended_at - in->started_at);
		t = secs < 60 ? xasprintf("%s; %lld of %lld planned epochs not run, about %.0f s "
					  "of its run time saved", *reason, left,
					  in->stop_planned, secs) :
		    secs < 3600 ? xasprintf("%s; %lld of %lld planned epochs not run, about %.0f "
					    "min of its run time saved", *reason, left,
					    in->stop_planned, secs / 60) :
		    xasprintf("%s; %lld of %lld planned epochs not run, about %.1f h of its "
			      "run time saved", *reason, left, in->stop_planned, secs / 3600);
	}
	free(*reason);
	*reason = t;
}

/* Judge a finished attempt. */
void judge_attempt(const struct judge_input *in, struct verdict *out)
{
	out->success = 0;
	out->stopped = 0;
	out->failure_class = "program";
	if (in->stop_why) {
		/* the watcher's record, written before it told the job, is the verdict */
		out->stopped = 1;
		out->failure_class = NULL;
		out->reason = progress_stopped_reason(in->stop_epoch, in->stop_why);
		stop_saved(in, &out->reason);
		return;
	}
	if (in->lost) {
		out->failure_class = "infra";
		out->reason = xstrdup("lost: Slurm no longer knows the job and never "
				      "reported a final state");
		return;
	}
	if (in->state != SLURM_STATE_COMPLETED) {
		const char *sep = in->step_note ? "; " : "", *note = in->step_note ? in->step_note : "";

		out->failure_class = judge_class(in->state);
		if (in->exit_code >= 0)
			out->reason = xasprintf("%s (ExitCode %d:%d): %s%s%s",
						slurm_state_name(in->state), in->exit_code,
						in->exit_signal < 0 ? 0 : in->exit_signal,
						state_reason(in->state), sep, note);
		else
			out->reason = xasprintf("%s: %s%s%s", slurm_state_name(in->state),
						state_reason(in->state), sep, note);
		return;
	}
	if (in->exit_code != 0 || in->exit_signal > 0) {
		out->reason = xasprintf("COMPLETED but ExitCode %d:%d: a step failed",
					in->exit_code, in->exit_signal < 0 ? 0 : in->exit_signal);
		return;
	}
	if (in->step_exit_code > 0 || in->step_exit_signal > 0) {
		out->reason = xasprintf("COMPLETED 0:0 but an srun step ended %d:%d "
					"(DerivedExitCode; without accounting Slurm does not "
					"say on which node): a step failed",
					in->step_exit_code < 0 ? 0 : in->step_exit_code,
					in->step_exit_signal < 0 ? 0 : in->step_exit_signal);
		return;
	}
	if (in->cv == CV_MISSING) {
		out->reason = xstrdup("COMPLETED 0:0 but the job wrote no cv.json");
		return;
	}
	if (in->cv == CV_INVALID) {
		out->reason = xasprintf("COMPLETED 0:0 but cv.json is invalid: %s",
					in->cv_error ? in->cv_error : "?");
		return;
	}
	if (in->started_at > 0 && in->cv_mtime < in->started_at) {
		out->reason = xstrdup("COMPLETED 0:0 but cv.json is older than this "
				      "attempt's start: it is stale, from an earlier run");
		return;
	}
	out->success = 1;
	out->failure_class = NULL;
	out->reason = xasprintf("COMPLETED 0:0, score %g", in->score);
}

/* Free the reason. */
void verdict_release(struct verdict *v)
{
	free(v->reason);
	v->reason = NULL;
}
