/* What the end of an attempt's current segment means: continue, retry, or judge. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/fsutil.h"
#include "loop.h"
#include "jobs/segments-impl.h"

/* What slurm/attemptN.seg says: whether "K WHAT" is there; its value (malloc'd). */
static int seg_line(const char *text, long long k, const char *what, char **value)
{
	char *pre = xasprintf("%lld %s", k, what);
	size_t n = strlen(pre);
	const char *p, *found = NULL;

	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, pre, n) == 0 && (p[n] == ' ' || p[n] == '\n' || !p[n]))
			found = p;
	free(pre);
	if (found && value) {
		const char *v = found + n + (found[n] == ' ');

		*value = xstrndup(v, strcspn(v, "\n"));
	}
	return found != NULL;
}

/* Close segment g: its state, times and what ended it. */
static void close_seg(struct xl_ctx *ctx, const struct seg *g, const char *state,
		      const struct segment_end *e, const char *outcome)
{
	struct stmt st;

	if (db_prepare(&ctx->db, &st, "UPDATE segment SET state = :state, outcome = :out,"
		       " started_at = CASE WHEN :start > 0 THEN :start ELSE started_at END,"
		       " ended_at = :end WHERE id = :id") < 0)
		return;
	db_bind_text(&st, ":state", state);
	db_bind_text(&st, ":out", outcome);
	db_bind_int64(&st, ":start", e->start);
	db_bind_int64(&st, ":end", e->end ? e->end : time(NULL));
	db_bind_int64(&st, ":id", g->id);
	db_step(&st);
	db_finalize(&st);
}

/* How many segments of the attempt ended in an infra failure and were continued. */
static long long infra_retries(struct xl_ctx *ctx, long long attempt_id)
{
	return seg_att_number(ctx, "SELECT count(*) FROM segment WHERE attempt_id = :att"
			  " AND state = 'continued' AND outcome IN " SEGMENT_INFRA_OUTCOMES,
			  attempt_id);
}

/*
 * The continuation j of a segment that ended asking to go on (how), still
 * held because its wrapper did not release it (killed first, or no
 * scontrol on the node): released now, first told to keep away from the
 * nodes `lost` (the segment's, when they failed it; NULL) and
 * seg_exclude's others: queued before they failed, it may not know them.
 */
static void release_held(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			 const struct slurm_job *j, const char *how, const char *lost)
{
	char *cause = NULL, *d, *excl = NULL;
	struct seg_att t;

	if (j->state != SLURM_STATE_PENDING || !j->reason || strcmp(j->reason, "JobHeldUser") != 0)
		return;
	if (lost && seg_att_get(ctx, a->id, &t) == 0) {
		excl = seg_exclude(ctx, &t, lost);
		seg_att_release(&t);
	}
	/* the whole list: an update replaces the one sbatch gave */
	if (excl && slurm_scontrol_update(s, j->job_id, "ExcNodeList", excl, &cause) != 0) {
		warning("the continuation job %s is released without excluding %s: %s",
			j->job_id, excl, cause ? cause : "scontrol update failed");
		FREE_AND_NULL(cause);
		FREE_AND_NULL(excl);
	}
	if (slurm_scontrol_hold(s, j->job_id, 0, &cause) != 0) {
		warning("the continuation job %s stays held: %s", j->job_id,
			cause ? cause : "scontrol release failed");
		free(cause);
		free(excl);
		return;
	}
	d = xasprintf("the segment ended (%s); its continuation, job %s, released%s%s", how,
		      j->job_id, excl ? ", excluding " : "", excl ? excl : "");
	loop_event(ctx, "segment", a->run_id, a->id, d);
	free(d);
	free(excl);
}

