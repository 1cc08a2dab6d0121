/* Unit tests for the progress a job reports and the plainest stop rule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jobs/progress.h"

static void test_nothing(void **state)
{
	struct progress p;

	(void)state;
	progress_parse("", 1, 2, &p);
	assert_int_equal(p.epochs, 0);
	assert_int_equal(p.stop, 0);
	progress_parse("hello\nepoch x 1\nepoch 1\nepochs -3\nchance nan\n", 1, 2, &p);
	assert_int_equal(p.epochs, 0);
	assert_int_equal(p.planned, 0);
	assert_int_equal(p.has_chance, 0);
}

static void test_healthy(void **state)
{
	struct progress p;

	(void)state;
	progress_parse("epochs 20\nchance 0.1\nepoch 1 0.35\nepoch 2 0.52\nepoch 3 0.61\n",
		       1, 2, &p);
	assert_int_equal(p.planned, 20);
	assert_int_equal(p.has_chance, 1);
	assert_int_equal(p.epochs, 3);
	assert_int_equal(p.last_epoch, 3);
	assert_true(p.last_value > 0.6);
	assert_int_equal(p.stop, 0);
	/* a line without its newline is still being written */
	progress_parse("epoch 1 0.3\nepoch 2 na", 1, 2, &p);
	assert_int_equal(p.last_epoch, 1);
	assert_int_equal(p.stop, 0);
}

static void test_nan_inf(void **state)
{
	struct progress p;

	(void)state;
	progress_parse("epoch 1 2.3\nepoch 2 nan\nepoch 3 2.0\n", 0, 2, &p);
	assert_int_equal(p.stop, 1);
	assert_int_equal(p.stop_epoch, 2);
	assert_string_equal(p.why, "the value is NaN");
	progress_parse("epoch 1 -inf\n", 1, 2, &p);
	assert_int_equal(p.stop_epoch, 1);
	assert_string_equal(p.why, "the value is infinite");
	progress_parse("epoch 1 Infinity\n", 1, 2, &p);
	assert_int_equal(p.stop, 1);
}

static void test_chance(void **state)
{
	struct progress p;

	(void)state;
	/* at chance twice running, goal max: within 1% above counts */
	progress_parse("chance 0.1\nepoch 1 0.1\nepoch 2 0.3\nepoch 3 0.1005\nepoch 4 0.09\n",
		       1, 2, &p);
	assert_int_equal(p.stop, 1);
	assert_int_equal(p.stop_epoch, 4);
	assert_string_equal(p.why, "the value is at chance");
	/* once is not enough */
	progress_parse("chance 0.1\nepoch 1 0.1\nepoch 2 0.3\nepoch 3 0.1\n", 1, 2, &p);
	assert_int_equal(p.stop, 0);
	/* goal min: a loss at or above chance's */
	progress_parse("chance 2.3\nepoch 1 2.31\nepoch 2 2.29\n", 0, 2, &p);
	assert_int_equal(p.stop, 1);
	progress_parse("chance 2.3\nepoch 1 2.31\nepoch 2 2.0\n", 0, 2, &p);
	assert_int_equal(p.stop, 0);
	/* without chance, no chance rule */
	progress_parse("epoch 1 0.1\nepoch 2 0.1\n", 1, 2, &p);
	assert_int_equal(p.stop, 0);
	/* runs 0: the chance rule off */
	progress_parse("chance 0.1\nepoch 1 0.1\nepoch 2 0.1\n", 1, 0, &p);
	assert_int_equal(p.stop, 0);
}

static void test_record(void **state)
{
	long long a, k;
	char *why, *r;

	(void)state;
	assert_int_equal(progress_parse_record("attempt 2 epoch 3 the value is NaN\n", &a, &k,
					       &why), 0);
	assert_int_equal(a, 2);
	assert_int_equal(k, 3);
	assert_string_equal(why, "the value is NaN");
	r = progress_stopped_reason(k, why);
	assert_string_equal(r, "stopped early at epoch 3 (the value is NaN)");
	free(r);
	free(why);
	assert_int_equal(progress_parse_record("attempt 1 epoch 0\n", &a, &k, &why), 0);
	assert_string_equal(why, "no reason given");
	free(why);
	assert_int_equal(progress_parse_record("attempt x epoch 0 y\n", &a, &k, &why), -1);
	assert_int_equal(progress_parse_record("epoch 2 nan\n", &a, &k, &why), -1);
	assert_int_equal(progress_parse_record("", &a, &k, &why), -1);
}

/* The curve: every complete epoch line in order, NaN kept, the rest skipped. */
static void test_series(void **state)
{
	struct progress_point *pt;
	size_t n;

	(void)state;
	assert_int_equal(progress_series("", 10, &pt), 0);
	assert_null(pt);
	n = progress_series("epochs 4\nchance 0.1\nepoch 1 0.5\nnoise\nepoch 2 nan\n"
			    "epoch x 3\nepoch 3 0.75 extra\nepoch 4 0.8", 10, &pt);
	assert_int_equal(n, 3);
	assert_int_equal(pt[0].epoch, 1);
	assert_true(pt[0].value == 0.5);
	assert_int_equal(pt[1].epoch, 2);
	assert_true(isnan(pt[1].value));
	assert_int_equal(pt[2].epoch, 3);
	assert_true(pt[2].value == 0.75);
	free(pt);
	assert_int_equal(progress_series("epoch 1 1\nepoch 2 2\nepoch 3 3\n", 2, &pt), 2);
	free(pt);
}

/* What a stop saved: the epochs not run at the pace of those run; 0 when unknown. */
static void test_saved(void **state)
{
	(void)state;
	assert_true(progress_saved_secs(2, 8, 100) == 300);
	assert_true(progress_saved_secs(1, 1, 100) == 0);
	assert_true(progress_saved_secs(3, 0, 100) == 0);
	assert_true(progress_saved_secs(0, 8, 100) == 0);
	assert_true(progress_saved_secs(2, 8, 0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing),
		cmocka_unit_test(test_healthy),
		cmocka_unit_test(test_nan_inf),
		cmocka_unit_test(test_chance),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_saved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
