/*
 * xloop next [--set VAR=VALUE [--from P] [--tag T]]: the one call an agent
 * makes. Reconcile and judge, keep the queue fed, print the briefing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "briefing/briefing.h"
#include "cmd/cmd.h"
#include "driver/driver.h"
#include "jobsh/jobsh.h"
#include "loop.h"

static const struct opt next_opts[] = {
	{ "set", OPT_STRING, "VAR=VALUE", "the change to submit now (else the plan's next entry)" },
	{ "from", OPT_STRING, "P|best", "with --set: its parent (default: best)" },
	{ "tag", OPT_STRING, "T", "with --set: its tag (default: VAR-VALUE; `xloop help tags`)" },
	{ "nice", OPT_STRING, "N", "sbatch --nice for what this call submits (default: slurm.nice)" },
	OPT_END,
};

/* Refresh, judge, feed, brief. */
static int cmd_next(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	const char *set = args_get(args, "set"), *from = args_get(args, "from");
	const char *tag = args_get(args, "tag"), *nice = args_get(args, "nice");
	struct feed_request req;
	struct feed_result fed;
	struct refresh ref;
	struct run parent;
	struct slurm s;
	char *cause = NULL, *var = NULL, *value = NULL;
	int rc, frc = 0;
	json_t *b;

	if (((from || tag) && !set &&
	     cmd_usage_error(self, "--from and --tag go with --set") < 0) ||
	    cmd_apply_nice(ctx, self, nice) < 0)
		return XL_USAGE;
	memset(&req, 0, sizeof(req));
	if (set) {
		if (jobsh_parse_setting(set, &var, &value, &cause) < 0) {
			error("%s", cause);
			free(cause);
			return XL_DATAERR;
		}
		req.var = var;
		req.value = value;
		req.from = from;
		req.tag = tag;
		/* refuse a bad --tag or --from before anything is reconciled */
		rc = tag ? loop_check_new_tag(ctx, tag, &cause) : 0;
		if (rc == 0 && from && strcmp(from, "best") != 0 &&
		    (rc = loop_find_run(ctx, from, &parent, &cause)) == 0)
			run_release(&parent);
		if (rc) {
			error("%s", cause ? cause : "unable to read the state DB");
			free(cause);
			free(var);
			free(value);
			return rc;
		}
	}
	slurm_init(&s);
	memset(&fed, 0, sizeof(fed));
	rc = reconcile(ctx, &s, &ref, &cause);
	if (rc) {
		error("%s", cause ? cause : "unable to reach Slurm");
		goto out;
	}
	frc = feed_queue(ctx, &s, &ref, &req, &fed, &cause);
	if (frc)
		error("%s", cause ? cause : "unable to feed the queue");
	driver_keep_feeder(ctx, &s, &fed, NULL);
	ref.calls = s.calls;
	b = briefing_build(ctx, &ref, &fed, 0);
	briefing_save(ctx, b, "next");
	if (ctx->json)
		cmd_emit_json(json_incref(b));
	else
		briefing_print(b);
	briefing_mark_if_written(ctx, b);	/* seen only when all of it was written */
	json_decref(b);
	rc = frc;
out:
	feed_result_release(&fed);
	refresh_release(&ref);
	free(cause);
	free(var);
	free(value);
	return rc;
}

const struct cmd_entry cmd_next_entry = {
	.name = "next", .opts = next_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "reconcile with Slurm, judge what ended, keep the queue fed, print the briefing",
	.help = "1. refreshes every live job with one squeue call (one sacct or scontrol\n"
	"   call more when something ended) and judges what ended;\n"
	"2. while fewer than queue.depth jobs wait behind the running one, turns\n"
	"   --set (else the next plan entry) into a run and submits it chained\n"
	"   afterany on the last live job (with queue.lanes N: on the last job of\n"
	"   the lane with room, N chains side by side; a run a Slurm limit refused\n"
	"   waits, without an attempt, and goes first on a later call);\n"
	"3. prints what finished since the last briefing, what runs and what each\n"
	"   pending job waits for (the job it is chained behind, by id and tag, or\n"
	"   Slurm's reason), the best run, what was submitted, why feeding stopped\n"
	"   (the breaker, queue.depth reached, a Slurm limit, the plan empty, counting the sweep\n"
	"   tasks still queued), who feeds the queue once this session ends\n"
	"   (nothing, or cron when `xloop tick` ran in the last 20 min), and the\n"
	"   next action (--json: next_action.argv is its command, .why its cause).\n"
	"A --tag taken already becomes VAR-VALUE--n2; --nice can only lower the\n"
	"priority (Slurm lets users do no more).\n"
	"The briefing counts as seen only once all of it was written (a pipe\n"
	"closed early, as by `| head`, leaves it unseen); `xloop resume --again`\n"
	"prints the last briefing again, from the copy kept in .xloop/.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_next,
};
