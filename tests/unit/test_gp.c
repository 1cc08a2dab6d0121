/* Unit tests for the Gaussian process, against numpy's values (gp_reference.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#include "search/gp.h"
#include "gp_reference.h"

static const struct gp_opts none = { 0, 0, 0 }, hint = { 0.01, 0, 0 };

/* |a - b| within rel of |b| (or of 1e-12). */
static void near(double a, double b, double rel)
{
	if (!(fabs(a - b) <= rel * fabs(b) + 1e-12))
		fail_msg("%.17g is not %.17g (rel %g)", a, b, rel);
}

/* Every entry of the covariance matrix: signal, seed offset and noise terms. */
static void test_kernel_matrix(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < REF_N; i++)
		for (j = 0; j < REF_N; j++)
			near(gp_cov(ref_theta, REF_D, ref_x + i * REF_D, ref_seed[i],
				    ref_x + j * REF_D, ref_seed[j], i == j),
			     ref_k[i * REF_N + j], 1e-12);
}

/* The log marginal likelihood and the posterior of f, and of differences. */
static void test_posterior(void **state)
{
	struct gp g;
	size_t q;

	(void)state;
	assert_int_equal(gp_condition(&g, REF_D, REF_N, ref_x, ref_seed, ref_y, ref_theta, 0), 0);
	near(g.lml, ref_lml, 1e-6);
	for (q = 0; q < REF_Q; q++) {
		double m, v;

		gp_predict(&g, ref_q + q * REF_D, &m, &v);
		near(m, ref_mean[q], 1e-7);
		near(v, ref_var[q], 1e-5);
	}
	for (q = 0; q < sizeof(ref_pairs) / sizeof(*ref_pairs); q++) {
		double m, v;

		gp_predict_diff(&g, ref_q + ref_pairs[q][0] * REF_D, ref_q + ref_pairs[q][1] * REF_D,
				&m, &v);
		near(m, ref_dmean[q], 1e-6);
		near(v, ref_dvar[q], 1e-5);
	}
	/* the same through a prepared reference point */
	{
		struct gp_ref r;
		double m, v, dm, dv;

		gp_ref_init(&g, ref_q + ref_pairs[0][1] * REF_D, &r);
		gp_predict_vs(&g, ref_q + ref_pairs[0][0] * REF_D, &r, &m, &v, &dm, &dv);
		near(m, ref_mean[ref_pairs[0][0]], 1e-7);
		near(v, ref_var[ref_pairs[0][0]], 1e-5);
		near(dm, ref_dmean[0], 1e-6);
		near(dv, ref_dvar[0], 1e-5);
		gp_ref_release(&r);
	}
	gp_release(&g);
}

/* Growing the factor by rows gives what conditioning on every run at once gives. */
static void test_extend_rows(void **state)
{
	struct gp a, b;
	size_t q;

	(void)state;
	assert_int_equal(gp_condition(&a, REF_D, REF_N, ref_x, ref_seed, ref_y, ref_theta, 0), 0);
	assert_int_equal(gp_condition(&b, REF_D, 5, ref_x, ref_seed, ref_y, ref_theta, 0), 0);
	/* b's standardisation is its 5 runs': only the factor and posterior variance compare */
	assert_int_equal(gp_extend(&b, REF_N - 5, ref_x + 5 * REF_D, ref_seed + 5, ref_y + 5), 0);
	for (q = 0; q < REF_N * REF_N; q++)
		near(b.l[q], a.l[q], 1e-9);
	for (q = 0; q < REF_Q; q++) {
		double ma, va, mb, vb;

		gp_predict(&a, ref_q + q * REF_D, &ma, &va);
		gp_predict(&b, ref_q + q * REF_D, &mb, &vb);
		near(vb / (b.yscale * b.yscale), va / (a.yscale * a.yscale), 1e-6);
	}
	gp_release(&a);
	gp_release(&b);
}

