/* Unit tests for timeline.c: attempts' bars on their nodes, cut into segments and steps, their rows. */
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

	if ((*n & (*n - 1)) == 0)	/* as timeline.c grows it: doubled at powers of two */
		*v = xreallocarray(*v, *n ? 2 * *n : 1, sizeof(**v));
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

/* An attempt of id that ran from start to end on node with GPUs gpus. */
static void ran(struct attempt *a, long long id, long long start, long long end,
		const char *node, const char *gpus)
{
	memset(a, 0, sizeof(*a));
	a->id = id;
	a->n = 1;
	a->started_at = start;
	a->ended_at = end;
	a->verdict = "success";
	a->state = "COMPLETED";
	a->phase = "submitted";
	a->node = (char *)node;
	a->gpus = (char *)gpus;
}

/* A job across nodes is a bar on each node; a NodeList it cannot read is one bar named so. */
static void test_add_nodes(void **state)
{
	struct attempt a;
	struct bar *v = NULL;
	size_t n = 0;

	(void)state;
	ran(&a, 1, 10, 20, "node[1-2]", "0");
	timeline_add(&v, &n, NULL, &a, 40);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].node, "node1");
	assert_string_equal(v[1].node, "node2");
	assert_int_equal(v[0].copy, 0);
	assert_int_equal(v[1].copy, 1);
	assert_int_equal(v[1].nodes, 2);
	assert_int_equal(v[1].gpu, 0);
	assert_int_equal(v[1].start, 10);
	assert_int_equal(v[1].end, 20);
	ran(&a, 2, 10, 20, "node3", "1");
	timeline_add(&v, &n, NULL, &a, 40);
	assert_int_equal(n, 3);
	assert_string_equal(v[2].node, "node3");
	assert_int_equal(v[2].nodes, 1);
	ran(&a, 3, 10, 20, "node[1-", "0");
	timeline_add(&v, &n, NULL, &a, 40);
	assert_int_equal(n, 4);
	assert_string_equal(v[3].node, "node[1-");
	ran(&a, 4, 10, 20, "", "0");
	timeline_add(&v, &n, NULL, &a, 40);
	assert_int_equal(n, 5);
	assert_string_equal(v[4].node, "");
	assert_int_equal(v[4].nodes, 0);
	free(v);
}

/* A segmented job across nodes is cut into its segments on each node; its later step is one bar. */
static void test_nodes_split_steps(void **state)
{
	static const struct segment_span seg[] = { { 5, 1, 10, 20 }, { 5, 2, 21, 30 } };
	static const struct step_span st[] = { { 5, 2, 31, 40, "eval", "COMPLETED" } };
	struct attempt a;
	struct bar *v = NULL;
	size_t n = 0, i, on1 = 0, on2 = 0, steps = 0;

	(void)state;
	ran(&a, 5, 10, 30, "n[1-2]", "0");
	timeline_add(&v, &n, NULL, &a, 40);
	timeline_split(&v, &n, seg, 2);
	assert_int_equal(n, 4);
	timeline_add_steps(&v, &n, st, 1);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		if (v[i].step == 2) {
			steps++;
			assert_string_equal(v[i].node, "");	/* a later step's node is not known */
			assert_int_equal(v[i].copy, 0);
			continue;
		}
		assert_int_equal(v[i].step, 1);
		assert_true(v[i].seg == 1 || v[i].seg == 2);
		on1 += strcmp(v[i].node, "n1") == 0;
		on2 += strcmp(v[i].node, "n2") == 0;
	}
	assert_int_equal(steps, 1);
	assert_int_equal(on1, 2);
	assert_int_equal(on2, 2);
	free(v);
}

/* The row of the bar of attempt id on node, or -1. */
static int lane(const struct bar *v, size_t n, long long id, const char *node)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].attempt_id == id && strcmp(v[i].node, node) == 0)
			return v[i].lane;
	return -1;
}

