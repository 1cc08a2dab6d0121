/* A sweep's --then step: one CPU job afterany on every job of the sweep. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/driver-host.h"
#include "lib/fsutil.h"
#include "jobsh/directives.h"
#include "jobsh/jobsh.h"
#include "jobs/steps.h"
#include "jobs/steps-run.h"
#include "study.h"
#include "jobs/sweep-then.h"

/* .xloop/sweeps/NAME (malloc'd). */
static char *sweep_dir(struct xl_ctx *ctx, const char *sweep)
{
	char *rel = path_join(ctx->root, ".xloop/sweeps"), *dir = path_join(rel, sweep);

	free(rel);
	return dir;
}

/* Copy the --then script into the sweep's directory. */
int sweep_then_prepare(struct xl_ctx *ctx, const char *sweep, const char *script,
		       char **cause)
{
	struct buf text = BUF_INIT;
	char *rel = path_join(ctx->root, ".xloop/sweeps"), *dir = sweep_dir(ctx, sweep), *dst;
	int err, rc = 0;

	if (study_read_script(script, &text, &err, cause) < 0) {
		free(rel);
		free(dir);
		return err == ENOENT ? XL_NOINPUT : XL_DATAERR;
	}
	dst = path_join(dir, "then.sh");
	if (strcmp(script, dst) != 0 &&	/* `sweep retry` gives the copy itself */
	    (make_dir(rel, 0700, cause) < 0 || make_dir(dir, 0700, cause) < 0 ||
	     write_file_atomic(dst, text.s, text.len, 0700, cause) < 0))
		rc = XL_ERR;
	buf_release(&text);
	free(rel);
	free(dir);
	free(dst);
	return rc;
}

/* Record the --then intent (the sweep's next try) in the caller's transaction. */
int sweep_then_intent(struct xl_ctx *ctx, long long sweep_id, const char *sweep,
		      const char *after)
{
	char token[27], *dir = sweep_dir(ctx, sweep), *script, *log, *results;
	struct stmt q;
	int rc = -1;

	study_token(token);
	script = path_join(dir, "then.sh");
	log = path_join(dir, "then.out");
	results = path_join(dir, "results.json");
	if (db_prepare(&ctx->db, &q, "INSERT INTO sweep_then (sweep_id, try, token, phase,"
		       " after, script, log_path, results, intent_at) VALUES (:sw, (SELECT"
		       " coalesce(max(try), 0) + 1 FROM sweep_then WHERE sweep_id = :sw), :token,"
		       " 'submitting', :after, :script, :log, :results, :now)") == 0) {
		db_bind_int64(&q, ":sw", sweep_id);
		db_bind_text(&q, ":token", token);
		db_bind_text(&q, ":after", after);
		db_bind_text(&q, ":script", script);
		db_bind_text(&q, ":log", log);
		db_bind_text(&q, ":results", results);
		db_bind_int64(&q, ":now", time(NULL));
		rc = db_run(&q);
	}
	free(dir);
	free(script);
	free(log);
	free(results);
	return rc;
}

/*
 * The job array of the rows (attempts or steps) carrying token prefix:
 * 1 with *arr (malloc'd) when one of them has a job, 0 when one still
 * waits for its sbatch, -1 when none is there to wait for.
 */
static int array_of(struct db *db, const char *prefix, char **arr)
{
	struct stmt q;
	char *lo = xasprintf("%s_", prefix), *hi = xasprintf("%s`", prefix);
	int rc = -1;

	*arr = NULL;
	if (db_prepare(db, &q, "SELECT coalesce(job_id, ''), phase FROM attempt"
		       " WHERE token >= :lo AND token < :hi UNION ALL"
		       " SELECT job_id, phase FROM step_job WHERE token >= :lo AND token < :hi") == 0) {
		db_bind_text(&q, ":lo", lo);
		db_bind_text(&q, ":hi", hi);
		while (db_step(&q) == SQLITE_ROW) {
			const char *job = db_col_text(&q, 0);

			if (*job) {
				*arr = xstrndup(job, strcspn(job, "_"));
				rc = 1;
				break;
			}
			if (strcmp(db_col_text(&q, 1), "submitting") == 0)
				rc = 0;
		}
		db_finalize(&q);
	}
	free(lo);
	free(hi);
	return rc;
}

