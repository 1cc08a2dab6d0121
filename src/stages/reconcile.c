/* Refreshing live jobs and judging finished ones. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "jobs/chain.h"
#include "lib/fsutil.h"
#include "jobs/gone.h"
#include "stages/judge.h"
#include "loop.h"
#include "stages/reconcile.h"
#include "stages/requeue.h"
#include "stages/verdict-entry.h"
#include "jobs/segments.h"
#include "jobs/steps.h"
#include "jobs/steps-run.h"
#include "jobs/sweep-then.h"
#include "study.h"
#include "jobs/submit.h"
#include "jobs/watch.h"

/* What Slurm finally said about one job, from sacct or scontrol. */
struct final {
	int known;		/* a final state was read */
	enum slurm_state state;
	int exit_code, exit_signal;
	int step_exit_code, step_exit_signal;	/* scontrol's DerivedExitCode; -1 unknown */
	time_t start, end;
	char *node;
	char *step_note;	/* the failed step that set the state (sacct), or NULL */
	char *raw;
	int restarts;		/* scontrol's Restarts; -1 unknown (sacct) */
};

static void final_release(struct final *f)
{
	free(f->node);
	free(f->step_note);
	free(f->raw);
	memset(f, 0, sizeof(*f));
}

/*
 * The job carrying an attempt's token in its comment. A sweep task's token
 * is "<array token>_<index>": the array's comment holds the first part and
 * the task is the one with that index.
 */
static const struct slurm_job *job_by_token(const struct slurm_jobs *q, const char *token)
{
	size_t i, len = strcspn(token, "_");
	const char *idx = token[len] ? token + len + 1 : NULL;

	for (i = 0; i < q->nr; i++) {
		const char *c = q->v[i].comment, *at;

		for (at = strstr(c, ":"); at; at = strstr(at + 1, ":"))
			if (strncmp(at + 1, token, len) == 0 &&
			    !isalnum((unsigned char)at[1 + len]))
				break;
		if (!at)
			continue;
		if (!idx || strcmp(q->v[i].array_task_id, idx) == 0)
			return &q->v[i];
	}
	return NULL;
}

/*
 * Whether a job found by the attempt's id carries the attempt's comment:
 * after a controller crash Slurm can give a lost job's id to a new job
 * (another run's, a feeder), whose end must not become this attempt's
 * verdict. Taken as ours: no comment (accounting that does not store it),
 * the attempt's token (a sweep task's: its array's), a sweep's comment,
 * or "xloop:STUDY/TAG#N" then ":" or "." (a later segment of it).
 */
static int job_is_attempts(struct xl_ctx *ctx, const struct attempt *a, const char *comment)
{
	size_t len = strcspn(a->token, "_");
	char *tag, *want, *sweep;
	int ok;

	if (!comment || !*comment || (len && memmem(comment, strlen(comment), a->token, len)))
		return 1;
	sweep = xasprintf("xloop:%s/sweep:", ctx->cfg.study);
	ok = starts_with(comment, sweep);
	free(sweep);
	if (ok)
		return 1;
	tag = runs_tag(&ctx->db, a->run_id);
	if (!tag)
		return 1;
	want = xasprintf("xloop:%s/%s#%lld", ctx->cfg.study, tag, a->n);
	len = strlen(want);
	ok = strncmp(comment, want, len) == 0 && (comment[len] == ':' || comment[len] == '.');
	free(want);
	free(tag);
	return ok;
}

/* The attempt's job in q by its id, or NULL (none, or another job under a reused id). */
static const struct slurm_job *find_attempts_job(struct xl_ctx *ctx, const struct slurm_jobs *q,
						 const struct attempt *a)
{
	const struct slurm_job *j = *a->job_id ? slurm_jobs_find(q, a->job_id) : NULL;

	return j && job_is_attempts(ctx, a, j->comment) ? j : NULL;
}

static char *kv_text(const struct slurm_job *j)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < j->nr_kv; i++)
		buf_addf(&b, "%s%s=%s", i ? " " : "", j->kv[i].key, j->kv[i].value);
	return buf_detach(&b, NULL);
}

