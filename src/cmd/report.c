/*
 * xloop report [--out F.html]: the study as one self-contained HTML page
 * (inline CSS and SVG, no script, nothing fetched): a leaderboard, the
 * lineage tree, the GPU timeline with its idle gaps, the score over time
 * and each run's detail. Everything comes from the state DB and the logs;
 * Slurm is not asked.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "lib/fsutil.h"
#include "report/report.h"

static const struct opt report_opts[] = {
	{ "out", OPT_STRING, "F.html", "write there (default: report.html at the study root)" },
	OPT_END,
};

/* Write the report. */
static int cmd_report(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	const char *out_opt = args_get(args, "out");
	struct report_sum sum;
	size_t i;
	char *out = NULL, *cause = NULL;
	int rc;

	(void)self;
	out = out_opt ? xstrdup(out_opt) : path_join(ctx->root, "report.html");
	if (report_write(ctx, out, &sum, &cause) < 0) {
		error("%s", cause);
		rc = XL_ERR;
	} else if (ctx->json) {
		json_t *per = json_array();

		for (i = 0; i < sum.ngpus; i++)
			json_array_append_new(per, json_pack("{s:s?, s:I, s:I, s:I}", "node",
				*sum.gpus[i].node ? sum.gpus[i].node : NULL, "gpu",
				(json_int_t)sum.gpus[i].gpu, "busy_s", (json_int_t)sum.gpus[i].busy,
				"idle_s", (json_int_t)sum.gpus[i].idle));
		cmd_emit_json(json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:o}", "schema",
					"xloop.report/1", "out", out, "runs", (json_int_t)sum.runs,
					"span_s", (json_int_t)sum.span, "idle_s", (json_int_t)sum.idle,
					"idle_percent", sum.span > 0 ? 100.0 * (double)sum.idle /
					(double)sum.span : 0.0, "gpus", per));
		rc = 0;
	} else {
		printf("wrote %s (%zu runs; GPU idle %lld s of %lld s)\n", out, sum.runs,
		       sum.idle, sum.span);
		rc = 0;
	}
	free(cause);
	free(out);
	return rc;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report", .opts = report_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_NONE,
	.summary = "the study as one self-contained HTML page (leaderboard, lineage, GPU timeline)",
	.help = "Writes report.html at the study root (or F.html; a relative F is taken\n"
	"from the current directory, or from -C DIR), which the .gitignore that\n"
	"init writes ignores. Inline CSS and SVG, no script, nothing fetched,\n"
	"readable offline, and it fits the page at any number of runs: a\n"
	"leaderboard with the best run highlighted; the lineage as an indented\n"
	"tree, one row per run with its change, boxes sized to their text, the\n"
	"path to the best run in bold; the GPU timeline, one bar per attempt,\n"
	"with the idle gaps between jobs shaded and summed (one row per GPU the\n"
	"jobs saw, recorded while they ran: \"GPU 0\" on one node, \"node1 GPU 0\"\n"
	"when the study ran on several, a job drawn on the row of each GPU it had\n"
	"on each of its nodes, one bar over the rows of its GPUs there; with each\n"
	"GPU's idle time; --json gpus; bars too narrow to see are drawn a few\n"
	"pixels at a time, titled with how many attempts they hold); the\n"
	"score of proven runs over time with the best so far; the runs stopped\n"
	"early, each one's reported values by epoch beside the best's (the newest\n"
	"12; `xloop help adopt`: progress); each run's one-line diff,\n"
	"attempts, and the log tail of failures. Past 1,000 runs, the leaderboard\n"
	"and the details show the best 200 runs and the path to the best, the\n"
	"lineage that path only (`xloop status` lists every run). Reads the state\n"
	"DB and the logs only: Slurm is not asked.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_report,
};
