/*
 * xloop submit T [--after JOBID] [--no-chain] [--mem M] [--time D] [--segments N]:
 * preflight, then sbatch with attempt-numbered logs, chained so the GPU
 * never idles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "driver/driver.h"
#include "loop.h"
#include "jobs/submit.h"

static const struct opt submit_opts[] = {
	{ "after", OPT_STRING, "JOBID", "chain onto this job instead" },
	{ "no-chain", OPT_FLAG, NULL, "start as soon as Slurm can" },
	{ "mem", OPT_STRING, "M", "override resources.mem for this attempt (recorded)" },
	{ "time", OPT_STRING, "D", "override resources.time for this attempt (recorded)" },
	{ "segments", OPT_STRING, "N", "run as up to N segments of --time each (0: one job): see below" },
	{ "nice", OPT_STRING, "N", "sbatch --nice for this attempt (default: slurm.nice)" },
	OPT_END,
};

/* Submit a new attempt of a run. */
static int cmd_submit(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	struct submit_opts o;
	struct submit_result res;
	struct slurm s;
	struct run *r = args->run;
	char *cause = NULL;
	int rc;

	cmd_submit_opts(args, &o);
	if ((o.after && o.no_chain &&
	     cmd_usage_error(self, "--after and --no-chain contradict each other") < 0) ||
	    cmd_apply_nice(ctx, self, args_get(args, "nice")) < 0)
		return XL_USAGE;
	slurm_init(&s);
	rc = submit_attempt(ctx, &s, r, &o, &res, &cause);
	if (rc) {
		error("%s", cause ? cause : "submission failed");
		if (res.ambiguous)
			fprintf(stderr, "xloop: sbatch may have submitted attempt %lld anyway; "
				"'xloop next' will find it by its token before anything is "
				"submitted again\n", res.n);
	} else if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:I, s:s, s:s, s:o}", "tag", r->tag,
					"attempt", (json_int_t)res.n, "job_id", res.job_id,
					"log", res.log_path, "after",
					*res.after ? json_string(res.after) : json_null()));
	} else {
		printf("submitted %s attempt %lld as job %s%s%s\n  log: %s\n", r->tag,
		       res.n, res.job_id, *res.after ? ", after job " : "", res.after,
		       res.log_path);
	}
	if (rc == 0)	/* driver.mode slurm: a feeder judges it once it ends */
		driver_keep_feeder(ctx, &s, NULL, NULL);
	free(cause);
	submit_result_release(&res);
	return rc;
}

const struct cmd_entry cmd_submit_entry = {
	.name = "submit", .opts = submit_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_RUN,
	.summary = "preflight a run and submit it to Slurm as a new attempt",
	.help = "Checks first (nothing is submitted when one fails): job.sh exists, is\n"
	"executable and passes `bash -n`; --time is within the partition's MaxTime;\n"
	"--mem fits the partition's nodes. Then sbatch with the resources of\n"
	"xloop.json, the log runs/<study>/T/slurm/attemptN.out (N: the first free\n"
	"number; logs are never overwritten), job name T, a token in the comment,\n"
	"XLOOP_RUN_DIR/TAG/ATTEMPT/STUDY/ROOT in the job's environment, and\n"
	"--dependency=afterany on the newest xloop job still queued or running.\n"
	"\n"
	"#SBATCH lines in job.sh versus xloop.json: xloop passes --partition, --gres,\n"
	"--cpus-per-task, --mem, --time (and --account, --qos, --nice when set) from\n"
	"xloop.json, or from --mem/--time here, plus --job-name, --output, --comment,\n"
	"--chdir and --export=ALL, all on sbatch's command line, and sbatch lets its\n"
	"command line win over #SBATCH lines. So for those options Slurm gets\n"
	"xloop.json's value; every other #SBATCH line (--constraint, --nodes, ...)\n"
	"still applies. `xloop adopt` warns about each #SBATCH line that differs.\n"
	"\n"
	"Segments (segments.max > 0 or --segments N, which overrides segments.max\n"
	"and the run's own from `xloop new --segments`; recorded): the job gets\n"
	"--signal=B:<segments.signal>@<segments.lead> and XLOOP_SEGMENT=1, 2, ...;\n"
	"segment k+1 is queued behind k (afternotok) and runs in the same directory.\n"
	"A segment that exits 85 (XLOOP_CONTINUE), or ends TIMEOUT after the signal,\n"
	"continues when segments.checkpoint changed during it; the verdict comes once,\n"
	"from the last segment. The log is attemptN.out, one ==== header per segment.\n"
	"A segment the machine killed (NODE_FAIL, BOOT_FAIL, PREEMPTED) is retried\n"
	"as that segment, from the checkpoint: it counts toward retry.infra_max, not\n"
	"toward N. Retries (`xloop retry`, automatic ones) keep the attempt's\n"
	"--segments unless given another.\n"
	"\n"
	"A run with steps (`xloop adopt --step NAME=SCRIPT`): job.sh is submitted as\n"
	"above (XLOOP_STEP=job), then each later step as its own job with\n"
	"--dependency=afterok on the step before and --kill-on-invalid-dep=yes, no\n"
	"GPU unless its #SBATCH --gres asks, its own #SBATCH --cpus-per-task, --mem\n"
	"and --time where it has them, XLOOP_STEP=NAME and the log\n"
	"slurm/attemptN.NAME.out. The next run chains on job.sh's job. Every step's\n"
	"script is checked first as job.sh is. When job.sh runs as segments, the\n"
	"step after it waits afterok on the current segment or its queued\n"
	"continuation (either may be the last), kept up to date by reconcile; one\n"
	"that Slurm dropped because the training went on is submitted again behind\n"
	"the last segment. A later step itself runs as one job.\n"
	"\n"
	"With driver.mode slurm, a feeder job waits behind the run afterwards (as\n"
	"after `next`), so the run is judged once it ends with no other xloop call.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_submit,
};