/*
 * The arrays the --then step waits for, "A:B:C" (malloc'd): every one of
 * after's arrays that has a job (seed 000 §7.2: afterany on all of them),
 * or NULL while one still waits for its sbatch or the sweep's own array
 * has none.
 */
static char *resolve_after(struct db *db, const char *after)
{
	char *copy = xstrdup(after), *p, *save = NULL, *arr;
	struct buf b = BUF_INIT;
	int first = 1, wait = 0;

	for (p = strtok_r(copy, " ", &save); p && !wait; p = strtok_r(NULL, " ", &save)) {
		int rc = array_of(db, p, &arr);

		if (rc == 1)
			buf_addf(&b, "%s%s", b.len ? ":" : "", arr);
		else if (rc == 0 || first)
			wait = 1;
		free(arr);
		first = 0;
	}
	free(copy);
	if (wait || !b.len) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* The batch script: the results file first (xloop itself), then the user's script. */
static char *then_script(struct xl_ctx *ctx, const char *sweep, const char *header,
			 const char *exe, const char *script, const char *log,
			 const char *results)
{
	struct buf b = BUF_INIT;
	char *qroot = jobsh_quote(ctx->root), *qstudy = jobsh_quote(ctx->cfg.study);
	char *qexe = jobsh_quote(exe), *qscript = jobsh_quote(script), *qlog = jobsh_quote(log);
	char *qres = jobsh_quote(results), *qsweep = jobsh_quote(sweep);

	buf_addf(&b, "#!/bin/bash\n# written by xloop: the --then step of sweep %s of study %s\n"
		 "%s", sweep, ctx->cfg.study, header);
	buf_addf(&b, "unset XLOOP_CRASH_AT XLOOP_CRASH_ONCE\n"
		 "export XLOOP_ROOT=%s XLOOP_STUDY=%s XLOOP_SWEEP=%s XLOOP_STEP=then\n"
		 "export XLOOP_SWEEP_RESULTS=%s\n"
		 "exec >>%s 2>&1\n"
		 "# until every task is judged (exit 75 while a retried step runs), an hour at most\n"
		 "for i in $(seq 1 720); do\n"
		 "\t%s -C \"$XLOOP_ROOT\" sweep show \"$XLOOP_SWEEP\" --json --final "
		 ">\"$XLOOP_SWEEP_RESULTS.tmp\" && break\n"
		 "\tsleep 5\n"
		 "done\n"
		 "mv -f \"$XLOOP_SWEEP_RESULTS.tmp\" \"$XLOOP_SWEEP_RESULTS\"\n"
		 "exec %s\n", qroot, qstudy, qsweep, qres, qlog, qexe, qscript);
	free(qroot);
	free(qstudy);
	free(qexe);
	free(qscript);
	free(qlog);
	free(qres);
	free(qsweep);
	return buf_detach(&b, NULL);
}

/* One --then try. */
struct then_row {
	long long id, sweep_id;
	int latest;		/* the sweep's newest try */
	char *token, *phase, *job_id, *after, *after_job, *script, *log, *results, *sweep;
};

/* sbatch one --then step afterany on the arrays arr ("A:B"). */
static int submit_then(struct xl_ctx *ctx, struct slurm *s, const struct then_row *t,
		       const char *arr, char **cause)
{
	const struct config *c = &ctx->cfg;
	struct buf text = BUF_INIT, header = BUF_INIT;
	char *dir = sweep_dir(ctx, t->sweep), *path = NULL, *exe = NULL, *script = NULL;
	char *dep = xasprintf("afterany:%s", arr), *comment, *name;
	struct slurm_submit req;
	long long id = 0;
	int rc, err, ambiguous = 0;

	comment = xasprintf("xloop:%s/sweep-then:%s:%s", c->study, t->sweep, t->token);
	name = xasprintf("%s.then", t->sweep);
	if (study_read_script(t->script, &text, &err, cause) < 0) {
		rc = XL_DATAERR;
		goto fail;
	}
	if (!(exe = driver_self_exe(cause))) {
		rc = XL_ERR;
		goto out;
	}
	sbatch_header_lines(text.s, &header);
	script = then_script(ctx, t->sweep, header.s ? header.s : "", exe, t->script, t->log,
			     t->results);
	path = xasprintf("%s/then-%s.sh", dir, t->token);
	if (write_file_atomic(path, script, strlen(script), 0700, cause) < 0) {
		rc = XL_ERR;
		goto out;
	}
	/* a CPU step: a GPU only when its #SBATCH asks, one CPU unless it says */
	steps_fill_request(c, ctx->root, text.s, NULL, NULL, 1, dep, &req);
	req.script = path;
	req.job_name = name;
	req.output = t->log;
	req.append = 1;
	req.comment = comment;
	crash_point("sweep-then-before-sbatch");
	rc = slurm_sbatch(s, &req, &id, &ambiguous, cause);
	crash_point("sweep-then-after-sbatch");
	if (rc == 0) {
		struct stmt q;
		char job[32];

		xsnprintf(job, sizeof(job), "%lld", id);
		if (db_prepare(&ctx->db, &q, "UPDATE sweep_then SET phase = 'submitted', job_id = :j,"
			       " after_job = :after WHERE id = :id") == 0) {
			db_bind_text(&q, ":j", job);
			db_bind_text(&q, ":after", arr);
			db_bind_int64(&q, ":id", t->id);
			db_run(&q);
		}
		goto out;
	}
	if (ambiguous || s->refused_by)
		goto out;	/* found by its token, or tried again, by the next reconcile */
fail:
	db_exec_row(&ctx->db, "UPDATE sweep_then SET phase = 'submit_failed', state = :text"
		    " WHERE id = :id", t->id, *cause, 0);
out:
	buf_release(&text);
	buf_release(&header);
	free(dir);
	free(path);
	free(exe);
	free(script);
	free(dep);
	free(comment);
	free(name);
	return rc;
}

/* 1 when id is one of list's "A:B:C". */
static int in_list(const char *list, const char *id)
{
	size_t n = strlen(id);
	const char *p;

	for (p = list; (p = strstr(p, id)) != NULL; p += n)
		if ((p == list || p[-1] == ':') && (p[n] == ':' || !p[n]))
			return 1;
	return 0;
}

/*
 * The jobs of sweep_id not ended as xloop knows, "A:B:C" (array ids for
 * array tasks): each unjudged attempt's job and its steps' submitted jobs,
 * a step retried alone (a plain job no array covers) among them.
 */
static char *unfinished(struct db *db, long long sweep_id)
{
	struct buf b = BUF_INIT;
	struct stmt q;

	if (db_prepare(db, &q, "SELECT a.job_id FROM attempt a JOIN sweep_task w"
		       " ON w.run_id = a.run_id WHERE w.sweep_id = :sw AND a.verdict IS NULL"
		       " AND coalesce(a.job_id, '') != '' UNION ALL SELECT s.job_id FROM step_job s"
		       " JOIN attempt a ON a.id = s.attempt_id JOIN sweep_task w ON w.run_id ="
		       " a.run_id WHERE w.sweep_id = :sw AND a.verdict IS NULL"
		       " AND s.phase = 'submitted' AND s.job_id != ''") == 0) {
		db_bind_int64(&q, ":sw", sweep_id);
		while (db_step(&q) == SQLITE_ROW) {
			const char *job = db_col_text(&q, 0);
			char *id = xstrndup(job, strcspn(job, "_"));

			if (!in_list(b.s ? b.s : "", id))
				buf_addf(&b, "%s%s", b.len ? ":" : "", id);
			free(id);
		}
		db_finalize(&q);
	}
	return b.s ? buf_detach(&b, NULL) : xstrdup("");
}

/* 1 when q shows job or array id unfinished. */
static int live_in(const struct slurm_jobs *q, const char *id)
{
	size_t i, n = strlen(id);

	for (i = 0; i < q->nr; i++) {
		const struct slurm_job *j = &q->v[i];

		if (!slurm_state_is_final(j->state) &&
		    (strcmp(j->array_job_id, id) == 0 ||
		     (strncmp(j->job_id, id, n) == 0 && (!j->job_id[n] || j->job_id[n] == '_'))))
			return 1;
	}
	return 0;
}

/*
 * The jobs of sweep_id to wait for beyond have ("A:B"): those unfinished()
 * lists that have lacks and a fresh squeue still shows (a step retried
 * alone), "A:B" appended to *live (have's own first when with_have);
 * *beyond: whether there is one. 0, or an exit code with *cause; *want
 * (malloc'd): every job unfinished() listed, for after_job, or NULL when
 * have has them all (no squeue asked).
 */
static int live_beyond(struct xl_ctx *ctx, struct slurm *s, long long sweep_id, const char *have,
		       int with_have, struct buf *live, int *beyond, char **want, char **cause)
{
	struct slurm_jobs now = SLURM_JOBS_INIT;
	char *copy, *p, *save = NULL;
	int rc, more = 0;

	*beyond = 0;

	*want = unfinished(&ctx->db, sweep_id);
	copy = xstrdup(*want);
	for (p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save))
		more |= !in_list(have, p);
	free(copy);
	if (with_have && *have)
		buf_addf(live, "%s", have);
	if (!more) {
		FREE_AND_NULL(*want);
		return 0;
	}
	/* the squeue of this reconcile predates the jobs it submitted */
	rc = slurm_squeue_mine(s, &now, cause);
	more = 0;
	copy = xstrdup(*want);
	for (p = strtok_r(copy, ":", &save); rc == 0 && p; p = strtok_r(NULL, ":", &save)) {
		if (!live_in(&now, p) || (with_have && in_list(have, p)))
			continue;	/* ended: nothing to wait for (and Slurm may forget it) */
		buf_addf(live, "%s%s", live->len ? ":" : "", p);
		more |= !in_list(have, p);
	}
	free(copy);
	slurm_jobs_release(&now);
	*beyond = rc == 0 && more;
	return rc;
}