/* Rows of several nodes: a (node, GPU) pair each, node10 after node2, a 2-node job on both. */
static void test_lanes_nodes(void **state)
{
	struct attempt a;
	struct bar *v = NULL;
	struct gpu_row rows[8];
	size_t n = 0, nrows = 0;
	int named = -1, lanes;

	(void)state;
	/* by start, as the report sorts them */
	ran(&a, 1, 100, 110, "node10", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 2, 100, 120, "node[1-2]", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 3, 105, 115, "node2", "1");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 4, 120, 140, "node1", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 5, 130, 140, "node2", "");	/* no GPU known: a packed row */
	timeline_add(&v, &n, NULL, &a, 200);
	lanes = timeline_lanes(v, n, rows, &nrows, 8, 16, &named);
	assert_int_equal(named, 1);
	assert_int_equal(nrows, 4);
	assert_int_equal(lanes, 5);
	assert_string_equal(rows[0].node, "node1");
	assert_int_equal(rows[0].gpu, 0);
	assert_string_equal(rows[1].node, "node2");
	assert_int_equal(rows[1].gpu, 0);
	assert_string_equal(rows[2].node, "node2");
	assert_int_equal(rows[2].gpu, 1);
	assert_string_equal(rows[3].node, "node10");
	/* the 2-node job on node1's and node2's GPU 0, not on one row */
	assert_int_equal(lane(v, n, 2, "node1"), 0);
	assert_int_equal(lane(v, n, 2, "node2"), 1);
	assert_int_equal(lane(v, n, 1, "node10"), 3);
	assert_int_equal(lane(v, n, 4, "node1"), 0);
	assert_int_equal(lane(v, n, 5, "node2"), 4);
	/* busy per row, idle the rest of the span 100..140 */
	assert_int_equal(rows[0].busy, 40);
	assert_int_equal(rows[0].idle, 0);
	assert_int_equal(rows[1].busy, 20);
	assert_int_equal(rows[1].idle, 20);
	assert_int_equal(rows[2].busy, 10);
	assert_int_equal(rows[3].busy, 10);
	assert_int_equal(rows[3].idle, 30);
	free(v);
}

/* One node (or none known): rows by GPU index alone, as on a single-node cluster. */
static void test_lanes_one_node(void **state)
{
	struct attempt a;
	struct bar *v = NULL;
	struct gpu_row rows[8];
	size_t n = 0, nrows = 0;
	int named = -1;

	(void)state;
	ran(&a, 1, 100, 110, "node1", "1");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 2, 100, 110, "", "0");	/* an attempt whose node is not known */
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 3, 110, 130, "node1", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	timeline_lanes(v, n, rows, &nrows, 8, 16, &named);
	assert_int_equal(named, 0);
	assert_int_equal(nrows, 2);
	assert_int_equal(rows[0].gpu, 0);
	assert_string_equal(rows[0].node, "node1");
	assert_int_equal(rows[0].busy, 30);
	assert_int_equal(rows[1].gpu, 1);
	assert_int_equal(lane(v, n, 2, ""), 0);
	assert_int_equal(lane(v, n, 3, "node1"), 0);
	free(v);
	/* no node at all: rows of unknown nodes */
	v = NULL;
	n = 0;
	ran(&a, 1, 100, 110, "", "2");
	timeline_add(&v, &n, NULL, &a, 200);
	timeline_lanes(v, n, rows, &nrows, 8, 16, &named);
	assert_int_equal(named, 0);
	assert_int_equal(nrows, 1);
	assert_string_equal(rows[0].node, "");
	free(v);
	/* more GPUs than rows: the rest are packed below */
	v = NULL;
	n = 0;
	ran(&a, 1, 100, 110, "a", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 2, 100, 110, "b", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	ran(&a, 3, 100, 110, "c", "0");
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(timeline_lanes(v, n, rows, &nrows, 2, 16, &named), 3);
	assert_int_equal(nrows, 2);
	assert_int_equal(lane(v, n, 3, "c"), 2);
	free(v);
}