static void final_from_job(const struct slurm_job *j, struct final *f)
{
	f->known = slurm_state_is_final(j->state);
	f->state = j->state;
	f->exit_code = j->exit_code;
	f->exit_signal = j->exit_signal;
	f->step_exit_code = j->derived_exit_code;
	f->step_exit_signal = j->derived_exit_signal;
	slurm_parse_time(j->start_time, &f->start, NULL);
	slurm_parse_time(j->end_time, &f->end, NULL);
	f->node = xstrdup(j->nodes);
	f->raw = kv_text(j);
	f->restarts = j->restarts;
}

static void final_from_acct(const struct slurm_acct *acct,
			    const struct slurm_acct_summary *sum, const char *job,
			    struct final *f)
{
	struct buf b = BUF_INIT;
	const char *v;
	size_t i, k;

	f->known = slurm_state_is_final(sum->state);
	f->state = sum->state;
	f->exit_code = sum->exit_code;
	f->exit_signal = sum->exit_signal;
	f->step_exit_code = f->step_exit_signal = -1;	/* the worst step is in the summary */
	v = slurm_acct_get(acct, sum->alloc, "Start");
	slurm_parse_time(v ? v : "", &f->start, NULL);
	v = slurm_acct_get(acct, sum->alloc, "End");
	slurm_parse_time(v ? v : "", &f->end, NULL);
	f->node = xstrdup(sum->nodes ? sum->nodes : "");
	f->restarts = -1;
	f->step_note = slurm_acct_step_note(acct, sum);
	for (i = 0; i < acct->nr; i++) {
		if (strcmp(acct->rows[i].id.job, job) != 0)
			continue;
		for (k = 0; k < acct->nr_fields; k++)
			buf_addf(&b, "%s%s", k ? "|" : "", acct->rows[i].values[k]);
		buf_addc(&b, '\n');
	}
	f->raw = buf_detach(&b, NULL);
}

/* The log's first START line and last line, as evidence. */
static char *log_evidence(const char *log, int gpu_job)
{
	struct buf b = BUF_INIT, out = BUF_INIT;
	char *cause = NULL;
	const char *p, *start = NULL, *last = NULL;
	int err;

	if (read_file(log, 16 << 20, &b, &err, &cause) < 0) {
		buf_addf(&out, "log: %s", err == ENOENT ? "missing" : "unreadable");
		free(cause);
		buf_release(&b);
		return buf_detach(&out, NULL);
	}
	buf_rtrim(&b);
	for (p = b.s; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (!start && starts_with(p, "START"))
			start = p;
		last = p;
	}
	if (last)
		buf_addf(&out, "log last line: '%.*s'", (int)strcspn(last, "\n"), last);
	else
		buf_adds(&out, "log: empty");
	if (gpu_job) {
		if (!start) {
			buf_adds(&out, "; no START line, so the device is unchecked "
				 "(`xloop help logs`)");
		} else {
			char *line = xstrndup(start, strcspn(start, "\n"));
			int gpu = (strcasestr(line, "cuda") || strcasestr(line, "gpu")) &&
				  !strcasestr(line, "device=cpu");

			buf_addf(&out, gpu ? "; START names a GPU" :
				 "; START line shows no GPU: '%s' (`xloop help logs`)", line);
			free(line);
		}
	}
	buf_release(&b);
	{
		char *clean = utf8_clean(out.s, out.len);

		buf_release(&out);
		return clean;
	}
}

/*
 * What squeue shows of a live attempt, in one statement that writes only
 * when something changed (a tick with nothing new writes nothing).
 */
