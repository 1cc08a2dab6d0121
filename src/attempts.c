/* Attempts: rows in, rows out (the attempt table; runs.c has the run table). */
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "lib/util.h"

/*
 * Every column as it is stored: a NULL reads as "" (db_col_text, db_col_dup)
 * or 0 (db_col_int64), as a coalesce() would make it, without the two VDBE
 * steps a coalesce costs per column (status walks 50,000 rows of these).
 */
#define ATTEMPT_COLS "id, run_id, n, token, phase, job_id, log_path, job_sha256," \
	" partition, gres, mem, time_limit, overrides, after_job, cpus, submit_error," \
	" intent_at, submitted_at, started_at, ended_at, state, exit_code, node," \
	" slurm_reason, verdict, failure_class, verdict_reason, score, auto_retry, lane," \
	" gpus, restarts, run_start"

/*
 * The columns status --json shows (attempt_borrow_shown reads them; the
 * others are "" or 0). Each column read is a VDBE step and an API call:
 * 13 fewer for each of 50,000 rows.
 */
#define ATTEMPT_COLS_SHOWN "id, run_id, n, phase, job_id, log_path, overrides," \
	" submitted_at, started_at, ended_at, state, node, slurm_reason, verdict," \
	" failure_class, verdict_reason, score, auto_retry, lane, restarts"

static void attempt_from(struct stmt *q, struct attempt *a)
{
	char **s[] = { &a->token, &a->phase, &a->job_id, &a->log_path, &a->job_sha256,
		       &a->partition, &a->gres, &a->mem, &a->time_limit, &a->overrides,
		       &a->after_job };
	size_t i;

	a->id = db_col_int64(q, 0);
	a->run_id = db_col_int64(q, 1);
	a->n = db_col_int64(q, 2);
	for (i = 0; i < ARRAY_SIZE(s); i++)
		*s[i] = db_col_dup(q, 3 + (int)i);
	a->cpus = db_col_int64(q, 14);
	a->submit_error = db_col_dup(q, 15);
	a->intent_at = db_col_int64(q, 16);
	a->submitted_at = db_col_int64(q, 17);
	a->started_at = db_col_int64(q, 18);
	a->ended_at = db_col_int64(q, 19);
	a->state = db_col_dup(q, 20);
	a->exit_code = db_col_dup(q, 21);
	a->node = db_col_dup(q, 22);
	a->slurm_reason = db_col_dup(q, 23);
	a->verdict = db_col_dup(q, 24);
	a->failure_class = db_col_dup(q, 25);
	a->verdict_reason = db_col_dup(q, 26);
	a->has_score = !db_col_is_null(q, 27);
	a->score = a->has_score ? sqlite3_column_double(q->st, 27) : 0;
	a->auto_retry = db_col_dup(q, 28);
	a->lane = db_col_int64(q, 29);
	a->gpus = db_col_dup(q, 30);
	a->restarts = db_col_int64(q, 31);
	a->run_start = db_col_int64(q, 32);
}

/* The row's attempt, its strings borrowed from the statement (attempt_walk_next). */
static void attempt_borrow(struct stmt *q, struct attempt *a)
{
	char **s[] = { &a->token, &a->phase, &a->job_id, &a->log_path, &a->job_sha256,
		       &a->partition, &a->gres, &a->mem, &a->time_limit, &a->overrides,
		       &a->after_job };
	size_t i;

	memset(a, 0, sizeof(*a));
	a->id = db_col_int64(q, 0);
	a->run_id = db_col_int64(q, 1);
	a->n = db_col_int64(q, 2);
	for (i = 0; i < ARRAY_SIZE(s); i++)
		*s[i] = (char *)db_col_text(q, 3 + (int)i);
	a->cpus = db_col_int64(q, 14);
	a->submit_error = (char *)db_col_text(q, 15);
	a->intent_at = db_col_int64(q, 16);
	a->submitted_at = db_col_int64(q, 17);
	a->started_at = db_col_int64(q, 18);
	a->ended_at = db_col_int64(q, 19);
	a->state = (char *)db_col_text(q, 20);
	a->exit_code = (char *)db_col_text(q, 21);
	a->node = (char *)db_col_text(q, 22);
	a->slurm_reason = (char *)db_col_text(q, 23);
	a->verdict = (char *)db_col_text(q, 24);
	a->failure_class = (char *)db_col_text(q, 25);
	a->verdict_reason = (char *)db_col_text(q, 26);
	a->has_score = !db_col_is_null(q, 27);
	a->score = a->has_score ? sqlite3_column_double(q->st, 27) : 0;
	a->auto_retry = (char *)db_col_text(q, 28);
	a->lane = db_col_int64(q, 29);
	a->gpus = (char *)db_col_text(q, 30);
	a->restarts = db_col_int64(q, 31);
	a->run_start = db_col_int64(q, 32);
}

