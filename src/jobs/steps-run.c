/* Steps on Slurm: intents, submission afterok, reading their ends, retries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/fsutil.h"
#include "jobs/jobenv.h"
#include "stages/judge.h"
#include "loop.h"
#include "jobs/segments.h"
#include "jobs/steps.h"
#include "jobs/steps-array.h"
#include "jobs/steps-run.h"
#include "study.h"
#include "timeline.h"

/* One row of step_job (the latest try of one step). */
struct step_row {
	long long id, k, try_, intent_at, started_at, ended_at;
	char *name, *token, *phase, *job_id, *after_job, *log_path, *state, *exit_code;
};

static void rows_free(struct step_row *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].token);
		free(v[i].phase);
		free(v[i].job_id);
		free(v[i].after_job);
		free(v[i].log_path);
		free(v[i].state);
		free(v[i].exit_code);
	}
	free(v);
}

/* The live rows (not retried) of an attempt's steps in step order. */
static int rows_load(struct db *db, long long attempt_id, struct step_row **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare_cached(db, &q, "SELECT id, k, try, name, token, phase, job_id,"
			      " after_job, log_path, intent_at, coalesce(state, ''),"
			      " coalesce(exit_code, ''), coalesce(started_at, 0),"
			      " coalesce(ended_at, 0) FROM step_job WHERE attempt_id = :a"
			      " AND phase != 'retried' ORDER BY k, try") < 0)
		return -1;
	db_bind_int64(&q, ":a", attempt_id);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct step_row *r;

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		r = &(*v)[(*n)++];
		r->id = db_col_int64(&q, 0);
		r->k = db_col_int64(&q, 1);
		r->try_ = db_col_int64(&q, 2);
		r->name = xstrdup(db_col_text(&q, 3));
		r->token = xstrdup(db_col_text(&q, 4));
		r->phase = xstrdup(db_col_text(&q, 5));
		r->job_id = xstrdup(db_col_text(&q, 6));
		r->after_job = xstrdup(db_col_text(&q, 7));
		r->log_path = xstrdup(db_col_text(&q, 8));
		r->intent_at = db_col_int64(&q, 9);
		r->state = xstrdup(db_col_text(&q, 10));
		r->exit_code = xstrdup(db_col_text(&q, 11));
		r->started_at = db_col_int64(&q, 12);
		r->ended_at = db_col_int64(&q, 13);
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Insert one step intent. */
static int insert_intent(struct xl_ctx *ctx, long long attempt_id, long long k, long long try_,
			 const char *name, const char *log, const char *after)
{
	struct stmt q;
	char token[27];

	study_token(token);
	if (db_prepare(&ctx->db, &q, "INSERT INTO step_job (attempt_id, k, try, name, token,"
		       " phase, after_job, log_path, intent_at) VALUES (:a, :k, :t, :name,"
		       " :token, 'submitting', :after, :log, :now)") < 0)
		return -1;
	db_bind_int64(&q, ":a", attempt_id);
	db_bind_int64(&q, ":k", k);
	db_bind_int64(&q, ":t", try_);
	db_bind_text(&q, ":name", name);
	db_bind_text(&q, ":token", token);
	db_bind_text(&q, ":after", after);
	db_bind_text(&q, ":log", log);
	db_bind_int64(&q, ":now", time(NULL));
	return db_run(&q);
}

/* Record the intents of a new attempt's later steps. */
int steps_record_intents(struct xl_ctx *ctx, const struct run *r, long long attempt_id,
			 long long n)
{
	char *names[STEPS_MAX];
	size_t ns = 0, i;
	int rc = 0;

	if (steps_names(&ctx->db, r->id, names, &ns) < 0)
		return -1;
	for (i = 0; i < ns; i++) {
		char *log = step_log_path(ctx->root, ctx->cfg.study, r->tag, n, names[i]);

		if (rc == 0)
			rc = insert_intent(ctx, attempt_id, (long long)i + 2, 1, names[i], log, "");
		free(log);
		free(names[i]);
	}
	return rc;
}

/* Record a step's job id and what it waits for. */
static void set_submitted(struct xl_ctx *ctx, long long id, const char *job, const char *after)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "UPDATE step_job SET phase = 'submitted', job_id = :j,"
		       " after_job = :after, submitted_at = :now WHERE id = :id") < 0)
		return;
	db_bind_text(&q, ":j", job);
	db_bind_text(&q, ":after", after);
	db_bind_int64(&q, ":now", time(NULL));
	db_bind_int64(&q, ":id", id);
	db_run(&q);
}

