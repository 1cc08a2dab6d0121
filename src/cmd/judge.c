/* xloop judge: reconcile with Slurm and judge every attempt that ended. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "stages/reconcile.h"

/* Judge what ended (idempotent: a verdict is stored once). */
static int cmd_judge(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	struct refresh ref;
	struct slurm s;
	char *cause = NULL;
	int rc;

	(void)self;
	(void)args;
	slurm_init(&s);
	rc = reconcile(ctx, &s, &ref, &cause);
	if (rc) {
		error("%s", cause ? cause : "unable to reach Slurm");
	} else if (ctx->json) {
		cmd_emit_json(json_pack("{s:I, s:I, s:I, s:I}", "judged", (json_int_t)ref.judged,
					"running", (json_int_t)ref.running,
					"pending", (json_int_t)ref.pending,
					"slurm_calls", (json_int_t)ref.calls));
	} else {
		printf("judged %zu attempt%s; %zu running, %zu pending (%d Slurm call%s)\n",
		       ref.judged, ref.judged == 1 ? "" : "s", ref.running, ref.pending,
		       ref.calls, ref.calls == 1 ? "" : "s");
	}
	refresh_release(&ref);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_judge_entry = {
	.name = "judge", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "judge every attempt that ended (verdicts are stored once)",
	.help = "A success needs Slurm's COMPLETED, ExitCode 0:0 and a cv.json that the job\n"
	"wrote to \"$XLOOP_RUN_DIR/cv.json\" after the attempt started, with a finite\n"
	"number under the key metric.name in xloop.json names (default \"score\";\n"
	"when that key is absent, \"score\" is read). A job that writes\n"
	"{\"accuracy\": 0.91} needs metric.name \"accuracy\", no rename; metric.goal\n"
	"(max or min) says which way is better. Each verdict is appended to\n"
	"ops/decisions.md and committed together with the run's cv.json (the\n"
	"score's evidence). `xloop status T` shows them.\n"
	"\n"
	"An attempt its stop watcher stopped (`xloop help adopt`: progress and early\n"
	"stop) is neither: its verdict is \"stopped early at epoch K (WHY)\", from the\n"
	"record the watcher wrote in the run's directory before it told the job,\n"
	"whether Slurm then says COMPLETED or CANCELLED. Never retried on its own,\n"
	"never a parent or the best; its configuration counts as explored.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_judge,
};