/* The row of ATTEMPT_COLS_SHOWN's attempt, borrowed as attempt_borrow's. */
static void attempt_borrow_shown(struct stmt *q, struct attempt *a)
{
	static char none[] = "";	/* read only, as the DB's own strings */

	a->id = db_col_int64(q, 0);
	a->run_id = db_col_int64(q, 1);
	a->n = db_col_int64(q, 2);
	a->phase = (char *)db_col_text(q, 3);
	a->job_id = (char *)db_col_text(q, 4);
	a->log_path = (char *)db_col_text(q, 5);
	a->overrides = (char *)db_col_text(q, 6);
	a->submitted_at = db_col_int64(q, 7);
	a->started_at = db_col_int64(q, 8);
	a->ended_at = db_col_int64(q, 9);
	a->state = (char *)db_col_text(q, 10);
	a->node = (char *)db_col_text(q, 11);
	a->slurm_reason = (char *)db_col_text(q, 12);
	a->verdict = (char *)db_col_text(q, 13);
	a->failure_class = (char *)db_col_text(q, 14);
	a->verdict_reason = (char *)db_col_text(q, 15);
	a->has_score = !db_col_is_null(q, 16);
	a->score = a->has_score ? sqlite3_column_double(q->st, 16) : 0;
	a->auto_retry = (char *)db_col_text(q, 17);
	a->lane = db_col_int64(q, 18);
	a->restarts = db_col_int64(q, 19);
	a->token = a->job_sha256 = a->partition = a->gres = a->mem = none;
	a->time_limit = a->after_job = a->submit_error = a->exit_code = a->gpus = none;
	a->cpus = a->intent_at = a->run_start = 0;
}

/* Free an attempt's strings. */
void attempt_release(struct attempt *a)
{
	char *s[] = { a->token, a->phase, a->job_id, a->log_path, a->job_sha256,
		      a->partition, a->gres, a->mem, a->time_limit, a->overrides,
		      a->after_job, a->submit_error, a->state, a->exit_code, a->node,
		      a->slurm_reason, a->verdict, a->failure_class, a->verdict_reason,
		      a->auto_retry, a->gpus };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		free(s[i]);
	memset(a, 0, sizeof(*a));
}

/* Free an array of attempts. */
void attempts_free(struct attempt *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		attempt_release(&v[i]);
	free(v);
}

static int attempts_query(struct db *db, const char *sql, const char *name,
			  long long id, const char *text, struct attempt **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(db, &q, sql) < 0)
		return -1;
	if (text)
		db_bind_text(&q, name, text);
	else
		db_bind_int64(&q, name, id);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		attempt_from(&q, &(*v)[(*n)++]);
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Every attempt of a run, in order. */
int attempts_list(struct db *db, long long run_id, struct attempt **v, size_t *n)
{
	return attempts_query(db, "SELECT " ATTEMPT_COLS " FROM attempt"
			      " WHERE run_id = :run ORDER BY n", ":run", run_id, NULL, v, n);
}

/* Walk every attempt of a study (or of one run) in one query. */
int attempt_walk_open(struct db *db, const char *study, long long run_id,
		      struct attempt_walk *w)
{
	memset(w, 0, sizeof(*w));
	if (db_prepare(db, &w->q, run_id ?
		       "SELECT " ATTEMPT_COLS " FROM attempt WHERE run_id = :run"
		       " ORDER BY n" :
		       "SELECT " ATTEMPT_COLS " FROM attempt"
		       " WHERE run_id IN (SELECT id FROM run WHERE study = :study)"
		       " ORDER BY run_id, n") < 0)
		return -1;
	if (run_id)
		db_bind_int64(&w->q, ":run", run_id);
	else
		db_bind_text(&w->q, ":study", study);
	return 0;
}