/*
 * The dependency on after ("A" or "A?B", either one ending COMPLETED 0:0
 * will do: a segmented training ends in one of its segments), malloc'd.
 */
static char *afterok_of(const char *after)
{
	struct buf b = BUF_INIT;
	const char *p = after;

	while (*p) {
		size_t n = strcspn(p, "?");

		buf_addf(&b, "%safterok:%.*s", b.len ? "?" : "", (int)n, p);
		p += n + (p[n] == '?');
	}
	return buf_detach(&b, NULL);
}

/* 1 when job is one of after's "A?B" jobs. */
static int after_has(const char *after, const char *job)
{
	size_t n = strlen(job);
	const char *p = after;

	while (*p) {
		size_t len = strcspn(p, "?");

		if (len == n && strncmp(p, job, n) == 0)
			return 1;
		p += len + (p[len] == '?');
	}
	return 0;
}

/*
 * sbatch one step: its script, log, comment (token), afterok on after
 * ("" none; "A?B" either) with --kill-on-invalid-dep=yes; no GPU unless its #SBATCH
 * asks, its own CPUs, memory and time where its #SBATCH lines give them.
 */
static int sbatch_step(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
		       const char *tag, const struct step_row *row, const char *after,
		       char **cause)
{
	const struct config *c = &ctx->cfg;
	char *script = step_path(ctx->root, c->study, tag, row->name);
	char *dep = NULL, *comment;
	struct slurm_submit req;
	struct buf text = BUF_INIT;
	struct jobenv env;
	struct jobenv_job jj = { tag, NULL, a->n, row->name, 1 };
	char rid[RUN_IDENT_LEN + 1];
	long long id = 0;
	int rc, err, ambiguous = 0;

	if (study_read_script(script, &text, &err, cause) < 0) {
		free(script);
		return XL_DATAERR;
	}
	if (runs_ident(&ctx->db, c->study, tag, rid) < 0)
		BUG("run '%s' is not in the DB", tag);
	jj.run_id = rid;
	jobenv_init(&env, c, ctx->root, &jj);
	if (*after)
		dep = afterok_of(after);
	comment = xasprintf("xloop:%s/%s#%lld.%s:%s", c->study, tag, a->n, row->name,
			    row->token);
	steps_fill_request(c, ctx->root, text.s, a->mem, a->time_limit, 0, dep, &req);
	req.kill_invalid_dep = dep != NULL;
	req.append = row->try_ > 1;	/* a retry keeps the failed try's log above it */
	req.script = script;
	req.job_name = tag;
	req.output = row->log_path;
	req.comment = comment;
	req.env = jobenv_vec(&env);
	crash_point("steps-before-sbatch");
	rc = slurm_sbatch(s, &req, &id, &ambiguous, cause);
	crash_point("steps-after-sbatch");
	if (rc == 0) {
		char job[32];

		xsnprintf(job, sizeof(job), "%lld", id);
		set_submitted(ctx, row->id, job, after);
	} else if (!ambiguous && !s->refused_by) {
		/* a limit's refusal is back-pressure: the intent waits for the next reconcile */
		db_exec_row(&ctx->db, "UPDATE step_job SET phase = 'submit_failed',"
			    " state = :text WHERE id = :id", row->id, *cause, 0);
	}
	jobenv_release(&env);
	buf_release(&text);
	free(comment);
	free(dep);
	free(script);
	return rc;
}

/* 1 when step row id is no longer an intent (its array was submitted). */
static int row_left_intent(struct xl_ctx *ctx, long long id)
{
	struct stmt q;
	int left = 0;

	if (db_prepare(&ctx->db, &q, "SELECT phase FROM step_job WHERE id = :id") == 0) {
		db_bind_int64(&q, ":id", id);
		left = db_step(&q) == SQLITE_ROW && strcmp(db_col_text(&q, 0), "submitting") != 0;
		db_finalize(&q);
	}
	return left;
}

/* The job carrying a step intent's token in jobs, or NULL. */
static const struct slurm_job *job_of_token(const struct slurm_jobs *jobs, const char *token)
{
	return steps_array_token(token) ? steps_array_find(jobs, token) :
		slurm_jobs_find_token(jobs, token);
}