/*
 * Keep the pending --then job t waiting for every job of its sweep that has
 * not ended: when the DB knows one after_job lacks (a step retried alone),
 * afterany on each that a fresh squeue still shows; after_job then records
 * every job looked at (a crash before the record sets it again). 0, or an
 * exit code with *cause.
 */
static int follow(struct xl_ctx *ctx, struct slurm *s, const struct then_row *t,
		  char **cause)
{
	struct buf live = BUF_INIT;
	char *want = NULL;
	int beyond, rc = live_beyond(ctx, s, t->sweep_id, t->after_job, 0, &live, &beyond,
				     &want, cause);

	if (rc == 0 && beyond) {
		char *dep = xasprintf("afterany:%s", live.s);

		rc = slurm_scontrol_update(s, t->job_id, "Dependency", dep, cause);
		crash_point("sweep-then-after-update");
		free(dep);
	}
	/* every job looked at, so the next tick asks squeue only for a new one */
	if (rc == 0 && want)
		db_exec_row(&ctx->db, "UPDATE sweep_then SET after_job = :text WHERE id = :id",
			    t->id, want, 0);
	buf_release(&live);
	free(want);
	return rc;
}

/* An older try superseded by a newer one: its pending job cancelled. */
static void supersede(struct xl_ctx *ctx, struct slurm *s, const struct then_row *t)
{
	char *cause = NULL;

	if (*t->job_id && slurm_scancel(s, t->job_id, &cause) != 0) {
		warning("the superseded --then job %s of sweep %s: %s", t->job_id, t->sweep,
			cause);
		free(cause);
		return;
	}
	db_exec_row(&ctx->db, "UPDATE sweep_then SET phase = 'superseded' WHERE id = :id",
		    t->id, NULL, 0);
}

