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
#include "driver.h"
#include "loop.h"
#include "cmd/opts.h"
#include "reconcile.h"
#include "segments.h"
#include "submit.h"

/* Submit the run again. */
static int cmd_retry(struct xl_ctx *ctx, const struct cmd_entry *self,
		     int argc, char **argv)
{
	struct submit_opts o;
	const struct opt opts[] = {
		{ "mem", OPT_STRING, &o.mem },
		{ "time", OPT_STRING, &o.time },
		{ "segments", OPT_STRING, &o.segments },
		{ "no-chain", OPT_FLAG, &o.no_chain },
		OPT_END,
	};
	struct submit_result res;
	struct attempt a;
	struct slurm s;
	struct run r;
	char **pos, *cause = NULL, *carried = NULL;
	int npos, rc;

	memset(&o, 0, sizeof(o));
	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0) {
		free(pos);
		return XL_USAGE;
	}
	rc = loop_find_run(ctx, pos[0], &r, &cause);
	free(pos);
	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	/* judge first what may have ended since the last look */
	slurm_init(&s);
	{
		struct refresh ref;

		if (reconcile(ctx, &s, &ref, &cause) == 0)
			refresh_release(&ref);
		FREE_AND_NULL(cause);
	}
	if (attempts_latest(&ctx->db, r.id, &a) == 0) {
		int live = !*a.verdict && (strcmp(a.phase, "submitted") == 0 ||
					   strcmp(a.phase, "submitting") == 0);

		/* a run that needed segments still does */
		if (!o.segments)
			o.segments = carried = submit_override_value(a.overrides, "segments");
		attempt_release(&a);
		if (live) {
			error("%s's attempt is still queued or running: `xloop cancel %s` "
			      "first, or `xloop judge` if it has ended", r.tag, r.tag);
			run_release(&r);
			free(carried);
			return XL_DATAERR;
		}
	}
	rc = submit_attempt(ctx, &s, &r, &o, &res, &cause);
	if (rc)
		error("%s", cause ? cause : "retry failed");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:I, s:s, s:s, s:o}", "tag", r.tag,
					"attempt", (json_int_t)res.n, "job_id", res.job_id,
					"log", res.log_path, "after",
					*res.after ? json_string(res.after) : json_null()));
	else
		printf("retrying %s as attempt %lld, job %s%s%s%s%s\n  log: %s\n", r.tag,
		       res.n, res.job_id, *res.after ? " after job " : "", res.after,
		       o.mem || o.time ? " with " : "",
		       o.mem ? "more memory" : o.time ? "more time" : "", res.log_path);
	if (rc == 0)	/* driver.mode slurm: a feeder judges it once it ends */
		driver_keep_feeder(ctx, &s, NULL, NULL);
	submit_result_release(&res);
	run_release(&r);
	free(carried);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_retry_entry = {
	"retry", "T [--mem M] [--time D] [--segments N] [--no-chain]",
	"submit a run again as a new attempt, with recorded resource changes",
	"The same job.sh is submitted as attempt N+1 (its own log). --mem and\n"
	"--time override xloop.json for this attempt and are recorded on it, and so\n"
	"does --segments N (segments.max; see `xloop submit --help`). Without\n"
	"--segments the retry keeps the --segments the latest attempt was given.\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_retry,
};

/* Cancel the run's live job. */
static int cmd_cancel(struct xl_ctx *ctx, const struct cmd_entry *self,
		      int argc, char **argv)
{
	struct attempt a;
	struct slurm s;
	struct run r;
	struct stmt q;
	char **pos, *cause = NULL;
	int npos, rc;

	rc = opts_parse(ctx, self, NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0) {
		free(pos);
		return XL_USAGE;
	}
	rc = loop_find_run(ctx, pos[0], &r, &cause);
	free(pos);
	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	rc = attempts_latest(&ctx->db, r.id, &a);
	if (rc != 0 || *a.verdict || !*a.job_id) {
		error("%s has no queued or running job to cancel", r.tag);
		if (rc == 0)
			attempt_release(&a);
		run_release(&r);
		return XL_DATAERR;
	}
	slurm_init(&s);
	/* first: none may start after it */
	segments_cancel_queued(ctx, &s, a.id, "cancelled by the user");
	rc = slurm_scancel(&s, a.job_id, &cause);
	if (rc == 0 && db_prepare(&ctx->db, &q, "UPDATE attempt SET cancelled_by_user = 1"
				  " WHERE id = :id") == 0) {
		db_bind_int64(&q, ":id", a.id);
		db_step(&q);
		db_finalize(&q);
		loop_event(ctx, "cancelled", r.id, a.id, "cancelled by the user");
	}
	if (rc)
		error("%s", cause);
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s}", "tag", r.tag, "job_id", a.job_id));
	else
		printf("cancelled %s (job %s); its verdict will say CANCELLED\n", r.tag,
		       a.job_id);
	attempt_release(&a);
	run_release(&r);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_cancel_entry = {
	"cancel", "T", "scancel the run's queued or running job and record it",
	"", CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_cancel,
};