static void note_live(struct xl_ctx *ctx, long long id, const char *state,
		      const char *reason, long long started, long long run_start, int restarted)
{
	struct stmt q;

	if (db_prepare_cached(&ctx->db, &q, "UPDATE attempt SET state = :state,"
		       " missing_since = NULL, slurm_reason = :reason,"
		       " started_at = CASE WHEN :start > 0 THEN :start ELSE started_at END,"
		       " run_start = CASE WHEN :run > 0 THEN :run ELSE run_start END,"
		       " restarts = restarts + :restarted"
		       " WHERE id = :id AND (state IS NOT :state OR missing_since IS NOT NULL"
		       " OR slurm_reason IS NOT :reason"
		       " OR (:start > 0 AND started_at IS NOT :start)"
		       " OR (:run > 0 AND run_start IS NOT :run))") < 0)
		return;
	db_bind_int64(&q, ":id", id);
	db_bind_text(&q, ":state", state);
	db_bind_text(&q, ":reason", reason);
	db_bind_int64(&q, ":start", started);
	db_bind_int64(&q, ":run", run_start);
	db_bind_int64(&q, ":restarted", restarted);
	db_step(&q);
	db_finalize(&q);
}

/* Whether `xloop cancel` cancelled this attempt. */
static int cancelled_by_user(struct xl_ctx *ctx, long long attempt_id)
{
	struct stmt q;
	int yes = 0;

	if (db_prepare(&ctx->db, &q, "SELECT cancelled_by_user FROM attempt"
		       " WHERE id = :id") < 0)
		return 0;
	db_bind_int64(&q, ":id", attempt_id);
	if (db_step(&q) == SQLITE_ROW)
		yes = db_col_int64(&q, 0) != 0;
	db_finalize(&q);
	return yes;
}