/*
 * The job a step intent's sbatch made before a crash cut off its record:
 * in squeue's q, else in scontrol's list (read once into *sc: the job may
 * have run and ended before this tick). NULL with *sc_rc 0: there is none.
 * *sc_rc < 0: scontrol could not be read, and submitting could double it.
 */
static const struct slurm_job *intent_job(struct slurm *s, const struct slurm_jobs *q,
					  struct slurm_jobs *sc, int *sc_rc, const char *token)
{
	const struct slurm_job *j = job_of_token(q, token);
	char *why = NULL;
	int unknown = 0;

	if (j || !q)
		return j;
	if (*sc_rc == 0)
		*sc_rc = slurm_scontrol_job(s, NULL, sc, &unknown, &why) == 0 ? 1 : -1;
	free(why);
	return *sc_rc > 0 ? job_of_token(sc, token) : NULL;
}

static int submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
				  const struct slurm_jobs *q, struct slurm_jobs *sc, int *sc_rc,
				  char **cause);

/*
 * Submit what waits of an attempt's steps, in order. q: squeue's jobs when
 * called from a reconcile (an intent may then be a crash's leftover whose
 * job exists), NULL right after the attempt's own submission.
 */
int steps_submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			 const struct slurm_jobs *q, char **cause)
{
	struct slurm_jobs sc = SLURM_JOBS_INIT;
	int sc_rc = 0;
	int rc = submit_pending(ctx, s, a, q, &sc, &sc_rc, cause);

	slurm_jobs_release(&sc);
	return rc;
}

static int submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
				  const struct slurm_jobs *q, struct slurm_jobs *sc, int *sc_rc,
				  char **cause)
{
	struct step_row *v;
	size_t n, i;
	const char *prev = a->job_id;
	char *tag = NULL, *seg = NULL;
	int rc = 0;

	if (!*a->job_id || rows_load(&ctx->db, a->id, &v, &n) < 0)
		return 0;
	/* after a segmented job.sh: its current segment or the continuation
	 * queued (asked only when step 2 is still to submit: this runs every tick) */
	if (n && strcmp(v[0].phase, "submitting") == 0 &&
	    (seg = segments_step_after(ctx, a->id)) != NULL)
		prev = seg;
	for (i = 0; i < n && rc == 0; i++) {
		const struct slurm_job *j;

		if (strcmp(v[i].phase, "submitting") == 0) {
			const char *after = strcmp(v[i].after_job, "-") == 0 ? "" : prev;

			j = intent_job(s, q, sc, sc_rc, v[i].token);
			if (!j && *sc_rc < 0) {
				*cause = xstrdup("scontrol could not be read to look for a step "
						 "submitted before a crash");
				rc = XL_TEMPFAIL;
				break;
			}
			if (j) {
				/* sbatch answered before a crash cut off its record */
				set_submitted(ctx, v[i].id, j->job_id, after);
				loop_event(ctx, "repaired", a->run_id, a->id,
					   "a step left in 'submitting' was found by its token");
				free(v[i].job_id);
				v[i].job_id = xstrdup(j->job_id);
			} else if (steps_array_token(v[i].token)) {
				/* a sweep's step: its whole array at once, when it can go */
				rc = steps_array_submit(ctx, s, v[i].token, cause);
				if (rc || !row_left_intent(ctx, v[i].id))
					break;
				rows_free(v, n);
				free(tag);
				free(seg);
				return submit_pending(ctx, s, a, q, sc, sc_rc, cause);
			} else {
				if (!tag && !(tag = runs_tag(&ctx->db, a->run_id)))
					break;
				rc = sbatch_step(ctx, s, a, tag, &v[i], after, cause);
				if (rc)
					break;
				free(v[i].job_id);
				v[i].job_id = NULL;
				rows_free(v, n);
				free(tag);
				free(seg);
				/* read again: the job id just recorded is the next one's */
				return submit_pending(ctx, s, a, q, sc, sc_rc, cause);
			}
		} else if (strcmp(v[i].phase, "submit_failed") == 0 ||
			   strcmp(v[i].phase, "dropped") == 0) {
			break;
		}
		prev = v[i].job_id;
	}
	rows_free(v, n);
	free(tag);
	free(seg);
	return rc;
}