static void then_rows_free(struct then_row *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].token);
		free(v[i].phase);
		free(v[i].job_id);
		free(v[i].after);
		free(v[i].after_job);
		free(v[i].script);
		free(v[i].log);
		free(v[i].results);
		free(v[i].sweep);
	}
	free(v);
}

/* The study's --then tries that are intents or submitted. */
static int then_rows_load(struct xl_ctx *ctx, struct then_row **v, size_t *n)
{
	struct stmt st;

	*v = NULL;
	*n = 0;
	if (db_prepare_cached(&ctx->db, &st, "SELECT t.id, t.sweep_id, t.try = (SELECT"
			      " max(o.try) FROM sweep_then o WHERE o.sweep_id = t.sweep_id),"
			      " t.token, t.phase, t.job_id, t.after, t.after_job, t.script,"
			      " t.log_path, t.results, sw.name FROM sweep_then t"
			      " JOIN sweep sw ON sw.id = t.sweep_id WHERE sw.study = :s"
			      " AND t.phase IN ('submitting', 'submitted') ORDER BY t.id") < 0)
		return -1;
	db_bind_text(&st, ":s", ctx->cfg.study);
	while (db_step(&st) == SQLITE_ROW) {
		struct then_row *r;

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		r = &(*v)[(*n)++];
		r->id = db_col_int64(&st, 0);
		r->sweep_id = db_col_int64(&st, 1);
		r->latest = (int)db_col_int64(&st, 2);
		r->token = db_col_dup(&st, 3);
		r->phase = db_col_dup(&st, 4);
		r->job_id = db_col_dup(&st, 5);
		r->after = db_col_dup(&st, 6);
		r->after_job = db_col_dup(&st, 7);
		r->script = db_col_dup(&st, 8);
		r->log = db_col_dup(&st, 9);
		r->results = db_col_dup(&st, 10);
		r->sweep = db_col_dup(&st, 11);
	}
	db_finalize(&st);
	return 0;
}