/* A fantasy (no seed) at the posterior mean keeps the mean there and narrows the variance. */
static void test_extend(void **state)
{
	struct gp a, b;
	double ma, va, mb, vb;
	long noseed = -1;

	(void)state;
	assert_int_equal(gp_condition(&a, REF_D, REF_N, ref_x, ref_seed, ref_y, ref_theta, 0), 0);
	assert_int_equal(gp_condition(&b, REF_D, REF_N, ref_x, ref_seed, ref_y, ref_theta, 0), 0);
	gp_predict(&a, ref_q + 3, &ma, &va);
	assert_int_equal(gp_extend(&b, 1, ref_q + 3, &noseed, &ma), 0);
	gp_predict(&b, ref_q + 3, &mb, &vb);
	near(mb, ma, 1e-9);
	assert_true(vb < va);
	gp_release(&a);
	gp_release(&b);
}

static unsigned long long rng = 88172645463325252ULL;

/* A deterministic uniform in (0, 1). */
static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal (Box-Muller). */
static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/*
 * Synthetic data with known parts: a smooth f of the first variable only,
 * a seed offset of sd 0.02 and a noise of sd 0.005. The fit finds the
 * noise and the offset, and that the second variable does not matter.
 */
static void test_fit_recovers(void **state)
{
	enum { N = 60, S = 6 };
	double x[N * 2], y[N], off[S], sn, ss, l0, l1, m, v;
	long seed[N];
	struct gp g;
	int i;

	(void)state;
	for (i = 0; i < S; i++)
		off[i] = 0.02 * gauss();
	for (i = 0; i < N; i++) {
		x[2 * i] = (double)(i % 9) / 8;
		x[2 * i + 1] = (double)((i * 5) % 7) / 6;
		seed[i] = i % S;
		y[i] = 0.9 + 0.05 * sin(3 * x[2 * i]) + off[seed[i]] + 0.005 * gauss();
	}
	assert_int_equal(gp_fit(&g, 2, N, x, seed, y, &none), 0);
	sn = exp(g.theta[4]) * g.yscale;
	ss = exp(g.theta[3]) * g.yscale;
	l0 = exp(g.theta[0]);
	l1 = exp(g.theta[1]);
	print_message("noise %g seed %g lengthscales %g %g\n", sn, ss, l0, l1);
	assert_true(sn > 0.0025 && sn < 0.01);
	assert_true(ss > 0.007 && ss < 0.06);
	assert_true(l1 > 2 * l0);
	/* f without the offset: the truth, seeds averaged out */
	{
		double q[2] = { 0.5, 0.5 };

		gp_predict(&g, q, &m, &v);
		assert_true(fabs(m - (0.9 + 0.05 * sin(1.5))) < 3 * sqrt(v) + 0.005);
	}
	gp_release(&g);
}

/* A few points (3) give a sane fit: finite, the data's level, unsure far off. */
static void test_fit_few(void **state)
{
	double x[3] = { 0.5, 0.5, 0.625 }, y[3] = { 0.95, 0.952, 0.96 }, m, v, mf, vf;
	double far = 0;
	long seed[3] = { 1, 2, 1 };
	struct gp g;

	(void)state;
	assert_int_equal(gp_fit(&g, 1, 3, x, seed, y, &none), 0);
	gp_predict(&g, x, &m, &v);
	gp_predict(&g, &far, &mf, &vf);
	assert_true(isfinite(m) && isfinite(v) && isfinite(mf) && isfinite(vf));
	assert_true(m > 0.93 && m < 0.97);
	assert_true(vf > v);
	gp_release(&g);
	/* one run: still a model */
	assert_int_equal(gp_fit(&g, 1, 1, x, seed, y, &hint), 0);
	gp_predict(&g, x, &m, &v);
	near(m, 0.95, 1e-6);
	gp_release(&g);
	assert_int_equal(gp_fit(&g, 1, 0, x, seed, y, &none), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_matrix),
		cmocka_unit_test(test_posterior),
		cmocka_unit_test(test_extend),
		cmocka_unit_test(test_extend_rows),
		cmocka_unit_test(test_fit_recovers),
		cmocka_unit_test(test_fit_few),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