/* Store the verdict, then append it to the decision log. */
static int store_verdict(struct xl_ctx *ctx, const struct attempt *a,
			 const struct final *f, int lost, const struct segment_verdict *sv,
			 const struct steps_verdict *stv)
{
	struct judge_input in;
	struct verdict v;
	struct run r;
	struct stmt q;
	char *dir, *cvp = NULL, *cause = NULL, *evidence, best[160], *best_key = NULL, *why;
	char exitbuf[32] = "";
	int err, rc = -1, found;
	time_t now = time(NULL);

	found = 0;
	{
		char *tag = runs_tag(&ctx->db, a->run_id);

		found = tag && runs_get(&ctx->db, ctx->cfg.study, tag, &r) == 0;
		free(tag);
	}
	if (!found)
		return -1;
	memset(&in, 0, sizeof(in));
	in.lost = lost;
	dir = run_dir(ctx->root, ctx->cfg.study, r.tag);
	watch_read_record(dir, a->n, &in.stop_epoch, &in.stop_planned, &why);	/* issue 45 */
	in.stop_why = why;
	in.ended_at = lost ? 0 : f->end;
	if (!lost) {
		in.state = f->state;
		in.exit_code = f->exit_code;
		in.exit_signal = f->exit_signal;
		in.step_exit_code = f->step_exit_code;
		in.step_exit_signal = f->step_exit_signal;
		in.step_note = f->step_note;
		in.started_at = sv && sv->first_start ? sv->first_start :
				f->start ? f->start : a->submitted_at;
		cvp = path_join(dir, "cv.json");
		if (study_load_cv(cvp, ctx->cfg.metric, &in.score, &in.cv_mtime, &err, &cause) == 0)
			in.cv = CV_OK;
		else
			in.cv = err == ENOENT ? CV_MISSING : CV_INVALID;
		in.cv_error = cause;
		if (f->exit_code >= 0)
			xsnprintf(exitbuf, sizeof(exitbuf), "%d:%d", f->exit_code,
				  f->exit_signal < 0 ? 0 : f->exit_signal);
	}
	if (stv && stv->last_start)
		in.started_at = stv->last_start;	/* cv.json: the last step's */
	if (stv && stv->reason) {
		/* a later step failed: its end is the verdict's */
		in.state = stv->state;
		in.exit_code = stv->exit_code;
		in.exit_signal = stv->exit_signal;
	}
	judge_attempt(&in, &v);
	if (stv && stv->reason && !v.stopped) {
		free(v.reason);
		v.reason = stv->note ? xasprintf("%s; %s", stv->reason, stv->note) :
			   xstrdup(stv->reason);
		v.success = 0;
		v.failure_class = stv->failure_class ? stv->failure_class : "program";
	} else if (stv && stv->note && !v.stopped) {
		char *m = xasprintf("step 1 '%s': %s; %s", STEP_FIRST, v.reason, stv->note);

		free(v.reason);
		v.reason = m;
	}
	if (sv && sv->reason && !v.stopped) {
		free(v.reason);
		v.reason = xstrdup(sv->reason);
		if (v.success)
			v.success = 0;
		if (!v.failure_class)
			v.failure_class = "program";
	}
	if (!lost && !v.stopped && f->state == SLURM_STATE_CANCELLED &&
	    cancelled_by_user(ctx, a->id)) {
		free(v.reason);
		v.reason = xstrdup("CANCELLED by you (xloop cancel)");
	}
	if (!lost && (f->restarts > a->restarts ? f->restarts : a->restarts) > 0) {
		/* one verdict over every start of the job (issue 34) */
		char *t = requeue_reason(v.reason, f->restarts > a->restarts ? f->restarts :
					 a->restarts);

		free(v.reason);
		v.reason = t;
	}
	evidence = log_evidence(stv && stv->log ? stv->log : a->log_path,
				*a->gres != '\0' && !(stv && stv->log));
	verdict_best_before(ctx, best, sizeof(best), &best_key);
	{
		/* a gain (or loss) from code that changed is not the run's change */
		char *code = loop_code_note(ctx, a->id), *t;

		if (code) {
			t = xasprintf("%s; %s", v.reason, code);
			free(v.reason);
			v.reason = t;
			free(code);
		}
	}

	if (db_begin_write(&ctx->db) < 0)
		goto out;
	if (db_prepare(&ctx->db, &q, "UPDATE attempt SET state = :state,"
		       " exit_code = :exit, node = :node, started_at = :start,"
		       " ended_at = :end, slurm_raw = :raw, verdict = :verdict,"
		       " failure_class = :class, verdict_reason = :reason, score = :score,"
		       " judged_at = :now, evidence = :evidence,"
		       " restarts = max(restarts, :restarts)"
		       " WHERE id = :id AND verdict IS NULL") < 0) {
		db_rollback(&ctx->db);
		goto out;
	}
	db_bind_text(&q, ":state", lost ? "LOST" : slurm_state_name(f->state));
	db_bind_text(&q, ":exit", *exitbuf ? exitbuf : NULL);
	db_bind_text(&q, ":node", lost ? NULL : f->node);
	if (!lost && sv && sv->first_start)
		db_bind_int64(&q, ":start", sv->first_start);	/* segments: the first one's */
	else if (!lost && f->start)
		db_bind_int64(&q, ":start", f->start);
	else
		db_bind_null(&q, ":start");
	db_bind_int64(&q, ":end", !lost && f->end ? f->end : now);
	db_bind_text(&q, ":raw", lost ? NULL : f->raw);
	db_bind_text(&q, ":verdict", v.stopped ? "stopped" : v.success ? "success" : "failure");
	db_bind_text(&q, ":class", v.failure_class);
	db_bind_text(&q, ":reason", v.reason);
	if (v.success || (v.stopped && !lost && in.cv == CV_OK))	/* its last value */
		db_bind_double(&q, ":score", in.score);
	else
		db_bind_null(&q, ":score");
	db_bind_int64(&q, ":now", now);
	db_bind_text(&q, ":evidence", evidence);
	db_bind_int64(&q, ":restarts", lost || f->restarts < 0 ? 0 : f->restarts);
	db_bind_int64(&q, ":id", a->id);
	if (db_step(&q) != SQLITE_DONE) {
		db_finalize(&q);
		db_rollback(&ctx->db);
		goto out;
	}
	db_finalize(&q);
	if (sqlite3_changes(ctx->db.h) == 1)
		loop_event(ctx, "verdict", a->run_id, a->id, v.reason);
	if (db_commit(&ctx->db) < 0)
		goto out;
	crash_point("verdict-after-db");
	verdict_entry_write(ctx, a->id, best, best_key, 0);	/* and a promotion it made */
	rc = 0;
out:
	free(best_key);
	verdict_release(&v);
	run_release(&r);
	free(evidence);
	free(cause);
	free((char *)in.stop_why);
	free(cvp);
	free(dir);
	return rc;
}

