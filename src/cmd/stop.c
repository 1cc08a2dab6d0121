/*
 * xloop stop T: ask the stop watcher of the run's live attempt to stop it
 * early (issue 45). It writes the request into the run's directory; the
 * watcher on the node sees it within seconds, writes its stop record (the
 * verdict: "stopped early at epoch K (you asked (xloop stop))") and tells
 * the job, which writes its cv.json and exits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "jobs/watch.h"
#include "loop.h"
#include "runs.h"

/* Ask the watcher of the run's live attempt to stop it. */
static int cmd_stop(struct xl_ctx *ctx, const struct cmd_entry *self, struct cmd_args *args)
{
	struct run *r = args->run;
	struct attempt a;
	char *dir, *cause = NULL, *what;
	int rc;

	(void)self;
	rc = attempts_latest(&ctx->db, r->id, &a);
	if (rc != 0 || *a.verdict || !*a.job_id || strcmp(a.phase, "submitted") != 0) {
		error("%s has no queued or running job to stop%s", r->tag,
		      rc == 0 && *a.verdict ? " (its latest attempt is judged)" : "");
		if (rc == 0)
			attempt_release(&a);
		return XL_DATAERR;
	}
	if (!ctx->cfg.stop.on)
		warning("stop.on is false in xloop.json: a job submitted so has no watcher to "
			"see the request; `xloop cancel %s` ends it", r->tag);
	dir = run_dir(ctx->root, ctx->cfg.study, r->tag);
	rc = watch_request(dir, a.n, &cause) < 0 ? XL_ERR : 0;
	if (rc == 0) {
		what = xasprintf("stop asked for attempt %lld (job %s)", a.n, a.job_id);
		loop_event(ctx, "stop", r->id, a.id, what);
		free(what);
	}
	if (rc)
		error("%s", cause ? cause : "unable to write the stop request");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:I, s:s}", "tag", r->tag, "attempt",
					(json_int_t)a.n, "job_id", a.job_id));
	else
		printf("asked %s (attempt %lld, job %s) to stop: its watcher stops it within "
		       "a few seconds of starting; the verdict will say \"stopped early\"\n",
		       r->tag, a.n, a.job_id);
	attempt_release(&a);
	free(cause);
	free(dir);
	return rc;
}

const struct cmd_entry cmd_stop_entry = {
	.name = "stop", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_RUN,
	.summary = "stop a run early: its job writes cv.json and exits, judged \"stopped early\"",
	.help = "Writes a stop request ($XLOOP_RUN_DIR/stop-request) for the run's queued or\n"
	"running attempt. The stop watcher in the job's batch script (stop.on) sees it\n"
	"within a few seconds on the node, with no DB access: it writes its stop record\n"
	"($XLOOP_RUN_DIR/stopped), then the job has stop.grace seconds to write cv.json\n"
	"and exit before it is ended. The verdict is \"stopped early at epoch K (you\n"
	"asked (xloop stop))\" whatever Slurm says: neither success nor failure. A\n"
	"stopped run counts against autopilot's budget, never against the breaker;\n"
	"`xloop retry T` runs it again to its end. See `xloop help adopt` (progress).\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_stop,
};