/* Keep the first later step of a segmented attempt waiting on its live segments. */
void steps_follow_segments(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a,
			   const struct slurm_jobs *q)
{
	struct step_row *v;
	size_t n;
	char *want = NULL, *dep, *cause = NULL;
	const struct slurm_job *j;

	if (rows_load(&ctx->db, a->id, &v, &n) < 0)
		return;
	if (n == 0 || strcmp(v[0].phase, "submitted") != 0 || !*v[0].job_id ||
	    strcmp(v[0].after_job, "-") == 0 || !(j = slurm_jobs_find(q, v[0].job_id)) ||
	    j->state != SLURM_STATE_PENDING || !(want = segments_step_after(ctx, a->id)) ||
	    strcmp(want, v[0].after_job) == 0) {
		rows_free(v, n);
		free(want);
		return;
	}
	dep = afterok_of(want);
	if (slurm_scontrol_update(s, v[0].job_id, "Dependency", dep, &cause) == 0)
		db_exec_row(&ctx->db, "UPDATE step_job SET after_job = :text WHERE id = :id",
			    v[0].id, want, 0);
	else
		warning("step '%s' (job %s) still waits for segment job(s) %s, not %s: %s",
			v[0].name, v[0].job_id, v[0].after_job, want,
			cause ? cause : "scontrol failed");
	free(cause);
	free(dep);
	free(want);
	rows_free(v, n);
}

void steps_verdict_release(struct steps_verdict *v)
{
	free(v->reason);
	free(v->log);
	free(v->note);
	memset(v, 0, sizeof(*v));
}

/* What Slurm says finally of one step's job: 1 known, 0 not yet (or unknown). */
int steps_read_end(struct slurm *s, const char *job, enum slurm_state *st, int *code,
		   int *sig, time_t *start, time_t *end, char **why)
{
	struct slurm_acct acct = SLURM_ACCT_INIT;
	struct slurm_jobs sc = SLURM_JOBS_INIT;
	struct slurm_acct_summary sum;
	const char *ids[1] = { job }, *v;
	char *cause = NULL;
	int noacct = 1, unknown = 0, known = 0;

	*start = *end = 0;
	if (slurm_sacct(s, ids, 1, &acct, &noacct, &cause) == 0 && !noacct &&
	    slurm_acct_summarize(&acct, job, &sum, NULL) == 0 &&
	    slurm_state_is_final(sum.state)) {
		*st = sum.state;
		*code = sum.exit_code;
		*sig = sum.exit_signal;
		v = slurm_acct_get(&acct, sum.alloc, "Start");
		slurm_parse_time(v ? v : "", start, NULL);
		v = slurm_acct_get(&acct, sum.alloc, "End");
		slurm_parse_time(v ? v : "", end, NULL);
		known = 1;
	}
	FREE_AND_NULL(cause);
	if (!known && slurm_scontrol_job(s, job, &sc, &unknown, &cause) == 0 && !unknown &&
	    sc.nr && slurm_state_is_final(sc.v[0].state)) {
		*st = sc.v[0].state;
		*code = sc.v[0].exit_code;
		*sig = sc.v[0].exit_signal;
		slurm_parse_time(sc.v[0].start_time, start, NULL);
		slurm_parse_time(sc.v[0].end_time, end, NULL);
		*why = xstrdup(sc.v[0].reason ? sc.v[0].reason : "");
		known = 1;
	}
	free(cause);
	slurm_acct_release(&acct);
	slurm_jobs_release(&sc);
	return known;
}

/*
 * A step job that left the queue with no final state anywhere: lost once
 * two readings LOST_STEP_SECS apart found nothing (the first one marks it).
 */
#define LOST_STEP_SECS 60
static int lost(struct xl_ctx *ctx, const struct step_row *r)
{
	struct stmt q;
	long long since = 0, now = time(NULL);

	if (db_prepare(&ctx->db, &q, "SELECT coalesce(missing_since, 0) FROM step_job"
		       " WHERE id = :id") == 0) {
		db_bind_int64(&q, ":id", r->id);
		if (db_step(&q) == SQLITE_ROW)
			since = db_col_int64(&q, 0);
		db_finalize(&q);
	}
	if (since == 0) {
		db_exec_row(&ctx->db, "UPDATE step_job SET missing_since = :num WHERE id = :id",
			    r->id, NULL, now);
		return 0;
	}
	return now - since >= LOST_STEP_SECS;
}

