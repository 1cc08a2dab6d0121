/* Unit tests for slurm-parse-sacctmgr.c: the user's limits and the refusals they cause. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "lib/fsutil.h"
#include "search/autopilot.h"
#include "slurm/parse.h"
#include "lib/util.h"

/* Our capture ops/slurm/captures/name without its '#' lines; skips when absent. */
static char *capture(const char *name)
{
	static const char self[] = "tests/unit/test_slurm_parse_sacctmgr.c";
	const char *file = __FILE__;
	size_t n = strlen(file);
	char *root = n > strlen(self) ? xstrndup(file, n - strlen(self)) : xstrdup("./");
	char *path = xasprintf("%sops/slurm/captures/%s", root, name), *cause = NULL;
	struct buf b = BUF_INIT, out = BUF_INIT;
	const char *p;
	int err;

	free(root);
	if (read_file(path, 1 << 20, &b, &err, &cause) < 0) {
		print_message("%s: skipping\n", cause);
		free(cause);
		free(path);
		skip();
	}
	free(path);
	for (p = b.s; *p;) {
		size_t len = strcspn(p, "\n");

		if (*p != '#')
			buf_addf(&out, "%.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
	buf_release(&b);
	return buf_detach(&out, NULL);
}

/* TRES lists: the untyped count, else the typed ones summed. */
static void test_tres_gpus(void **state)
{
	(void)state;
	assert_int_equal(slurm_tres_gpus(""), -1);
	assert_int_equal(slurm_tres_gpus("cpu=8,mem=64G"), -1);
	assert_int_equal(slurm_tres_gpus("cpu=8,gres/gpu=4"), 4);
	assert_int_equal(slurm_tres_gpus("gres/gpu:a100=2,gres/gpu:v100=1"), 3);
	assert_int_equal(slurm_tres_gpus("gres/gpu=4,gres/gpu:a100=2"), 4);
	assert_int_equal(slurm_tres_gpus("gres/gpumem=80G"), -1);
	assert_int_equal(slurm_tres_gpus("gres/gpu=x"), -1);
}

/* Associations: the tightest limits of the matching rows and their QOS names. */
static void test_assoc_rows(void **state)
{
	const char *text =
		"User|Account|Partition|QOS|MaxJobs|MaxSubmit|GrpTRES|MaxTRES\n"
		"ann|lab|||8|20|gres/gpu=4|\n"
		"ann|lab|gpu|normal,long|4||cpu=16|\n"
		"ann|other|||1|1||\n";
	struct slurm_limits l;
	char *qos = NULL, *cause = NULL;

	(void)state;
	slurm_limits_none(&l);
	assert_int_equal(slurm_parse_sacctmgr_assoc(text, "lab", "gpu", &l, &qos, &cause), 0);
	assert_int_equal(l.max_jobs, 4);
	assert_int_equal(l.max_submit, 20);
	assert_int_equal(l.max_gpus, 4);
	assert_string_equal(qos, "normal,long");
	free(qos);
	/* any account: the other one's limit of 1 counts too */
	slurm_limits_none(&l);
	assert_int_equal(slurm_parse_sacctmgr_assoc(text, "", "", &l, &qos, &cause), 0);
	assert_int_equal(l.max_submit, 1);
	free(qos);
	/* not sacctmgr's output */
	assert_int_equal(slurm_parse_sacctmgr_assoc("sacctmgr: error: x\n", "", "", &l, &qos,
						    &cause), -1);
	assert_non_null(strstr(cause, "header"));
	free(cause);
	cause = NULL;
	assert_int_equal(slurm_parse_sacctmgr_assoc("User|Account\nann\n", "", "", &l, &qos,
						    &cause), -1);
	assert_non_null(strstr(cause, "fields"));
	free(cause);
}

/* QOS: only the named ones, per-user and group limits alike. */
static void test_qos_rows(void **state)
{
	const char *text =
		"Name|MaxJobsPU|MaxSubmitPU|MaxTRESPU|GrpTRES|GrpJobs|GrpSubmit\n"
		"normal||||||\n"
		"small|2|3|gres/gpu=2|||\n"
		"shared||||gres/gpu=8|6|\n";
	struct slurm_limits l;
	char *cause = NULL;

	(void)state;
	slurm_limits_none(&l);
	assert_int_equal(slurm_parse_sacctmgr_qos(text, "normal", &l, &cause), 0);
	assert_int_equal(l.max_submit, -1);
	assert_int_equal(l.max_gpus, -1);
	assert_int_equal(slurm_parse_sacctmgr_qos(text, "normal,shared", &l, &cause), 0);
	assert_int_equal(l.max_jobs, 6);
	assert_int_equal(l.max_gpus, 8);
	assert_int_equal(slurm_parse_sacctmgr_qos(text, "small", &l, &cause), 0);
	assert_int_equal(l.max_jobs, 2);
	assert_int_equal(l.max_submit, 3);
	assert_int_equal(l.max_gpus, 2);
}

/* sbatch's refusals: a limit's name, or NULL for other errors. */
static void test_limit_refusal(void **state)
{
	(void)state;
	assert_string_equal(slurm_limit_refusal(
		"sbatch: error: AssocMaxSubmitJobLimit\n"
		"sbatch: error: Batch job submission failed: Job violates accounting/QOS "
		"policy (job submit limit, user's size and/or time limits)\n"),
		"AssocMaxSubmitJobLimit");
	assert_string_equal(slurm_limit_refusal("sbatch: error: QOSMaxGRESPerUser\n"),
			    "QOSMaxGRESPerUser");
	assert_null(slurm_limit_refusal("sbatch: error: Batch job submission failed: "
					"Invalid account or account/partition combination specified\n"));
	assert_null(slurm_limit_refusal("sbatch: error: QOSMaxWallDurationPerJobLimit\n"));
	assert_null(slurm_limit_refusal("sbatch: error: QOSMaxGRESPerUserX\n"));
}

/* GPU indexes of a GRES allocation, as scontrol -d prints them (samples 03). */
static void test_gres_gpu_idx(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "gpu:1(IDX:0)", "0" },
		{ "gpu(IDX:0,2-3,5)", "0,2-3,5" },
		{ "gg:g0(CNT:1),gpu:1(IDX:3)", "3" },
		{ "gpu:rtx2080:1(IDX:1),gg:g0(CNT:1)", "1" },
		{ "", NULL },
		{ "gg:g0(CNT:1)", NULL },
		{ "gpu:1(IDX:N/A)", NULL },
		{ "mps:100(IDX:0)", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = slurm_gres_gpu_idx(cases[i].in);

		if (cases[i].want == NULL)
			assert_null(got);
		else
			assert_string_equal(got, cases[i].want);
		free(got);
	}
}

/*
 * A partition's GPUs from sinfo: nodes times GPUs, summed; and the jobs of
 * 2 GPUs it holds at once (issue 34): a node of 1 GPU holds none, one of 3
 * holds one.
 */
static void test_sinfo_gpus(void **state)
{
	(void)state;
	assert_int_equal(slurm_sinfo_gpus("1|gpu:4\n", 1), 4);
	assert_int_equal(slurm_sinfo_gpus("4|gpu:8(S:0-1)\n2|gpu:a100:4,mps:400\n", 1), 40);
	assert_int_equal(slurm_sinfo_gpus("3|gpu:2(S:0,1),mps:100\n", 1), 6);
	assert_int_equal(slurm_sinfo_gpus("8|(null)\n", 1), 0);
	assert_int_equal(slurm_sinfo_gpus("", 1), 0);
	assert_int_equal(slurm_sinfo_gpus("PARTITION AVAIL\n", 1), -1);
	/* the test cluster's --nodes 3 --gpus 1,2,2, as its sinfo prints it */
	assert_int_equal(slurm_sinfo_gpus("1|gpu:1\n2|gpu:2\n", 1), 5);
	assert_int_equal(slurm_sinfo_gpus("1|gpu:1\n2|gpu:2\n", 2), 2);
	assert_int_equal(slurm_sinfo_gpus("1|gpu:1\n2|gpu:2\n", 3), 0);
	assert_int_equal(slurm_sinfo_gpus("2|gpu:3\n1|gpu:4\n", 2), 4);
	assert_int_equal(slurm_sinfo_gpus("1|gpu:4\n", 0), 4);
}

/* The GPUs a --gres request asks a node for. */
static void test_gres_request_gpus(void **state)
{
	(void)state;
	assert_int_equal(slurm_gres_request_gpus("gpu:2"), 2);
	assert_int_equal(slurm_gres_request_gpus("gpu:a100:2"), 2);
	assert_int_equal(slurm_gres_request_gpus("gpu"), 1);
	assert_int_equal(slurm_gres_request_gpus("gpu:a100"), 1);
	assert_int_equal(slurm_gres_request_gpus("gpu:1,mps:100"), 1);
	assert_int_equal(slurm_gres_request_gpus("mps:100,gpu:4"), 4);
	assert_int_equal(slurm_gres_request_gpus("gpus:2"), 0);
	assert_int_equal(slurm_gres_request_gpus(""), 0);
	/* a count that is some other gres's is none of the GPUs' */
	assert_int_equal(slurm_gres_request_gpus("gpu:2,mps:400"), 2);
	assert_int_equal(slurm_gres_request_gpus("mps:400"), 0);
}

/* GPU-hours, the budget, export and lanes: a job that asks no GPU counts 1 a node. */
static void test_gres_charged_gpus(void **state)
{
	(void)state;
	assert_int_equal(slurm_gres_charged_gpus("gpu:2,mps:400"), 2);
	assert_int_equal(slurm_gres_charged_gpus("mps:400,gpu:a100:3"), 3);
	assert_int_equal(slurm_gres_charged_gpus("gpu:a100"), 1);
	assert_int_equal(slurm_gres_charged_gpus(""), 1);
	assert_int_equal(slurm_gres_charged_gpus("mps:400"), 1);
	assert_int_equal(slurm_gres_charged_gpus("gpu:8"), 8);
	/* GPU-hours: elapsed x GPUs a node x nodes; "" is one node */
	assert_true(autopilot_gpu_hours(3600, "gpu:2,mps:400", "node[1-2]") == 4.0);
	assert_true(autopilot_gpu_hours(1800, "gpu:a100:4", "") == 2.0);
	assert_true(autopilot_gpu_hours(7200, "", "node1,node2,node3") == 6.0);
	assert_true(autopilot_gpu_hours(3600, "mps:100", "node1") == 1.0);
	assert_true(autopilot_gpu_hours(0, "gpu:2", "node1") == 0.0);
}

/* Real 22.05 output from the test cluster (ops/slurm/captures). */
static void test_captures(void **state)
{
	char *assoc = capture("sacctmgr_P_assoc_user.txt"), *qos_text, *err, *qos = NULL;
	char *cause = NULL;
	struct slurm_limits l;

	(void)state;
	qos_text = capture("sacctmgr_P_qos.txt");
	err = capture("sbatch_refused_qos_max_submit.txt");
	slurm_limits_none(&l);
	assert_int_equal(slurm_parse_sacctmgr_assoc(assoc, "", "", &l, &qos, &cause), 0);
	assert_non_null(strstr(qos, "xlooplim3"));
	assert_int_equal(slurm_parse_sacctmgr_qos(qos_text, "xlooplim3", &l, &cause), 0);
	assert_int_equal(l.max_submit, 3);
	assert_string_equal(slurm_limit_refusal(err), "QOSMaxSubmitJobPerUserLimit");
	free(qos);
	free(assoc);
	free(qos_text);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tres_gpus),
		cmocka_unit_test(test_assoc_rows),
		cmocka_unit_test(test_qos_rows),
		cmocka_unit_test(test_limit_refusal),
		cmocka_unit_test(test_gres_gpu_idx),
		cmocka_unit_test(test_gres_request_gpus),
		cmocka_unit_test(test_gres_charged_gpus),
		cmocka_unit_test(test_sinfo_gpus),
		cmocka_unit_test(test_captures),
	};

	return cmocka_run_group_tests_name("slurm_parse_sacctmgr", tests, NULL, NULL);
}