/* Whether every run in the DB is of study (a DB of one study: the usual case). */
static int only_study(struct db *db, const char *study)
{
	struct stmt q;
	int one = 0;

	/* the first and the last study of index (study, tag): two descents */
	if (db_prepare(db, &q, "SELECT coalesce((SELECT min(study) FROM run), :study),"
		       " coalesce((SELECT max(study) FROM run), :study)") < 0)
		return 0;
	db_bind_text(&q, ":study", study);
	if (db_step(&q) == SQLITE_ROW)
		one = strcmp(db_col_text(&q, 0), study) == 0 &&
		      strcmp(db_col_text(&q, 1), study) == 0;
	db_finalize(&q);
	return one;
}

/*
 * Walk the attempts of a study with only the columns status --json shows.
 * In a DB of one study, one scan of index (run_id, n) in order, each row
 * then read from the table; otherwise a descent of the index per run.
 */
int attempt_walk_open_shown(struct db *db, const char *study, struct attempt_walk *w)
{
	int one = only_study(db, study);

	memset(w, 0, sizeof(*w));
	if (db_prepare(db, &w->q, one ?
		       "SELECT " ATTEMPT_COLS_SHOWN " FROM attempt ORDER BY run_id, n" :
		       "SELECT " ATTEMPT_COLS_SHOWN " FROM attempt"
		       " WHERE run_id IN (SELECT id FROM run WHERE study = :study)"
		       " ORDER BY run_id, n") < 0)
		return -1;
	if (!one)
		db_bind_text(&w->q, ":study", study);
	w->shown = 1;
	return 0;
}

/* The attempts of run_id; runs must be asked for in increasing id order. */
int attempt_walk_run(struct attempt_walk *w, long long run_id, struct attempt **v, size_t *n)
{
	int rc;

	*v = NULL;
	*n = 0;
	if (w->shown)
		BUG("attempt_walk_run on a walk of the shown columns");
	for (;;) {
		if (!w->have) {
			if (w->done)
				return 0;
			rc = db_step(&w->q);
			if (rc != SQLITE_ROW) {
				w->done = 1;
				if (rc == SQLITE_DONE)
					return 0;
				attempts_free(*v, *n);
				*v = NULL;
				*n = 0;
				return -1;
			}
			attempt_from(&w->q, &w->next);
			w->have = 1;
		}
		if (w->next.run_id > run_id)
			return 0;
		if (w->next.run_id == run_id) {
			*v = xreallocarray(*v, *n + 1, sizeof(**v));
			(*v)[(*n)++] = w->next;
		} else {
			attempt_release(&w->next);	/* a run the caller skipped */
		}
		w->have = 0;
	}
}

/* The next attempt of run_id, borrowed from the statement's row. */
int attempt_walk_next(struct attempt_walk *w, long long run_id, struct attempt *a)
{
	long long rid;
	int rc;

	for (;;) {
		if (!w->row) {
			if (w->done)
				return 0;
			rc = db_step(&w->q);
			if (rc != SQLITE_ROW) {
				w->done = 1;
				return rc == SQLITE_DONE ? 0 : -1;
			}
			w->row = 1;
		}
		rid = db_col_int64(&w->q, 1);
		if (rid > run_id)
			return 0;	/* a later run's: kept for its call */
		w->row = 0;
		if (rid == run_id) {
			if (w->shown)
				attempt_borrow_shown(&w->q, a);
			else
				attempt_borrow(&w->q, a);
			return 1;
		}
	}
}

/* End a walk (either kind). */
void attempt_walk_close(struct attempt_walk *w)
{
	if (w->have)
		attempt_release(&w->next);
	if (w->q.st)
		db_finalize(&w->q);
	memset(w, 0, sizeof(*w));
}

/* The latest attempt of a run. */
int attempts_latest(struct db *db, long long run_id, struct attempt *a)
{
	struct attempt *v;
	size_t n;

	if (attempts_query(db, "SELECT " ATTEMPT_COLS " FROM attempt"
			   " WHERE run_id = :run ORDER BY n DESC LIMIT 1", ":run",
			   run_id, NULL, &v, &n) < 0)
		return -1;
	if (n == 0)
		return 1;
	*a = v[0];
	free(v);
	return 0;
}

