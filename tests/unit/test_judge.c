/* Unit tests for the verdict rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stages/judge.h"

static struct judge_input ok_input(void)
{
	struct judge_input in;

	memset(&in, 0, sizeof(in));
	in.state = SLURM_STATE_COMPLETED;
	in.exit_code = 0;
	in.exit_signal = 0;
	in.cv = CV_OK;
	in.score = 0.875;
	in.started_at = 1000;
	in.cv_mtime = 1005;
	return in;
}

static void expect(const struct judge_input *in, int success, const char *cls,
		   const char *needle)
{
	struct verdict v;

	judge_attempt(in, &v);
	assert_int_equal(v.success, success);
	if (cls)
		assert_string_equal(v.failure_class, cls);
	else
		assert_null(v.failure_class);
	if (!strstr(v.reason, needle))
		fail_msg("reason '%s' lacks '%s'", v.reason, needle);
	verdict_release(&v);
}

static void test_success(void **state)
{
	struct judge_input in = ok_input();

	(void)state;
	expect(&in, 1, NULL, "score 0.875");
	in.cv_mtime = in.started_at;	/* same second counts as after */
	expect(&in, 1, NULL, "COMPLETED 0:0");
}

static void test_program_failures(void **state)
{
	struct judge_input in = ok_input();

	(void)state;
	in.cv = CV_MISSING;
	expect(&in, 0, "program", "no cv.json");
	in = ok_input();
	in.cv = CV_INVALID;
	in.cv_error = "no \"score\"";
	expect(&in, 0, "program", "no \"score\"");
	in = ok_input();
	in.cv_mtime = in.started_at - 1;
	expect(&in, 0, "program", "stale");
	in = ok_input();
	in.exit_code = 1;
	expect(&in, 0, "program", "ExitCode 1:0");
	in = ok_input();
	in.exit_signal = 9;
	expect(&in, 0, "program", "ExitCode 0:9");
	in = ok_input();
	in.state = SLURM_STATE_FAILED;
	in.exit_code = 3;
	expect(&in, 0, "program", "FAILED (ExitCode 3:0)");
	in.state = SLURM_STATE_OUT_OF_MEMORY;
	in.exit_code = 0;
	in.exit_signal = 125;
	expect(&in, 0, "program", "OUT_OF_MEMORY");
	in.state = SLURM_STATE_TIMEOUT;
	expect(&in, 0, "program", "TIMEOUT");
	in.state = SLURM_STATE_CANCELLED;
	expect(&in, 0, "program", "CANCELLED");
	in.state = SLURM_STATE_DEADLINE;
	expect(&in, 0, "program", "DEADLINE");
}

/* without accounting: scontrol's DerivedExitCode is all that shows an srun step failed */
static void test_failed_srun_step(void **state)
{
	struct judge_input in = ok_input();

	(void)state;
	in.step_exit_code = 3;
	in.step_exit_signal = 0;
	expect(&in, 0, "program", "an srun step ended 3:0");
	in.step_exit_code = 0;
	in.step_exit_signal = 9;
	expect(&in, 0, "program", "an srun step ended 0:9");
	in.step_exit_code = in.step_exit_signal = -1;	/* not known */
	expect(&in, 1, NULL, "COMPLETED 0:0");
	in.step_exit_code = in.step_exit_signal = 0;
	expect(&in, 1, NULL, "COMPLETED 0:0");
	/* with accounting the failed step set the state; the reason names it */
	in = ok_input();
	in.state = SLURM_STATE_FAILED;
	in.exit_code = 3;
	in.step_note = "step 6.0 (bash) on node[1-2] ended FAILED 3:0";
	expect(&in, 0, "program", "FAILED (ExitCode 3:0): the job exited non-zero; step 6.0 (bash) on node[1-2]");
}

static void test_infra_failures(void **state)
{
	struct judge_input in = ok_input();

	(void)state;
	in.state = SLURM_STATE_NODE_FAIL;
	expect(&in, 0, "infra", "NODE_FAIL");
	in.state = SLURM_STATE_BOOT_FAIL;
	expect(&in, 0, "infra", "BOOT_FAIL");
	in.state = SLURM_STATE_PREEMPTED;
	expect(&in, 0, "infra", "PREEMPTED");
	in = ok_input();
	in.lost = 1;
	expect(&in, 0, "infra", "lost");
}

static void test_cv_ok_does_not_rescue_a_failed_job(void **state)
{
	struct judge_input in = ok_input();

	(void)state;
	in.state = SLURM_STATE_FAILED;
	in.exit_code = 1;
	expect(&in, 0, "program", "FAILED");
}

/* A stop record is the verdict whatever Slurm says: neither success nor failure. */
static void test_stopped(void **state)
{
	struct judge_input in = ok_input();
	struct verdict v;
	int i;
	const enum slurm_state st[] = { SLURM_STATE_COMPLETED, SLURM_STATE_CANCELLED };

	(void)state;
	for (i = 0; i < 2; i++) {
		in.state = st[i];
		in.stop_why = "the value is NaN";
		in.stop_epoch = 2;
		judge_attempt(&in, &v);
		assert_int_equal(v.success, 0);
		assert_int_equal(v.stopped, 1);
		assert_null(v.failure_class);
		assert_string_equal(v.reason, "stopped early at epoch 2 (the value is NaN)");
		verdict_release(&v);
	}
	/* what it saved: the epochs left of those planned, at the pace it ran */
	in.stop_planned = 20;
	in.ended_at = in.started_at + 600;
	judge_attempt(&in, &v);
	assert_string_equal(v.reason, "stopped early at epoch 2 (the value is NaN); 18 of 20 "
			    "planned epochs not run, about 1.5 h of its run time saved");
	verdict_release(&v);
	in.ended_at = 0;
	judge_attempt(&in, &v);
	assert_string_equal(v.reason, "stopped early at epoch 2 (the value is NaN); 18 of 20 "
			    "planned epochs not run");
	verdict_release(&v);
	in.stop_planned = 2;	/* at its last planned epoch: nothing saved */
	judge_attempt(&in, &v);
	assert_string_equal(v.reason, "stopped early at epoch 2 (the value is NaN)");
	verdict_release(&v);
	in.stop_why = NULL;
	judge_attempt(&in, &v);
	assert_int_equal(v.stopped, 0);
	verdict_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_stopped),
		cmocka_unit_test(test_program_failures),
		cmocka_unit_test(test_failed_srun_step),
		cmocka_unit_test(test_infra_failures),
		cmocka_unit_test(test_cv_ok_does_not_rescue_a_failed_job),
	};

	return cmocka_run_group_tests_name("judge", tests, NULL, NULL);
}