/* The row of the bar of attempt id on node's GPU gpu, or -1. */
static int lane_gpu(const struct bar *v, size_t n, long long id, const char *node, long long gpu)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].attempt_id == id && strcmp(v[i].node, node) == 0 && v[i].gpu == gpu)
			return v[i].lane;
	return -1;
}

/*
 * Each GPU a job had is a bar on that GPU's row (issue 34): a job of 2
 * GPUs busies both of its node's rows; a job across nodes whose index
 * differs by node ("node2=1;node3=0", slurm_job_gpu_map) is on node2's
 * GPU 1 and node3's GPU 0; a node the map does not name has no GPU known.
 */
static void test_add_gpus(void **state)
{
	struct attempt a;
	struct bar *v = NULL;
	struct gpu_row rows[8];
	size_t n = 0, nrows = 0, i, copies = 0;
	int named = -1;

	(void)state;
	ran(&a, 1, 100, 110, "node2", "0-1");
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].gpu, 0);
	assert_int_equal(v[1].gpu, 1);
	assert_int_equal(v[0].gpus, 2);
	assert_int_equal(v[0].copy, 0);
	assert_int_equal(v[1].copy, 1);
	ran(&a, 2, 105, 120, "node[2-3]", "node2=1;node3=0");
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(n, 4);
	ran(&a, 3, 120, 130, "node[3-4]", "node3=0-1");
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(n, 7);
	ran(&a, 4, 130, 140, "node[5-", "node5=0");	/* no hosts: no node's GPU */
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(n, 8);
	assert_int_equal(v[7].gpu, -1);
	/* a NodeList that names the batch host alone (sacct just after the
	 * end): the nodes whose GPUs were seen are its nodes too */
	ran(&a, 5, 140, 150, "node2", "node2=1;node3=0");
	timeline_add(&v, &n, NULL, &a, 200);
	assert_int_equal(n, 10);
	assert_string_equal(v[8].node, "node2");
	assert_int_equal(v[8].gpu, 1);
	assert_string_equal(v[9].node, "node3");
	assert_int_equal(v[9].gpu, 0);
	assert_int_equal(v[9].nodes, 2);
	assert_int_equal(v[9].copy, 1);
	for (i = 0; i < n; i++)
		copies += v[i].attempt_id == 3 && v[i].copy > 0;
	assert_int_equal(copies, 2);
	timeline_lanes(v, n, rows, &nrows, 8, 16, &named);
	assert_int_equal(named, 1);
	assert_int_equal(nrows, 4);
	assert_string_equal(rows[0].node, "node2");
	assert_int_equal(rows[0].gpu, 0);
	assert_string_equal(rows[1].node, "node2");
	assert_int_equal(rows[1].gpu, 1);
	assert_string_equal(rows[2].node, "node3");
	assert_int_equal(rows[2].gpu, 0);
	assert_string_equal(rows[3].node, "node3");
	assert_int_equal(rows[3].gpu, 1);
	assert_int_equal(lane_gpu(v, n, 1, "node2", 1), 1);
	assert_int_equal(lane_gpu(v, n, 2, "node2", 1), 1);
	assert_int_equal(lane_gpu(v, n, 2, "node3", 0), 2);
	assert_int_equal(lane_gpu(v, n, 2, "node2", 0), -1);
	assert_int_equal(lane_gpu(v, n, 3, "node4", -1), 4);	/* packed below */
	/* busy per GPU: node2's GPU 1 ran three jobs, 10 + 15 + 10 s */
	assert_int_equal(rows[0].busy, 10);
	assert_int_equal(rows[1].busy, 35);
	assert_int_equal(rows[2].busy, 35);
	assert_int_equal(rows[3].busy, 10);
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
		cmocka_unit_test(test_add_nodes),
		cmocka_unit_test(test_nodes_split_steps),
		cmocka_unit_test(test_lanes_nodes),
		cmocka_unit_test(test_lanes_one_node),
		cmocka_unit_test(test_add_gpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
