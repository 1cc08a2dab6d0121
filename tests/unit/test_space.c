/* Unit tests for the search space: forms, grids, neighbours, fresh seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "search/space.h"

/* Choices keep their order, canonical; duplicates are refused. */
static void test_choices(void **state)
{
	struct space_var v;
	char *cause = NULL;
	const char *nb[2];

	(void)state;
	assert_int_equal(space_parse_arg("OPT=adam,sgd,0.050", &v, &cause), 0);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.values[2], "0.05");
	assert_null(v.range);
	assert_int_equal(space_neighbours(&v, "sgd", nb), 2);
	assert_string_equal(nb[0], "adam");
	assert_string_equal(nb[1], "0.05");
	assert_int_equal(space_neighbours(&v, "adam", nb), 1);
	assert_string_equal(nb[0], "sgd");
	assert_int_equal(space_index(&v, "5e-2"), 2);
	space_var_release(&v);
	assert_int_equal(space_parse_arg("OPT=a,b,a", &v, &cause), -1);
	assert_non_null(strstr(cause, "twice"));
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("OPT=a,,b", &v, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("1X=a", &v, &cause), -1);
	free(cause);
}

/* Integer, linear and log ranges. */
static void test_ranges(void **state)
{
	struct space_var v;
	char *cause = NULL;
	const char *nb[2];

	(void)state;
	assert_int_equal(space_parse_arg("D=2..5:int", &v, &cause), 0);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.values[0], "2");
	assert_string_equal(v.values[3], "5");
	space_var_release(&v);
	assert_int_equal(space_parse_arg("LR=0..1", &v, &cause), 0);
	assert_int_equal(v.n, 9);
	assert_string_equal(v.values[1], "0.125");
	/* a value between grid points: the two around it */
	assert_int_equal(space_neighbours(&v, "0.3", nb), 2);
	assert_string_equal(nb[0], "0.25");
	assert_string_equal(nb[1], "0.375");
	space_var_release(&v);
	assert_int_equal(space_parse_arg("LR=0.001..1:log:steps=4", &v, &cause), 0);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.values[0], "0.001");
	assert_string_equal(v.values[1], "0.01");
	assert_string_equal(v.values[3], "1");
	space_var_release(&v);
	assert_int_equal(space_parse_arg("LR=0..1:log", &v, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("LR=2..1", &v, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("D=1.5..3:int", &v, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("D=1..3:steps=1", &v, &cause), -1);
	free(cause);
}

/* A fresh seed is above every integer seed used. */
static void test_fresh_seed(void **state)
{
	const char *used[] = { "1", "7", "x", "3" };
	char *s;

	(void)state;
	s = space_fresh_seed(used, 4);
	assert_string_equal(s, "8");
	free(s);
	s = space_fresh_seed(NULL, 0);
	assert_string_equal(s, "1");
	free(s);
}

/* at=V: the grid holds V, the rest rounded (issue 35). */
static void test_anchor(void **state)
{
	static const char *const want[] = { "0.01", "0.015", "0.023", "0.036", "0.055",
					     "0.1", "0.13", "0.2", "0.3" };
	struct space_var v;
	char *cause = NULL;
	size_t i;

	(void)state;
	assert_int_equal(space_parse_arg("LR=0.01..0.3:log:at=0.1", &v, &cause), 0);
	assert_int_equal(v.n, 9);
	for (i = 0; i < v.n; i++)
		assert_string_equal(v.values[i], want[i]);
	space_var_release(&v);
	/* a grid of two gains V; linear grids too */
	assert_int_equal(space_parse_arg("D=0..1:steps=2:at=0.3", &v, &cause), 0);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.values[1], "0.3");
	space_var_release(&v);
	assert_int_equal(space_parse_arg("D=0..1:steps=5:at=0.3", &v, &cause), 0);
	assert_int_equal(space_index(&v, "0.3"), 1);
	assert_string_equal(v.values[2], "0.5");
	space_var_release(&v);
	/* V on an end: no point moves */
	assert_int_equal(space_parse_arg("D=0..1:steps=3:at=1", &v, &cause), 0);
	assert_string_equal(v.values[1], "0.5");
	space_var_release(&v);
	/* outside the range, or with :int: refused */
	assert_int_equal(space_parse_arg("D=0..1:at=2", &v, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(space_parse_arg("D=0..9:int:at=2", &v, &cause), -1);
	free(cause);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anchor),
		cmocka_unit_test(test_choices),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_fresh_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
