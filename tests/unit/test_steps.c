/* Unit tests for a run's steps (steps.c): names, --step, one variable per step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "jobs/steps.h"
#include "lib/util.h"

/* A set of scripts, name/text pairs. */
static void set_of(struct step_set *set, const char *const *pairs, size_t n)
{
	size_t i;

	step_set_init(set);
	for (i = 0; i < n; i++) {
		struct buf t = BUF_INIT;

		buf_adds(&t, pairs[2 * i + 1]);
		step_set_add(set, pairs[2 * i], pairs[2 * i], &t);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_true(steps_valid_name("eval"));
	assert_true(steps_valid_name("eval-2_b"));
	assert_false(steps_valid_name("job"));
	assert_false(steps_valid_name(""));
	assert_false(steps_valid_name("Eval"));
	assert_false(steps_valid_name("2eval"));
	assert_false(steps_valid_name("ev.al"));
	assert_false(steps_valid_name("a/b"));
	assert_false(steps_valid_name("abcdefghijabcdefghijabcdefghijabc"));
}

static void test_parse_arg(void **state)
{
	char *name, *path, *cause = NULL;

	(void)state;
	assert_int_equal(steps_parse_arg("eval=sub/eval.sh", &name, &path, &cause), 0);
	assert_string_equal(name, "eval");
	assert_string_equal(path, "sub/eval.sh");
	free(name);
	free(path);
	assert_int_equal(steps_parse_arg("eval.sh", &name, &path, &cause), XL_USAGE);
	assert_non_null(strstr(cause, "NAME=SCRIPT"));
	FREE_AND_NULL(cause);
	assert_int_equal(steps_parse_arg("eval=", &name, &path, &cause), XL_USAGE);
	FREE_AND_NULL(cause);
	assert_int_equal(steps_parse_arg("job=x.sh", &name, &path, &cause), XL_USAGE);
	assert_null(name);
	FREE_AND_NULL(cause);
}

static void test_one_variable_per_step(void **state)
{
	static const char *const ok[] = { "job", "LR=1\nEPOCHS=3\n", "eval", "FOLD=2\nf() { LR=9; }\n" };
	static const char *const two[] = { "job", "LR=1\n", "eval", "echo\nLR=2\n" };
	struct step_set set;
	char *cause = NULL;

	(void)state;
	set_of(&set, ok, 2);
	assert_int_equal(steps_check_vars(&set, &cause), 0);	/* LR in a function is no assignment of its own */
	assert_int_equal(steps_holder(&set, "FOLD"), 1);
	assert_int_equal(steps_holder(&set, "LR"), 0);
	assert_int_equal(steps_holder(&set, "NOPE"), 0);
	step_set_release(&set);
	set_of(&set, two, 2);
	assert_int_equal(steps_check_vars(&set, &cause), XL_DATAERR);
	assert_non_null(strstr(cause, "LR is assigned in step 'job'"));
	assert_non_null(strstr(cause, "step 'eval' (eval line 2)"));
	free(cause);
	step_set_release(&set);
}

static void test_config_covers_every_step(void **state)
{
	static const char *const s[] = { "job", "LR=1\nB=2\n", "eval", "A=x\nFOLD=3\n" };
	struct step_set set;
	char *cause = NULL, *config = NULL;

	(void)state;
	set_of(&set, s, 2);
	assert_int_equal(steps_config(&set, &config, &cause), 0);
	assert_string_equal(config, "A=x\nB=2\nFOLD=3\nLR=1\n");
	free(config);
	step_set_release(&set);
	set_of(&set, s, 1);	/* job.sh alone: confkey's own text */
	assert_int_equal(steps_config(&set, &config, &cause), 0);
	assert_string_equal(config, "B=2\nLR=1\n");
	free(config);
	step_set_release(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_parse_arg),
		cmocka_unit_test(test_one_variable_per_step),
		cmocka_unit_test(test_config_covers_every_step),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