/* Attempts submitted (or being submitted) and not known to be over. */
int attempts_unfinished(struct db *db, const char *study, struct attempt **v, size_t *n)
{
	/* +run_id: start from the attempt_open index, not from the study's runs */
	return attempts_query(db, "SELECT " ATTEMPT_COLS " FROM attempt"
			      " WHERE phase IN ('submitting', 'submitted') AND verdict IS NULL"
			      " AND ended_at IS NULL"
			      " AND +run_id IN (SELECT id FROM run WHERE study = :study)"
			      " ORDER BY id", ":study", 0, study, v, n);
}

/* Insert an attempt. */
int attempts_insert(struct db *db, struct attempt *a)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT INTO attempt (run_id, n, token, phase, job_id,"
		       " log_path, job_sha256, partition, gres, cpus, mem, time_limit,"
		       " overrides, after_job, intent_at, verdict, score, judged_at,"
		       " verdict_reason, auto_retry, lane)"
		       " VALUES (:run, :n, :token, :phase, :job, :log, :sha, :part, :gres,"
		       " :cpus, :mem, :time, :over, :after, :at, :verdict, :score,"
		       " :judged, :reason, :auto, :lane)") < 0)
		return -1;
	db_bind_int64(&q, ":run", a->run_id);
	db_bind_int64(&q, ":n", a->n);
	db_bind_text(&q, ":token", a->token);
	db_bind_text(&q, ":phase", a->phase);
	db_bind_text(&q, ":job", a->job_id && *a->job_id ? a->job_id : NULL);
	db_bind_text(&q, ":log", a->log_path);
	db_bind_text(&q, ":sha", a->job_sha256);
	db_bind_text(&q, ":part", a->partition);
	db_bind_text(&q, ":gres", a->gres);
	db_bind_int64(&q, ":cpus", a->cpus);
	db_bind_text(&q, ":mem", a->mem);
	db_bind_text(&q, ":time", a->time_limit);
	db_bind_text(&q, ":over", a->overrides && *a->overrides ? a->overrides : NULL);
	db_bind_text(&q, ":after", a->after_job && *a->after_job ? a->after_job : NULL);
	db_bind_int64(&q, ":at", a->intent_at);
	db_bind_text(&q, ":verdict", a->verdict && *a->verdict ? a->verdict : NULL);
	if (a->has_score)
		db_bind_double(&q, ":score", a->score);
	else
		db_bind_null(&q, ":score");
	if (a->verdict && *a->verdict)
		db_bind_int64(&q, ":judged", a->intent_at);
	else
		db_bind_null(&q, ":judged");
	db_bind_text(&q, ":reason", a->verdict_reason && *a->verdict_reason ?
		     a->verdict_reason : NULL);
	db_bind_text(&q, ":auto", a->auto_retry && *a->auto_retry ? a->auto_retry : NULL);
	db_bind_int64(&q, ":lane", a->lane);
	if (db_run(&q) < 0)
		return -1;
	a->id = sqlite3_last_insert_rowid(db->h);
	return 0;
}

static int exec_update(struct db *db, const char *sql, long long id,
		       const char *name, const char *text, long long at)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, sql) < 0)
		return -1;
	db_bind_int64(&q, ":id", id);
	db_bind_text(&q, name, text);
	if (at)
		db_bind_int64(&q, ":at", at);
	rc = db_step(&q);
	db_finalize(&q);
	return rc == SQLITE_DONE && sqlite3_changes(db->h) == 1 ? 0 : -1;
}

/* sbatch answered with a job id. */
int attempts_set_submitted(struct db *db, long long id, const char *job_id,
			   long long at)
{
	return exec_update(db, "UPDATE attempt SET phase = 'submitted', job_id = :job,"
			   " submitted_at = :at WHERE id = :id", id, ":job", job_id, at);
}

/* How long an intent may wait for its sbatch (tests shorten it). */
long long attempts_orphan_secs(void)
{
#ifdef XLOOP_TEST_BUILD
	const char *v = getenv("XLOOP_TEST_ORPHAN_SECS");

	if (v && *v)
		return strtoll(v, NULL, 10);
#endif
	return SUBMIT_ORPHAN_SECS;
}

/* sbatch refused the job. */
int attempts_set_submit_failed(struct db *db, long long id, const char *err)
{
	return exec_update(db, "UPDATE attempt SET phase = 'submit_failed',"
			   " submit_error = :err WHERE id = :id", id, ":err", err, 0);
}

