/*
 * The state database: SQLite in .xloop/state.db with WAL, a busy timeout,
 * foreign keys and defensive mode; schema migrations by PRAGMA
 * user_version; bound parameters only; write transactions through
 * db_begin_write() so that anything that submits holds the write lock.
 */
#ifndef XLOOP_DB_H
#define XLOOP_DB_H

#include <sqlite3.h>

#define XLOOP_APPLICATION_ID 0x786c6f70	/* "xlop" */

#define DB_CACHED 8
#define DB_PARKED 8

struct db {
	sqlite3 *h;
	unsigned long serial;	/* this process's count of db_open: tells connections apart */
	char *path;
	int txn_depth;
	const char *txn_where;	/* file:line that opened the transaction */
	struct {		/* db_prepare_cached: prepared once per connection */
		const char *sql;
		sqlite3_stmt *st;
		int in_use;
	} cached[DB_CACHED];
	/* db_finalize keeps the last statements it ended, reset, for a
	 * db_prepare of the same text: a tick prepares some several times */
	sqlite3_stmt *parked[DB_PARKED];
	int nparked;
};

struct stmt {
	sqlite3_stmt *st;
	struct db *db;
	int slot;		/* 1 + its db->cached slot, or 0 */
};

/* Number of migrations this binary knows; user_version after db_open. */
int db_schema_version(void);

/*
 * Open (creating with mode 0600 if needed) and migrate. Returns 0, or -1
 * with *cause allocated.
 */
int db_open(struct db *db, const char *path, char **cause);
void db_close(struct db *db);

/* Apply pending migrations in one transaction; 0 or -1 with *cause. */
int db_migrate(struct db *db, char **cause);

/* Run SQL without parameters (schema, pragmas). 0 or -1 (error printed). */
int db_exec(struct db *db, const char *sql);

/*
 * One statement on row :id (bound), with :text and :num bound when the
 * SQL names them: "UPDATE attempt SET job_id = :text WHERE id = :id". 0 or -1.
 */
int db_exec_row(struct db *db, const char *sql, long long id, const char *text,
		long long num);

/* Prepare; returns 0 or -1 (error printed). */
int db_prepare(struct db *db, struct stmt *q, const char *sql);
/*
 * The same for a statement run many times (once per job, per tick): sql
 * must be a string literal (the cache is keyed by its address). Prepared
 * once per connection; db_finalize() only resets it.
 */
int db_prepare_cached(struct db *db, struct stmt *q, const char *sql);
/* Bind by name (":tag"); an unknown name is a programming error: dies. */
void db_bind_text(struct stmt *q, const char *name, const char *v);
void db_bind_int64(struct stmt *q, const char *name, long long v);
void db_bind_double(struct stmt *q, const char *name, double v);
void db_bind_null(struct stmt *q, const char *name);
/* SQLITE_ROW, SQLITE_DONE, or -1 (error printed). */
int db_step(struct stmt *q);
const char *db_col_text(struct stmt *q, int i);	/* "" for NULL */
char *db_col_dup(struct stmt *q, int i);	/* malloc'd; "" for NULL */
long long db_col_int64(struct stmt *q, int i);
int db_col_is_null(struct stmt *q, int i);
void db_reset(struct stmt *q);
void db_finalize(struct stmt *q);
/* db_step() once (an INSERT, UPDATE, DELETE), then db_finalize(): 0 or -1. */
int db_run(struct stmt *q);

/* The kv table: an integer by key (0 when absent), and setting one. */
long long db_kv_get(struct db *db, const char *key);
int db_kv_set(struct db *db, const char *key, long long v);

/* BEGIN IMMEDIATE (nesting counted); 0 or -1 (busy after the timeout). */
#define db_begin_write(db) db_begin_write_at((db), __FILE__ ":" XL_STR(__LINE__))
#define XL_STR(x) XL_STR2(x)
#define XL_STR2(x) #x
int db_begin_write_at(struct db *db, const char *where);
int db_commit(struct db *db);
void db_rollback(struct db *db);

#endif
