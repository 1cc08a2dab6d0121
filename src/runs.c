/* Runs: rows in, rows out (attempts.c has the attempt table). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* as stored: a NULL reads as "" or 0 (db_col_text, db_col_int64), no coalesce() */
#define RUN_COLS "r.id, r.study, r.tag, r.parent_id, p.tag, r.var, r.old_value," \
	" r.new_value, r.note, r.commit_id, r.created_at"
/* with the configuration too (large: only where it is used) */
#define RUN_COLS_CONFIG RUN_COLS ", c.config, c.config_key"
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
	size_t cap = 0;
	int rc;

	while ((rc = db_step(q)) == SQLITE_ROW) {
		if (*n == cap) {	/* doubled: a study may have 100,000 runs */
			cap = cap ? 2 * cap : 16;
			*v = xreallocarray(*v, cap, sizeof(**v));
		}
		run_from(q, &(*v)[(*n)++]);
	}
	db_finalize(q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * The runs of a study that sql (ending in the WHERE terms after the study's)
 * selects. Their queries say "+r.study": the run table is read in id order,
 * where the (study, tag) index would need every row sorted again by id.
 */
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

/* Every run of a study, one row at a time (runs.h). */
int runs_walk_open(struct db *db, const char *study, struct stmt *q)
{
	if (db_prepare(db, q, "SELECT r.id, r.tag, r.parent_id, p.tag, r.var, r.old_value,"
		       " r.new_value" RUN_FROM " WHERE +r.study = :study ORDER BY r.id") < 0)
		return -1;
	db_bind_text(q, ":study", study);
	return 0;
}

/* The next run of the walk, its strings borrowed from the row. */
int runs_walk_next(struct stmt *q, struct run *r)
{
	static char none[] = "";	/* read only, as the DB's own strings */
	int rc = db_step(q);

	memset(r, 0, sizeof(*r));
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 0 : -1;
	r->id = db_col_int64(q, 0);
	r->tag = (char *)db_col_text(q, 1);
	r->parent_id = db_col_int64(q, 2);
	r->parent_tag = (char *)db_col_text(q, 3);
	r->var = (char *)db_col_text(q, 4);
	r->old_value = (char *)db_col_text(q, 5);
	r->new_value = (char *)db_col_text(q, 6);
	r->study = r->note = r->commit_id = r->config = r->config_key = none;
	return 1;
}

/* Every run of a study. */
int runs_list(struct db *db, const char *study, struct run **v, size_t *n)
{
	return runs_select(db, study, "SELECT " RUN_COLS RUN_FROM " WHERE +r.study = :study"
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

/* The first adopted run. */
int runs_first_root(struct db *db, const char *study, struct run *r)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, "SELECT " RUN_COLS RUN_FROM " WHERE +r.study = :study"
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
			   " WHERE +r.study = :study AND c.run_id IS NULL ORDER BY r.id", v, n);
}

/* Every run of a study with its configuration. */
int runs_list_configs(struct db *db, const char *study, struct run **v, size_t *n)
{
	return runs_select(db, study, "SELECT " RUN_COLS_CONFIG RUN_FROM_CONFIG
			   " WHERE +r.study = :study ORDER BY r.id", v, n);
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

