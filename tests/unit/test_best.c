/* Unit tests for best_load (best.c): its kept load never stale (issue 47), the pick remembered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "ctx.h"
#include "runs.h"
#include "search/best.h"

#include "fixture-run.h"

struct fx {
	char dir[64];
	char *path;
	struct xl_ctx ctx;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char *cause = NULL;

	xsnprintf(f->dir, sizeof(f->dir), "/tmp/xloop-test-best-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->path = xasprintf("%s/state.db", f->dir);
	if (db_open(&f->ctx.db, f->path, &cause) < 0)
		return -1;
	f->ctx.root = f->dir;
	f->ctx.cfg.study = "s";
	f->ctx.cfg.search.seed = "";
	f->ctx.cfg.goal_max = 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	int rc = system(cmd);

	free(cmd);
	db_close(&f->ctx.db);
	free(f->path);
	free(f);
	return rc == 0 ? 0 : -1;
}

/* A run tag of configuration text config (value: its label) whose attempt 1 succeeded with score. */
static void scored_as(struct db *db, const char *tag, const char *config, const char *value,
		      double score)
{
	struct run r;
	struct attempt a;
	char *sql;

	fixture_run(&r, "s", tag);
	assert_int_equal(runs_insert(db, &r), 0);
	assert_int_equal(runs_set_config(db, r.id, config, value), 0);
	fixture_attempt(&a, r.id, tag, "gpu:1");
	assert_int_equal(attempts_insert(db, &a), 0);
	sql = xasprintf("UPDATE attempt SET verdict = 'success', score = %g WHERE id = %lld",
			score, a.id);
	assert_int_equal(db_exec(db, sql), 0);
	free(sql);
}

/* A run tag of configuration "X=value" whose attempt 1 succeeded with score. */
static void scored(struct db *db, const char *tag, const char *value, double score)
{
	char *config = xasprintf("X=%s\n", value);

	scored_as(db, tag, config, value, score);
	free(config);
}

/* The runs and configurations best_load sees now. */
static void sees(struct fx *f, size_t runs, size_t cfgs)
{
	struct best_state bs;

	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_int_equal(bs.nruns, runs);
	assert_int_equal(bs.n, cfgs);
	best_release(&bs);
}

/* A row this connection writes, another connection's commit, a rollback: each seen. */
static void test_kept_load_follows_the_db(void **state)
{
	struct fx *f = *state;
	struct best_state bs;
	struct db other;
	char *cause = NULL;

	scored(&f->ctx.db, "a", "1", 0.5);
	sees(f, 1, 1);
	sees(f, 1, 1);		/* kept: the same answer */
	scored(&f->ctx.db, "b", "2", 0.6);
	sees(f, 2, 2);
	/* a score changed in place: the mean follows */
	assert_int_equal(db_exec(&f->ctx.db, "UPDATE attempt SET score = 0.9 WHERE run_id = 2"), 0);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_true(bs.v[1].st.mean > 0.89);
	best_release(&bs);

	/* another connection's commit */
	assert_int_equal(db_open(&other, f->path, &cause), 0);
	scored(&other, "c", "3", 0.7);
	db_close(&other);
	sees(f, 3, 3);

	/* inside a transaction, and after its rollback */
	assert_int_equal(db_exec(&f->ctx.db, "BEGIN"), 0);
	scored(&f->ctx.db, "d", "4", 0.8);
	sees(f, 4, 4);
	assert_int_equal(db_exec(&f->ctx.db, "ROLLBACK"), 0);
	sees(f, 3, 3);

	/* another setting: the seed variable makes other keys */
	f->ctx.cfg.search.seed = "SEED";
	sees(f, 3, 3);
	f->ctx.cfg.search.seed = "";

	/* another DB opened in the same process (its handle may reuse the address) */
	db_close(&f->ctx.db);
	free(f->path);
	f->path = xasprintf("%s/other.db", f->dir);
	assert_int_equal(db_open(&f->ctx.db, f->path, &cause), 0);
	sees(f, 0, 0);
	scored(&f->ctx.db, "z", "9", 0.1);
	sees(f, 1, 1);
}

/*
 * A load while nothing changed shares the kept one's arrays (no copy of
 * every run: issue 47); a holder's load stays whole after the DB changed,
 * a new load was made and the kept one dropped, until its own release.
 */
