/* What status, the briefing and the report show of segments: see segments.h. */
#include <stdlib.h>

#include "jobs/segments.h"

/* The segments that ran, for the timeline. */
int segments_spans(struct xl_ctx *ctx, struct segment_span **v, size_t *n)
{
	struct stmt st;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(&ctx->db, &st, "SELECT s.attempt_id, s.k, s.started_at, s.ended_at"
		       " FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON"
		       " r.id = t.run_id WHERE r.study = :study AND s.state IN ('continued',"
		       " 'last') AND s.started_at > 0 AND s.ended_at >= s.started_at"
		       " ORDER BY s.attempt_id, s.k, s.try") < 0)
		return -1;
	db_bind_text(&st, ":study", ctx->cfg.study);
	while ((rc = db_step(&st)) == SQLITE_ROW) {
		struct segment_span *g;

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		g = &(*v)[(*n)++];
		g->attempt_id = db_col_int64(&st, 0);
		g->k = db_col_int64(&st, 1);
		g->start = db_col_int64(&st, 2);
		g->end = db_col_int64(&st, 3);
	}
	db_finalize(&st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The study's attempts with a segment an infra failure ended, by id (segments first: few). */
int segments_infra_attempts(struct xl_ctx *ctx, long long **ids, size_t *n)
{
	struct stmt st;
	int rc;

	*ids = NULL;
	*n = 0;
	if (db_prepare(&ctx->db, &st, "SELECT DISTINCT s.attempt_id FROM segment s"
		       " CROSS JOIN attempt t ON t.id = s.attempt_id CROSS JOIN run r"
		       " ON r.id = t.run_id"
		       " WHERE r.study = :study AND s.state = 'continued' AND s.outcome IN "
		       SEGMENT_INFRA_OUTCOMES " ORDER BY s.attempt_id") < 0)
		return -1;
	db_bind_text(&st, ":study", ctx->cfg.study);
	while ((rc = db_step(&st)) == SQLITE_ROW) {
		*ids = xreallocarray(*ids, *n + 1, sizeof(**ids));
		(*ids)[(*n)++] = db_col_int64(&st, 0);
	}
	db_finalize(&st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* The segments an infra failure ended, as status says them. */
char *segments_infra_note(struct xl_ctx *ctx, long long attempt_id)
{
	struct buf b = BUF_INIT;
	struct stmt st;

	if (db_prepare(&ctx->db, &st, "SELECT k, outcome FROM segment WHERE attempt_id = :att"
		       " AND state = 'continued' AND outcome IN " SEGMENT_INFRA_OUTCOMES
		       " ORDER BY k, try") < 0)
		return NULL;
	db_bind_int64(&st, ":att", attempt_id);
	while (db_step(&st) == SQLITE_ROW) {
		long long k = db_col_int64(&st, 0);

		buf_addf(&b, "%ssegment %lld ended %s: segment %lld did its work again from the "
			 "checkpoint", b.len ? "; " : "", k, db_col_text(&st, 1), k + 1);
	}
	db_finalize(&st);
	return b.len ? b.s : NULL;
}
