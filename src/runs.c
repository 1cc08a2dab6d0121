/* Runs and attempts: rows in, rows out. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/fsutil.h"
#include "runs.h"
#include "lib/sha256.h"
#include "lib/util.h"

/* The run's directory: <root>/runs/<study>/<tag>. */
char *run_dir(const char *root, const char *study, const char *tag)
{
	return xasprintf("%s/runs/%s/%s", root, study, tag);
}

/* The run's job script. */
char *run_job_path(const char *root, const char *study, const char *tag)
{
	return xasprintf("%s/runs/%s/%s/job.sh", root, study, tag);
}

/* The log of attempt n. */
char *run_log_path(const char *root, const char *study, const char *tag, long long n)
{
	return xasprintf("%s/runs/%s/%s/slurm/attempt%lld.out", root, study, tag, n);
}

/* XLOOP_RUN_ID: a hash of what never changes in a run. */
void run_ident(const char *study, const char *tag, long long created_at,
	       char id[RUN_IDENT_LEN + 1])
{
	char *text = xasprintf("xloop-run\n%s\n%s\n%lld", study, tag, created_at);
	char hex[65];

	sha256_hex(text, strlen(text), hex);
	free(text);
	memcpy(id, hex, RUN_IDENT_LEN);
	id[RUN_IDENT_LEN] = '\0';
}

/* XLOOP_RUN_ID of a run the DB holds. */
int runs_ident(struct db *db, const char *study, const char *tag, char id[RUN_IDENT_LEN + 1])
{
	struct stmt q;
	int rc;

	if (db_prepare_cached(db, &q, "SELECT created_at FROM run WHERE study = :study"
			      " AND tag = :tag") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_text(&q, ":tag", tag);
	rc = db_step(&q);
	if (rc == SQLITE_ROW)
		run_ident(study, tag, db_col_int64(&q, 0), id);
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : -1;
}

#define RUN_COLS "r.id, r.study, r.tag, coalesce(r.parent_id, 0)," \
	" coalesce(p.tag, ''), coalesce(r.var, ''), coalesce(r.old_value, '')," \
	" coalesce(r.new_value, ''), coalesce(r.note, ''), coalesce(r.commit_id, '')," \
	" r.created_at"
/* with the configuration too (large: only where it is used) */
#define RUN_COLS_CONFIG RUN_COLS ", coalesce(c.config, ''), coalesce(c.config_key, '')"
#define RUN_FROM_CONFIG RUN_FROM " LEFT JOIN run_config c ON c.run_id = r.id"
#define RUN_FROM " FROM run r LEFT JOIN run p ON p.id = r.parent_id"

static void run_from(struct stmt *q, struct run *r)
{
	r->id = db_col_int64(q, 0);
	r->study = xstrdup(db_col_text(q, 1));
	r->tag = xstrdup(db_col_text(q, 2));
	r->parent_id = db_col_int64(q, 3);
	r->parent_tag = xstrdup(db_col_text(q, 4));
	r->var = xstrdup(db_col_text(q, 5));
	r->old_value = xstrdup(db_col_text(q, 6));
	r->new_value = xstrdup(db_col_text(q, 7));
	r->note = xstrdup(db_col_text(q, 8));
	r->commit_id = xstrdup(db_col_text(q, 9));
	r->created_at = db_col_int64(q, 10);
	r->segments = NULL;
	if (sqlite3_column_count(q->st) >= 13) {
		r->config = xstrdup(db_col_text(q, 11));
		r->config_key = xstrdup(db_col_text(q, 12));
	} else {
		r->config = xstrdup("");
		r->config_key = xstrdup("");
	}
}

/* Free a run's strings. */
void run_release(struct run *r)
{
	free(r->study);
	free(r->tag);
	free(r->parent_tag);
	free(r->var);
	free(r->old_value);
	free(r->new_value);
	free(r->note);
	free(r->commit_id);
	free(r->config);
	free(r->config_key);
	memset(r, 0, sizeof(*r));
}

/* Free an array of runs. */
void runs_free(struct run *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		run_release(&v[i]);
	free(v);
}

/* One run by tag. */
int runs_get(struct db *db, const char *study, const char *tag, struct run *r)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, "SELECT " RUN_COLS RUN_FROM
		       " WHERE r.study = :study AND r.tag = :tag") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_text(&q, ":tag", tag);
	rc = db_step(&q);
	if (rc == SQLITE_ROW)
		run_from(&q, r);
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