/*
 * Every --then try of the study: an intent adopted by its token or
 * submitted once its arrays have their jobs; the newest try's pending job
 * kept waiting for the sweep's jobs (follow); an older try that has not
 * started superseded.
 */
int sweep_then_submit_pending(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			      char **cause)
{
	struct slurm_jobs own = SLURM_JOBS_INIT;
	struct then_row *v;
	size_t n, i;
	int rc = 0, have = q != NULL;

	if (then_rows_load(ctx, &v, &n) < 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct slurm_job *j;
		char *arr;

		if (strcmp(v[i].phase, "submitting") == 0) {
			if ((j = slurm_jobs_find_token(q, v[i].token)) != NULL) {
				/* sbatch answered before a crash cut off its record */
				db_exec_row(&ctx->db, "UPDATE sweep_then SET phase = 'submitted',"
					    " job_id = :text WHERE id = :id", v[i].id, j->job_id, 0);
			} else if (!v[i].latest) {
				if (q)	/* it never reached Slurm */
					supersede(ctx, s, &v[i]);
			} else if ((arr = resolve_after(&ctx->db, v[i].after)) != NULL) {
				struct buf dep = BUF_INIT;
				char *want = NULL;
				int beyond;

				/* and the sweep's jobs beyond them still live (a step
				 * retried alone): in its first dependency, for it may
				 * start before a later tick could add them */
				if (rc == 0)
					rc = live_beyond(ctx, s, v[i].sweep_id, arr, 1, &dep, &beyond,
							 &want, cause);
				if (rc == 0)
					rc = submit_then(ctx, s, &v[i], dep.s, cause);
				buf_release(&dep);
				free(want);
				free(arr);
			}
			continue;
		}
		if (!have) {
			char *why = NULL;

			have = 1;
			if (slurm_squeue_mine(s, &own, &why))
				warning("the --then steps are not checked: %s", why);
			free(why);
			q = &own;
		}
		j = slurm_jobs_find(q, v[i].job_id);
		if (!j || j->state != SLURM_STATE_PENDING)
			continue;
		if (!v[i].latest)
			supersede(ctx, s, &v[i]);
		else if (rc == 0)
			rc = follow(ctx, s, &v[i], cause);
	}
	then_rows_free(v, n);
	slurm_jobs_release(&own);
	return rc;
}

