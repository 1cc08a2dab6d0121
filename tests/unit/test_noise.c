/*
 * Unit tests for the noise-aware best: Student's t, pooled noise, and the
 * promotion rule. test_rule_not_plain fails when the rule is replaced by a
 * plain comparison of means; test_flat_family counts false promotions over
 * many flat objectives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#include "search/noise.h"

static struct noise_cfg cfg_of(const double *v, size_t n)
{
	struct noise_cfg c = { 0, 0, 0 };
	size_t i;

	for (i = 0; i < n; i++)
		noise_add(&c, v[i]);
	return c;
}

/* Known quantiles of Student's t. */
static void test_t_quantiles(void **state)
{
	(void)state;
	assert_true(fabs(noise_t_quantile(0.975, 1) - 12.706) < 0.01);
	assert_true(fabs(noise_t_quantile(0.975, 10) - 2.228) < 0.001);
	assert_true(fabs(noise_t_quantile(0.95, 5) - 2.015) < 0.001);
	assert_true(fabs(noise_t_quantile(0.995, 30) - 2.750) < 0.001);
	assert_true(fabs(noise_t_quantile(0.5, 7)) < 1e-6);
	assert_true(fabs(noise_t_cdf(0, 3) - 0.5) < 1e-9);
	assert_true(fabs(noise_t_cdf(2.228, 10) - 0.975) < 1e-3);
	/* far in the tail (alpha / m with many candidates) */
	assert_true(noise_t_quantile(1 - 0.05 / 100, 20) > 3.8);
	assert_true(noise_t_quantile(1 - 0.05 / 100, 20) < 4.0);
}

/* Pooled within-configuration sd; one-run configurations add nothing. */
static void test_pool(void **state)
{
	double a[] = { 1, 2, 3 }, b[] = { 10, 12 }, c[] = { 99 };
	struct noise_cfg v[3];
	struct noise_est nz;

	(void)state;
	v[0] = cfg_of(a, 3);	/* ss 2, df 2 */
	v[1] = cfg_of(b, 2);	/* ss 2, df 1 */
	v[2] = cfg_of(c, 1);
	noise_pool(v, 3, &nz);
	assert_int_equal(nz.df, 3);
	assert_true(fabs(nz.sd - sqrt(4.0 / 3.0)) < 1e-12);
	noise_pool(&v[2], 1, &nz);
	assert_int_equal(nz.df, 0);
	{
		double same[] = { 0.5, 0.5, 0.5 };

		v[0] = cfg_of(same, 3);
		noise_pool(v, 1, &nz);
		assert_int_equal(nz.df, 2);
		assert_true(nz.sd == 0);
	}
}

/* A lead within the noise is not a promotion; plain comparison would take it. */
static void test_rule_not_plain(void **state)
{
	double base[] = { 0.951, 0.953, 0.958, 0.965 }, lucky[] = { 0.962 };
	double real[] = { 0.990, 0.992, 0.991, 0.989 };
	struct noise_params p = { 1, 0, 0.05 };
	struct noise_cfg v[3];
	struct noise_est nz;
	struct noise_cmp c;

	(void)state;
	v[0] = cfg_of(base, 4);
	v[1] = cfg_of(lucky, 1);
	v[2] = cfg_of(real, 4);
	noise_pool(v, 3, &nz);
	/* lucky's single run is above the baseline's mean... */
	assert_true(v[1].mean > v[0].mean);
	noise_compare(&v[1], &v[0], &nz, &p, 2, &c);
	/* ...but one run is never enough, and the lead is inside the noise */
	assert_false(c.beats);
	assert_true(c.checked);
	assert_true(c.wants_replicate);
	assert_int_equal(noise_choose(v, 2, 0, &nz, &p, 1, NULL), 0);
	/* a real gain, confirmed on four seeds, is promoted */
	noise_compare(&v[2], &v[0], &nz, &p, 2, &c);
	assert_true(c.beats);
	assert_int_equal(noise_choose(v, 3, 0, &nz, &p, 2, NULL), 2);
	/* goal min: the other way round */
	p.goal_max = 0;
	assert_int_equal(noise_choose(v, 3, 0, &nz, &p, 2, NULL), 0);
}

/*
 * A candidate is judged on its confirming runs: the first run, which made
 * it worth confirming, is left out of the test (it is biased up by that
 * choice). All three runs' mean (0.517) would pass the bound (0.013); the
 * two confirming runs (0.505) do not (0.015).
 */
static void test_confirming_runs(void **state)
{
	double base[] = { 0.50, 0.50, 0.50, 0.50 }, lucky[] = { 0.54, 0.505, 0.505 };
	double real[] = { 0.54, 0.53, 0.53 };
	struct noise_params p = { 1, 0, 0.05 };
	struct noise_est nz = { 0.01, 20 };
	struct noise_cfg v[3];
	struct noise_cmp c;

	(void)state;
	v[0] = cfg_of(base, 4);
	v[1] = cfg_of(lucky, 3);
	v[2] = cfg_of(real, 3);
	assert_true(fabs(noise_confirming_mean(&v[1]) - 0.505) < 1e-12);
	noise_compare(&v[1], &v[0], &nz, &p, 1, &c);
	assert_false(c.beats);
	assert_true(fabs(c.diff - 0.005) < 1e-9);
	assert_true(c.wants_replicate);
	noise_compare(&v[2], &v[0], &nz, &p, 1, &c);
	assert_true(c.beats);
	assert_int_equal(noise_choose(v, 2, 0, &nz, &p, 1, NULL), 0);
	assert_int_equal(noise_choose(v, 3, 0, &nz, &p, 2, NULL), 2);
}