/*
 * lanes_see for a live attempt: a segmented one is seen as its queued
 * segment (one place in the lane; the lane's next run chains onto it).
 */
static void see_lane(struct xl_ctx *ctx, const struct slurm_jobs *q, const struct attempt *a,
		     struct lanes *l)
{
	char *tail = xstrdup(a->job_id);

	segments_tail(ctx, q, a->id, &tail);
	lanes_see(l, a->lane, a->id, tail, a->after_job);
	free(tail);
}

/* What one reconcile read from Slurm, shared by its passes. */
struct reading {
	struct attempt *v;		/* the study's unfinished attempts */
	size_t n;
	struct slurm_jobs q;		/* squeue: the live jobs */
	struct slurm_jobs sc;		/* scontrol, when asked (have_scontrol) */
	struct slurm_acct acct;		/* sacct, unless noacct */
	int noacct, have_scontrol;
	const char **ids;		/* the jobs that left the queue, for sacct */
	size_t nids;
	int need_scontrol;		/* one to look up by token, or sacct did not know */
	size_t *again;			/* attempts pending again after a run (requeued) */
	size_t nagain;
	time_t now;
};

/* An intent's job found by its token (sbatch never told its id): adopt it. */
static void adopt_by_token(struct xl_ctx *ctx, struct attempt *a, const struct slurm_job *j,
			   time_t now)
{
	char *d = xasprintf("attempt %lld was left in 'submitting'; found its job %s by "
			    "its token", a->n, j->job_id);

	attempts_set_submitted(&ctx->db, a->id, j->job_id, now);
	loop_event(ctx, "repaired", a->run_id, a->id, d);
	free(d);
	free(a->job_id);
	a->job_id = xstrdup(j->job_id);
}

/*
 * Pass 1: what squeue shows is alive (counted, noted, seen in its lane);
 * its notes in one transaction (one sync, not one per job when a whole
 * sweep starts at once). What left the queue goes to r->ids for sacct.
 */
static void see_live(struct xl_ctx *ctx, struct reading *r, struct refresh *out)
{
	size_t i;
	int txn = db_begin_write(&ctx->db) == 0;

	for (i = 0; i < r->n; i++) {
		struct attempt *a = &r->v[i];
		const struct slurm_job *j = *a->job_id ? find_attempts_job(ctx, &r->q, a) :
			job_by_token(&r->q, a->token);

		if (!*a->job_id && j)
			adopt_by_token(ctx, a, j, r->now);
		if (j && !slurm_state_is_final(j->state)) {
			time_t st = 0;
			int running = j->state == SLURM_STATE_RUNNING, again;

			if (j->state == SLURM_STATE_PENDING)
				out->pending++;
			else
				out->running++;
			/* ran once (run_start), pending now: requeued */
			if (j->state == SLURM_STATE_PENDING && a->run_start > 0)
				r->again[r->nagain++] = i;
			slurm_parse_time(j->start_time, &st, NULL);
			/* running since another start than the one seen: requeued */
			again = running && st > 0 && a->run_start > 0 && st != a->run_start;
			note_live(ctx, a->id, slurm_state_name(j->state), j->reason, st,
				  running ? st : 0, again);
			if (again) {
				requeue_note(ctx, a, st);
				a->restarts++;
			}
			see_lane(ctx, &r->q, a, &out->lanes);
			continue;
		}
		if (*a->job_id)
			r->ids[r->nids++] = a->job_id;
		else
			r->need_scontrol = 1;	/* an intent to look up by token */
	}
	if (txn && db_commit(&ctx->db) < 0)
		warning("unable to record what squeue showed (the next tick will)");
}