/* Record a step's end on its row. */
static void set_ended(struct xl_ctx *ctx, long long id, enum slurm_state st, int code,
		      int sig, time_t start, time_t end)
{
	struct stmt q;
	char exitbuf[32];

	xsnprintf(exitbuf, sizeof(exitbuf), "%d:%d", code, sig < 0 ? 0 : sig);
	if (db_prepare(&ctx->db, &q, "UPDATE step_job SET phase = 'ended', state = :st,"
		       " exit_code = :exit, started_at = :start, ended_at = :end"
		       " WHERE id = :id") < 0)
		return;
	db_bind_text(&q, ":st", slurm_state_name(st));
	db_bind_text(&q, ":exit", exitbuf);
	db_bind_int64(&q, ":start", start);
	db_bind_int64(&q, ":end", end);
	db_bind_int64(&q, ":id", id);
	db_run(&q);
}

/* "'eval', 'report' not run: step K failed" for rows from i on. */
static char *not_run(const struct step_row *v, size_t i, size_t n, long long k)
{
	struct buf b = BUF_INIT;
	size_t j;

	for (j = i; j < n; j++)
		buf_addf(&b, "%s'%s'", j > i ? ", " : "", v[j].name);
	buf_addf(&b, " not run: step %lld failed", k);
	return buf_detach(&b, NULL);
}

/* Mark the rows from i on dropped (Slurm drops their jobs: invalid dependency). */
static void drop_from(struct xl_ctx *ctx, const struct step_row *v, size_t i, size_t n)
{
	for (; i < n; i++)
		if (strcmp(v[i].phase, "ended") != 0)
			db_exec_row(&ctx->db, "UPDATE step_job SET phase = 'dropped'"
				    " WHERE id = :id", v[i].id, NULL, 0);
}

/* Submit step v[i] again alone (why: the event): new tries of it and of the steps after it. */
static int retry_from(struct xl_ctx *ctx, const struct attempt *a, const struct step_row *v,
		      size_t i, size_t n, const char *why)
{
	size_t j;

	if (db_begin_write(&ctx->db) < 0)
		return -1;
	for (j = i; j < n; j++) {
		if (db_exec_row(&ctx->db, "UPDATE step_job SET phase = 'retried' WHERE id = :id",
				v[j].id, NULL, 0) < 0 ||
		    insert_intent(ctx, a->id, v[j].k, v[j].try_ + 1, v[j].name, v[j].log_path,
				  j == i ? "-" : "") < 0) {
			db_rollback(&ctx->db);
			return -1;
		}
	}
	if (loop_event(ctx, "retry", a->run_id, a->id, why) < 0 ||
	    db_commit(&ctx->db) < 0) {
		db_rollback(&ctx->db);
		return -1;
	}
	crash_point("steps-retry-after-db");
	return 0;
}