/*
 * The family counts every run of a candidate (each is a new look at it),
 * never fewer than NOISE_MIN_LOOKS: the first candidates, tested on a noise
 * estimate of a degree of freedom or two, are held to the same level as
 * later ones. Here the second run leads by t = 6.4 (df 2): past
 * t(1 - 0.05/2) = 4.3, short of t(1 - 0.05/20) = 14.1.
 */
static void test_early_looks(void **state)
{
	double base[] = { 0.50, 0.51 }, cand[] = { 0.57, 0.56 };
	struct noise_params p = { 1, 0, 0.05 };
	struct noise_cfg v[2];
	struct noise_est nz;
	struct noise_cmp c;

	(void)state;
	v[0] = cfg_of(base, 2);
	v[1] = cfg_of(cand, 2);
	noise_pool(v, 2, &nz);
	assert_int_equal(nz.df, 2);
	assert_int_equal(noise_looks(v, 2, 0), NOISE_MIN_LOOKS);
	noise_compare(&v[1], &v[0], &nz, &p, 2, &c);
	assert_true(c.beats);	/* at alpha/2 the lucky pair would be promoted */
	noise_compare(&v[1], &v[0], &nz, &p, noise_looks(v, 2, 0), &c);
	assert_false(c.beats);
	assert_int_equal(noise_choose(v, 2, 0, &nz, &p, noise_looks(v, 2, 0), NULL), 0);
	/* past the floor, every run of a candidate counts */
	v[1].n = 30;
	assert_int_equal(noise_looks(v, 2, 0), 30);
}

/* Unknown noise: plain comparison with min_delta; sigma 0: exact. */
static void test_plain_and_exact(void **state)
{
	double a[] = { 0.5 }, b[] = { 0.51 }, z1[] = { 0.5, 0.5 }, z2[] = { 0.5000001 };
	struct noise_params p = { 1, 0, 0.05 };
	struct noise_cfg v[2];
	struct noise_est nz;
	struct noise_cmp c;

	(void)state;
	v[0] = cfg_of(a, 1);
	v[1] = cfg_of(b, 1);
	noise_pool(v, 2, &nz);
	noise_compare(&v[1], &v[0], &nz, &p, 1, &c);
	assert_true(c.beats);
	assert_false(c.checked);
	p.min_delta = 0.02;
	noise_compare(&v[1], &v[0], &nz, &p, 1, &c);
	assert_false(c.beats);
	p.min_delta = 0;
	v[0] = cfg_of(z1, 2);
	v[1] = cfg_of(z2, 1);
	noise_pool(v, 2, &nz);
	assert_true(nz.sd == 0 && nz.df == 1);
	noise_compare(&v[1], &v[0], &nz, &p, 1, &c);
	assert_true(c.beats);	/* deterministic: any gain is real */
}

/* Deterministic normal noise (Box-Muller on an LCG). */
static double gauss(unsigned long long *s)
{
	double u1, u2;

	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	u1 = ((double)(*s >> 11) + 1) / 9007199254740993.0;
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	u2 = (double)(*s >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/*
 * Flat objectives: 40 candidates that all score the same plus noise, each
 * confirmed up to 6 runs, baseline 3 runs; over 200 studies, the rule
 * promotes in at most a few (family-wise alpha 0.05), where plain
 * comparison of means promotes in nearly all.
 */
static void test_flat_family(void **state)
{
	struct noise_params p = { 1, 0, 0.05 };
	unsigned long long seed = 17;
	int study, false_rule = 0, false_plain = 0;

	(void)state;
	for (study = 0; study < 200; study++) {
		struct noise_cfg v[41];
		struct noise_est nz;
		size_t i, k;

		for (i = 0; i < 41; i++) {
			size_t n = i == 0 ? 3 : 6;

			v[i].mean = v[i].ss = 0;
			v[i].n = 0;
			for (k = 0; k < n; k++)
				noise_add(&v[i], 0.95 + 0.005 * gauss(&seed));
		}
		noise_pool(v, 41, &nz);
		if (noise_choose(v, 41, 0, &nz, &p, noise_looks(v, 41, 0), NULL) != 0)
			false_rule++;
		for (i = 1; i < 41; i++)
			if (v[i].mean > v[0].mean) {
				false_plain++;
				break;
			}
	}
	print_message("flat: %d of 200 studies promoted by the rule, %d by plain means\n",
		      false_rule, false_plain);
	assert_true(false_rule <= 20);	/* alpha 0.05 of 200 is 10, with room */
	assert_true(false_plain >= 150);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t_quantiles),
		cmocka_unit_test(test_early_looks),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_rule_not_plain),
		cmocka_unit_test(test_confirming_runs),
		cmocka_unit_test(test_plain_and_exact),
		cmocka_unit_test(test_flat_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
