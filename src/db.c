/* SQLite wrapper: open, migrate, prepared statements, transactions. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "lib/util.h"

#define BUSY_TIMEOUT_MS 10000
#define MIN_SQLITE_VERSION 3031000

/*
 * Each entry moves the schema from version i to i + 1. Never edit an
 * entry that has shipped: append a new one.
 */
static const char *const migrations[] = {
	/* 1: runs, attempts, the plan, an event journal, key/values */
	"CREATE TABLE run ("
	"  id INTEGER PRIMARY KEY,"
	"  study TEXT NOT NULL,"
	"  tag TEXT NOT NULL,"
	"  parent_id INTEGER REFERENCES run(id),"
	"  var TEXT, old_value TEXT, new_value TEXT,"
	"  note TEXT,"
	"  created_at INTEGER NOT NULL,"
	"  commit_id TEXT,"
	"  UNIQUE (study, tag)"
	");"
	"CREATE TABLE attempt ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES run(id),"
	"  n INTEGER NOT NULL CHECK (n >= 0),"	/* 0: a hand-run baseline (adopt --cv) */
	"  token TEXT NOT NULL UNIQUE,"
	"  phase TEXT NOT NULL CHECK (phase IN"
	"    ('submitting', 'submitted', 'submit_failed', 'adopted')),"
	"  job_id TEXT,"
	"  log_path TEXT NOT NULL,"
	"  job_sha256 TEXT,"
	"  partition TEXT, gres TEXT, cpus INTEGER, mem TEXT, time_limit TEXT,"
	"  overrides TEXT,"		/* resource flags given on the command line */
	"  after_job TEXT,"
	"  submit_error TEXT,"
	"  intent_at INTEGER NOT NULL,"
	"  submitted_at INTEGER, started_at INTEGER, ended_at INTEGER,"
	"  state TEXT, exit_code TEXT, node TEXT, slurm_reason TEXT,"
	"  slurm_raw TEXT,"
	"  cancelled_by_user INTEGER NOT NULL DEFAULT 0,"
	"  verdict TEXT CHECK (verdict IN ('success', 'failure')),"
	"  failure_class TEXT CHECK (failure_class IN ('infra', 'program')),"
	"  verdict_reason TEXT,"
	"  score REAL,"
	"  judged_at INTEGER,"
	"  missing_since INTEGER,"	/* first poll that found the job nowhere */
	"  evidence TEXT,"		/* what the log showed: last line, GPU */
	"  decided INTEGER NOT NULL DEFAULT 0,"	/* its decisions.md entry is written */
	"  UNIQUE (run_id, n)"
	");"
	"CREATE INDEX attempt_job ON attempt(job_id);"
	"CREATE TABLE plan ("
	"  id INTEGER PRIMARY KEY,"
	"  study TEXT NOT NULL,"
	"  parent TEXT NOT NULL,"	/* a tag or 'best' (resolved when used) */
	"  var TEXT NOT NULL,"
	"  value TEXT NOT NULL,"
	"  added_at INTEGER NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'queued'"
	"    CHECK (status IN ('queued', 'done', 'skipped', 'removed')),"
	"  run_id INTEGER REFERENCES run(id),"
	"  skip_reason TEXT"
	");"
	"CREATE TABLE event ("
	"  id INTEGER PRIMARY KEY,"
	"  at INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  run_id INTEGER REFERENCES run(id),"
	"  attempt_id INTEGER REFERENCES attempt(id),"
	"  detail TEXT"
	");"
	"CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;",
	/* 2: the notification outbox (notify.c): queued in the transaction that
	 * made the event, sent after it, at least once */
	"CREATE TABLE outbox ("
	"  id INTEGER PRIMARY KEY,"
	"  at INTEGER NOT NULL,"		/* when it was queued */
	"  kind TEXT NOT NULL,"
	"  study TEXT NOT NULL,"
	"  tag TEXT NOT NULL DEFAULT '',"
	"  text TEXT NOT NULL,"
	"  status TEXT NOT NULL DEFAULT 'queued'"
	"    CHECK (status IN ('queued', 'sent', 'failed', 'expired', 'no_url')),"
	"  attempts INTEGER NOT NULL DEFAULT 0,"	/* HTTP requests made */
	"  last_error TEXT,"			/* URL redacted */
	"  done_at INTEGER"			/* when it left 'queued' */
	");"
	"CREATE INDEX outbox_status ON outbox(status, id);",
	/* 3: sweeps (one run per value, submitted as job arrays; the index of
	 * a run in its sweep never changes) and automatic retries */
	"CREATE TABLE sweep ("
	"  id INTEGER PRIMARY KEY,"
	"  study TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  parent TEXT NOT NULL,"		/* the parent's tag */
	"  var TEXT NOT NULL,"
	"  max_parallel INTEGER NOT NULL DEFAULT 0,"	/* the %K of --array; 0: none */
	"  created_at INTEGER NOT NULL,"
	"  UNIQUE (study, name)"
	");"
	"CREATE TABLE sweep_task ("
	"  sweep_id INTEGER NOT NULL REFERENCES sweep(id),"
	"  idx INTEGER NOT NULL CHECK (idx >= 0),"	/* the array index */
	"  run_id INTEGER NOT NULL UNIQUE REFERENCES run(id),"
	"  PRIMARY KEY (sweep_id, idx)"
	");"
	"ALTER TABLE attempt ADD COLUMN auto_retry TEXT"	/* why xloop retried on its own */
	"  CHECK (auto_retry IN ('infra', 'resources'));",
	/* 4: indexes for large studies, so that a tick or a briefing reads
	 * what is open, undecided, recent or best without walking every
	 * attempt. The partial ones are used only by queries that repeat
	 * their WHERE terms and write `+r.study` (so the planner starts
	 * from the attempt side): runs.c, reconcile.c, retry.c, breaker.c. */
	"CREATE INDEX attempt_open ON attempt(id) WHERE verdict IS NULL;"
	"CREATE INDEX attempt_undecided ON attempt(id) WHERE decided = 0;"
	"CREATE INDEX attempt_judged ON attempt(judged_at);"
	"CREATE INDEX attempt_success ON attempt(score) WHERE verdict = 'success';"
	"CREATE INDEX attempt_retryable ON attempt(judged_at) WHERE verdict = 'failure'"
	"  AND (failure_class = 'infra' OR state IN ('TIMEOUT', 'OUT_OF_MEMORY'));",
	/* 5: lanes (queue.lanes): the afterany chain an attempt was put in, and
	 * the GPUs the job was given (scontrol -d: IDX "0", "1,3"), for the report */
	("ALTER TABLE attempt ADD COLUMN lane INTEGER NOT NULL DEFAULT 0 CHECK (lane >= 0);"
	 "ALTER TABLE attempt ADD COLUMN gpus TEXT;"),
	/* 6: configurations (confkey.h: a run's job.sh assignments, canonical,
	 * and their key without the seed; a run made before has no row until
	 * best.c back-fills it from job.sh) and autopilot's proposals, recorded before
	 * their run is created so that a crash proposes nothing twice */
	"CREATE TABLE run_config ("		/* beside run: its rows stay narrow */
	"  run_id INTEGER PRIMARY KEY REFERENCES run(id),"
	"  config TEXT NOT NULL,"
	"  config_key TEXT NOT NULL"
	");"
	"CREATE INDEX run_config_key ON run_config(config_key);"
	"CREATE INDEX attempt_latest ON attempt(run_id, n, verdict, score);"	/* best.c */
	"CREATE TABLE proposal ("
	"  id INTEGER PRIMARY KEY,"
	"  study TEXT NOT NULL,"
	"  at INTEGER NOT NULL,"
	"  kind TEXT NOT NULL CHECK (kind IN ('change', 'replicate')),"
	"  parent TEXT NOT NULL,"		/* the parent's tag */
	"  var TEXT NOT NULL,"
	"  value TEXT NOT NULL,"
	"  tag TEXT NOT NULL,"
	"  config_key TEXT NOT NULL,"	/* of the run it makes */
	"  reason TEXT NOT NULL,"
	"  run_id INTEGER REFERENCES run(id),"	/* NULL: intent, run not made yet */
	"  status TEXT NOT NULL DEFAULT 'intent'"
	"    CHECK (status IN ('intent', 'created', 'decided', 'failed')),"
	"  error TEXT,"
	"  UNIQUE (study, tag)"
	");",
	/* 7: segments (segments.c): an attempt longer than the time limit runs
	 * as jobs 1..max in one run directory; each row is one sbatch, written
	 * as an intent before it, so a crash never submits one twice. Segment
	 * k+1 waits with afternotok on k; the attempt's job_id is the current one. */
	"CREATE TABLE segment ("
	"  id INTEGER PRIMARY KEY,"
	"  attempt_id INTEGER NOT NULL REFERENCES attempt(id),"
	"  k INTEGER NOT NULL CHECK (k >= 1),"
	"  try INTEGER NOT NULL DEFAULT 1,"
	"  max INTEGER NOT NULL,"
	"  token TEXT NOT NULL UNIQUE,"
	"  job_id TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('submitting', 'queued', 'current',"
	"    'continued', 'last', 'unneeded', 'submit_failed')),"
	"  intent_at INTEGER NOT NULL,"
	"  started_at INTEGER, ended_at INTEGER,"
	"  outcome TEXT,"
	"  UNIQUE (attempt_id, k, try)"
	");"
	"CREATE INDEX segment_open ON segment(attempt_id)"
	"  WHERE state IN ('submitting', 'queued', 'current');",
	/* 8: the Slurm driver's feeder jobs (driver.c): each recorded as an
	 * intent before sbatch, found again by its token after a crash */
	"CREATE TABLE feeder ("
	"  id INTEGER PRIMARY KEY,"
	"  study TEXT NOT NULL,"
	"  token TEXT NOT NULL UNIQUE,"
	"  phase TEXT NOT NULL CHECK (phase IN"
	"    ('submitting', 'queued', 'running', 'done', 'failed', 'gone')),"
	"  job_id TEXT,"
	"  waits TEXT,"			/* its --dependency or --begin */
	"  intent_at INTEGER NOT NULL,"
	"  submitted_at INTEGER, started_at INTEGER, ended_at INTEGER,"
	"  result TEXT"
	");"
	"CREATE INDEX feeder_open ON feeder(study, id) WHERE phase IN ('submitting', 'queued', 'running');",
	/* 9: a run's own segment count (`xloop new --segments N`): every
	 * submission of the run uses it unless --segments says otherwise;
	 * NULL: segments.max of xloop.json */
	"ALTER TABLE run ADD COLUMN segments INTEGER CHECK (segments BETWEEN 0 AND 1000);",
	/* 10: the code an attempt runs (gitops_code_state): HEAD's commit when
	 * it was submitted and a sha256 of the tracked files' uncommitted
	 * changes ('' none); NULL both: not recorded (older, or no repo) */
	"ALTER TABLE attempt ADD COLUMN code_commit TEXT;"
	"ALTER TABLE attempt ADD COLUMN code_changes TEXT;",
	/* 11: steps (steps.c, issue 28): a run's scripts after job.sh (step 1),
	 * and each attempt's jobs of them, one row per sbatch written as an
	 * intent before it (its own token), so a crash never submits a step
	 * twice; step k waits afterok on step k-1 (the attempt's job for k 2) */
	"CREATE TABLE run_step ("
	"  run_id INTEGER NOT NULL REFERENCES run(id),"
	"  k INTEGER NOT NULL CHECK (k >= 2),"
	"  name TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, k),"
	"  UNIQUE (run_id, name)"
	");"
	"CREATE TABLE step_job ("
	"  id INTEGER PRIMARY KEY,"
	"  attempt_id INTEGER NOT NULL REFERENCES attempt(id),"
	"  k INTEGER NOT NULL CHECK (k >= 2),"
	"  try INTEGER NOT NULL DEFAULT 1,"
	"  name TEXT NOT NULL,"
	"  token TEXT NOT NULL UNIQUE,"
	"  phase TEXT NOT NULL CHECK (phase IN ('submitting', 'submitted',"
	"    'submit_failed', 'ended', 'dropped', 'retried')),"
	"  job_id TEXT NOT NULL DEFAULT '',"
	"  after_job TEXT NOT NULL DEFAULT '',"
	"  log_path TEXT NOT NULL,"
	"  intent_at INTEGER NOT NULL,"
	"  submitted_at INTEGER,"
	"  state TEXT, exit_code TEXT, started_at INTEGER, ended_at INTEGER,"
	"  missing_since INTEGER,"		/* left the queue, no final state known yet */
	"  UNIQUE (attempt_id, k, try)"
	");"
	"CREATE INDEX step_job_attempt ON step_job(attempt_id, k, try);",
	/* 12: a sweep's --then step (issue 28): one CPU job afterany on the
	 * sweep's arrays, recorded as an intent (its own token) in the
	 * transaction of the sweep's attempts; after: the arrays' tokens in
	 * step order (it waits for every one that has a job) */
	"CREATE TABLE sweep_then ("
	"  id INTEGER PRIMARY KEY,"
	"  sweep_id INTEGER NOT NULL UNIQUE REFERENCES sweep(id),"
	"  token TEXT NOT NULL UNIQUE,"
	"  phase TEXT NOT NULL CHECK (phase IN ('submitting', 'submitted',"
	"    'submit_failed', 'ended')),"
	"  after TEXT NOT NULL,"
	"  job_id TEXT NOT NULL DEFAULT '',"
	"  after_job TEXT NOT NULL DEFAULT '',"
	"  script TEXT NOT NULL,"
	"  log_path TEXT NOT NULL,"
	"  results TEXT NOT NULL,"
	"  intent_at INTEGER NOT NULL,"
	"  state TEXT, exit_code TEXT"
	");",
	/* 13: a --then step per try: `sweep retry` of a sweep with one records
	 * try N+1 (afterany on the retry's arrays), and an older try that has
	 * not started is superseded (cancelled); after_job: the sweep's jobs
	 * it was made to wait for, a step retried alone included (its
	 * Dependency names those that had not ended; sweep-then.c) */
	"CREATE TABLE sweep_then_13 ("
	"  id INTEGER PRIMARY KEY,"
	"  sweep_id INTEGER NOT NULL REFERENCES sweep(id),"
	"  try INTEGER NOT NULL CHECK (try >= 1),"
	"  token TEXT NOT NULL UNIQUE,"
	"  phase TEXT NOT NULL CHECK (phase IN ('submitting', 'submitted',"
	"    'submit_failed', 'ended', 'superseded')),"
	"  after TEXT NOT NULL,"
	"  job_id TEXT NOT NULL DEFAULT '',"
	"  after_job TEXT NOT NULL DEFAULT '',"
	"  script TEXT NOT NULL,"
	"  log_path TEXT NOT NULL,"
	"  results TEXT NOT NULL,"
	"  intent_at INTEGER NOT NULL,"
	"  state TEXT, exit_code TEXT,"
	"  UNIQUE (sweep_id, try)"
	");"
	"INSERT INTO sweep_then_13 (id, sweep_id, try, token, phase, after, job_id, after_job,"
	"  script, log_path, results, intent_at, state, exit_code)"
	"  SELECT id, sweep_id, 1, token, phase, after, job_id, after_job, script, log_path,"
	"  results, intent_at, state, exit_code FROM sweep_then;"
	"DROP TABLE sweep_then;"
	"ALTER TABLE sweep_then_13 RENAME TO sweep_then;",
	/* 14: Slurm's own requeues of an attempt's job (issue 34: a node lost,
	 * a preemption): restarts counts the starts after the first (same job
	 * id, seen by its start time changing), run_start is the start of the
	 * job's current run while it is live */
	"ALTER TABLE attempt ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE attempt ADD COLUMN run_start INTEGER;",
	/* 15: the recent node failures every next and tick counts (nodes.c:
	 * runs_avoided_nodes) read from their own few rows, not by a walk over
	 * every attempt of a long study (issue 47) */
	"CREATE INDEX attempt_node_fail ON attempt(ended_at)"
	"  WHERE state IN ('NODE_FAIL', 'BOOT_FAIL');",
	/* 16: a third verdict, stopped early (issue 45: neither success nor
	 * failure). Every row satisfies the wider CHECK, so the table's text
	 * is edited in place (SQLite's way for a constraint that does not
	 * change what is stored; schema_edit() below), not rebuilt: the rows
	 * that reference attempt stay as they are */
	"UPDATE sqlite_master SET sql = replace(sql,"
	"  'CHECK (verdict IN (''success'', ''failure''))',"
	"  'CHECK (verdict IN (''success'', ''failure'', ''stopped''))')"
	"  WHERE type = 'table' AND name = 'attempt';",
	/* 17: the runs stopped early that status counts (stopped_early) read
	 * from their own few rows, not by a scan of every attempt of a long
	 * study (issue 47: 4,558 of status --json's 10,644 page reads); the
	 * automatic retries a retry candidate counts (retry.c: candidates)
	 * from the index alone, not from each of its attempts' rows */
	"CREATE INDEX attempt_stopped ON attempt(run_id, n) WHERE verdict = 'stopped';"
	"CREATE INDEX attempt_auto_retry ON attempt(run_id, auto_retry)"
	"  WHERE auto_retry IS NOT NULL;",
};