/* Record the GPUs a job runs on. */
int attempts_set_gpus(struct db *db, long long id, const char *gpus)
{
	return exec_update(db, "UPDATE attempt SET gpus = :gpus WHERE id = :id", id, ":gpus",
			   gpus, 0);
}

/*
 * Drop an intent that sbatch refused for a limit, with its segment rows
 * (one transaction: the next attempt may get the same id).
 */
int attempts_release_intent(struct db *db, long long id)
{
	struct stmt q;
	int rc;

	if (db_begin_write(db) < 0)
		return -1;
	if (db_prepare(db, &q, "DELETE FROM attempt WHERE id = :id AND phase = 'submitting'") < 0)
		goto fail;
	db_bind_int64(&q, ":id", id);
	rc = db_step(&q);
	db_finalize(&q);
	if (rc != SQLITE_DONE || sqlite3_changes(db->h) != 1)
		goto fail;
	if (db_prepare(db, &q, "DELETE FROM segment WHERE attempt_id = :id") < 0)
		goto fail;
	db_bind_int64(&q, ":id", id);
	rc = db_step(&q);
	db_finalize(&q);
	if (rc != SQLITE_DONE)
		goto fail;
	return db_commit(db) < 0 ? -1 : 0;
fail:
	db_rollback(db);
	return -1;
}

/* Seconds the latest successful attempts of a study ran, newest first. */
int attempts_recent_elapsed(struct db *db, const char *study, long long limit,
			    long long **secs, size_t *n)
{
	struct stmt q;
	int rc;

	*secs = NULL;
	*n = 0;
	if (db_prepare(db, &q, "SELECT a.ended_at - a.started_at FROM attempt a"
		       " WHERE a.verdict = 'success' AND a.n > 0 AND a.started_at > 0"
		       " AND a.ended_at >= a.started_at"
		       " AND +a.run_id IN (SELECT id FROM run WHERE study = :study)"
		       " ORDER BY a.id DESC LIMIT :lim") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_int64(&q, ":lim", limit);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		*secs = xreallocarray(*secs, *n + 1, sizeof(**secs));
		(*secs)[(*n)++] = db_col_int64(&q, 0);
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Record the code an attempt runs (gitops_code_state). */
int attempts_set_code(struct db *db, long long id, const char *commit, const char *changes)
{
	struct stmt q;

	if (db_prepare(db, &q, "UPDATE attempt SET code_commit = :commit,"
		       " code_changes = :changes WHERE id = :id") < 0)
		return -1;
	db_bind_text(&q, ":commit", commit);
	db_bind_text(&q, ":changes", changes);
	db_bind_int64(&q, ":id", id);
	return db_run(&q);
}

/*
 * The code pinned for an attempt, or (parent) for the attempt of its run's
 * parent that counts (its latest success, else its latest): 1 with commit
 * and changes, 0 when none was recorded, -1 on error.
 */
int attempts_code(struct db *db, long long attempt_id, int parent, char commit[41],
		  char changes[65])
{
	struct stmt q;
	int rc;

	commit[0] = changes[0] = '\0';
	if (db_prepare(db, &q, parent ?
		       "SELECT code_commit, coalesce(code_changes, '') FROM attempt"
		       " WHERE run_id = (SELECT r.parent_id FROM attempt t JOIN run r"
		       " ON r.id = t.run_id WHERE t.id = :id) AND code_commit IS NOT NULL"
		       " ORDER BY verdict = 'success' DESC, id DESC LIMIT 1" :
		       "SELECT code_commit, coalesce(code_changes, '') FROM attempt"
		       " WHERE id = :id AND code_commit IS NOT NULL") < 0)
		return -1;
	db_bind_int64(&q, ":id", attempt_id);
	rc = db_step(&q);
	if (rc == SQLITE_ROW) {
		xsnprintf(commit, 41, "%s", db_col_text(&q, 0));
		xsnprintf(changes, 65, "%s", db_col_text(&q, 1));
	}
	db_finalize(&q);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Record what an attempt waits for now. */
int attempts_set_after(struct db *db, long long id, const char *after)
{
	struct stmt q;

	if (db_prepare(db, &q, "UPDATE attempt SET after_job = :after WHERE id = :id") < 0)
		return -1;
	db_bind_text(&q, ":after", after);
	db_bind_int64(&q, ":id", id);
	return db_run(&q);
}