/*
 * A job whose watcher stopped it that Slurm requeued (a node lost, or a
 * preemption, after the stop record): pending again, it would start only
 * to end at once (its watcher finds the record), and a run chained behind
 * it waits for that start. Cancelled now (issue 45); its verdict is the
 * stop, from the record, when reconcile sees it end.
 */
static void cancel_stopped_requeued(struct xl_ctx *ctx, struct slurm *s, struct reading *r)
{
	size_t i;

	for (i = 0; i < r->nagain; i++) {
		const struct attempt *a = &r->v[r->again[i]];
		char *tag, *dir, *why = NULL, *cause = NULL;
		long long epoch = 0, planned = 0;

		tag = runs_tag(&ctx->db, a->run_id);
		dir = tag ? run_dir(ctx->root, ctx->cfg.study, tag) : NULL;
		if (dir && watch_read_record(dir, a->n, &epoch, &planned, &why) == 1) {
			if (slurm_scancel(s, a->job_id, &cause) < 0)
				warning("job %s was stopped early and Slurm requeued it: "
					"unable to cancel it (%s); it ends when it starts",
					a->job_id, cause);
			else
				loop_event(ctx, "restarted", a->run_id, a->id, "requeued after it "
					   "was stopped early: cancelled (it would end at its start)");
		}
		free(why);
		free(cause);
		free(dir);
		free(tag);
	}
}

/*
 * The live attempts' next segments, the GPUs of new starts, and the end
 * of the line a new submission chains onto (an array task's chain waits
 * for its whole array; with slurm.chain any-user, any project's newest).
 */
static void keep_line(struct xl_ctx *ctx, struct slurm *s, struct reading *r,
		      struct refresh *out)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct slurm_job *j = find_attempts_job(ctx, &r->q, &r->v[i]);
		char *why = NULL;

		if (j && !slurm_state_is_final(j->state))
			segments_keep_next(ctx, s, &r->q, &r->v[i]);
		/* a step intent a crash or a failed sbatch left: found by token, or submitted */
		if (steps_submit_pending(ctx, s, &r->v[i], &r->q, &why))
			warning("a step of attempt %lld is not submitted yet: %s", r->v[i].n, why);
		free(why);
		if (j && !slurm_state_is_final(j->state))
			steps_follow_segments(ctx, s, &r->v[i], &r->q);
		steps_note_live(ctx, &r->v[i], &r->q);
	}
	lanes_record_gpus(ctx, s, r->v, r->n, &r->q);
	free(out->newest_live_job);
	out->newest_live_job = submit_line_tail(&r->q, r->v, r->n);
	segments_line_tail(ctx, &r->q, r->v, r->n, &out->newest_live_job);
	if (ctx->cfg.chain_any_user) {
		char *any = submit_newest_in_partition(&r->q, ctx->cfg.partition);

		if (*any) {
			free(out->newest_live_job);
			out->newest_live_job = xstrndup(any, strcspn(any, "_"));
		}
		free(any);
	}
}

/*
 * The sweeps' --then steps, after the judging (which may have retried a
 * step alone): intents a crash left found by token or submitted, a pending
 * one kept waiting for every job of its sweep.
 */
static void keep_then(struct xl_ctx *ctx, struct slurm *s, struct reading *r)
{
	char *why = NULL;

	if (sweep_then_submit_pending(ctx, s, &r->q, &why))
		warning("a sweep's --then step is not submitted or followed yet: %s", why);
	free(why);
}

/*
 * Pass 2: the final states of what left the queue, with one sacct call,
 * and one scontrol call when sacct does not know one (or an intent is to
 * be found by its token). 0 or an exit code.
 */