/* The schema version this binary migrates to. */
int db_schema_version(void)
{
	return (int)ARRAY_SIZE(migrations);
}

static int pragma_int(struct db *db, const char *sql, long long *out)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, sql) < 0)
		return -1;
	rc = db_step(&q);
	if (rc == SQLITE_ROW)
		*out = db_col_int64(&q, 0);
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* XLOOP_TRACE_SQL=1: each statement and its time on stderr (for profiling). */
static int trace_sql(unsigned type, void *arg, void *p, void *x)
{
	char *sql = sqlite3_expanded_sql(p);

	(void)type;
	(void)arg;
	fprintf(stderr, "sql %8.3f ms  %s\n", *(sqlite3_int64 *)x / 1e6, sql ? sql : "?");
	sqlite3_free(sql);
	return 0;
}

/* Connections opened so far (db.serial). */
static unsigned long opened;

/* Open and migrate the database at path. */
int db_open(struct db *db, const char *path, char **cause)
{
	struct stat st;
	int fd, rc, fresh;
	long long appid = 0;

	memset(db, 0, sizeof(*db));
	if (sqlite3_libversion_number() < MIN_SQLITE_VERSION) {
		*cause = xasprintf("sqlite %s is too old", sqlite3_libversion());
		return -1;
	}
	/* create it ourselves so the mode is 0600 whatever the umask */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*cause = xasprintf("unable to open '%s': %s", path, strerror(errno));
		return -1;
	}
	fresh = fstat(fd, &st) == 0 && st.st_size == 0;
	close(fd);
	rc = sqlite3_open_v2(path, &db->h,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
			     SQLITE_OPEN_NOMUTEX, NULL);	/* one thread uses it */
	if (rc != SQLITE_OK) {
		*cause = xasprintf("unable to open '%s': %s", path,
				   db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		sqlite3_close(db->h);
		db->h = NULL;
		return -1;
	}
	db->path = xstrdup(path);
	db->serial = ++opened;
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	if (getenv("XLOOP_TRACE_SQL"))
		sqlite3_trace_v2(db->h, SQLITE_TRACE_PROFILE, trace_sql, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DQS_DML, 0, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DQS_DDL, 0, NULL);
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_ENABLE_FKEY, 1, NULL);
	/*
	 * A new file gets 16 kB pages (SQLite's default is 4 kB): a long
	 * study's status reads a quarter as many pages (issue 47). An older
	 * file keeps its size (only a VACUUM could change it).
	 */
	if ((fresh && db_exec(db, "PRAGMA page_size=16384") < 0) ||
	    db_exec(db, "PRAGMA journal_mode=WAL") < 0 ||
	    db_exec(db, "PRAGMA synchronous=FULL") < 0 ||
	    pragma_int(db, "PRAGMA application_id", &appid) < 0) {
		/* the OS's reason, e.g. a full disk, says more than "disk I/O error" */
		int e = sqlite3_system_errno(db->h);

		*cause = xasprintf("unable to set up '%s'%s%s", path, e ? ": " : "",
				   e ? strerror(e) : "");
		goto fail;
	}
	if (appid != 0 && appid != XLOOP_APPLICATION_ID) {
		*cause = xasprintf("'%s' is not an xloop database", path);
		goto fail;
	}
	if (db_migrate(db, cause) < 0)
		goto fail;
	return 0;