static void test_kept_load_shared(void **state)
{
	struct fx *f = *state;
	struct best_state a, b, c;

	scored(&f->ctx.db, "a", "1", 0.5);
	scored(&f->ctx.db, "b", "2", 0.6);
	assert_int_equal(best_load(&f->ctx, &a), 0);
	assert_int_equal(best_load(&f->ctx, &b), 0);
	assert_ptr_equal(a.v, b.v);
	assert_ptr_equal(a.runs, b.runs);
	scored(&f->ctx.db, "c", "3", 0.7);
	assert_int_equal(best_load(&f->ctx, &c), 0);
	assert_ptr_not_equal(c.v, a.v);
	assert_int_equal(c.n, 3);
	best_release(&a);
	/* b still reads what both were given */
	assert_int_equal(b.n, 2);
	assert_int_equal(strlen(b.v[1].key), 64);
	assert_string_equal(b.v[1].config, "X=2\n");
	assert_true(b.v[1].st.mean > 0.59 && b.v[1].st.mean < 0.61);
	best_release(&b);
	best_release(&b);	/* released twice: nothing more to free */
	assert_int_equal(c.n, 3);
	best_release(&c);
}

/*
 * A stopped run (issue 46) is no proven run, but best_load keeps its last
 * value for autopilot's model (a lower-fidelity observation); a stopped
 * run without a value, and a failed one, have none.
 */
static void test_stopped_runs_last_value(void **state)
{
	struct fx *f = *state;
	struct best_state bs;

	scored(&f->ctx.db, "a", "1", 0.9);
	scored(&f->ctx.db, "b", "2", 0.4);
	scored(&f->ctx.db, "c", "3", 0.3);
	scored(&f->ctx.db, "d", "4", 0.2);
	assert_int_equal(db_exec(&f->ctx.db, "UPDATE attempt SET verdict = 'stopped' WHERE run_id = 2"), 0);
	assert_int_equal(db_exec(&f->ctx.db, "UPDATE attempt SET verdict = 'stopped', score = NULL "
				 "WHERE run_id = 3"), 0);
	assert_int_equal(db_exec(&f->ctx.db, "UPDATE attempt SET verdict = 'failure' WHERE run_id = 4"), 0);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_int_equal(bs.nruns, 4);
	assert_true(bs.runs[0].proven && !bs.runs[0].stopped);
	assert_true(!bs.runs[1].proven && bs.runs[1].stopped);
	assert_true(bs.runs[1].last > 0.39 && bs.runs[1].last < 0.41);
	assert_true(!bs.runs[2].proven && !bs.runs[2].stopped);
	assert_true(!bs.runs[3].proven && !bs.runs[3].stopped);
	assert_int_equal(bs.best, 0);	/* the choice sees no stopped run */
	assert_int_equal(bs.v[1].st.n, 0);
	best_release(&bs);
}

/* A run tag of configuration "SEED=seed X=value" whose attempt 1 succeeded with score. */
static void seeded(struct db *db, const char *tag, const char *value, const char *seed,
		   double score)
{
	char *config = xasprintf("SEED=%s\nX=%s\n", seed, value);

	scored_as(db, tag, config, value, score);
	free(config);
}

/*
 * The pick remembered (choose.h: the model's or the shrunken means' move
 * goes only to the pick of an earlier verdict): X=2, plainly ahead of the
 * baseline on its two runs, is not the best until a verdict has remembered
 * it as the pick and a later one, with more proven runs, finds it the pick
 * still; status says why it waits.
 */
static void test_pick_remembered(void **state)
{
	struct fx *f = *state;
	struct best_state bs;
	json_t *o;

	f->ctx.cfg.search.seed = "SEED";
	seeded(&f->ctx.db, "base", "1", "1", 0.500);
	seeded(&f->ctx.db, "base--r2", "1", "2", 0.510);
	seeded(&f->ctx.db, "X-2", "2", "1", 0.700);
	seeded(&f->ctx.db, "X-2--r2", "2", "2", 0.712);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_int_equal(bs.pick, 1);
	assert_true(bs.p_pick >= 0.9);
	assert_int_equal(bs.best, 0);
	assert_true(bs.pick_new);
	o = best_outlook(&bs, NULL, "SEED");
	assert_non_null(strstr(json_string_value(json_object_get(o, "text")),
			       "but the pick only since the last verdict"));
	json_decref(o);
	best_release(&bs);
	/* a verdict remembers it; the same runs again: still new */
	assert_int_equal(best_remember(&f->ctx), 0);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_int_equal(bs.best, 0);
	best_release(&bs);
	/* one more proven run (elsewhere): the pick of the verdict before moves the best */
	seeded(&f->ctx.db, "X-3", "3", "1", 0.300);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	assert_int_equal(bs.pick, 1);
	assert_int_equal(bs.best, 1);
	assert_false(bs.pick_new);
	best_release(&bs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kept_load_follows_the_db, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_load_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_runs_last_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pick_remembered, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