static int read_finals(struct xl_ctx *ctx, struct slurm *s, struct reading *r, char **cause)
{
	size_t i;
	int unknown, rc;

	if (r->nids && slurm_sacct(s, r->ids, r->nids, &r->acct, &r->noacct, cause)) {
		/* sacct failing is no reason to stop: scontrol may know */
		FREE_AND_NULL(*cause);
		r->noacct = 1;
	}
	for (i = 0; i < r->n && !r->need_scontrol; i++) {
		struct slurm_acct_summary sum;

		if (!*r->v[i].job_id || find_attempts_job(ctx, &r->q, &r->v[i]))
			continue;
		if (r->noacct || slurm_acct_summarize(&r->acct, r->v[i].job_id, &sum, NULL) < 0 ||
		    !slurm_state_is_final(sum.state) || sum.partial)
			r->need_scontrol = 1;
	}
	if (!r->need_scontrol)
		return 0;
	rc = slurm_scontrol_job(s, NULL, &r->sc, &unknown, cause);
	r->have_scontrol = rc == 0;
	return rc;
}

/*
 * An intent (no job id) that squeue did not show: found by its token in
 * scontrol's answer (adopted: 1), or, older than the orphan threshold,
 * marked submit_failed; else it waits. 0: nothing to judge now.
 */
static int find_intent(struct xl_ctx *ctx, struct reading *r, struct attempt *a)
{
	const struct slurm_job *j = r->have_scontrol ? job_by_token(&r->sc, a->token) : NULL;

	if (j) {
		adopt_by_token(ctx, a, j, r->now);
		return 1;
	}
	if (r->now - a->intent_at >= attempts_orphan_secs()) {
		attempts_set_submit_failed(&ctx->db, a->id, SUBMIT_ORPHAN_ERROR);
		loop_event(ctx, "repaired", a->run_id, a->id,
			   "an attempt left in 'submitting' never reached Slurm; "
			   "marked submit_failed");
	}
	return 0;
}

/*
 * What Slurm finally said of a's job: sacct first (its nodes the wider of its and
 * scontrol's: a partial allocation row names the batch host alone), then scontrol, squeue.
 */
static void read_final(struct xl_ctx *ctx, const struct reading *r, const struct attempt *a,
		       struct final *f)
{
	struct slurm_acct_summary sum;
	const struct slurm_job *j;

	if (!r->noacct && slurm_acct_summarize(&r->acct, a->job_id, &sum, NULL) == 0 &&
	    slurm_state_is_final(sum.state) &&
	    job_is_attempts(ctx, a, slurm_acct_get(&r->acct, sum.alloc, "Comment"))) {
		final_from_acct(&r->acct, &sum, a->job_id, f);
		if (r->have_scontrol && (j = find_attempts_job(ctx, &r->sc, a)) != NULL &&
		    slurm_wider_nodes(f->node, j->nodes) != f->node) {
			free(f->node);
			f->node = xstrdup(j->nodes);
		}
	} else if (r->have_scontrol && (j = find_attempts_job(ctx, &r->sc, a)) != NULL)
		final_from_job(j, f);
	else if ((j = find_attempts_job(ctx, &r->q, a)) != NULL)
		final_from_job(j, f);
}

/*
 * A job Slurm knows nowhere: lost only after two polls LOST_AFTER_SECS
 * apart (then no queued segment may run on in its directory). 1 when
 * judged.
 */
static int judge_missing(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			 const struct final *f, time_t now)
{
	struct stmt mq;
	long long since = 0;

	if (db_prepare(&ctx->db, &mq, "SELECT coalesce(missing_since, 0)"
		       " FROM attempt WHERE id = :id") == 0) {
		db_bind_int64(&mq, ":id", a->id);
		if (db_step(&mq) == SQLITE_ROW)
			since = db_col_int64(&mq, 0);
		db_finalize(&mq);
	}
	if (since == 0) {
		db_exec_row(&ctx->db, "UPDATE attempt SET missing_since = :num WHERE id = :id",
			    a->id, NULL, now);
		return 0;
	}
	if (now - since < LOST_AFTER_SECS || store_verdict(ctx, a, f, 1, NULL, NULL) != 0)
		return 0;
	segments_cancel_queued(ctx, s, a->id, "the attempt was lost");
	return 1;
}