fail:
	db_close(db);
	return -1;
}

/* Close the database (and roll back anything left open). */
void db_close(struct db *db)
{
	if (db->h) {
		int i;

		for (i = 0; i < DB_CACHED; i++)
			sqlite3_finalize(db->cached[i].st);
		for (i = 0; i < db->nparked; i++)
			sqlite3_finalize(db->parked[i]);
		if (db->txn_depth)
			db_exec(db, "ROLLBACK");
		if (sqlite3_close(db->h) != SQLITE_OK)
			warning("database '%s' closed with statements still open",
				db->path ? db->path : "?");
	}
	free(db->path);
	memset(db, 0, sizeof(*db));
}

/*
 * Run a migration that edits sqlite_master: writable_schema on (the
 * defensive flag off meanwhile), then schema_version + 1 so that every
 * connection reads the new text. In the migration's transaction.
 */
static int schema_edit(struct db *db, const char *sql)
{
	long long v = 0;
	char pragma[64];
	int rc = -1;

	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 0, NULL);
	if (pragma_int(db, "PRAGMA schema_version", &v) == 0 &&
	    db_exec(db, "PRAGMA writable_schema=ON") == 0) {
		xsnprintf(pragma, sizeof(pragma), "PRAGMA schema_version=%lld", v + 1);
		rc = db_exec(db, sql) == 0 && db_exec(db, pragma) == 0 ? 0 : -1;
		if (db_exec(db, "PRAGMA writable_schema=OFF") < 0)
			rc = -1;
	}
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	return rc;
}

