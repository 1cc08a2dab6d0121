/*
 * xloop doctor: a preflight of the environment. Each check ends ok, warn or
 * fail, with the fix in one line; exit 1 when one fails, 69 when Slurm's
 * commands are not installed. A constant five Slurm calls: scontrol ping,
 * show partition, show node, sinfo -R and show config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "driver/driver.h"
#include "doctor/doctor.h"
#include "lib/fsutil.h"
#include "loop.h"

static const struct opt doctor_opts[] = {
	{ "fix", OPT_FLAG, NULL, "fit xloop.json's resources to the partition, and commit it" },
	{ "no-probe", OPT_FLAG, NULL, "with driver.mode slurm: submit no probe job (the driver "
	  "check then cannot tell whether feeders run where jobs run)" },
	OPT_END,
};

/*
 * doctor --fix: write the fitted resources into xloop.json and commit it
 * when it had no edits of the user's; say what changed.
 */
static int apply_fix(struct xl_ctx *ctx, json_t *changes, char **cause)
{
	const char *rel = CONFIG_FILE;
	char *path = path_join(ctx->root, CONFIG_FILE), oid[41];
	struct buf old = BUF_INIT;
	size_t i;
	json_t *ch;
	int err, clean = 0, rc = -1;

	if (read_file(path, CONFIG_MAX_BYTES, &old, &err, cause) < 0)
		goto out;
	clean = loop_matches_head(ctx, rel, old.s, old.len, cause);
	if (clean < 0)
		goto out;
	if (config_patch_file(ctx->root, changes, cause) < 0)
		goto out;
	json_array_foreach(changes, i, ch)
		if (!ctx->json)
			printf("fixed %s: %s -> %s (%s)\n", json_string_value(json_object_get(ch, "key")),
			       json_string_value(json_object_get(ch, "from")),
			       json_string_value(json_object_get(ch, "to")),
			       json_string_value(json_object_get(ch, "why")));
	if (!clean) {
		if (!ctx->json)
			printf("not committed: %s has edits of yours that are not committed; "
			       "commit it yourself\n", CONFIG_FILE);
	} else if (loop_commit(ctx, &rel, 1, "xloop: doctor --fix fits xloop.json's "
			       "resources to the partition\n", oid, cause) < 0) {
		warning("%s was fixed but not committed: %s", CONFIG_FILE, *cause);
		FREE_AND_NULL(*cause);
	} else if (*oid && !ctx->json) {
		printf("committed %s as %.12s\n", CONFIG_FILE, oid);
	}
	rc = 0;
out:
	buf_release(&old);
	free(path);
	return rc;
}

/* Check the environment a study runs in. */
static int cmd_doctor(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	struct doctor_checks c;
	struct doctor_facts f;
	int fix = args_flag(args, "fix");
	json_t *changes = json_array(), *doc;
	char *cause = NULL;
	int rc, failed;

	(void)self;
	doctor_gather(&f, ctx->cfg.partition);
	if (fix && doctor_fit(&f, &ctx->cfg, changes) > 0 &&
	    apply_fix(ctx, changes, &cause) < 0) {
		error("%s", cause);
		free(cause);
		json_decref(changes);
		doctor_facts_release(&f);
		return XL_ERR;
	}
	if (fix && !doctor_have_partition(&f) && !ctx->json)
		printf("nothing fitted: the partition's limits could not be read\n");
	if (f.up && strcmp(ctx->cfg.driver.mode, "slurm") == 0 && !args_flag(args, "no-probe")) {
		/* it puts a job in the queue: say so before, not after (--json:
		 * the driver check's detail names the probe job) */
		if (!ctx->json) {
			printf("doctor submits a probe job now (1 CPU, %s, no GPU, comment "
			       "%sprobe; up to %lld s) to check that feeders run where jobs "
			       "run; `xloop doctor --no-probe` skips it\n", DRIVER_MEM,
			       DRIVER_COMMENT,
			       driver_env_secs("XLOOP_DRIVER_PROBE_SECS", 1, 3600, 60));
			fflush(stdout);
		}
		f.probe_done = 1;
		if (driver_probe(&f.s, &ctx->cfg, ctx->root, &f.probe_ok, &f.probe_detail))
			f.probe_ok = 0;
	}
	doctor_check_all(&f, &ctx->cfg, ctx->root, &c);
	failed = doctor_failed(&c);
	if (ctx->json) {
		doc = json_pack("{s:s, s:o, s:b}", "schema", "xloop.doctor/1", "checks",
				doctor_checks_json(&c), "ok", !failed);
		if (fix)
			json_object_set(doc, "fixed", changes);
		cmd_emit_json(doc);
	} else {
		doctor_print(&c, "");
	}
	rc = f.ping_rc == XL_UNAVAILABLE ? XL_UNAVAILABLE : failed ? XL_ERR : XL_OK;
	json_decref(changes);
	doctor_facts_release(&f);
	doctor_checks_release(&c);
	return rc;
}

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor", .opts = doctor_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_NONE,
	.summary = "check the environment: Slurm, partition, nodes, resources, disk, notifier",
	.help = "One line per check, each ok, warn or fail; a warning or failure has the\n"
	"fix on the line below. Checks: xloop.json is valid; slurmctld answers\n"
	"(scontrol ping); slurm.partition exists and is UP; resources.time fits its\n"
	"MaxTime; its nodes take jobs (drain and down reasons from sinfo -R);\n"
	"resources.gres is configured on a node; resources.cpus and .mem fit a\n"
	"node (CPUTot, RealMemory); accounting (without it verdicts rely on\n"
	"scontrol, which forgets jobs after MinJobAge); free disk under the study\n"
	"(warn below 5 GiB, fail below 500 MiB); GPU processes outside Slurm\n"
	"(when nvidia-smi exists); the webhook variable notify.url_env is set (its\n"
	"value is never printed); who drives the loop (driver.mode): with slurm, a\n"
	"probe job of a feeder's size checks that this binary runs and the study\n"
	"is readable where feeders run (XLOOP_DRIVER_PROBE_SECS, default 60; doctor\n"
	"says so before it submits it, --no-probe skips it), and\n"
	"the check says whether a feeder opens the state DB itself or, on a\n"
	"network filesystem, forwards its tick to driver.host (failing when that\n"
	"is not set); with feeders, whether runs ask for every CPU of their node\n"
	"(a feeder would wait behind the next run: warn, unless driver.partition\n"
	"or driver.qos gives it a way past). When the controller does not answer, the checks that need\n"
	"it are left out. Five Slurm calls at most, 15 s each, plus the probe's.\n"
	"\n"
	"A resource that does not fit the partition fails with the value to set.\n"
	"--fix sets it in xloop.json: resources.time down to MaxTime, .cpus and\n"
	".mem down to the largest node, .gres to what a node has (\"\" when none\n"
	"has that GRES), each change printed; xloop.json is then committed unless\n"
	"it had edits of yours that were not. `xloop init` does the same fitting\n"
	"when it writes xloop.json, and runs these checks at its end.\n"
	"\n"
	"Exit status: 0 when nothing failed (warnings allowed), 1 when a check\n"
	"failed, 69 when Slurm's commands are not installed.\n",
	.flags = CMD_REPO | CMD_NOROOT, .exec = cmd_doctor,
};