/*
 * Judge what ended: each attempt squeue no longer shows alive gets its
 * final state; a segmented one may go on as its next segment (counted
 * live), else its verdict is stored and written.
 */
static void judge_ended(struct xl_ctx *ctx, struct slurm *s, struct reading *r,
			struct refresh *out)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		struct attempt *a = &r->v[i];
		const struct slurm_job *j = find_attempts_job(ctx, &r->q, a);
		struct final f;

		if (j && !slurm_state_is_final(j->state))
			continue;	/* alive */
		if (!*a->job_id && !find_intent(ctx, r, a))
			continue;
		memset(&f, 0, sizeof(f));
		read_final(ctx, r, a, &f);
		if (f.known) {
			struct segment_end se = { f.state, f.exit_code, f.start, f.end, f.node };
			struct segment_verdict sv;
			enum segment_next next = segments_on_end(ctx, s, &r->q, a, &se, &sv);

			struct steps_verdict stv;
			enum steps_next sn = STEPS_NONE;

			memset(&stv, 0, sizeof(stv));
			if (next == SEGMENT_VERDICT)
				sn = steps_on_end(ctx, s, &r->q, a, f.state, f.exit_code,
						  f.exit_signal, &stv);
			/* past its GPU step: it holds no place in the line */
			out->stepping += sn == STEPS_RUNNING || sn == STEPS_PENDING;
			if (next == SEGMENT_RUNNING)	/* its continuation queued: followed */
				steps_follow_segments(ctx, s, a, &r->q);
			if (next == SEGMENT_RUNNING || sn == STEPS_RUNNING)
				out->running++;
			else if (next == SEGMENT_PENDING || sn == STEPS_PENDING)
				out->pending++;
			else if (store_verdict(ctx, a, &f, 0, &sv, &stv) == 0)
				out->judged++;
			free(sv.reason);
			steps_verdict_release(&stv);
		} else if (!f.raw && judge_missing(ctx, s, a, &f, r->now)) {
			out->judged++;
		}
		final_release(&f);
	}
}

/* Refresh and judge: repairs, then the passes over what Slurm says. */
int reconcile(struct xl_ctx *ctx, struct slurm *s, struct refresh *out,
	      char **cause)
{
	struct reading r = { .q = SLURM_JOBS_INIT, .sc = SLURM_JOBS_INIT,
			     .acct = SLURM_ACCT_INIT, .noacct = 1 };
	int rc, calls0 = s->calls;

	memset(out, 0, sizeof(*out));
	out->newest_live_job = xstrdup("");
	r.now = time(NULL);
	/* what a crash left: decision entries, held chains, git commits */
	verdict_entries_repair(ctx);
	chain_release_held(ctx, s);
	loop_commit_repair(ctx);
	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &r.v, &r.n) < 0)
		return XL_ERR;
	if (r.n == 0)
		return 0;	/* nothing in flight: not a single Slurm call */
	rc = slurm_squeue_mine(s, &r.q, cause);
	if (rc)
		goto out;
	gone_cancel(ctx, s, &r.q);	/* first: no line, lane or count sees them */
	out->user_live = lanes_user_live(&r.q);
	r.ids = xcalloc(r.n, sizeof(*r.ids));
	r.again = xcalloc(r.n, sizeof(*r.again));
	see_live(ctx, &r, out);
	cancel_stopped_requeued(ctx, s, &r);
	keep_line(ctx, s, &r, out);
	rc = read_finals(ctx, s, &r, cause);
	if (rc)
		goto out;
	judge_ended(ctx, s, &r, out);
	keep_then(ctx, s, &r);
out:
	out->calls = s->calls - calls0;
	free(r.ids);
	free(r.again);
	attempts_free(r.v, r.n);
	slurm_jobs_release(&r.q);
	slurm_jobs_release(&r.sc);
	slurm_acct_release(&r.acct);
	return rc;
}