/* Step a prepared, bound query of RUN_COLS into *v, then finalize it. */
static int collect_runs(struct stmt *q, struct run **v, size_t *n)
{
	int rc;

	while ((rc = db_step(q)) == SQLITE_ROW) {
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		run_from(q, &(*v)[(*n)++]);
	}
	db_finalize(q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The runs of a study that sql (ending in the WHERE terms after the study's) selects. */
static int runs_select(struct db *db, const char *study, const char *sql, struct run **v,
		       size_t *n)
{
	struct stmt q;

	*v = NULL;
	*n = 0;
	if (db_prepare(db, &q, sql) < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	return collect_runs(&q, v, n);
}

/* Every run of a study. */
int runs_list(struct db *db, const char *study, struct run **v, size_t *n)
{
	return runs_select(db, study, "SELECT " RUN_COLS RUN_FROM " WHERE r.study = :study"
			   " ORDER BY r.id", v, n);
}

/* The tag of run id (malloc'd), or NULL when there is no such run. */
char *runs_tag(struct db *db, long long run_id)
{
	struct stmt q;
	char *tag = NULL;

	if (db_prepare_cached(db, &q, "SELECT tag FROM run WHERE id = :id") < 0)
		return NULL;
	db_bind_int64(&q, ":id", run_id);
	if (db_step(&q) == SQLITE_ROW)
		tag = xstrdup(db_col_text(&q, 0));
	db_finalize(&q);
	return tag;
}

/* The tag of the study's run whose latest attempt has Slurm job id job, or NULL. */
char *runs_tag_of_job(struct db *db, const char *study, const char *job)
{
	struct stmt q;
	char *tag = NULL;

	/* the attempt_job index */
	if (db_prepare(db, &q, "SELECT r.tag FROM attempt t JOIN run r ON r.id = t.run_id"
		       " WHERE t.job_id = :job AND r.study = :study ORDER BY t.id DESC"
		       " LIMIT 1") < 0)
		return NULL;
	db_bind_text(&q, ":job", job);
	db_bind_text(&q, ":study", study);
	if (db_step(&q) == SQLITE_ROW)
		tag = xstrdup(db_col_text(&q, 0));
	db_finalize(&q);
	return tag;
}

/* The run's own segment count, or NULL. */
char *runs_segments(struct db *db, long long run_id)
{
	struct stmt q;
	char *n = NULL;

	if (db_prepare(db, &q, "SELECT segments FROM run WHERE id = :id AND segments"
		       " IS NOT NULL") < 0)
		return NULL;
	db_bind_int64(&q, ":id", run_id);
	if (db_step(&q) == SQLITE_ROW)
		n = xasprintf("%lld", db_col_int64(&q, 0));
	db_finalize(&q);
	return n;
}

/* How many runs the study has; -1 on error. */
long long runs_count(struct db *db, const char *study)
{
	struct stmt q;
	long long n = -1;

	if (db_prepare(db, &q, "SELECT count(*) FROM run WHERE study = :study") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	if (db_step(&q) == SQLITE_ROW)
		n = db_col_int64(&q, 0);
	db_finalize(&q);
	return n;
}

/* Insert a run. */
int runs_insert(struct db *db, struct run *r)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT INTO run (study, tag, parent_id, var,"
		       " old_value, new_value, note, created_at, commit_id, segments)"
		       " VALUES (:study, :tag, :parent, :var, :old, :new, :note,"
		       " :at, :commit, :seg)") < 0)
		return -1;
	r->created_at = time(NULL);
	db_bind_text(&q, ":study", r->study);
	db_bind_text(&q, ":tag", r->tag);
	if (r->parent_id)
		db_bind_int64(&q, ":parent", r->parent_id);
	else
		db_bind_null(&q, ":parent");
	db_bind_text(&q, ":var", r->parent_id ? r->var : NULL);
	db_bind_text(&q, ":old", r->parent_id ? r->old_value : NULL);
	db_bind_text(&q, ":new", r->parent_id ? r->new_value : NULL);
	db_bind_text(&q, ":note", r->note && *r->note ? r->note : NULL);
	db_bind_int64(&q, ":at", r->created_at);
	db_bind_text(&q, ":commit", r->commit_id && *r->commit_id ? r->commit_id : NULL);
	if (r->segments && *r->segments)
		db_bind_int64(&q, ":seg", strtoll(r->segments, NULL, 10));
	else
		db_bind_null(&q, ":seg");
	if (db_run(&q) < 0)
		return -1;
	r->id = sqlite3_last_insert_rowid(db->h);
	if (r->config && *r->config && r->config_key && *r->config_key)
		return runs_set_config(db, r->id, r->config, r->config_key);
	return 0;
}

#define ATTEMPT_COLS "id, run_id, n, token, phase, coalesce(job_id, ''), log_path," \
	" coalesce(job_sha256, ''), coalesce(partition, ''), coalesce(gres, '')," \
	" coalesce(mem, ''), coalesce(time_limit, ''), coalesce(overrides, '')," \
	" coalesce(after_job, ''), coalesce(cpus, 0), coalesce(submit_error, '')," \
	" intent_at, coalesce(submitted_at, 0), coalesce(started_at, 0)," \
	" coalesce(ended_at, 0), coalesce(state, ''), coalesce(exit_code, '')," \
	" coalesce(node, ''), coalesce(slurm_reason, ''), coalesce(verdict, '')," \
	" coalesce(failure_class, ''), coalesce(verdict_reason, ''), score," \
	" coalesce(auto_retry, ''), lane, coalesce(gpus, ''), restarts, coalesce(run_start, 0)"

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

/* The attempts of run_id; runs must be asked for in increasing id order. */
int attempt_walk_run(struct attempt_walk *w, long long run_id, struct attempt **v, size_t *n)
{
	int rc;

	*v = NULL;
	*n = 0;
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

/* The first adopted run. */
int runs_first_root(struct db *db, const char *study, struct run *r)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, "SELECT " RUN_COLS RUN_FROM " WHERE r.study = :study"
		       " AND r.parent_id IS NULL ORDER BY r.id LIMIT 1") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	rc = db_step(&q);
	if (rc == SQLITE_ROW)
		run_from(&q, r);
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

/* Set a run's configuration. */
int runs_set_config(struct db *db, long long run_id, const char *config,
		    const char *key)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT OR REPLACE INTO run_config (run_id, config, config_key)"
		       " VALUES (:id, :c, :k)") < 0)
		return -1;
	db_bind_text(&q, ":c", config);
	db_bind_text(&q, ":k", key);
	db_bind_int64(&q, ":id", run_id);
	return db_run(&q);
}

