/* Unit tests for the breaker and runs stopped early (issue 45). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctx.h"
#include "stages/breaker.h"
#include "runs.h"

#include "fixture-db.h"
#include "fixture-run.h"

struct fx {
	char dir[64];
	struct xl_ctx ctx;
	long long at;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "breaker", &f->ctx.db) < 0)
		return -1;
	config_defaults(&f->ctx.cfg, "s", "gpu");
	f->ctx.cfg.breaker_program = 2;
	f->at = 1000;
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

/* A run judged verdict (with class, or NULL) for reason, after the ones before. */
static void judged(struct fx *f, const char *tag, const char *verdict, const char *cls,
		   const char *reason)
{
	struct run r;
	struct attempt a;
	struct stmt q;

	fixture_run(&r, "s", tag);
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	fixture_attempt(&a, r.id, tag, "");
	assert_int_equal(attempts_insert(&f->ctx.db, &a), 0);
	assert_int_equal(db_prepare(&f->ctx.db, &q, "UPDATE attempt SET verdict = :v,"
				    " failure_class = :c, verdict_reason = :r, judged_at = :at"
				    " WHERE id = :id"), 0);
	db_bind_text(&q, ":v", verdict);
	db_bind_text(&q, ":c", cls);
	db_bind_text(&q, ":r", reason);
	db_bind_int64(&q, ":at", f->at++);
	db_bind_int64(&q, ":id", a.id);
	assert_int_equal(db_step(&q), SQLITE_DONE);
	db_finalize(&q);
}

/* Whether the breaker opens now; its reason must hold needle. */
static int opens(struct fx *f, const char *needle)
{
	struct breaker b;
	int open;

	assert_int_equal(breaker_check(&f->ctx, &b), 0);
	open = b.open;
	if (open && needle && !strstr(b.reason, needle))
		fail_msg("reason '%s' lacks '%s'", b.reason, needle);
	breaker_release(&b);
	return open;
}

/* A stop is not a failure: it neither counts nor breaks a run of failures. */
static void test_stop_not_counted(void **state)
{
	struct fx *f = *state;

	judged(f, "a", "failure", "program", "FAILED");
	judged(f, "b", "stopped", NULL, "stopped early at epoch 4 (the value is NaN)");
	assert_false(opens(f, NULL));
	judged(f, "c", "stopped", NULL, "stopped early at epoch 3 (the value is NaN)");
	assert_false(opens(f, NULL));
	judged(f, "d", "failure", "program", "FAILED");
	assert_true(opens(f, "2 program failures in a row (d, a)"));
}

/* Stops at the first epoch again and again: the job may be broken. */
static void test_first_epoch_stops(void **state)
{
	struct fx *f = *state;

	judged(f, "a", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	judged(f, "b", "stopped", NULL, "stopped early at epoch 1 (you asked (xloop stop))");
	judged(f, "c", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	assert_false(opens(f, NULL));	/* a user's stop says nothing of the job */
	judged(f, "d", "stopped", NULL, "stopped early at epoch 0 (the value is infinite)");
	assert_false(opens(f, NULL));	/* b interrupts the row: only 2 after it */
	judged(f, "e", "stopped", NULL, "stopped early at epoch 1 (the value is at chance)");
	assert_true(opens(f, "3 runs in a row stopped early at their first epoch"));
}

/* A later-epoch stop ends the row of first-epoch stops. */
static void test_later_stop_ends_row(void **state)
{
	struct fx *f = *state;

	judged(f, "a", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	judged(f, "b", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	judged(f, "c", "stopped", NULL, "stopped early at epoch 7 (the value is NaN)");
	judged(f, "d", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	assert_false(opens(f, NULL));
	f->ctx.cfg.breaker_program = 0;	/* 0: never, for stops too */
	judged(f, "e", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	judged(f, "f", "stopped", NULL, "stopped early at epoch 1 (the value is NaN)");
	assert_false(opens(f, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stop_not_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_epoch_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_later_stop_ends_row, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
