/*
 * xloop retry T [--mem M] [--time D]: a new attempt of the same run (same
 * job.sh), the resource change recorded on the attempt.
 * xloop cancel T: scancel the run's live job, recorded as cancelled by you.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "driver/driver.h"
#include "loop.h"
#include "stages/reconcile.h"
#include "jobs/segments.h"
#include "jobs/steps-run.h"
#include "jobs/submit.h"

static const struct opt retry_opts[] = {
	{ "mem", OPT_STRING, "M", "this attempt's memory (as resources.mem: 8G), recorded on it" },
	{ "time", OPT_STRING, "D", "this attempt's time limit (as resources.time: 2:00:00)" },
	{ "segments", OPT_STRING, "N", "run as up to N segments of --time each (0: one job), recorded" },
	{ "no-chain", OPT_FLAG, NULL, "start as soon as Slurm can (no afterany chain)" },
	OPT_END,
};

/* Submit the run again. */
static int cmd_retry(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	struct submit_opts o;
	struct submit_result res;
	struct attempt a;
	struct slurm s;
	struct run *r = args->run;
	char *cause = NULL, *carried = NULL;
	int rc;

	(void)self;
	cmd_submit_opts(args, &o);
	/* judge first what may have ended since the last look */
	slurm_init(&s);
	{
		struct refresh ref;

		if (reconcile(ctx, &s, &ref, &cause) == 0)
			refresh_release(&ref);
		FREE_AND_NULL(cause);
	}
	if (attempts_latest(&ctx->db, r->id, &a) == 0) {
		int live = !*a.verdict && (strcmp(a.phase, "submitted") == 0 ||
					   strcmp(a.phase, "submitting") == 0);

		/* a run that needed segments still does */
		if (!o.segments)
			o.segments = carried = submit_override_value(a.overrides, "segments");
		attempt_release(&a);
		if (live) {
			error("%s's attempt is still queued or running: `xloop cancel %s` "
			      "first, or `xloop judge` if it has ended", r->tag, r->tag);
			free(carried);
			return XL_DATAERR;
		}
	}
	rc = submit_attempt(ctx, &s, r, &o, &res, &cause);
	if (rc)
		error("%s", cause ? cause : "retry failed");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:I, s:s, s:s, s:o}", "tag", r->tag,
					"attempt", (json_int_t)res.n, "job_id", res.job_id,
					"log", res.log_path, "after",
					*res.after ? json_string(res.after) : json_null()));
	else
		printf("retrying %s as attempt %lld, job %s%s%s%s%s\n  log: %s\n", r->tag,
		       res.n, res.job_id, *res.after ? " after job " : "", res.after,
		       o.mem || o.time ? " with " : "",
		       o.mem ? "more memory" : o.time ? "more time" : "", res.log_path);
	if (rc == 0)	/* driver.mode slurm: a feeder judges it once it ends */
		driver_keep_feeder(ctx, &s, NULL, NULL);
	submit_result_release(&res);
	free(carried);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_retry_entry = {
	.name = "retry", .opts = retry_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_RUN,
	.summary = "submit a run again as a new attempt, with recorded resource changes",
	.help = "The same job.sh is submitted as attempt N+1 (its own log). --mem and\n"
	"--time override xloop.json for this attempt and are recorded on it, and so\n"
	"does --segments N (segments.max; see `xloop submit --help`). Without\n"
	"--segments the retry keeps the --segments the latest attempt was given.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_retry,
};

/* Cancel the run's live job. */
static int cmd_cancel(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	struct attempt a;
	struct slurm s;
	struct run *r = args->run;
	struct stmt q;
	char *cause = NULL;
	int rc, steps;

	(void)self;
	rc = attempts_latest(&ctx->db, r->id, &a);
	if (rc != 0 || *a.verdict || !*a.job_id) {
		error("%s has no queued or running job to cancel", r->tag);
		if (rc == 0)
			attempt_release(&a);
		return XL_DATAERR;
	}
	slurm_init(&s);
	/* first: none may start after it */
	segments_cancel_queued(ctx, &s, a.id, "cancelled by the user");
	steps = steps_cancel(ctx, &s, &a);	/* the later steps, if any */
	rc = slurm_scancel(&s, a.job_id, &cause);
	if (rc && steps) {
		/* job.sh's job had ended already: the step that ran is what was cancelled */
		FREE_AND_NULL(cause);
		rc = 0;
	}
	if (rc == 0 && db_prepare(&ctx->db, &q, "UPDATE attempt SET cancelled_by_user = 1"
				  " WHERE id = :id") == 0) {
		db_bind_int64(&q, ":id", a.id);
		db_step(&q);
		db_finalize(&q);
		loop_event(ctx, "cancelled", r->id, a.id, "cancelled by the user");
	}
	if (rc)
		error("%s", cause);
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s}", "tag", r->tag, "job_id", a.job_id));
	else
		printf("cancelled %s (job %s); its verdict will say CANCELLED\n", r->tag,
		       a.job_id);
	attempt_release(&a);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_cancel_entry = {
	.name = "cancel", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_RUN,
	.summary = "scancel the run's queued or running job and record it",
	.help = "",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_cancel,
};