/* Apply the migrations the file does not have yet. */
int db_migrate(struct db *db, char **cause)
{
	long long v = 0;
	int i, n = db_schema_version();
	char pragma[64];

	/* the usual case, up to date, needs no write lock */
	if (pragma_int(db, "PRAGMA user_version", &v) == 0 && v == n)
		return 0;
	if (db_begin_write(db) < 0) {
		*cause = xasprintf("database '%s' is busy", db->path);
		return -1;
	}
	if (pragma_int(db, "PRAGMA user_version", &v) < 0)
		goto fail;
	if (v > n) {
		db_rollback(db);
		*cause = xasprintf("database '%s' has schema version %lld; "
				   "this xloop knows up to %d: upgrade xloop",
				   db->path, v, n);
		return -1;
	}
	for (i = (int)v; i < n; i++) {
		if ((strstr(migrations[i], "sqlite_master") ? schema_edit(db, migrations[i]) :
		     db_exec(db, migrations[i])) < 0)
			goto fail;
		xsnprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", i + 1);
		if (db_exec(db, pragma) < 0)
			goto fail;
	}
	if (v == 0) {
		xsnprintf(pragma, sizeof(pragma), "PRAGMA application_id=%d",
			  XLOOP_APPLICATION_ID);
		if (db_exec(db, pragma) < 0)
			goto fail;
	}
	if (db_commit(db) < 0)
		goto fail_nocommit;
	return 0;
fail:
	db_rollback(db);
fail_nocommit:
	*cause = xasprintf("unable to migrate '%s' from version %lld", db->path, v);
	return -1;
}