/* Runs whose configuration is not computed yet. */
int runs_without_config(struct db *db, const char *study, struct run **v, size_t *n)
{
	return runs_select(db, study, "SELECT " RUN_COLS_CONFIG RUN_FROM_CONFIG
			   " WHERE r.study = :study AND c.run_id IS NULL ORDER BY r.id", v, n);
}

/* Every run of a study with its configuration. */
int runs_list_configs(struct db *db, const char *study, struct run **v, size_t *n)
{
	return runs_select(db, study, "SELECT " RUN_COLS_CONFIG RUN_FROM_CONFIG
			   " WHERE r.study = :study ORDER BY r.id", v, n);
}

/* Free a sweep. */
void sweep_release(struct sweep *sw)
{
	size_t i;

	free(sw->name);
	free(sw->parent);
	free(sw->var);
	for (i = 0; i < sw->nr; i++) {
		free(sw->tasks[i].tag);
		free(sw->tasks[i].value);
	}
	free(sw->tasks);
	memset(sw, 0, sizeof(*sw));
}

/* Insert a sweep (no tasks yet); sw->id is filled in. */
int sweeps_insert(struct db *db, const char *study, struct sweep *sw)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT INTO sweep (study, name, parent, var, max_parallel,"
		       " created_at) VALUES (:study, :name, :parent, :var, :k, :at)") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_text(&q, ":name", sw->name);
	db_bind_text(&q, ":parent", sw->parent);
	db_bind_text(&q, ":var", sw->var);
	db_bind_int64(&q, ":k", sw->max_parallel);
	db_bind_int64(&q, ":at", sw->created_at);
	if (db_run(&q) < 0)
		return -1;
	sw->id = sqlite3_last_insert_rowid(db->h);
	return 0;
}

/* Give run_id the array index idx in the sweep. */
int sweeps_add_task(struct db *db, long long sweep_id, long long idx, long long run_id)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT INTO sweep_task (sweep_id, idx, run_id)"
		       " VALUES (:sweep, :idx, :run)") < 0)
		return -1;
	db_bind_int64(&q, ":sweep", sweep_id);
	db_bind_int64(&q, ":idx", idx);
	db_bind_int64(&q, ":run", run_id);
	return db_run(&q);
}

