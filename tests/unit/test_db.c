/* Unit tests for the DB module on real SQLite files in a temp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "db.h"
#include "runs.h"

#include "fixture-run.h"

struct fx {
	char dir[64];
	char *path;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	xsnprintf(f->dir, sizeof(f->dir), "/tmp/xloop-test-db-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->path = xasprintf("%s/state.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char *cmd = xasprintf("rm -rf '%s'", f->dir);
	int rc = system(cmd);

	free(cmd);
	free(f->path);
	free(f);
	return rc == 0 ? 0 : -1;
}

/* The whole schema as text, plus user_version, for comparisons. */
static char *schema_dump(struct db *db)
{
	struct buf b = BUF_INIT;
	struct stmt q;

	assert_int_equal(db_prepare(db, &q,
		"SELECT type, name, sql FROM sqlite_schema ORDER BY name"), 0);
	while (db_step(&q) == SQLITE_ROW)
		buf_addf(&b, "%s %s %s\n", db_col_text(&q, 0), db_col_text(&q, 1),
			 db_col_text(&q, 2));
	db_finalize(&q);
	assert_int_equal(db_prepare(db, &q, "PRAGMA user_version"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	buf_addf(&b, "user_version %lld\n", db_col_int64(&q, 0));
	db_finalize(&q);
	return buf_detach(&b, NULL);
}

static void test_open_creates_0600_wal_schema(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	struct stat st;
	struct stmt q;

	umask(022);
	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_null(cause);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA journal_mode"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_string_equal(db_col_text(&q, 0), "wal");
	db_finalize(&q);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA user_version"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_int_equal(db_col_int64(&q, 0), db_schema_version());
	db_finalize(&q);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA application_id"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_int_equal(db_col_int64(&q, 0), XLOOP_APPLICATION_ID);
	db_finalize(&q);
	db_close(&db);
}

/* PRAGMA page_size of an open db. */
static long long page_size(struct db *db)
{
	struct stmt q;
	long long v;

	assert_int_equal(db_prepare(db, &q, "PRAGMA page_size"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	v = db_col_int64(&q, 0);
	db_finalize(&q);
	return v;
}

/* A new file gets 16 kB pages; a file made with 4 kB pages keeps them. */
static void test_page_size(void **state)
{
	struct fx *f = *state;
	char *cause = NULL, *old = xasprintf("%s/old.db", f->dir);
	sqlite3 *h;
	struct db db;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(page_size(&db), 16384);
	db_close(&db);
	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(page_size(&db), 16384);
	db_close(&db);
	/* an older xloop's file: SQLite's default pages, one table in it */
	assert_int_equal(sqlite3_open(old, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA page_size=4096; CREATE TABLE x (y)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(db_open(&db, old, &cause), 0);
	assert_int_equal(page_size(&db), 4096);
	db_close(&db);
	free(old);
}

static void test_migrate_twice_is_no_change(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL, *first, *second;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	first = schema_dump(&db);
	assert_int_equal(db_migrate(&db, &cause), 0);
	second = schema_dump(&db);
	assert_string_equal(first, second);
	db_close(&db);
	/* and reopening applies nothing either */
	assert_int_equal(db_open(&db, f->path, &cause), 0);
	free(second);
	second = schema_dump(&db);
	assert_string_equal(first, second);
	assert_non_null(strstr(first, "table attempt"));
	db_close(&db);
	free(first);
	free(second);
}

static void test_foreign_keys_enforced(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	struct stmt q;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_prepare(&db, &q,
		"INSERT INTO attempt (run_id, n, token, phase, log_path, intent_at)"
		" VALUES (:run, 1, 'tok', 'submitting', '/x', 0)"), 0);
	db_bind_int64(&q, ":run", 4242);
	assert_int_equal(db_step(&q), -1);
	db_finalize(&q);
	db_close(&db);
}

static void test_bound_parameters_roundtrip(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	struct stmt q;
	const char *evil = "x'); DROP TABLE run; --";

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_prepare(&db, &q,
		"INSERT INTO run (study, tag, created_at) VALUES (:s, :t, 1)"), 0);
	db_bind_text(&q, ":s", "st");
	db_bind_text(&q, ":t", evil);
	assert_int_equal(db_step(&q), SQLITE_DONE);
	db_finalize(&q);
	assert_int_equal(db_prepare(&db, &q, "SELECT tag FROM run"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_string_equal(db_col_text(&q, 0), evil);
	db_finalize(&q);
	db_close(&db);
}

static void test_nested_transaction_and_rollback(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	struct stmt q;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_begin_write(&db), 0);
	assert_int_equal(db_begin_write(&db), 0);
	assert_int_equal(db_exec(&db, "INSERT INTO kv VALUES ('a', '1')"), 0);
	assert_int_equal(db_commit(&db), 0);	/* inner: nothing yet */
	db_rollback(&db);			/* outer: all gone */
	assert_int_equal(db_prepare(&db, &q, "SELECT count(*) FROM kv"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_int_equal(db_col_int64(&q, 0), 0);
	db_finalize(&q);
	db_close(&db);
}

static void test_refuses_newer_schema_and_foreign_db(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	char *other;
	sqlite3 *h;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_exec(&db, "PRAGMA user_version=999"), 0);
	db_close(&db);
	assert_int_equal(db_open(&db, f->path, &cause), -1);
	assert_non_null(strstr(cause, "schema version 999"));
	free(cause);
	cause = NULL;

	other = xasprintf("%s/other.db", f->dir);
	assert_int_equal(sqlite3_open(other, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, "PRAGMA application_id=7; CREATE TABLE t(x)",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(db_open(&db, other, &cause), -1);
	assert_non_null(strstr(cause, "not an xloop database"));
	free(cause);
	free(other);
}

static void test_second_writer_waits_not_corrupts(void **state)
{
	struct fx *f = *state;
	struct db a, b;
	char *cause = NULL;

	assert_int_equal(db_open(&a, f->path, &cause), 0);
	assert_int_equal(db_open(&b, f->path, &cause), 0);
	assert_int_equal(db_begin_write(&a), 0);
	sqlite3_busy_timeout(b.h, 50);
	assert_int_equal(db_begin_write(&b), -1);	/* busy: a holds it */
	assert_int_equal(db_commit(&a), 0);
	assert_int_equal(db_begin_write(&b), 0);
	assert_int_equal(db_commit(&b), 0);
	db_close(&a);
	db_close(&b);
}

/* A cached statement is prepared once, reset by db_finalize, never shared while in use. */
static void test_prepare_cached(void **state)
{
	static const char sql[] = "SELECT value FROM kv WHERE key = :k";
	struct fx *f = *state;
	struct db db;
	char *cause = NULL;
	struct stmt a, b, c;
	sqlite3_stmt *first;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_kv_set(&db, "x", 7), 0);
	assert_int_equal(db_kv_set(&db, "y", 9), 0);
	assert_int_equal(db_prepare_cached(&db, &a, sql), 0);
	first = a.st;
	db_bind_text(&a, ":k", "x");
	assert_int_equal(db_step(&a), SQLITE_ROW);
	/* while a is in use, the same text gets a statement of its own */
	assert_int_equal(db_prepare_cached(&db, &b, sql), 0);
	assert_ptr_not_equal(b.st, first);
	db_bind_text(&b, ":k", "y");
	assert_int_equal(db_step(&b), SQLITE_ROW);
	assert_string_equal(db_col_text(&b, 0), "9");
	assert_string_equal(db_col_text(&a, 0), "7");
	db_finalize(&b);
	db_finalize(&a);
	/* given back: the same statement again, bindings cleared */
	assert_int_equal(db_prepare_cached(&db, &c, sql), 0);
	assert_ptr_equal(c.st, first);
	assert_int_equal(db_step(&c), SQLITE_DONE);	/* :k is NULL now */
	db_finalize(&c);
	assert_int_equal(db_kv_get(&db, "y"), 9);
	assert_int_equal(db_kv_get(&db, "x"), 7);
	db_close(&db);		/* finalizes them: no "statements still open" */
}

/* A run's tag by its id; NULL for an id that is no run. */
static void test_runs_tag(void **state)
{
	struct fx *f = *state;
	struct db db;
	char *cause = NULL, *tag;
	struct stmt q;
	long long id;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(db_prepare(&db, &q,
		"INSERT INTO run (study, tag, created_at) VALUES ('s', 'lr-3', 1)"), 0);
	assert_int_equal(db_step(&q), SQLITE_DONE);
	db_finalize(&q);
	id = sqlite3_last_insert_rowid(db.h);
	tag = runs_tag(&db, id);
	assert_string_equal(tag, "lr-3");
	free(tag);
	assert_null(runs_tag(&db, id + 1));
	db_close(&db);
}

/* SQL on db's raw handle: its sqlite3 result code. */
static int raw(struct db *db, const char *sql)
{
	return sqlite3_exec(db->h, sql, NULL, NULL, NULL);
}

/*
 * The walk of the shown attempts: each run's attempts in order, in a DB of
 * one study (one scan of the index) and of two (a descent per run), with
 * another study's runs and attempts between them.
 */
static void test_walk_shown(void **state)
{
	struct fx *f = *state;
	struct attempt_walk w;
	struct attempt a;
	struct db db;
	char *cause = NULL;
	int pass;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(raw(&db, "INSERT INTO run (id, study, tag, created_at) VALUES"
			     " (2, 's', 'a', 1), (4, 's', 'b', 1)"), SQLITE_OK);
	assert_int_equal(raw(&db, "INSERT INTO attempt (run_id, n, token, phase, log_path,"
			     " intent_at, verdict, score) VALUES"
			     " (4, 1, 't1', 'submitted', 'l', 1, 'failure', NULL),"
			     " (2, 1, 't2', 'submitted', 'l', 1, 'failure', NULL),"
			     " (2, 2, 't3', 'adopted', 'l', 1, 'success', 0.5),"
			     " (4, 2, 't4', 'submitted', 'l', 1, NULL, NULL)"), SQLITE_OK);
	for (pass = 0; pass < 2; pass++) {
		/* pass 1: runs 1, 3 and 5 of two other studies, with attempts */
		if (pass == 1)
			assert_int_equal(raw(&db, "INSERT INTO run (id, study, tag, created_at)"
					     " VALUES (1, 'r', 'a', 1), (3, 't', 'c', 1),"
					     " (5, 't', 'd', 1);"
					     "INSERT INTO attempt (run_id, n, token, phase, log_path,"
					     " intent_at) VALUES (3, 1, 't5', 'submitted', 'l', 1),"
					     " (1, 1, 't6', 'submitted', 'l', 1),"
					     " (5, 1, 't7', 'submitted', 'l', 1)"), SQLITE_OK);
		assert_int_equal(attempt_walk_open_shown(&db, "s", &w), 0);
		assert_int_equal(attempt_walk_next(&w, 2, &a), 1);
		assert_int_equal(a.n, 1);
		assert_string_equal(a.verdict, "failure");
		assert_false(a.has_score);
		assert_string_equal(a.token, "");	/* not shown */
		assert_int_equal(attempt_walk_next(&w, 2, &a), 1);
		assert_int_equal(a.n, 2);
		assert_string_equal(a.phase, "adopted");
		assert_true(a.has_score);
		assert_int_equal(attempt_walk_next(&w, 2, &a), 0);
		assert_int_equal(attempt_walk_next(&w, 4, &a), 1);
		assert_int_equal(a.n, 1);
		assert_int_equal(a.run_id, 4);
		assert_int_equal(attempt_walk_next(&w, 4, &a), 1);
		assert_int_equal(a.n, 2);
		assert_string_equal(a.verdict, "");
		assert_int_equal(attempt_walk_next(&w, 4, &a), 0);
		assert_int_equal(attempt_walk_next(&w, 6, &a), 0);	/* none of 't' */
		attempt_walk_close(&w);
	}
	db_close(&db);
}

/*
 * Migration 16 (issue 45) widens attempt.verdict's CHECK in place: a file
 * of version 15, with its rows, takes 'stopped' once migrated, and stays
 * whole.
 */
static void test_migration_16_stopped_verdict(void **state)
{
	struct fx *f = *state;
	struct db db;
	struct run r;
	struct attempt a;
	struct stmt q;
	char *cause = NULL, sql[200];
	long long v;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	fixture_run(&r, "s", "t");
	assert_int_equal(runs_insert(&db, &r), 0);
	fixture_attempt(&a, r.id, "tok", "");
	assert_int_equal(attempts_insert(&db, &a), 0);
	/* back to version 15: the CHECK as it shipped */
	sqlite3_db_config(db.h, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA schema_version"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	v = db_col_int64(&q, 0);
	db_finalize(&q);
	assert_int_equal(raw(&db, "PRAGMA writable_schema=ON"), SQLITE_OK);
	assert_int_equal(raw(&db, "UPDATE sqlite_master SET sql = replace(sql,"
			     " '''success'', ''failure'', ''stopped''', '''success'', ''failure''')"
			     " WHERE name = 'attempt'"), SQLITE_OK);
	xsnprintf(sql, sizeof(sql), "PRAGMA schema_version=%lld", v + 1);
	assert_int_equal(raw(&db, sql), SQLITE_OK);
	assert_int_equal(raw(&db, "PRAGMA writable_schema=OFF"), SQLITE_OK);
	assert_int_equal(raw(&db, "DROP INDEX attempt_stopped"), SQLITE_OK);	/* 17's */
	assert_int_equal(raw(&db, "DROP INDEX attempt_auto_retry"), SQLITE_OK);
	assert_int_equal(raw(&db, "PRAGMA user_version=15"), SQLITE_OK);
	assert_int_not_equal(raw(&db, "UPDATE attempt SET verdict = 'stopped'"), SQLITE_OK);
	assert_int_equal(raw(&db, "UPDATE attempt SET verdict = 'failure'"), SQLITE_OK);
	db_close(&db);

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	assert_int_equal(raw(&db, "UPDATE attempt SET verdict = 'stopped'"), SQLITE_OK);
	assert_int_not_equal(raw(&db, "UPDATE attempt SET verdict = 'maybe'"), SQLITE_OK);
	assert_int_equal(db_prepare(&db, &q, "SELECT (SELECT verdict FROM attempt),"
				    " (SELECT count(*) FROM run)"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_string_equal(db_col_text(&q, 0), "stopped");
	assert_int_equal(db_col_int64(&q, 1), 1);
	db_finalize(&q);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA integrity_check"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_string_equal(db_col_text(&q, 0), "ok");
	db_finalize(&q);
	assert_int_equal(db_prepare(&db, &q, "PRAGMA user_version"), 0);
	assert_int_equal(db_step(&q), SQLITE_ROW);
	assert_int_equal(db_col_int64(&q, 0), db_schema_version());
	db_finalize(&q);
	/* defensive again: the schema cannot be written */
	assert_int_equal(raw(&db, "PRAGMA writable_schema=ON"), SQLITE_OK);
	assert_int_not_equal(raw(&db, "UPDATE sqlite_master SET sql = sql WHERE name = 'attempt'"),
			     SQLITE_OK);
	db_close(&db);
}

/*
 * Migration 17 (issue 47): the stopped attempts status counts are read
 * from an index of their own, not by a scan of every attempt; a retry
 * candidate's automatic retries are counted from an index.
 */
static void test_migration_17_stopped_index(void **state)
{
	struct fx *f = *state;
	struct db db;
	struct stmt q;
	char *cause = NULL;
	int used = 0;

	assert_int_equal(db_open(&db, f->path, &cause), 0);
	/* status's query (stopped_early) */
	assert_int_equal(db_prepare(&db, &q, "EXPLAIN QUERY PLAN SELECT r.tag, t.n, t.started_at,"
				    " t.ended_at, t.gres, t.node FROM attempt t CROSS JOIN run r"
				    " ON r.id = t.run_id WHERE t.verdict = 'stopped' AND r.study = 's'"
				    " AND t.n = (SELECT max(n) FROM attempt WHERE run_id = t.run_id)"), 0);
	while (db_step(&q) == SQLITE_ROW)
		used |= strstr(db_col_text(&q, 3), "USING INDEX attempt_stopped") != NULL;
	db_finalize(&q);
	assert_true(used);
	/* retry.c's count of a candidate's automatic retries: the index alone */
	used = 0;
	assert_int_equal(db_prepare(&db, &q, "EXPLAIN QUERY PLAN SELECT count(*) FROM attempt x"
				    " WHERE x.run_id = 1 AND x.auto_retry = 'infra'"), 0);
	while (db_step(&q) == SQLITE_ROW)
		used |= strstr(db_col_text(&q, 3), "COVERING INDEX attempt_auto_retry") != NULL;
	db_finalize(&q);
	assert_true(used);
	db_close(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_creates_0600_wal_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_page_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_twice_is_no_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_16_stopped_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_17_stopped_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_keys_enforced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound_parameters_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_transaction_and_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_newer_schema_and_foreign_db, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_writer_waits_not_corrupts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prepare_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runs_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_shown, setup, teardown),
	};

	return cmocka_run_group_tests_name("db", tests, NULL, NULL);
}