/* Run SQL that takes no parameters. */
int db_exec(struct db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("sqlite: %s", msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* One statement on row :id, with :text and :num when it names them. */
int db_exec_row(struct db *db, const char *sql, long long id, const char *text,
		long long num)
{
	struct stmt q;

	if (db_prepare(db, &q, sql) < 0)
		return -1;
	db_bind_int64(&q, ":id", id);
	if (strstr(sql, ":text"))
		db_bind_text(&q, ":text", text);
	if (strstr(sql, ":num"))
		db_bind_int64(&q, ":num", num);
	return db_run(&q);
}

/* Prepare a statement. */
int db_prepare(struct db *db, struct stmt *q, const char *sql)
{
	int i;

	q->db = db;
	q->st = NULL;
	q->slot = 0;
	for (i = db->nparked - 1; i >= 0; i--) {
		if (strcmp(sqlite3_sql(db->parked[i]), sql) != 0)
			continue;
		q->st = db->parked[i];
		db->parked[i] = db->parked[--db->nparked];
		return 0;
	}
	if (sqlite3_prepare_v2(db->h, sql, -1, &q->st, NULL) != SQLITE_OK)
		return error("sqlite: %s in '%s'", sqlite3_errmsg(db->h), sql);
	return 0;
}

/* Prepare a literal once per connection; a plain prepare when busy or full. */
int db_prepare_cached(struct db *db, struct stmt *q, const char *sql)
{
	int i, free_slot = -1;

	for (i = 0; i < DB_CACHED; i++) {
		if (db->cached[i].sql == sql && !db->cached[i].in_use) {
			db->cached[i].in_use = 1;
			q->db = db;
			q->st = db->cached[i].st;
			q->slot = i + 1;
			return 0;
		}
		if (!db->cached[i].sql && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return db_prepare(db, q, sql);
	q->db = db;
	q->st = NULL;
	q->slot = 0;
	if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &q->st,
			       NULL) != SQLITE_OK)
		return error("sqlite: %s in '%s'", sqlite3_errmsg(db->h), sql);
	db->cached[free_slot].sql = sql;
	db->cached[free_slot].st = q->st;
	db->cached[free_slot].in_use = 1;
	q->slot = free_slot + 1;
	return 0;
}

static int param(struct stmt *q, const char *name)
{
	int i = sqlite3_bind_parameter_index(q->st, name);

	if (i == 0)
		BUG("no parameter '%s' in '%s'", name, sqlite3_sql(q->st));
	return i;
}

/* Bind text (NULL binds SQL NULL). */
void db_bind_text(struct stmt *q, const char *name, const char *v)
{
	int i = param(q, name);

	if (v == NULL)
		sqlite3_bind_null(q->st, i);
	else
		sqlite3_bind_text(q->st, i, v, -1, SQLITE_TRANSIENT);
}

/* Bind an integer. */
void db_bind_int64(struct stmt *q, const char *name, long long v)
{
	sqlite3_bind_int64(q->st, param(q, name), v);
}

/* Bind a double. */
void db_bind_double(struct stmt *q, const char *name, double v)
{
	sqlite3_bind_double(q->st, param(q, name), v);
}

/* Bind NULL. */
void db_bind_null(struct stmt *q, const char *name)
{
	sqlite3_bind_null(q->st, param(q, name));
}

/* Step; SQLITE_ROW, SQLITE_DONE or -1. */
int db_step(struct stmt *q)
{
	int rc = sqlite3_step(q->st);

	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return rc;
	return error("sqlite: %s", sqlite3_errmsg(q->db->h));
}

/* Column i as text; "" for NULL. */
const char *db_col_text(struct stmt *q, int i)
{
	const unsigned char *s = sqlite3_column_text(q->st, i);

	return s ? (const char *)s : "";
}

/* A malloc'd copy of column i ("" for NULL), without a strlen. */
char *db_col_dup(struct stmt *q, int i)
{
	const unsigned char *s = sqlite3_column_text(q->st, i);
	size_t n = s ? (size_t)sqlite3_column_bytes(q->st, i) : 0;
	char *d = xmalloc(n + 1);

	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* Column i as an integer. */
long long db_col_int64(struct stmt *q, int i)
{
	return sqlite3_column_int64(q->st, i);
}

/* True when column i is NULL. */
int db_col_is_null(struct stmt *q, int i)
{
	return sqlite3_column_type(q->st, i) == SQLITE_NULL;
}

/* Reset for another step with new bindings. */
void db_reset(struct stmt *q)
{
	sqlite3_reset(q->st);
	sqlite3_clear_bindings(q->st);
}

/* Step a statement that returns no row, then finalize it: 0 or -1. */
int db_run(struct stmt *q)
{
	int rc = db_step(q);

	db_finalize(q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Finalize a statement. */
void db_finalize(struct stmt *q)
{
	if (q->slot) {		/* cached: ready for the next use */
		sqlite3_reset(q->st);
		sqlite3_clear_bindings(q->st);
		q->db->cached[q->slot - 1].in_use = 0;
		q->slot = 0;
	} else if (q->st) {
		/* parked for a prepare of the same text; the oldest goes */
		sqlite3_reset(q->st);
		sqlite3_clear_bindings(q->st);
		if (q->db->nparked == DB_PARKED) {
			sqlite3_finalize(q->db->parked[0]);
			memmove(q->db->parked, q->db->parked + 1,
				(DB_PARKED - 1) * sizeof(*q->db->parked));
			q->db->nparked--;
		}
		q->db->parked[q->db->nparked++] = q->st;
	}
	q->st = NULL;
}

/* Begin a write transaction, or join the open one. */
int db_begin_write_at(struct db *db, const char *where)
{
	if (db->txn_depth++ > 0)
		return 0;
	if (db_exec(db, "BEGIN IMMEDIATE") < 0) {
		db->txn_depth = 0;
		return -1;
	}
	db->txn_where = where;
	return 0;
}

/* Commit when the outermost transaction ends. */
int db_commit(struct db *db)
{
	if (db->txn_depth <= 0)
		BUG("db_commit without a transaction");
	if (--db->txn_depth > 0)
		return 0;
	db->txn_where = NULL;
	if (db_exec(db, "COMMIT") < 0) {
		/* SQLITE_FULL and the like roll back by themselves */
		if (!sqlite3_get_autocommit(db->h))
			db_exec(db, "ROLLBACK");
		return -1;
	}
	return 0;
}

/* Roll back everything, whatever the nesting. */
void db_rollback(struct db *db)
{
	if (db->txn_depth <= 0)
		return;
	db->txn_depth = 0;
	db->txn_where = NULL;
	if (!sqlite3_get_autocommit(db->h))
		db_exec(db, "ROLLBACK");
}

/* An integer from the kv table; 0 when absent. */
long long db_kv_get(struct db *db, const char *key)
{
	struct stmt q;
	long long v = 0;

	if (db_prepare_cached(db, &q, "SELECT value FROM kv WHERE key = :k") < 0)
		return 0;
	db_bind_text(&q, ":k", key);
	if (db_step(&q) == SQLITE_ROW)
		v = strtoll(db_col_text(&q, 0), NULL, 10);
	db_finalize(&q);
	return v;
}

/* Store an integer in the kv table. */
int db_kv_set(struct db *db, const char *key, long long v)
{
	struct stmt q;
	char s[32];

	xsnprintf(s, sizeof(s), "%lld", v);
	if (db_prepare(db, &q, "INSERT OR REPLACE INTO kv (key, value) VALUES (:k, :v)") < 0)
		return -1;
	db_bind_text(&q, ":k", key);
	db_bind_text(&q, ":v", s);
	return db_run(&q);
}
