/* The circuit breaker: stop feeding after failures in a row. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stages/breaker.h"
#include "loop.h"
#include "notify.h"

/* Free the breaker's reason. */
void breaker_release(struct breaker *b)
{
	free(b->reason);
	memset(b, 0, sizeof(*b));
}

/* Why the breaker is open (the opening event's text), or NULL. */
char *breaker_open_reason(struct xl_ctx *ctx)
{
	long long ev = db_kv_get(&ctx->db, "breaker_event");
	struct stmt q;
	char *s = NULL;

	if (ev <= 0 || db_prepare(&ctx->db, &q, "SELECT coalesce(detail, '') FROM event"
				  " WHERE id = :id") < 0)
		return NULL;
	db_bind_int64(&q, ":id", ev);
	if (db_step(&q) == SQLITE_ROW)
		s = xstrdup(db_col_text(&q, 0));
	db_finalize(&q);
	return s ? s : xstrdup("(reason lost)");
}

/* Stops at the first reported epoch in a row that open the breaker. */
#define BREAKER_FIRST_STOPS 3

/* Whether a stopped verdict's reason is a rule's stop at epoch 0 or 1. */
static int first_epoch_stop(const char *reason)
{
	return (strncmp(reason, "stopped early at epoch 0 (", 26) == 0 ||
		strncmp(reason, "stopped early at epoch 1 (", 26) == 0) &&
	       !strstr(reason, "(you asked");
}

/* Why the latest verdicts call for stopping, or NULL. */
static char *trip_reason(struct xl_ctx *ctx)
{
	struct stmt q;
	struct buf tags = BUF_INIT;
	char *why = NULL, *cls = NULL, *tail = NULL;
	long long count = 0, first = 0;	/* first: stops at the first epoch, latest first */
	int rc, firsts = 1;

	if (db_prepare(&ctx->db, &q, "SELECT t.verdict, coalesce(t.failure_class, ''),"
		       " coalesce(t.evidence, ''), coalesce(t.gres, ''), r.tag, t.n,"
		       " EXISTS (SELECT 1 FROM proposal p WHERE p.run_id = r.id),"
		       " coalesce(t.verdict_reason, '')"
		       " FROM attempt t JOIN run r ON r.id = t.run_id"
		       " WHERE +r.study = :study AND t.verdict IS NOT NULL"
		       " AND t.phase != 'adopted' AND t.judged_at > :reset"
		       " AND t.cancelled_by_user = 0"	/* a cancel says nothing of the job */
		       " ORDER BY t.judged_at DESC, t.id DESC LIMIT 200") < 0)
		return NULL;
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_int64(&q, ":reset", db_kv_get(&ctx->db, "breaker_reset_at"));
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		const char *verdict = db_col_text(&q, 0), *c = db_col_text(&q, 1);

		if (count == 0 && ctx->cfg.breaker_no_gpu && *db_col_text(&q, 3) &&
		    strstr(db_col_text(&q, 2), "START line shows no GPU")) {
			why = xasprintf("%s attempt %lld asked for %s but its START line shows "
					"no GPU: jobs behind it would run (or fail) the same way",
					db_col_text(&q, 4), db_col_int64(&q, 5),
					db_col_text(&q, 3));
			break;
		}
		if (strcmp(verdict, "stopped") == 0) {
			/* a stop is no failure; only stops at the first epoch again
			 * and again say the job is broken (issue 45) */
			if (firsts && first_epoch_stop(db_col_text(&q, 7)))
				first++;
			else
				firsts = 0;
			continue;
		}
		firsts = 0;
		if (strcmp(verdict, "failure") != 0 || (cls && strcmp(cls, c) != 0))
			break;
		/* autopilot's proposals fail for their value: only the same
		 * failure again and again says the study is broken */
		if (strcmp(c, "program") == 0 && db_col_int64(&q, 6)) {
			char *t = xasprintf("%s\n%s", db_col_text(&q, 7), db_col_text(&q, 2));

			if (tail && strcmp(tail, t) != 0) {
				free(t);
				break;
			}
			if (!tail)
				tail = t;
			else
				free(t);
		}
		if (!cls)
			cls = xstrdup(c);
		buf_addf(&tags, "%s%s", count ? ", " : "", db_col_text(&q, 4));
		count++;
	}
	db_finalize(&q);
	if (!why && ctx->cfg.breaker_program > 0 && first >= BREAKER_FIRST_STOPS)
		why = xasprintf("%lld runs in a row stopped early at their first epoch: the job "
				"may be broken", first);
	if (!why && cls) {
		long long limit = strcmp(cls, "infra") == 0 ? ctx->cfg.breaker_infra :
			ctx->cfg.breaker_program;

		if (limit > 0 && count >= limit)
			why = xasprintf("%lld %s failures in a row (%s): feeding more of the "
					"same would fail the same way", count, cls, tags.s);
	}
	free(cls);
	free(tail);
	buf_release(&tags);
	return why;
}

/* Check, and open when needed. */
int breaker_check(struct xl_ctx *ctx, struct breaker *b)
{
	char *why;

	memset(b, 0, sizeof(*b));
	b->reason = breaker_open_reason(ctx);
	if (b->reason) {
		b->open = 1;
		return 0;
	}
	why = trip_reason(ctx);
	if (!why)
		return 0;
	if (db_begin_write(&ctx->db) < 0) {
		free(why);
		return -1;
	}
	{
		struct notify_event n = { "breaker", ctx->cfg.study, "", NULL };
		char *text = xasprintf("feeding stopped: %s; fix the cause, then "
				       "`xloop breaker reset`", why);

		n.text = text;
		if (loop_event(ctx, "breaker-open", 0, 0, why) < 0 ||
		    db_kv_set(&ctx->db, "breaker_event",
			      sqlite3_last_insert_rowid(ctx->db.h)) < 0 ||
		    notify_queue(&ctx->db, &n) < 0) {
			free(text);
			free(why);
			db_rollback(&ctx->db);
			return -1;
		}
		free(text);
	}
	if (db_commit(&ctx->db) < 0) {
		free(why);
		return -1;
	}
	b->open = 1;
	b->opened_now = 1;
	b->reason = why;
	return 0;
}

/* Close the breaker. */
int breaker_reset(struct xl_ctx *ctx, const char *why)
{
	if (db_begin_write(&ctx->db) < 0)
		return -1;
	if (db_kv_set(&ctx->db, "breaker_event", 0) < 0 ||
	    db_kv_set(&ctx->db, "breaker_reset_at", time(NULL)) < 0 ||
	    loop_event(ctx, "breaker-reset", 0, 0, why) < 0) {
		db_rollback(&ctx->db);
		return -1;
	}
	return db_commit(&ctx->db);
}
