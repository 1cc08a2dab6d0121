/* Unit tests for the quadratic response surface. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <cmocka.h>

#include "search/surface.h"

/* A quadratic with a ridge (x and y must move together), in grid positions. */
static double ridge(const double *u)
{
	double x = u[0] * 8 + 1, y = u[1] * 8 + 1, z = u[2] * 8 + 1, mid = (x + y) / 2;

	return 0.9 - 0.02 * (x - y) * (x - y) - 0.004 * (mid - 7) * (mid - 7) -
	       0.003 * (z - 2) * (z - 2);
}

/* Enough points on the grid: the fit recovers the quadratic, pair term included. */
static void test_recovers_quadratic(void **state)
{
	double u[3 * 40], y[40], w[40], q[3], m, sd;
	struct surface s;
	int k, i;

	(void)state;
	srand(7);
	for (k = 0; k < 40; k++) {
		for (i = 0; i < 3; i++)
			u[k * 3 + i] = (rand() % 9) / 8.0;
		y[k] = ridge(u + k * 3);
		w[k] = 1;
	}
	assert_int_equal(surface_fit(&s, 3, u, y, w, 40, 0.001), 0);
	q[0] = q[1] = 6 / 8.0;
	q[2] = 1 / 8.0;
	surface_predict(&s, q, &m, &sd);
	assert_true(fabs(m - ridge(q)) < 0.01);
	/* off the ridge it knows the loss */
	q[0] = 2 / 8.0;
	surface_predict(&s, q, &m, &sd);
	assert_true(fabs(m - ridge(q)) < 0.02);
	surface_release(&s);
}

/* One point: the level is known there, and the fit is less sure far away. */
static void test_unsure_far_away(void **state)
{
	double u[2] = { 0.5, 0.5 }, y[1] = { 0.7 }, w[1] = { 3 }, m, sd, m2, sd2;
	double far[2] = { 1, 0.5 };
	struct surface s;

	(void)state;
	assert_int_equal(surface_fit(&s, 2, u, y, w, 1, 0.01), 0);
	surface_predict(&s, u, &m, &sd);
	surface_predict(&s, far, &m2, &sd2);
	assert_true(fabs(m - 0.7) < 1e-9);
	assert_true(sd2 > sd);
	surface_release(&s);
	assert_int_equal(surface_fit(&s, 2, u, y, w, 0, 0.01), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_quadratic),
		cmocka_unit_test(test_unsure_far_away),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
