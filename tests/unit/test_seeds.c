/*
 * Unit tests for the seeds of replicates (best.c's best_seeds_used and
 * best_next_seed, issue 44): a configuration gets the baseline's seeds it
 * lacks first, counting its own runs, plan entries and proposals and never
 * another configuration's, so that two configurations' replicates pair.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "ctx.h"
#include "plan.h"
#include "runs.h"
#include "search/best.h"
#include "search/confkey.h"
#include "search/space.h"

#include "fixture-db.h"
#include "fixture-run.h"

struct fx {
	char dir[64];
	struct xl_ctx ctx;
	long long base;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "seeds", &f->ctx.db) < 0)
		return -1;
	config_defaults(&f->ctx.cfg, "s", "gpu");
	free(f->ctx.cfg.search.seed);
	f->ctx.cfg.search.seed = xstrdup("SEED");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fixture_dir_remove(f->dir);

	config_release(&f->ctx.cfg);
	db_close(&f->ctx.db);
	free(f);
	return rc;
}

/* Run tag with X=x and SEED=seed (from the baseline unless it is the first), verdict or NULL. */
static void run(struct fx *f, const char *tag, int x, int seed, const char *verdict)
{
	struct run r;
	struct attempt a;
	char config[64], key[65], *sql;

	fixture_run(&r, "s", tag);
	r.parent_id = f->base;
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	if (!f->base)
		f->base = r.id;
	xsnprintf(config, sizeof(config), "SEED=%d\nX=%d\n", seed, x);
	confkey_key(config, "SEED", key);
	assert_int_equal(runs_set_config(&f->ctx.db, r.id, config, key), 0);
	fixture_attempt(&a, r.id, tag, "");
	assert_int_equal(attempts_insert(&f->ctx.db, &a), 0);
	if (verdict) {
		sql = xasprintf("UPDATE attempt SET verdict = '%s', score = 0.5 WHERE id = %lld",
				verdict, a.id);
		assert_int_equal(db_exec(&f->ctx.db, sql), 0);
		free(sql);
	}
}

/* The seeds in v, comma-separated, into buf. */
static const char *joined(char **v, size_t n, char *buf, size_t size)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s", i ? "," : "", v[i]);
	return buf;
}

/*
 * What `replicate` does for one configuration: k seeds, each the
 * baseline's next one it lacks, else fresh; each queued in the plan.
 */
static void replicate(struct fx *f, const char *tag, int k, char *out, size_t size)
{
	struct best_state bs;
	char **used, *val;
	size_t n, at = 0;
	long long id;
	long c;
	int i;

	assert_int_equal(best_load(&f->ctx, &bs), 0);
	for (c = 0; c < (long)bs.n; c++)
		if (strcmp(bs.v[c].rep_tag, tag) == 0)
			break;
	assert_true(c < (long)bs.n);
	used = best_seeds_used(&f->ctx, &bs, c, &n);
	out[0] = '\0';
	for (i = 0; i < k; i++) {
		val = best_next_seed(&f->ctx, &bs, bs.baseline == c ? -1 : bs.baseline, used, n);
		if (!val)
			val = space_fresh_seed((const char *const *)used, n);
		assert_int_equal(plan_add(&f->ctx.db, "s", tag, "SEED", val, &id), 0);
		at += (size_t)snprintf(out + at, size - at, "%s%s", i ? "," : "", val);
		used = xreallocarray(used, n + 1, sizeof(*used));
		used[n++] = val;
	}
	strv_free(used, n);
	best_release(&bs);
}

/*
 * The case: the baseline has seeds 0 and 1, a and b seed 0 each;
 * replicating a gives it 1 (the baseline's) then 2 (fresh), and b, next,
 * gets 1 and 2 too (it was given 3 and 4: a's queued seeds counted as b's).
 */
static void test_pairs_kept(void **state)
{
	struct fx *f = *state;
	char got[64];

	run(f, "base", 1, 0, "success");
	run(f, "base--r2", 1, 1, "success");
	run(f, "a", 2, 0, "success");
	run(f, "b", 3, 0, "success");
	replicate(f, "a", 2, got, sizeof(got));
	assert_string_equal(got, "1,2");
	replicate(f, "b", 2, got, sizeof(got));
	assert_string_equal(got, "1,2");
	/* a has 0, 1 and 2 (its run and its plan entries): a third is fresh */
	replicate(f, "a", 1, got, sizeof(got));
	assert_string_equal(got, "3");
}

/*
 * What a configuration has: its runs of every verdict, its own plan
 * entries (from any of its runs, or from "best" when it is the best) and
 * its proposals; the reference's seeds: its runs that succeeded or are
 * open, then its waiting ones.
 */
static void test_what_counts(void **state)
{
	struct fx *f = *state;
	struct best_state bs;
	char **used, buf[128], *s, key[65];
	size_t n;
	long long id;
	long a, base;

	run(f, "base", 1, 0, "success");
	run(f, "base--r2", 1, 4, "failure");	/* failed: not the baseline's seed */
	run(f, "base--r3", 1, 5, NULL);		/* open: the baseline's */
	run(f, "a", 2, 0, "success");
	run(f, "a--r2", 2, 7, "failure");	/* a's, failed: still taken */
	assert_int_equal(plan_add(&f->ctx.db, "s", "a--r2", "SEED", "8", &id), 0);
	assert_int_equal(plan_add(&f->ctx.db, "s", "base", "SEED", "9", &id), 0);
	assert_int_equal(plan_add(&f->ctx.db, "s", "a", "X", "3", &id), 0);	/* not a seed */
	confkey_key("SEED=0\nX=2\n", "SEED", key);
	s = xasprintf("INSERT INTO proposal (study, at, kind, parent, var, value, tag, config_key,"
		      " reason, status) VALUES ('s', 1, 'replicate', 'a', 'SEED', '11', 'a--r3',"
		      " '%s', 'r', 'intent')", key);
	assert_int_equal(db_exec(&f->ctx.db, s), 0);
	free(s);
	assert_int_equal(best_load(&f->ctx, &bs), 0);
	base = bs.baseline;
	a = best_find_run(&bs, 4);
	assert_true(a >= 0 && a != base);
	used = best_seeds_used(&f->ctx, &bs, a, &n);
	assert_string_equal(joined(used, n, buf, sizeof(buf)), "0,7,8,11");
	/* the baseline's next seed a lacks: 5 (its open run), then 9 (its plan entry) */
	s = best_next_seed(&f->ctx, &bs, base, used, n);
	assert_string_equal(s, "5");
	used = xreallocarray(used, n + 1, sizeof(*used));
	used[n++] = s;
	s = best_next_seed(&f->ctx, &bs, base, used, n);
	assert_string_equal(s, "9");
	used = xreallocarray(used, n + 1, sizeof(*used));
	used[n++] = s;
	assert_null(best_next_seed(&f->ctx, &bs, base, used, n));
	assert_null(best_next_seed(&f->ctx, &bs, -1, used, n));
	strv_free(used, n);
	used = best_seeds_used(&f->ctx, &bs, base, &n);
	assert_string_equal(joined(used, n, buf, sizeof(buf)), "0,4,5,9");
	strv_free(used, n);
	best_release(&bs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pairs_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_counts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