/* Decide what the end of the attempt's current segment means. */
enum segment_next segments_on_end(struct xl_ctx *ctx, struct slurm *s,
				  const struct slurm_jobs *q, const struct attempt *a,
				  const struct segment_end *e, struct segment_verdict *sv)
{
	struct seg cur, nx;
	struct buf st = BUF_INIT;
	char *path, *cause = NULL, *outcome;
	const char *how;
	enum segment_next next = SEGMENT_VERDICT;
	int err, cont, has_next, infra, noprog;
	const char *lost;

	memset(sv, 0, sizeof(*sv));
	memset(&nx, 0, sizeof(nx));
	if (seg_get(ctx, a->id, 0, &cur) != 0)
		return SEGMENT_VERDICT;	/* not segmented */
	path = xasprintf("%s.seg", a->log_path);
	{
		/* slurm/attemptN.out -> slurm/attemptN.seg */
		char *dot = strrchr(path, '.');

		if (dot && dot > path + 4 && strcmp(dot - 4, ".out.seg") == 0)
			memcpy(dot - 4, ".seg", 5);
	}
	if (read_file(path, 1 << 20, &st, &err, &cause) < 0)
		buf_adds(&st, "");
	FREE_AND_NULL(cause);
	infra = e->state == SLURM_STATE_NODE_FAIL || e->state == SLURM_STATE_BOOT_FAIL ||
		e->state == SLURM_STATE_PREEMPTED;
	infra = infra && infra_retries(ctx, a->id) < ctx->cfg.retry_infra_max;
	/* the node that failed it is not the next segment's (issue 34) */
	lost = infra && e->state != SLURM_STATE_PREEMPTED ? e->node : NULL;
	cont = (e->state == SLURM_STATE_FAILED && e->exit_code == XLOOP_CONTINUE) ||
	       (e->state == SLURM_STATE_TIMEOUT && seg_line(st.s, cur.k, "signal", NULL)) ||
	       infra;
	/*
	 * An infra failure is retried as that segment: the next job (queued
	 * behind it with afternotok, or now) does its work again from the last
	 * checkpoint. Its wrapper skips the no-progress guard (the segment did
	 * not end by itself), and it does not count toward segments.max (the
	 * attempt's max grows by one) but toward retry.infra_max.
	 */
	if (infra)
		cur.max++;
	how = infra ? slurm_state_name(e->state) : e->state == SLURM_STATE_TIMEOUT ?
	      "TIMEOUT after the signal" : "exit 85";
	has_next = seg_get(ctx, a->id, cur.k + 1, &nx) == 0 && *nx.job_id;
	/* written by k's wrapper when its program asked to go on unsaved, or by k+1's */
	noprog = seg_line(st.s, cur.k + 1, "noprogress", NULL);
	sv->first_start = e->start;
	if (!cont) {
		outcome = xasprintf("%s %d", slurm_state_name(e->state), e->exit_code);
		close_seg(ctx, &cur, "last", e, outcome);
		free(outcome);
		seg_drop_after(ctx, s, q, a->id, cur.k, "not needed");
	} else if (cur.k >= cur.max) {
		close_seg(ctx, &cur, "last", e, how);
		sv->reason = xasprintf("segment %lld ended asking to continue (%s), but "
				       "segments.max is %lld: the run needs more segments "
				       "(--segments N) or a shorter program", cur.k, how, cur.max);
	} else if (noprog && !infra) {
		close_seg(ctx, &cur, "last", e, how);
		/* the held continuation never starts: cancelled, unneeded */
		seg_drop_after(ctx, s, q, a->id, cur.k, "no progress");
		if (e->state != SLURM_STATE_TIMEOUT)
			sv->reason = xasprintf("no progress between segments: %s did not change "
					       "during segment %lld (%s)", ctx->cfg.seg.checkpoint,
					       cur.k, how);
	} else if (has_next && seg_line(st.s, nx.k, "start", NULL)) {
		char *d;

		/* continued: the next segment is the attempt's job from now on */
		close_seg(ctx, &cur, "continued", e, how);
		db_exec_row(&ctx->db, "UPDATE segment SET state = 'current', max = :num"
			    " WHERE id = :id", nx.id, NULL, cur.max);
		/* run_start was the old job's start: the next one is no requeue */
		db_exec_row(&ctx->db, "UPDATE attempt SET job_id = :text, missing_since = NULL,"
			    " run_start = NULL WHERE id = :id", a->id, nx.job_id, 0);
		d = xasprintf("segment %lld ended (%s); segment %lld continues as job %s",
			      cur.k, how, nx.k, nx.job_id);
		loop_event(ctx, "segment", a->run_id, a->id, d);
		free(d);
		/* live until judged, also when the continuation ended already
		 * (then its own continuation starts at once or is dropped) */
		next = SEGMENT_RUNNING;
		{
			struct attempt b = *a;

			b.job_id = nx.job_id;
			segments_keep_next(ctx, s, q, &b);
		}
	} else if (has_next && slurm_jobs_find(q, nx.job_id) &&
		   !slurm_state_is_final(slurm_jobs_find(q, nx.job_id)->state)) {
		next = SEGMENT_PENDING;	/* the continuation is about to start: decide then */
		release_held(ctx, s, a, slurm_jobs_find(q, nx.job_id), how, lost);
	} else if (!has_next && (!nx.state || strcmp(nx.state, "submitting") == 0)) {
		/* k ended before k+1 was queued (or its intent needs repair):
		 * queued now, afternotok:k is met and it starts at once */
		next = SEGMENT_PENDING;
		seg_keep_next(ctx, s, q, a->id, &cur, a->job_id, lost);
	} else if (has_next && nx.try_ < SEG_TRIES_MAX && !seg_line(st.s, nx.k, "start", NULL)) {
		/*
		 * Its continuation left Slurm without starting: a controller back
		 * from a state saved before its sbatch, or a cancel from outside
		 * (the chaos soak: a FAILED 85 judged a failure). That try is
		 * over; the next is queued now (afternotok:k is met, it starts at
		 * once), SEG_TRIES_MAX tries at most, as for an sbatch that failed.
		 */
		char *d = xasprintf("segment %lld ended (%s); its continuation, job %s, left "
				    "Slurm without starting: queued again", cur.k, how, nx.job_id);

		db_exec_row(&ctx->db, "UPDATE segment SET state = 'submit_failed', outcome ="
			    " 'its job left Slurm without starting' WHERE id = :id", nx.id,
			    NULL, 0);
		loop_event(ctx, "repaired", a->run_id, a->id, d);
		free(d);
		next = SEGMENT_PENDING;
		seg_keep_next(ctx, s, q, a->id, &cur, a->job_id, lost);
	} else {
		close_seg(ctx, &cur, "last", e, how);
		sv->reason = xasprintf("segment %lld ended %s asking to continue (%s), but its "
				       "continuation never started", cur.k,
				       slurm_state_name(e->state), how);
	}
	if (next == SEGMENT_VERDICT) {
		time_t t = seg_first_start(ctx, a->id);

		if (t > 0)
			sv->first_start = t;
	}
	seg_release(&nx);
	seg_release(&cur);
	buf_release(&st);
	free(path);
	return next;
}
