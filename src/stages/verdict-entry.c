/*
 * The decision entry of a judged attempt in ops/decisions.md (SPEC rules 6 and 7):
 * its change, verdict, reason, evidence and the best before it, committed
 * with the run's cv.json and a promotion the verdict made; written once,
 * a crash notwithstanding (the attempt's decided mark).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop.h"
#include "search/best.h"
#include "stages/verdict-entry.h"

/* The best before this verdict, for the decision entry (*key: its configuration). */
void verdict_best_before(struct xl_ctx *ctx, char *buf, size_t n, char **key)
{
	struct best_state bs;
	struct best_info bi;
	char shown[96];

	*key = NULL;
	if (best_load(ctx, &bs) == 0 && bs.best >= 0) {
		best_info_of(&bs, bs.best, &bi);
		best_format(&bi, shown, sizeof(shown));
		xsnprintf(buf, n, "%s (%s)", shown, bs.v[bs.best].rep_tag);
		*key = xstrdup(bs.v[bs.best].key);
	} else {
		xsnprintf(buf, n, "none yet");
	}
	best_release(&bs);
}

/*
 * Append the decision entry of a judged attempt to ops/decisions.md and
 * mark it written. Also used to repair an entry a crash left unwritten.
 */
void verdict_entry_write(struct xl_ctx *ctx, long long attempt_id, const char *best,
			 const char *best_key, int repair)
{
	struct stmt q;
	struct buf e = BUF_INIT;
	char *cause = NULL, *msg = NULL, *cv, *once, when[32];
	char *pentry = NULL, *ponce = NULL, *summary = NULL;
	const char *log, *entries[2], *onces[2];
	int prc;
	time_t now = time(NULL);
	struct tm tm;
	int ok;

	if (db_prepare(&ctx->db, &q, "SELECT r.tag, t.n, r.parent_id IS NOT NULL,"
		       " coalesce(r.var, ''), coalesce(r.old_value, ''), coalesce(r.new_value, ''),"
		       " coalesce(p.tag, ''), t.verdict, coalesce(t.failure_class, ''),"
		       " coalesce(t.verdict_reason, ''), coalesce(t.evidence, ''),"
		       " coalesce(t.job_id, ''), t.log_path"
		       " FROM attempt t JOIN run r ON r.id = t.run_id"
		       " LEFT JOIN run p ON p.id = r.parent_id WHERE t.id = :id") < 0)
		return;
	db_bind_int64(&q, ":id", attempt_id);
	if (db_step(&q) != SQLITE_ROW) {
		db_finalize(&q);
		return;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	ok = strcmp(db_col_text(&q, 7), "success") == 0;
	log = db_col_text(&q, 12);
	if (starts_with(log, ctx->root) && log[strlen(ctx->root)] == '/')
		log += strlen(ctx->root) + 1;
	buf_addf(&e, "## %s · %s attempt %lld: %s\n", when, db_col_text(&q, 0),
		 db_col_int64(&q, 1), db_col_text(&q, 7));
	if (db_col_int64(&q, 2))
		buf_addf(&e, "- change: %s %s -> %s (from %s)\n", db_col_text(&q, 3),
			 db_col_text(&q, 4), db_col_text(&q, 5), db_col_text(&q, 6));
	else
		buf_adds(&e, "- change: (root run)\n");
	buf_addf(&e, "- verdict: %s%s%s%s, best before: %s\n", db_col_text(&q, 7),
		 ok ? "" : " (", ok ? "" : db_col_text(&q, 8), ok ? "" : ")", best);
	buf_addf(&e, "- reason: %s\n- evidence: %s\n- job %s, log %s\n",
		 db_col_text(&q, 9), db_col_text(&q, 10), db_col_text(&q, 11), log);
	if (ok)
		best_verdict_lines(ctx, attempt_id, best_key, &e);
	msg = xasprintf("xloop: verdict %s/%s attempt %lld: %s\n\n%s\n", ctx->cfg.study,
			db_col_text(&q, 0), db_col_int64(&q, 1), db_col_text(&q, 7),
			db_col_text(&q, 9));
	/* the run's cv.json, the score's evidence, goes into the same commit */
	cv = xasprintf("runs/%s/%s/cv.json", ctx->cfg.study, db_col_text(&q, 0));
	/* a repair: a crash may have come after the entry, before "decided" */
	once = repair ? xasprintf(" · %s attempt %lld: ", db_col_text(&q, 0),
				  db_col_int64(&q, 1)) : NULL;
	db_finalize(&q);
	/* a promotion since the best was remembered: an entry of its own in the
	 * verdict's commit, and an event; then the new best is remembered (a
	 * crash before that writes it at the next verdict, once: its mark) */
	prc = best_promotion(ctx, &pentry, &ponce, &summary);
	if (prc == 1) {
		char *m = xasprintf("%s\n%s\n", msg, summary);

		free(msg);
		msg = m;
	}
	entries[0] = e.s;
	entries[1] = prc == 1 ? pentry : NULL;
	onces[0] = once;
	onces[1] = ponce;
	if (loop_decide_entries(ctx, entries, onces, 2, cv, msg, &cause) < 0) {
		warning("verdict stored, but ops/decisions.md was not updated: %s", cause);
	} else {
		crash_point("verdict-after-commit");
		db_exec_row(&ctx->db, "UPDATE attempt SET decided = 1 WHERE id = :id",
			    attempt_id, NULL, 0);
	}
	if (prc == 1)
		loop_event(ctx, "promotion", 0, 0, summary);
	if (prc >= 0 && best_remember(ctx) < 0)
		warning("unable to remember the best in the state DB");
	free(pentry);
	free(ponce);
	free(summary);
	free(cause);
	free(cv);
	free(once);
	free(msg);
	buf_release(&e);
}

/* Write the decision entries that a crash left unwritten. */
void verdict_entries_repair(struct xl_ctx *ctx)
{
	struct stmt q;
	long long *ids = NULL;
	size_t n = 0, i;

	if (db_prepare(&ctx->db, &q, "SELECT t.id FROM attempt t JOIN run r ON r.id = t.run_id"
		       " WHERE +r.study = :study AND t.verdict IS NOT NULL AND t.decided = 0"
		       " AND t.phase != 'adopted' ORDER BY t.id") < 0)
		return;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW) {
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		ids[n++] = db_col_int64(&q, 0);
	}
	db_finalize(&q);
	for (i = 0; i < n; i++)	/* a promotion goes with the first */
		verdict_entry_write(ctx, ids[i], "unknown (entry written after a crash)", NULL, 1);
	free(ids);
}