/* The script of sweep_id's newest --then try (malloc'd), or NULL when it has none. */
char *sweep_then_script(struct xl_ctx *ctx, long long sweep_id)
{
	struct stmt q;
	char *script = NULL;

	if (db_prepare(&ctx->db, &q, "SELECT script FROM sweep_then WHERE sweep_id = :sw"
		       " ORDER BY try DESC LIMIT 1") == 0) {
		db_bind_int64(&q, ":sw", sweep_id);
		if (db_step(&q) == SQLITE_ROW)
			script = db_col_dup(&q, 0);
		db_finalize(&q);
	}
	return script;
}

void sweep_then_release(struct sweep_then *t)
{
	free(t->phase);
	free(t->job_id);
	free(t->state);
	free(t->exit_code);
	free(t->log);
	free(t->results);
	free(t->script);
	memset(t, 0, sizeof(*t));
}

/* Read a sweep's newest --then try, its end from Slurm once it has ended. */
int sweep_then_get(struct xl_ctx *ctx, struct slurm *s, long long sweep_id,
		   struct sweep_then *t)
{
	struct stmt q;
	long long id = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if (db_prepare(&ctx->db, &q, "SELECT id, phase, job_id, coalesce(state, ''),"
		       " coalesce(exit_code, ''), log_path, results, script, try FROM sweep_then"
		       " WHERE sweep_id = :sw ORDER BY try DESC LIMIT 1") < 0)
		return -1;
	db_bind_int64(&q, ":sw", sweep_id);
	rc = db_step(&q);
	if (rc == SQLITE_ROW) {
		id = db_col_int64(&q, 0);
		t->phase = db_col_dup(&q, 1);
		t->job_id = db_col_dup(&q, 2);
		t->state = db_col_dup(&q, 3);
		t->exit_code = db_col_dup(&q, 4);
		t->log = db_col_dup(&q, 5);
		t->results = db_col_dup(&q, 6);
		t->script = db_col_dup(&q, 7);
		t->try_ = db_col_int64(&q, 8);
	}
	db_finalize(&q);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? 1 : -1;
	if (strcmp(t->phase, "submitted") == 0 && s) {
		enum slurm_state st;
		int code, sig;
		time_t start, end;
		char *why = NULL;

		if (steps_read_end(s, t->job_id, &st, &code, &sig, &start, &end, &why)) {
			struct stmt u;

			free(t->phase);
			free(t->state);
			free(t->exit_code);
			t->phase = xstrdup("ended");
			t->state = xstrdup(slurm_state_name(st));
			t->exit_code = xasprintf("%d:%d", code, sig < 0 ? 0 : sig);
			if (db_prepare(&ctx->db, &u, "UPDATE sweep_then SET phase = 'ended',"
				       " state = :st, exit_code = :e WHERE id = :id") == 0) {
				db_bind_text(&u, ":st", t->state);
				db_bind_text(&u, ":e", t->exit_code);
				db_bind_int64(&u, ":id", id);
				db_run(&u);
			}
		}
		free(why);
	}
	return 0;
}
