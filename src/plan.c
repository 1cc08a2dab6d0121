/* Plan entries in the state DB. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "lib/util.h"

/* Queue a change. */
int plan_add(struct db *db, const char *study, const char *parent, const char *var,
	     const char *value, long long *id)
{
	struct stmt q;

	if (db_prepare(db, &q, "INSERT INTO plan (study, parent, var, value, added_at)"
		       " VALUES (:study, :parent, :var, :value, :at)") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_text(&q, ":parent", parent);
	db_bind_text(&q, ":var", var);
	db_bind_text(&q, ":value", value);
	db_bind_int64(&q, ":at", time(NULL));
	if (db_run(&q) < 0)
		return -1;
	*id = sqlite3_last_insert_rowid(db->h);
	return 0;
}

/* The plan, in order. */
int plan_list(struct db *db, const char *study, int queued_only,
	      struct plan_entry **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(db, &q, "SELECT p.id, p.parent, p.var, p.value, p.status,"
		       " coalesce(r.tag, ''), coalesce(p.skip_reason, ''), p.added_at"
		       " FROM plan p LEFT JOIN run r ON r.id = p.run_id"
		       " WHERE p.study = :study AND (:all OR p.status = 'queued')"
		       " ORDER BY p.id") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_int64(&q, ":all", !queued_only);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct plan_entry *e;

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		e = &(*v)[(*n)++];
		e->id = db_col_int64(&q, 0);
		e->parent = xstrdup(db_col_text(&q, 1));
		e->var = xstrdup(db_col_text(&q, 2));
		e->value = xstrdup(db_col_text(&q, 3));
		e->status = xstrdup(db_col_text(&q, 4));
		e->run_tag = xstrdup(db_col_text(&q, 5));
		e->skip_reason = xstrdup(db_col_text(&q, 6));
		e->added_at = db_col_int64(&q, 7);
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Change a queued entry's status. */
int plan_mark(struct db *db, const char *study, long long id, const char *status,
	      long long run_id, const char *reason)
{
	struct stmt q;

	if (db_prepare(db, &q, "UPDATE plan SET status = :status, run_id = :run,"
		       " skip_reason = :reason WHERE id = :id AND study = :study"
		       " AND status = 'queued'") < 0)
		return -1;
	db_bind_text(&q, ":status", status);
	if (run_id)
		db_bind_int64(&q, ":run", run_id);
	else
		db_bind_null(&q, ":run");
	db_bind_text(&q, ":reason", reason);
	db_bind_int64(&q, ":id", id);
	db_bind_text(&q, ":study", study);
	if (db_run(&q) < 0)
		return -1;
	return sqlite3_changes(db->h) == 1 ? 0 : 1;
}

/* Free plan entries. */
void plan_entries_free(struct plan_entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].parent);
		free(v[i].var);
		free(v[i].value);
		free(v[i].status);
		free(v[i].run_tag);
		free(v[i].skip_reason);
	}
	free(v);
}
