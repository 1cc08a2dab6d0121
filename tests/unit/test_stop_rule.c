/* Unit tests for the stop rule that knows the noise (jobs/stop-rule.c), against values by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jobs/stop-rule.h"

#define N NAN

/* best: two runs of configuration 0; parent: one run of configuration 1 (to epoch 3). */
static double a0[] = { N, 0.5, 0.6, 0.7, 0.8 }, b0[] = { N, 0.5, 0.7, 0.8, 0.8 };
static double p1[] = { N, 0.4, 0.5, 0.55 };

static void fill(struct stop_curve *c)
{
	c[0] = (struct stop_curve){ a0, 5, 0 };
	c[1] = (struct stop_curve){ b0, 5, 0 };
	c[2] = (struct stop_curve){ p1, 4, 1 };
}

static void test_curve_parse(void **state)
{
	struct stop_curve c = { NULL, 0, 7 };

	(void)state;
	stop_curve_parse("epochs 5\nchance 0.1\nepoch 1 0.5\nepoch 2 nan\nepoch 2 0.6\n"
			 "epoch x 1\nepoch 3 0.7", &c);
	assert_int_equal(c.len, 3);	/* epoch 3's line is still being written */
	assert_true(isnan(c.v[0]));
	assert_float_equal(c.v[1], 0.5, 1e-12);
	assert_float_equal(c.v[2], 0.6, 1e-12);	/* the later line for epoch 2 */
	assert_int_equal(c.cfg, 7);
	stop_curve_release(&c);
	stop_curve_parse("epoch 2 inf\n", &c);
	assert_int_equal(c.len, 3);
	assert_true(isnan(c.v[2]));
	stop_curve_release(&c);
}

static void test_noise(void **state)
{
	struct stop_curve c[5];
	double x2[] = { N, N, 0.5 }, y2[] = { N, N, 0.7 };
	long df;

	(void)state;
	fill(c);
	/* epoch 2: 0.6 and 0.7, mean 0.65, ss 0.005, df 1 */
	assert_float_equal(stop_noise_at(c, 3, 2, &df), sqrt(0.005), 1e-12);
	assert_int_equal(df, 1);
	/* epoch 0: nobody; the parent alone has no noise */
	assert_true(isnan(stop_noise_at(c, 3, 0, &df)));
	assert_int_equal(df, 0);
	assert_true(isnan(stop_noise_at(c + 2, 1, 2, &df)));
	/* pooled with configuration 2 (0.5, 0.7: ss 0.02): sqrt(0.025 / 2) */
	c[3] = (struct stop_curve){ x2, 3, 2 };
	c[4] = (struct stop_curve){ y2, 3, 2 };
	assert_float_equal(stop_noise_at(c, 5, 2, &df), sqrt(0.0125), 1e-12);
	assert_int_equal(df, 2);
}

static void test_bar(void **state)
{
	struct stop_curve c[3];
	struct stop_params p = { 1, 2, 2.0, 1 };
	double bar[6], sd = sqrt(0.005);
	size_t n;

	(void)state;
	fill(c);
	/* the best alone: mean - 2 sd sqrt(1 + 1/2); none in the warm-up (0, 1) */
	n = stop_bar(c, 3, 0, -1, &p, bar, 6);
	assert_int_equal(n, 5);
	assert_true(isnan(bar[0]) && isnan(bar[1]) && isnan(bar[5]));
	assert_float_equal(bar[2], 0.65 - 2 * sd * sqrt(1.5), 1e-12);
	assert_float_equal(bar[3], 0.75 - 2 * sd * sqrt(1.5), 1e-12);
	assert_float_equal(bar[4], 0.8, 1e-12);	/* 0.8 and 0.8: no noise at 4 */
	/* with the parent: the less demanding, 0.5 - 2 sd sqrt(2) = 0.3; only where both reached */
	n = stop_bar(c, 3, 0, 1, &p, bar, 6);
	assert_int_equal(n, 4);
	assert_float_equal(bar[2], 0.3, 1e-12);
	assert_float_equal(bar[3], 0.35, 1e-12);
	assert_true(isnan(bar[4]));
	/* goal min: mean + margin, the parent's the higher */
	p.goal_max = 0;
	n = stop_bar(c, 3, 0, 1, &p, bar, 6);
	assert_float_equal(bar[2], 0.65 + 2 * sd * sqrt(1.5), 1e-12);
	/* no best, or a warm-up past every epoch: no bar */
	assert_int_equal(stop_bar(c, 3, -1, -1, &p, bar, 6), 0);
	p.warmup = 10;
	assert_int_equal(stop_bar(c, 3, 0, -1, &p, bar, 6), 0);
}

static void test_first_behind(void **state)
{
	double bar[] = { N, N, 0.48, 0.58, 0.8 };
	double v[] = { N, 0.1, 0.2, 0.3, 0.9 }, late[] = { N, 0.1, 0.2, 0.6, 0.5, 0.5 };
	double nan_mid[] = { N, 0.1, 0.2, N, 0.3 };
	struct stop_params p = { 1, 2, 2.0, 1 };

	(void)state;
	/* behind at 2 and 3: stops at 3; epoch 1 has no bar */
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), 3);
	/* three running: 0.9 at 4 beats 0.8, the count starts again */
	p.behind = 3;
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
	/* a late bloomer: 0.6 at 3 is not behind; epoch 5 has no bar */
	p.behind = 2;
	assert_int_equal(stop_first_behind(late, 6, bar, 5, &p), -1);
	/* a NaN epoch is the plainest rule's: skipped, not counted */
	assert_int_equal(stop_first_behind(nan_mid, 5, bar, 5, &p), 4);
	/* goal min: behind is above */
	p.goal_max = 0;
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
	assert_int_equal(stop_first_behind(late, 5, bar, 3, &p), -1);
	{
		double hi[] = { N, 0.1, 0.5, 0.6 };

		assert_int_equal(stop_first_behind(hi, 4, bar, 5, &p), 3);
	}
	p.behind = 0;	/* never */
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
}

static void test_text(void **state)
{
	double bar[] = { N, N, 0.48, N, 0.8125 }, *back;
	struct stop_params p = { 1, 3, 2.0, 1 };
	struct buf b = BUF_INIT;
	long long behind;
	size_t n;

	(void)state;
	stop_bar_text(bar, 5, &p, &b);
	assert_non_null(strstr(b.s, "\nbehind 3\nbar 2 0.48\nbar 4 0.8125\n"));
	assert_null(strstr(b.s, "bar 3"));
	assert_int_equal(stop_bar_parse(b.s, &back, &n, &behind), 0);
	assert_int_equal(behind, 3);
	assert_int_equal(n, 5);
	assert_true(isnan(back[3]));
	assert_float_equal(back[4], 0.8125, 1e-12);
	free(back);
	assert_int_equal(stop_bar_parse("bar 1 0.5\n", &back, &n, &behind), -1);
	free(back);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_curve_parse),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_bar),
		cmocka_unit_test(test_first_behind),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