/* Judge the steps after job.sh once its job has ended. */
enum steps_next steps_on_end(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			     const struct attempt *a, enum slurm_state state, int exit_code,
			     int exit_signal, struct steps_verdict *out)
{
	struct step_row *v;
	size_t n, i;
	enum steps_next next = STEPS_DONE;

	memset(out, 0, sizeof(*out));
	if (rows_load(&ctx->db, a->id, &v, &n) < 0 || n == 0) {
		free(v);
		return STEPS_NONE;
	}
	if (state != SLURM_STATE_COMPLETED || exit_code != 0 || exit_signal > 0) {
		/* job.sh failed: its verdict, the later steps never ran */
		out->note = not_run(v, 0, n, 1);
		drop_from(ctx, v, 0, n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct slurm_job *j;
		enum slurm_state st = SLURM_STATE_UNKNOWN;
		int code = -1, sig = -1;
		time_t start = v[i].started_at, end = v[i].ended_at;
		char *why = NULL;
		const char *retry;
		int gone = 0;

		if (strcmp(v[i].phase, "submitting") == 0) {
			next = STEPS_PENDING;	/* reconcile submits it */
			break;
		}
		if (strcmp(v[i].phase, "submit_failed") == 0 || strcmp(v[i].phase, "dropped") == 0) {
			out->reason = xasprintf("step %lld '%s' %s: %s", v[i].k, v[i].name,
				strcmp(v[i].phase, "dropped") == 0 ? "was dropped" :
				"could not be submitted", *v[i].state ? v[i].state : "no job");
			out->failure_class = "program";
			out->state = SLURM_STATE_FAILED;
			if (i + 1 < n)
				out->note = not_run(v, i + 1, n, v[i].k);
			drop_from(ctx, v, i + 1, n);
			break;
		}
		if (strcmp(v[i].phase, "ended") == 0) {
			st = slurm_state_parse(v[i].state, 0);
			if (sscanf(v[i].exit_code, "%d:%d", &code, &sig) != 2)
				code = sig = -1;
		} else if ((j = slurm_jobs_find(q, v[i].job_id)) != NULL &&
			   !slurm_state_is_final(j->state)) {
			next = j->state == SLURM_STATE_PENDING ? STEPS_PENDING : STEPS_RUNNING;
			break;
		} else if (!steps_read_end(s, v[i].job_id, &st, &code, &sig, &start, &end, &why)) {
			if (!lost(ctx, &v[i])) {
				next = STEPS_PENDING;	/* Slurm has not said yet */
				break;
			}
			st = SLURM_STATE_NODE_FAIL;	/* lost: the machine's fault */
			code = sig = -1;
			gone = 1;
			set_ended(ctx, v[i].id, st, code, sig, 0, time(NULL));
		} else {
			set_ended(ctx, v[i].id, st, code, sig, start, end);
		}
		free(why);
		if (st == SLURM_STATE_COMPLETED && code == 0 && sig <= 0) {
			out->last_start = start;
			continue;
		}
		/* dropped while a segmented training went on after the step last
		 * followed it: again behind the last segment; an infra failure:
		 * again alone, on the outputs of the steps before */
		retry = st == SLURM_STATE_CANCELLED && *v[i].after_job &&
			strcmp(v[i].after_job, "-") != 0 && !after_has(v[i].after_job, a->job_id) ?
			"a step waited for a segment that ended asking to continue, and Slurm "
			"dropped it: submitted again behind the last segment" :
			strcmp(judge_class(st), "infra") == 0 && v[i].try_ <= ctx->cfg.retry_infra_max ?
			"a step failed for the machine's fault: submitted again alone, on the "
			"outputs of the steps before" : NULL;
		if (retry && retry_from(ctx, a, v, i, n, retry) == 0) {
			char *cause = NULL;

			if (steps_submit_pending(ctx, s, a, NULL, &cause))
				warning("step '%s' of attempt %lld: %s (the next tick tries "
					"again)", v[i].name, a->n, cause);
			free(cause);
			next = STEPS_PENDING;
			break;
		}
		out->reason = gone ? xasprintf("step %lld '%s': Slurm lost its job %s (no final "
					       "state anywhere)", v[i].k, v[i].name, v[i].job_id) :
			xasprintf("step %lld '%s' ended %s (exit %d:%d)", v[i].k, v[i].name,
				  slurm_state_name(st), code, sig < 0 ? 0 : sig);
		out->failure_class = judge_class(st);
		out->log = xstrdup(v[i].log_path);
		out->state = st;
		out->exit_code = code;
		out->exit_signal = sig;
		if (i + 1 < n)
			out->note = not_run(v, i + 1, n, v[i].k);
		drop_from(ctx, v, i + 1, n);
		break;
	}
out:
	rows_free(v, n);
	return next;
}

/* Record the live state squeue shows of an attempt's step jobs. */
void steps_note_live(struct xl_ctx *ctx, const struct attempt *a, const struct slurm_jobs *q)
{
	struct step_row *v;
	size_t n, i;

	if (rows_load(&ctx->db, a->id, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		const struct slurm_job *j = *v[i].job_id ? slurm_jobs_find(q, v[i].job_id) : NULL;

		if (j && !slurm_state_is_final(j->state) && strcmp(v[i].phase, "submitted") == 0 &&
		    strcmp(v[i].state, slurm_state_name(j->state)) != 0)
			db_exec_row(&ctx->db, "UPDATE step_job SET state = :text WHERE id = :id",
				    v[i].id, slurm_state_name(j->state), 0);
	}
	rows_free(v, n);
}

/* Which step is live: "step 2 'eval' PENDING (Dependency), job 12". */
char *steps_live_text(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q)
{
	struct step_row *v;
	size_t n, i;
	char *t = NULL;

	if (rows_load(&ctx->db, attempt_id, &v, &n) < 0)
		return NULL;
	for (i = 0; i < n && !t; i++) {
		const struct slurm_job *j = q && *v[i].job_id ? slurm_jobs_find(q, v[i].job_id) :
			NULL;

		int why = j && *j->reason && strcmp(j->reason, "None") != 0;

		if (j && !slurm_state_is_final(j->state))
			t = xasprintf("step %lld '%s' %s%s%s%s, job %s", v[i].k, v[i].name,
				      slurm_state_name(j->state), why ? " (" : "",
				      why ? j->reason : "", why ? ")" : "", j->job_id);
		else if (strcmp(v[i].phase, "submitting") == 0)
			t = xasprintf("step %lld '%s' waits to be submitted", v[i].k, v[i].name);
		else if (!q && strcmp(v[i].phase, "submitted") == 0)
			t = xasprintf("step %lld '%s' %s, job %s", v[i].k, v[i].name,
				      *v[i].state ? v[i].state : "submitted", v[i].job_id);
	}
	rows_free(v, n);
	return t;
}

/*
 * The first of an attempt's later steps that q shows unfinished:
 * "JOB" (word 0) or "NAME:STATE" (word 1), malloc'd; NULL when none.
 */
static char *live_step(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q,
		       int word)
{
	struct step_row *v;
	size_t n, i;
	char *t = NULL;

	if (rows_load(&ctx->db, attempt_id, &v, &n) < 0)
		return NULL;
	for (i = 0; i < n && !t; i++) {
		const struct slurm_job *j = *v[i].job_id ? slurm_jobs_find(q, v[i].job_id) : NULL;

		if (j && !slurm_state_is_final(j->state))
			t = word ? xasprintf("%s:%s", v[i].name, slurm_state_name(j->state)) :
				xstrdup(v[i].job_id);
	}
	rows_free(v, n);
	return t;
}

/* The job id of a's later step that q shows unfinished (malloc'd), or NULL. */
char *steps_live_job(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q)
{
	return live_step(ctx, attempt_id, q, 0);
}

/* "eval:RUNNING": a's later step that q shows unfinished (malloc'd), or NULL. */
char *steps_live_word(struct xl_ctx *ctx, long long attempt_id, const struct slurm_jobs *q)
{
	return live_step(ctx, attempt_id, q, 1);
}

/* scancel every later step of a that has a job and has not ended; how many. */
int steps_cancel(struct xl_ctx *ctx, struct slurm *s, const struct attempt *a)
{
	struct step_row *v;
	size_t n, i;
	int done = 0;

	if (rows_load(&ctx->db, a->id, &v, &n) < 0)
		return 0;
	for (i = n; i-- > 0;) {	/* the last first: none starts after its step before */
		char *cause = NULL;

		if (strcmp(v[i].phase, "submitted") == 0 && *v[i].job_id &&
		    slurm_scancel(s, v[i].job_id, &cause) == 0)
			done++;
		free(cause);
	}
	rows_free(v, n);
	return done;
}

/* The later steps that started, for the timeline. */
int steps_spans(struct xl_ctx *ctx, struct step_span **v, size_t *n)
{
	struct stmt q;
	long long now = time(NULL);
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(&ctx->db, &q, "SELECT s.attempt_id, s.k, s.started_at,"
		       " coalesce(s.ended_at, 0), s.name, coalesce(s.state, ''), s.phase"
		       " FROM step_job s JOIN attempt t ON t.id = s.attempt_id JOIN run r"
		       " ON r.id = t.run_id WHERE r.study = :study AND s.phase != 'retried'"
		       " AND s.started_at > 0 ORDER BY s.attempt_id, s.k") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct step_span *g;
		long long end = db_col_int64(&q, 3);

		if (end == 0 && strcmp(db_col_text(&q, 6), "ended") != 0)
			end = now;	/* runs now */
		if (end < db_col_int64(&q, 2))
			continue;
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		g = &(*v)[(*n)++];
		g->attempt_id = db_col_int64(&q, 0);
		g->k = db_col_int64(&q, 1);
		g->start = db_col_int64(&q, 2);
		g->end = end;
		xsnprintf(g->name, sizeof(g->name), "%s", db_col_text(&q, 4));
		xsnprintf(g->state, sizeof(g->state), "%s", db_col_text(&q, 5));
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}
