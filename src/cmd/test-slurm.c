/*
 * xloop test-slurm submit|job|acct|queue: drive the Slurm adapter directly,
 * so that integration tests exercise the exact argv and parsing the real
 * commands use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "slurm/json.h"
#include "slurm/slurm.h"

static const struct opt test_slurm_submit_opts[] = {
	{ "name", OPT_STRING, "N", "sbatch --job-name" },
	{ "output", OPT_STRING, "F", "sbatch --output" },
	{ "comment", OPT_STRING, "C", "sbatch --comment" },
	{ "partition", OPT_STRING, "P", "sbatch --partition" },
	{ "gres", OPT_STRING, "G", "sbatch --gres" },
	{ "mem", OPT_STRING, "M", "sbatch --mem" },
	{ "time", OPT_STRING, "T", "sbatch --time" },
	{ "dependency", OPT_STRING, "D", "sbatch --dependency" },
	{ "cpus", OPT_STRING, "N", "sbatch --cpus-per-task" },
	OPT_END,
};

static int do_submit(struct xl_ctx *ctx, struct slurm *s, const char *script,
		     struct slurm_submit *req)
{
	long long id;
	int ambiguous, rc;
	char *cause = NULL;

	req->script = script;
	rc = slurm_sbatch(s, req, &id, &ambiguous, &cause);
	if (rc) {
		error("%s%s", cause, ambiguous ? " (the job may have been submitted)" : "");
		free(cause);
		return rc;
	}
	if (ctx->json)
		cmd_emit_json(json_pack("{s:I}", "job_id", (json_int_t)id));
	else
		printf("%lld\n", id);
	return XL_OK;
}

static int do_job(struct slurm *s, const char *id)
{
	struct slurm_jobs jobs = SLURM_JOBS_INIT;
	char *cause = NULL;
	int unknown, rc = slurm_scontrol_job(s, id, &jobs, &unknown, &cause);

	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	cmd_emit_json(json_pack("{s:b, s:o}", "unknown_job", unknown, "jobs",
				slurm_jobs_json(&jobs)));
	slurm_jobs_release(&jobs);
	return XL_OK;
}

static int do_acct(struct slurm *s, const char *id)
{
	struct slurm_acct acct = SLURM_ACCT_INIT;
	struct slurm_acct_summary sum;
	char *cause = NULL;
	const char *ids[] = { id };
	int noacct, rc = slurm_sacct(s, ids, 1, &acct, &noacct, &cause);
	json_t *doc, *rows;
	size_t i;

	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	rows = json_array();
	for (i = 0; i < acct.nr; i++)
		json_array_append_new(rows, slurm_acct_row_json(&acct, &acct.rows[i]));
	doc = json_pack("{s:b, s:o}", "no_accounting", noacct, "rows", rows);
	if (acct.nr && slurm_acct_summarize(&acct, id, &sum, NULL) == 0)
		json_object_set_new(doc, "summary", slurm_acct_summary_json(&sum));
	cmd_emit_json(doc);
	slurm_acct_release(&acct);
	return XL_OK;
}

static int do_queue(struct slurm *s)
{
	struct slurm_jobs jobs = SLURM_JOBS_INIT;
	char *cause = NULL;
	int rc = slurm_squeue_mine(s, &jobs, &cause);

	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	cmd_emit_json(json_pack("{s:o}", "jobs", slurm_jobs_json(&jobs)));
	slurm_jobs_release(&jobs);
	return XL_OK;
}

/* test-slurm submit SCRIPT [--name N] ... */
static int cmd_test_slurm_submit(struct xl_ctx *ctx, const struct cmd_entry *self,
				 struct cmd_args *args)
{
	struct slurm_submit req;
	const char *cpus = args_get(args, "cpus"), *errstr;
	struct slurm s;

	memset(&req, 0, sizeof(req));
	req.job_name = args_get(args, "name");
	req.output = args_get(args, "output");
	req.comment = args_get(args, "comment");
	req.partition = args_get(args, "partition");
	req.gres = args_get(args, "gres");
	req.mem = args_get(args, "mem");
	req.time = args_get(args, "time");
	req.dependency = args_get(args, "dependency");
	if (cpus && parse_ll(cpus, 1, 4096, &req.cpus, &errstr) < 0)
		return cmd_usage_error(self, "--cpus '%s': %s", cpus, errstr), XL_USAGE;
	slurm_init(&s);
	return do_submit(ctx, &s, args->pos[0], &req);
}

/* test-slurm queue | job ID | acct ID */
static int cmd_test_slurm_read(struct xl_ctx *ctx, const struct cmd_entry *self,
			       struct cmd_args *args)
{
	struct slurm s;

	(void)ctx;
	slurm_init(&s);
	if (strcmp(self->name, "test-slurm queue") == 0)
		return do_queue(&s);
	if (strcmp(self->name, "test-slurm job") == 0)
		return do_job(&s, args->pos[0]);
	return do_acct(&s, args->pos[0]);
}

static const struct cmd_entry test_slurm_subs[] = {
	{ .name = "test-slurm submit", .opts = test_slurm_submit_opts, .args = "SCRIPT", .min = 1,
	  .max = 1, .exec = cmd_test_slurm_submit,
	  .summary = "sbatch SCRIPT and print the job id" },
	{ .name = "test-slurm queue", .exec = cmd_test_slurm_read,
	  .summary = "squeue: the user's jobs as JSON" },
	{ .name = "test-slurm job", .args = "ID", .min = 1, .max = 1, .exec = cmd_test_slurm_read,
	  .summary = "scontrol show job ID as JSON" },
	{ .name = "test-slurm acct", .args = "ID", .min = 1, .max = 1, .exec = cmd_test_slurm_read,
	  .summary = "sacct of job ID as JSON" },
	{ NULL },
};

const struct cmd_entry cmd_test_slurm_entry = {
	.name = "test-slurm", .opts = NULL, .args = "", .min = 0, .max = 0,
	.target = CMD_TARGET_NONE,
	.summary = "call the Slurm adapter directly and print what it read (for tests)",
	.help = "submit prints the job id; job (scontrol), acct (sacct) and queue (squeue)\n"
	"print the parsed records as JSON.\n",
	.flags = CMD_HIDDEN, .subs = test_slurm_subs,
};