/* Look a sweep up by name, with its tasks in index order. */
int sweeps_get(struct db *db, const char *study, const char *name, struct sweep *sw)
{
	struct stmt q;
	int rc;

	memset(sw, 0, sizeof(*sw));
	if (db_prepare(db, &q, "SELECT id, parent, var, max_parallel, created_at"
		       " FROM sweep WHERE study = :study AND name = :name") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_text(&q, ":name", name);
	rc = db_step(&q);
	if (rc == SQLITE_ROW) {
		sw->id = db_col_int64(&q, 0);
		sw->name = xstrdup(name);
		sw->parent = xstrdup(db_col_text(&q, 1));
		sw->var = xstrdup(db_col_text(&q, 2));
		sw->max_parallel = db_col_int64(&q, 3);
		sw->created_at = db_col_int64(&q, 4);
	}
	db_finalize(&q);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 1 : -1;
	if (db_prepare(db, &q, "SELECT t.idx, t.run_id, r.tag, coalesce(r.new_value, '')"
		       " FROM sweep_task t JOIN run r ON r.id = t.run_id"
		       " WHERE t.sweep_id = :id ORDER BY t.idx") < 0)
		goto fail;
	db_bind_int64(&q, ":id", sw->id);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct sweep_task *t;

		sw->tasks = xreallocarray(sw->tasks, sw->nr + 1, sizeof(*sw->tasks));
		t = &sw->tasks[sw->nr++];
		t->idx = db_col_int64(&q, 0);
		t->run_id = db_col_int64(&q, 1);
		t->tag = xstrdup(db_col_text(&q, 2));
		t->value = xstrdup(db_col_text(&q, 3));
	}
	db_finalize(&q);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	sweep_release(sw);
	return -1;
}

/* The name of the sweep run_id belongs to (malloc'd), or NULL. */
char *sweeps_of_run(struct db *db, long long run_id)
{
	struct stmt q;
	char *name = NULL;

	if (db_prepare(db, &q, "SELECT s.name FROM sweep s JOIN sweep_task t"
		       " ON t.sweep_id = s.id WHERE t.run_id = :run") < 0)
		return NULL;
	db_bind_int64(&q, ":run", run_id);
	if (db_step(&q) == SQLITE_ROW)
		name = xstrdup(db_col_text(&q, 0));
	db_finalize(&q);
	return name;
}

/* Remove a sweep that never got a task. */
int sweeps_delete_empty(struct db *db, long long sweep_id)
{
	struct stmt q;

	if (db_prepare(db, &q, "DELETE FROM sweep WHERE id = :id AND NOT EXISTS"
		       " (SELECT 1 FROM sweep_task WHERE sweep_id = :id)") < 0)
		return -1;
	db_bind_int64(&q, ":id", sweep_id);
	return db_run(&q);
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

/* The abbreviations the study's tags used (kv "tag_abbrev:STUDY:ABBR" = VAR). */
size_t runs_tag_abbrevs(struct db *db, const char *study, char ***abbr, char ***var)
{
	char *lo = xasprintf("tag_abbrev:%s:", study);
	char *hi = xasprintf("tag_abbrev:%s;", study);	/* ';' follows ':' */
	struct stmt q;
	size_t n = 0, plen = strlen(lo);

	*abbr = NULL;
	*var = NULL;
	if (db_prepare(db, &q, "SELECT key, value FROM kv WHERE key >= :lo AND"
		       " key < :hi ORDER BY key") == 0) {
		db_bind_text(&q, ":lo", lo);
		db_bind_text(&q, ":hi", hi);
		while (db_step(&q) == SQLITE_ROW) {
			*abbr = xreallocarray(*abbr, n + 1, sizeof(**abbr));
			*var = xreallocarray(*var, n + 1, sizeof(**var));
			(*abbr)[n] = xstrdup(db_col_text(&q, 0) + plen);
			(*var)[n++] = db_col_dup(&q, 1);
		}
		db_finalize(&q);
	}
	free(lo);
	free(hi);
	return n;
}

/* Remember that the study's tags abbreviate var as abbr. */
void runs_tag_abbrev_record(struct db *db, const char *study, const char *abbr, const char *var)
{
	char *key = xasprintf("tag_abbrev:%s:%s", study, abbr);
	struct stmt q;

	if (db_prepare(db, &q, "INSERT OR IGNORE INTO kv (key, value) VALUES (:k, :v)") == 0) {
		db_bind_text(&q, ":k", key);
		db_bind_text(&q, ":v", var);
		db_run(&q);
	}
	free(key);
}

