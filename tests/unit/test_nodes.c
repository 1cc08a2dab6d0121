/* Unit tests for the nodes a study avoids (runs.c, issue 34). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctx.h"
#include "stages/nodes.h"
#include "runs.h"

#include "fixture-db.h"
#include "fixture-run.h"

struct fx {
	char dir[64];
	struct xl_ctx ctx;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "nodes", &f->ctx.db) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fixture_dir_remove(f->dir);

	db_close(&f->ctx.db);
	free(f);
	return rc;
}

/* A run of study with one attempt that ended state on node at end. */
static void ended(struct fx *f, const char *study, const char *tag, const char *state,
		  const char *node, long long end)
{
	struct run r;
	struct attempt a;
	char *sql;

	fixture_run(&r, study, tag);
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	fixture_attempt(&a, r.id, tag, "gpu:1");
	assert_int_equal(attempts_insert(&f->ctx.db, &a), 0);
	sql = xasprintf("UPDATE attempt SET state = '%s', node = '%s', ended_at = %lld,"
			" verdict = 'failure' WHERE id = %lld", state, node, end, a.id);
	assert_int_equal(db_exec(&f->ctx.db, sql), 0);
	free(sql);
}

/* Two node failures within the hour avoid the node; one, or old ones, do not. */
static void test_avoided_after_two_failures(void **state)
{
	struct fx *f = *state;
	long long now = 1000000;
	struct avoided_node *v;
	size_t n;
	char *x;

	ended(f, "s", "a", "NODE_FAIL", "node1", now - 60);
	assert_int_equal(runs_avoided_nodes(&f->ctx.db, "s", now, &v, &n), 0);
	assert_int_equal(n, 0);
	free(v);
	/* the retry after one failure excludes the node itself */
	x = runs_exclude_nodes(&f->ctx.db, "s", "node1", now, 3);
	assert_string_equal(x, "node1");
	free(x);
	assert_null(runs_exclude_nodes(&f->ctx.db, "s", NULL, now, 3));

	ended(f, "s", "b", "BOOT_FAIL", "node1", now - 30);
	ended(f, "s", "c", "FAILED", "node2", now - 30);	/* the job's fault */
	ended(f, "s", "d", "NODE_FAIL", "node2", now - NODE_AVOID_SECS - 1);	/* too old */
	ended(f, "t", "e", "NODE_FAIL", "node3", now - 10);	/* another study's */
	ended(f, "t", "f", "NODE_FAIL", "node3", now - 10);
	assert_int_equal(runs_avoided_nodes(&f->ctx.db, "s", now, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].node, "node1");
	assert_int_equal(v[0].fails, 2);
	assert_int_equal(v[0].last, now - 30);
	avoided_nodes_free(v, n);

	x = runs_exclude_nodes(&f->ctx.db, "s", NULL, now, 3);
	assert_string_equal(x, "node1");
	free(x);
	x = runs_exclude_nodes(&f->ctx.db, "s", "node2", now, 3);
	assert_string_equal(x, "node2,node1");
	free(x);
	/* never every node of the partition; unknown size: only the retry's own */
	x = runs_exclude_nodes(&f->ctx.db, "s", "node2", now, 2);
	assert_string_equal(x, "node2");
	free(x);
	assert_null(runs_exclude_nodes(&f->ctx.db, "s", NULL, now, 1));
	assert_null(runs_exclude_nodes(&f->ctx.db, "s", NULL, now, -1));
	/* a segment's lost nodes and its attempt's own: each host once, first kept first */
	x = runs_exclude_nodes(&f->ctx.db, "s", "node2,node1", now, 4);
	assert_string_equal(x, "node2,node1");
	free(x);
	x = runs_exclude_nodes(&f->ctx.db, "s", "node[2-3],node2", now, 4);
	assert_string_equal(x, "node2,node3,node1");
	free(x);
	x = runs_exclude_nodes(&f->ctx.db, "s", "node[2-3],node1", now, 3);
	assert_string_equal(x, "node2,node3");
	free(x);
	x = runs_exclude_nodes(&f->ctx.db, "s", "node[2-3", now, 3);	/* unreadable: as it is */
	assert_string_equal(x, "node[2-3,node1");
	free(x);
	/* an hour after its last failure it is used again */
	assert_null(runs_exclude_nodes(&f->ctx.db, "s", NULL, now - 30 + NODE_AVOID_SECS + 1, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_avoided_after_two_failures, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
