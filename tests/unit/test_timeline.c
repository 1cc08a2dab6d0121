/* Unit tests for timeline.c: attempts' bars cut into their segments and steps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runs.h"
#include "timeline.h"
#include "lib/util.h"

/* A bar of attempt id from start to end in colour cls, labelled label. */
static void bar(struct bar **v, size_t *n, long long id, long long start, long long end,
		const char *cls, const char *label)
{
	struct bar *b;

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	b = &(*v)[(*n)++];
	memset(b, 0, sizeof(*b));
	b->attempt_id = id;
	b->n = 1;
	b->start = start;
	b->end = end;
	b->cls = cls;
	b->gpu = -1;
	xsnprintf(b->label, sizeof(b->label), "%s", label);
}

/* The bar of attempt id, segment k (0: the whole attempt), or NULL. */
static const struct bar *find(const struct bar *v, size_t n, long long id, long long k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].attempt_id == id && v[i].seg == k)
			return &v[i];
	return NULL;
}

/* A finished attempt of three segments is three bars; others are untouched. */
static void test_split_finished(void **state)
{
	static const struct segment_span sp[] = {
		{ 7, 1, 100, 110 }, { 7, 2, 111, 120 }, { 7, 3, 120, 130 },
		{ 99, 1, 5, 6 },	/* an attempt without a bar: ignored */
	};
	struct bar *v = NULL;
	const struct bar *b;
	size_t n = 0;

	(void)state;
	bar(&v, &n, 9, 130, 140, "failure", "FAILED");
	bar(&v, &n, 7, 100, 130, "success", "COMPLETED");
	bar(&v, &n, 3, 50, 90, "success", "COMPLETED");
	timeline_split(&v, &n, sp, 4);
	assert_int_equal(n, 5);
	assert_null(find(v, n, 7, 0));	/* the whole bar is gone */
	b = find(v, n, 7, 1);
	assert_non_null(b);
	assert_int_equal(b->start, 100);
	assert_int_equal(b->end, 110);
	assert_string_equal(b->cls, "success");
	assert_string_equal(b->label, "continued");
	b = find(v, n, 7, 2);
	assert_non_null(b);
	assert_int_equal(b->start, 111);	/* the second between them stays idle */
	assert_string_equal(b->label, "continued");
	b = find(v, n, 7, 3);
	assert_non_null(b);
	assert_int_equal(b->end, 130);
	assert_string_equal(b->label, "COMPLETED");	/* the last one: the attempt's end */
	b = find(v, n, 9, 0);
	assert_non_null(b);
	assert_int_equal(b->start, 130);
	assert_non_null(find(v, n, 3, 0));
	free(v);
}

/* A live attempt: its ended segments, and the one that runs from where they ended. */
static void test_split_live(void **state)
{
	static const struct segment_span sp[] = { { 4, 1, 0, 3000 }, { 4, 2, 3001, 6000 } };
	struct bar *v = NULL;
	const struct bar *b;
	size_t n = 0;

	(void)state;
	bar(&v, &n, 4, 0, 9600, "live", "RUNNING");
	timeline_split(&v, &n, sp, 2);
	assert_int_equal(n, 3);
	b = find(v, n, 4, 3);
	assert_non_null(b);
	assert_int_equal(b->start, 6000);
	assert_int_equal(b->end, 9600);
	assert_string_equal(b->label, "RUNNING");
	assert_string_equal(find(v, n, 4, 2)->label, "continued");
	assert_string_equal(find(v, n, 4, 2)->cls, "live");
	free(v);
}

/* No segments: nothing changes, not even the order. */
static void test_split_none(void **state)
{
	struct bar *v = NULL;
	size_t n = 0;

	(void)state;
	bar(&v, &n, 2, 10, 20, "success", "COMPLETED");
	bar(&v, &n, 1, 30, 40, "success", "COMPLETED");
	timeline_split(&v, &n, NULL, 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].attempt_id, 2);
	free(v);
}

/* Each later step is a bar of its own, named; its attempt's bar is step 1 "job". */
static void test_steps(void **state)
{
	static const struct step_span sp[] = {
		{ 1, 2, 25, 40, "eval", "COMPLETED" },
		{ 9, 2, 50, 60, "eval", "COMPLETED" },	/* no bar of attempt 9: left out */
	};
	struct bar *v = NULL;
	size_t n = 0;

	(void)state;
	bar(&v, &n, 1, 10, 20, "failure", "COMPLETED");
	bar(&v, &n, 2, 30, 40, "success", "COMPLETED");
	v[0].gpu = 0;
	timeline_add_steps(&v, &n, sp, 2);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].step, 1);
	assert_string_equal(v[0].step_name, "job");
	assert_int_equal(v[1].step, 0);		/* a run without steps */
	assert_int_equal(v[2].attempt_id, 1);
	assert_int_equal(v[2].step, 2);
	assert_string_equal(v[2].step_name, "eval");
	assert_int_equal(v[2].start, 25);
	assert_int_equal(v[2].end, 40);
	assert_int_equal(v[2].gpu, -1);
	assert_string_equal(v[2].cls, "failure");	/* its attempt's colour */
	free(v);
}

/* An attempt's bar carries how often Slurm restarted its job, through the cut into segments. */
static void test_restarts(void **state)
{
	struct attempt a;
	struct bar *v = NULL;
	struct segment_span sp[] = { { 7, 1, 10, 20 }, { 7, 2, 21, 30 } };
	size_t n = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.id = 7;
	a.n = 1;
	a.started_at = 10;
	a.ended_at = 30;
	a.verdict = "success";
	a.state = "COMPLETED";
	a.phase = "submitted";
	a.gpus = "";
	a.restarts = 2;
	timeline_add(&v, &n, NULL, &a, 40);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].restarts, 2);
	timeline_split(&v, &n, sp, 2);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].restarts, 2);
	assert_int_equal(v[1].restarts, 2);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_finished),
		cmocka_unit_test(test_split_live),
		cmocka_unit_test(test_split_none),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_restarts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
