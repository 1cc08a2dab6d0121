/* Jobs xloop is done with that Slurm shows live again: see gone.h. */
#include <stdlib.h>
#include <string.h>

#include "jobs/gone.h"
#include "loop.h"

/*
 * What a token names that xloop is done with: run, attempt (0 for a
 * sweep's --then step) and what it is, in words. A segment's and a step's
 * row also count as done when their attempt is judged.
 */
#define GONE_SQL \
	"SELECT t.run_id, t.id, 'attempt ' || t.n || ' of ' || r.tag || ', '" \
	" || coalesce('judged ' || t.verdict, t.phase) FROM attempt t" \
	" JOIN run r ON r.id = t.run_id WHERE t.token = :tok AND (t.verdict IS NOT NULL" \
	" OR t.phase = 'submit_failed')" \
	" UNION ALL SELECT t.run_id, t.id, 'segment ' || s.k || ' of ' || r.tag ||" \
	" ' attempt ' || t.n || ', ' || s.state FROM segment s JOIN attempt t" \
	" ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE s.token = :tok" \
	" AND (s.state IN ('unneeded', 'continued', 'last', 'submit_failed')" \
	" OR t.verdict IS NOT NULL)" \
	" UNION ALL SELECT t.run_id, t.id, 'step ''' || p.name || ''' of ' || r.tag ||" \
	" ' attempt ' || t.n || ', ' || p.phase FROM step_job p JOIN attempt t" \
	" ON t.id = p.attempt_id JOIN run r ON r.id = t.run_id WHERE p.token = :tok" \
	" AND (p.phase IN ('ended', 'dropped', 'retried', 'submit_failed')" \
	" OR t.verdict IS NOT NULL)" \
	" UNION ALL SELECT 0, 0, 'the --then step of sweep ' || w.name || ' (try ' ||" \
	" h.try || '), ' || h.phase FROM sweep_then h JOIN sweep w ON w.id = h.sweep_id" \
	" WHERE h.token = :tok AND h.phase IN ('ended', 'superseded')" \
	" LIMIT 1"

/*
 * A feeder of the driver (driver.c) xloop is done with: its row ended
 * (done, failed) or was given up (gone: cancelled, or left the queue).
 */
#define GONE_FEEDER_SQL \
	"SELECT 'feeder ' || coalesce('job ' || job_id, 'intent ' || id) || ', ' || phase" \
	" FROM feeder WHERE study = :study AND token = :tok" \
	" AND phase IN ('done', 'failed', 'gone')"

/* Whether s is a whole number (an array task's index, not a range). */
static int is_index(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/*
 * The token of live job j when it is one of the study's (pre: "xloop:STUDY/"):
 * its comment's last ":" field; a sweep task's "<its array's>_<index>".
 * malloc'd, or NULL.
 */
static char *job_token(const struct slurm_job *j, const char *pre)
{
	const char *last;

	if (!j->comment || !starts_with(j->comment, pre) || slurm_state_is_final(j->state))
		return NULL;
	last = strrchr(j->comment, ':');
	if (!last || !last[1])
		return NULL;
	if (j->array_task_id && is_index(j->array_task_id))
		return xasprintf("%s_%s", last + 1, j->array_task_id);
	return xstrdup(last + 1);
}

/*
 * The token of pending job j when it is a feeder of the study (pre:
 * SLURM_FEEDER_COMMENT "STUDY:"): its comment's last ":" field; malloc'd,
 * or NULL. Only a pending one: a feeder's row is done before its job ends.
 */
static char *feeder_token(const struct slurm_job *j, const char *pre)
{
	const char *last;

	if (!j->comment || !starts_with(j->comment, pre) || j->state != SLURM_STATE_PENDING)
		return NULL;
	last = strrchr(j->comment, ':');
	return last && last[1] ? xstrdup(last + 1) : NULL;
}

/* Whether xloop is done with the feeder of token tok: its words (*what malloc'd). */
static int feeder_done(struct xl_ctx *ctx, const char *tok, char **what)
{
	struct stmt st;
	int found;

	if (db_prepare_cached(&ctx->db, &st, GONE_FEEDER_SQL) < 0)
		return 0;
	db_bind_text(&st, ":study", ctx->cfg.study);
	db_bind_text(&st, ":tok", tok);
	found = db_step(&st) == SQLITE_ROW;
	if (found)
		*what = db_col_dup(&st, 0);
	db_finalize(&st);
	return found;
}

/* Whether xloop is done with what tok names: its run, attempt and words (*what malloc'd). */
static int done_with(struct xl_ctx *ctx, const char *tok, long long *run_id,
		     long long *attempt_id, char **what)
{
	struct stmt st;
	int found;

	if (db_prepare_cached(&ctx->db, &st, GONE_SQL) < 0)
		return 0;
	db_bind_text(&st, ":tok", tok);
	found = db_step(&st) == SQLITE_ROW;
	if (found) {
		*run_id = db_col_int64(&st, 0);
		*attempt_id = db_col_int64(&st, 1);
		*what = db_col_dup(&st, 2);
	}
	db_finalize(&st);
	return found;
}

/* Cancel the live jobs of q that xloop is done with; how many. */
size_t gone_cancel(struct xl_ctx *ctx, struct slurm *s, struct slurm_jobs *q)
{
	char *pre = xasprintf("xloop:%s/", ctx->cfg.study);
	char *fpre = xasprintf("%s%s:", SLURM_FEEDER_COMMENT, ctx->cfg.study);
	size_t i, n = 0;

	for (i = 0; i < q->nr; i++) {
		struct slurm_job *j = &q->v[i];
		char *tok = job_token(j, pre), *ftok = tok ? NULL : feeder_token(j, fpre);
		char *what = NULL, *cause = NULL, *d;
		long long run_id = 0, attempt_id = 0;

		if (tok ? !done_with(ctx, tok, &run_id, &attempt_id, &what) :
		    !ftok || !feeder_done(ctx, ftok, &what)) {
			free(tok);
			free(ftok);
			continue;
		}
		if (slurm_scancel(s, j->job_id, &cause) != 0) {
			warning("job %s (%s) is live again, but xloop is done with it; not "
				"cancelled: %s", j->job_id, what, cause ? cause : "scancel failed");
		} else {
			d = xasprintf("job %s (%s) was %s again, though xloop was done with it "
				      "(a controller back from an older state?): cancelled",
				      j->job_id, what, slurm_state_name(j->state));
			loop_event(ctx, "repaired", run_id, attempt_id, d);
			free(d);
			j->state = SLURM_STATE_CANCELLED;	/* nothing chains onto it now */
			n++;
		}
		free(cause);
		free(what);
		free(tok);
		free(ftok);
	}
	free(fpre);
	free(pre);
	return n;
}
