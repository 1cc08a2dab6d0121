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
#include "cmd/opts.h"
#include "slurm/json.h"
#include "slurm/slurm.h"

static int do_submit(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct slurm *s, char **pos, int npos, struct slurm_submit *req)
{
	long long id;
	int ambiguous, rc;
	char *cause = NULL;

	if (opts_npos(self, pos, npos, 2, 2) < 0)
		return XL_USAGE;
	req->script = pos[1];
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

/* Run one adapter call. */
static int cmd_test_slurm(struct xl_ctx *ctx, const struct cmd_entry *self,
			  int argc, char **argv)
{
	struct slurm_submit req;
	const char *cpus = NULL, *errstr;
	const struct opt opts[] = {
		{ "name", OPT_STRING, &req.job_name },
		{ "output", OPT_STRING, &req.output },
		{ "comment", OPT_STRING, &req.comment },
		{ "partition", OPT_STRING, &req.partition },
		{ "gres", OPT_STRING, &req.gres },
		{ "mem", OPT_STRING, &req.mem },
		{ "time", OPT_STRING, &req.time },
		{ "dependency", OPT_STRING, &req.dependency },
		{ "cpus", OPT_STRING, &cpus },
		OPT_END,
	};
	struct slurm s;
	char **pos;
	int npos, rc;

	memset(&req, 0, sizeof(req));
	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (cpus && parse_ll(cpus, 1, 4096, &req.cpus, &errstr) < 0) {
		cmd_usage_error(self, "--cpus '%s': %s", cpus, errstr);
		free(pos);
		return XL_USAGE;
	}
	slurm_init(&s);
	rc = XL_USAGE;
	if (npos < 1)
		cmd_usage_error(self, "missing subcommand");
	else if (strcmp(pos[0], "submit") == 0)
		rc = do_submit(ctx, self, &s, pos, npos, &req);
	else if (strcmp(pos[0], "queue") == 0 && opts_npos(self, pos, npos, 1, 1) == 0)
		rc = do_queue(&s);
	else if (strcmp(pos[0], "job") == 0 && opts_npos(self, pos, npos, 2, 2) == 0)
		rc = do_job(&s, pos[1]);
	else if (strcmp(pos[0], "acct") == 0 && opts_npos(self, pos, npos, 2, 2) == 0)
		rc = do_acct(&s, pos[1]);
	else if (strcmp(pos[0], "submit") && strcmp(pos[0], "queue") &&
		 strcmp(pos[0], "job") && strcmp(pos[0], "acct"))
		cmd_usage_error(self, "unknown subcommand '%s'", pos[0]);
	free(pos);
	return rc;
}

const struct cmd_entry cmd_test_slurm_entry = {
	"test-slurm", "submit SCRIPT [--name N] [--output F] [--comment C] [--partition P]"
	" [--gres G] [--cpus N] [--mem M] [--time T] [--dependency D] | job ID | acct ID | queue",
	"call the Slurm adapter directly and print what it read (for tests)",
	"submit prints the job id; job (scontrol), acct (sacct) and queue (squeue)\n"
	"print the parsed records as JSON.\n",
	CMD_HIDDEN, cmd_test_slurm,
};
