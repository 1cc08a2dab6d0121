/* The Slurm driver: one feeder job per study, pending behind the running work. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "search/autopilot.h"
#include "stages/breaker.h"
#include "driver/driver.h"
#include "lib/fsutil.h"
#include "plan.h"
#include "slurm/reasons.h"
#include "remote.h"
#include "runs.h"
#include "jobs/segments.h"
#include "jobs/steps-run.h"
#include "lib/sha256.h"
#include "study.h"

#define MAX_DEPS 16

/* Seconds a feeder waits with --begin when nothing runs. */
static long long retry_secs(void)
{
	return driver_env_secs("XLOOP_DRIVER_RETRY_SECS", 1, 86400, DRIVER_RETRY_SECS);
}

/* Seconds from a watchdog's sbatch to its start. */
static long long watch_secs(void)
{
	return driver_env_secs("XLOOP_DRIVER_WATCH_SECS", 1, 86400, DRIVER_WATCH_SECS);
}

/* Seconds a feeder waits for the study's lock. */
int driver_lock_wait_secs(void)
{
	return (int)driver_env_secs("XLOOP_DRIVER_LOCK_SECS", 1, 3600, DRIVER_LOCK_WAIT_SECS);
}

/* Seconds until slurmctld has saved a new job. */
unsigned driver_saved_secs(void)
{
	return (unsigned)driver_env_secs("XLOOP_DRIVER_SAVED_SECS", 0, 600, DRIVER_SAVED_SECS);
}

/* The study's key in feeder comments: the root and study hashed (12 hex digits). */
static void study_key(const struct xl_ctx *ctx, char key[13])
{
	char *text = xasprintf("%s\n%s", ctx->root, ctx->cfg.study), hex[65];

	sha256_hex(text, strlen(text), hex);
	memcpy(key, hex, 12);
	key[12] = '\0';
	free(text);
}

/* Whether job j is a feeder of the study with key. */
static int ours(const struct slurm_job *j, const char *key)
{
	const char *c = j->comment;

	if (!slurm_is_feeder_comment(c))
		return 0;
	c = strchr(c + strlen(DRIVER_COMMENT), ':');
	return c && strncmp(c + 1, key, 12) == 0 && c[13] == ':';
}

/* The token at the end of a feeder's comment ("" when none). */
static const char *comment_token(const char *comment)
{
	const char *t = strrchr(comment, ':');

	return t ? t + 1 : "";
}

/* Whether a feeder token is a watchdog's. */
int driver_is_watch_token(const char *token)
{
	return token && starts_with(token, DRIVER_WATCH_PREFIX);
}

/* Whether job j (ours) is the study's watchdog. */
static int is_watch(const struct slurm_job *j)
{
	return driver_is_watch_token(comment_token(j->comment));
}

/* Whether a pending feeder can never start by itself (held by anyone). */
static int is_held(const struct slurm_job *j)
{
	return reason_slurm_held(j->reason) || reason_explain(j->reason)->kind == REASON_HELD;
}

/* A job that is running (or just starting, or finishing). */
static int is_running(const struct slurm_job *j)
{
	return j->state == SLURM_STATE_RUNNING || j->state == SLURM_STATE_COMPLETING ||
	       j->state == SLURM_STATE_CONFIGURING;
}

/* Run one UPDATE on a feeder row (:id, :text, :now bound when the SQL has them). */
static void row_exec(struct xl_ctx *ctx, const char *sql, long long id, const char *text)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, sql) < 0)
		return;
	db_bind_int64(&q, ":id", id);
	if (strstr(sql, ":text"))
		db_bind_text(&q, ":text", text);
	if (strstr(sql, ":now"))
		db_bind_int64(&q, ":now", (long long)time(NULL));
	db_step(&q);
	db_finalize(&q);
}

/*
 * Bring the study's open feeder rows up to date with squeue: an intent
 * whose job is listed gets its id (found by the token in its comment); a
 * queued feeder that left the queue without running was cancelled; a
 * running one that is gone without a result was killed.
 */
static void sync_rows(struct xl_ctx *ctx, const struct slurm_jobs *q, const char *key,
		      const char *self_job)
{
	struct stmt st;
	struct {
		long long id;
		char *token, *phase, *job_id;
	} *v = NULL;
	size_t n = 0, i, k;

	if (db_prepare(&ctx->db, &st, "SELECT id, token, phase, coalesce(job_id, '')"
		       " FROM feeder WHERE study = :study AND phase IN"
		       " ('submitting', 'queued', 'running') ORDER BY id") < 0)
		return;
	db_bind_text(&st, ":study", ctx->cfg.study);
	while (db_step(&st) == SQLITE_ROW) {
		v = xreallocarray(v, n + 1, sizeof(*v));
		v[n].id = db_col_int64(&st, 0);
		v[n].token = db_col_dup(&st, 1);
		v[n].phase = db_col_dup(&st, 2);
		v[n].job_id = db_col_dup(&st, 3);
		n++;
	}
	db_finalize(&st);
	for (i = 0; i < n; i++) {
		const struct slurm_job *j = NULL;

		for (k = 0; k < q->nr && !j; k++)
			if (ours(&q->v[k], key) &&
			    strcmp(comment_token(q->v[k].comment), v[i].token) == 0)
				j = &q->v[k];
		if (j && !*v[i].job_id) {
			struct stmt u;

			if (db_prepare(&ctx->db, &u, "UPDATE feeder SET job_id = :job,"
				       " phase = 'queued', submitted_at = :now WHERE id = :id") == 0) {
				db_bind_text(&u, ":job", j->job_id);
				db_bind_int64(&u, ":now", (long long)time(NULL));
				db_bind_int64(&u, ":id", v[i].id);
				db_step(&u);
				db_finalize(&u);
			}
		} else if (!j && strcmp(v[i].phase, "submitting") == 0) {
			row_exec(ctx, "UPDATE feeder SET phase = 'gone', ended_at = :now,"
				 " result = :text WHERE id = :id", v[i].id,
				 "sbatch gave no job id and Slurm lists none with its token");
		} else if (!j && strcmp(v[i].phase, "queued") == 0) {
			row_exec(ctx, "UPDATE feeder SET phase = 'gone', ended_at = :now,"
				 " result = :text WHERE id = :id", v[i].id,
				 "left the queue without running (cancelled?)");
		} else if (!j && (!self_job || strcmp(v[i].job_id, self_job) != 0)) {
			row_exec(ctx, "UPDATE feeder SET phase = 'failed', ended_at = :now,"
				 " result = :text WHERE id = :id", v[i].id,
				 "ended without a result (killed, or out of time)");
		}
		free(v[i].token);
		free(v[i].phase);
		free(v[i].job_id);
	}
	free(v);
}

/* What the study still has to do, as far as a feeder is concerned. */
struct work {
	struct buf dep;		/* "afterany:A?afterany:B" on the live runs */
	size_t live;		/* live runs (running or pending) */
	int runnable;		/* one runs or will start by itself */
	int ended;		/* one ended that no tick has judged yet */
	int plan;		/* plan entries wait (or autopilot has budget), feeding allowed */
	int fresh;		/* that work, and no feeding has seen it yet (a command that
				 * adds work but feeds nothing: replicate, plan add, auto on):
				 * a feeder now */
};

/* Count job id as live work when squeue lists it unfinished; 1 when it is. */
static int see_job(const struct slurm_jobs *q, const char *id, struct work *w, size_t *ndep)
{
	const struct slurm_job *j = slurm_jobs_find(q, id);

	if (!j || slurm_state_is_final(j->state))
		return 0;
	if (is_running(j) || (j->state == SLURM_STATE_PENDING &&
			      reason_explain(j->reason)->kind == REASON_WAIT))
		w->runnable = 1;
	if ((*ndep)++ < MAX_DEPS)
		buf_addf(&w->dep, "%safterany:%s", w->dep.len ? "?" : "", id);
	return 1;
}

/*
 * Which live runs a feeder waits for, and whether anything else waits. A
 * segmented attempt is also its queued continuation: between the end of
 * segment k and the start line of k+1 the attempt's job is k's, ended.
 */
static int find_work(struct xl_ctx *ctx, const struct slurm_jobs *q,
		     const struct feed_result *fed, struct work *w)
{
	struct attempt *v = NULL;
	struct plan_entry *plan = NULL;
	size_t n = 0, nplan = 0, i, ndep = 0;

	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char *seg = xstrdup(v[i].job_id);
		int live = see_job(q, v[i].job_id, w, &ndep);

		segments_tail(ctx, q, v[i].id, &seg);
		if (strcmp(seg, v[i].job_id) != 0)
			live |= see_job(q, seg, w, &ndep);
		free(seg);
		if ((seg = steps_live_job(ctx, v[i].id, q)) != NULL)	/* a later step */
			live |= see_job(q, seg, w, &ndep);
		w->live += live;
		if (!live && *v[i].job_id)
			w->ended = 1;	/* it ended after this tick's reconcile */
		free(seg);
	}
	attempts_free(v, n);
	if (fed && fed->breaker)
		return 0;	/* the breaker is open: judge what runs, feed nothing */
	if (fed && fed->idle)
		return 0;	/* feeding just found nothing a feeder could do: a person's step */
	if (plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan) < 0)
		return -1;
	w->plan = nplan > 0;
	plan_entries_free(plan, nplan);
	if (!w->plan) {	/* autopilot on, budget left: it proposes the next run */
		struct auto_status as;

		if (autopilot_status(ctx, &as) == 0) {
			w->plan = as.on && !as.stopped;
			auto_status_release(&as);
		}
	}
	w->fresh = w->plan && !fed && !w->live;
	return 0;
}

/* Where feeder output goes, and the directory made. NULL with *cause. */
static char *driver_dir(struct xl_ctx *ctx, char **cause)
{
	char *dir = xasprintf("%s/.xloop/driver", ctx->root);

	if (make_dir(dir, 0700, cause) < 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Write .xloop/driver/feeder.sh: the feeder's whole command. */
static char *write_script(struct xl_ctx *ctx, const char *dir, char **cause)
{
	char *exe = driver_self_exe(cause), *path;
	struct buf b = BUF_INIT;

	if (!exe)
		return NULL;
	path = xasprintf("%s/feeder.sh", dir);
	buf_addf(&b, "#!/bin/sh\n# xloop's feeder for study %s (driver.mode slurm): "
		 "judge, feed, notify,\n# and leave the next feeder; see `xloop driver "
		 "status`. Written by xloop.\nx=", ctx->cfg.study);
	remote_quote(&b, exe);
	buf_adds(&b, "\nr=");
	remote_quote(&b, ctx->root);
	/* a tick that died by a signal (a crash, the OOM killer; Slurm ending
	 * the job ends this shell too) left no next feeder: another tick
	 * repairs what it left, as the next tick would, and leaves one (up
	 * to three more: with lanes one tick judges several runs) */
	buf_adds(&b, "\n\"$x\" -C \"$r\" tick --feeder\nrc=$?\nn=0\n"
		 "while [ \"$rc\" -gt 128 ] && [ \"$n\" -lt 3 ]; do\n"
		 "\techo \"xloop: feeder: its tick died (exit $rc): one more tick\" >&2\n"
		 "\t\"$x\" -C \"$r\" tick --feeder\n\trc=$?\n\tn=$((n + 1))\ndone\n"
		 "exit \"$rc\"\n");
	if (write_file_atomic(path, b.s, b.len, 0700, cause) < 0)
		FREE_AND_NULL(path);
	buf_release(&b);
	free(exe);
	return path;
}

/*
 * Keep feeder.log small: past DRIVER_LOG_MAX bytes it becomes feeder.log.1
 * (the one before goes), and the next feeder starts a new one.
 */
static void rotate_log(const char *out)
{
	struct stat st;
	char *old;

	if (stat(out, &st) < 0 || st.st_size <= DRIVER_LOG_MAX)
		return;
	old = xasprintf("%s.1", out);
	if (rename(out, old) < 0)
		warning("unable to rotate '%s': %s", out, strerror(errno));
	free(old);
}

/* The feeder's sbatch request (its strings point into the arguments). */
static void feeder_request(struct xl_ctx *ctx, struct slurm_submit *req, const char *script,
			   const char *out, const char *comment, const char *const *env)
{
	memset(req, 0, sizeof(*req));
	req->script = script;
	req->job_name = DRIVER_JOB_NAME;
	req->output = out;
	req->append = 1;
	req->comment = comment;
	req->partition = *ctx->cfg.driver.partition ? ctx->cfg.driver.partition :
		ctx->cfg.partition;
	req->cpus = 1;
	req->mem = DRIVER_MEM;
	req->time = DRIVER_TIME;
	req->account = ctx->cfg.account;
	req->qos = *ctx->cfg.driver.qos ? ctx->cfg.driver.qos : ctx->cfg.qos;
	req->workdir = ctx->root;
	req->env = env;
}

/* What a feeder's or watchdog's sbatch needs, all malloc'd but token and env. */
struct feeder_job {
	char token[27];		/* the study_token; a watchdog's is prefixed in comment and env */
	char *script;		/* .xloop/driver/feeder.sh, written */
	char *comment;		/* DRIVER_COMMENT STUDY:KEY:TOKEN */
	char *out;		/* its log, rotated */
	char *envtok;		/* XLOOP_FEEDER_TOKEN=TOKEN */
	const char *env[2];
};

/*
 * The preamble of submit_feeder and submit_watchdog: the driver's
 * directory and script, a fresh token (after prefix: "" or
 * DRIVER_WATCH_PREFIX) in the comment and the environment, the log
 * (log_name in .xloop/driver/) rotated. 0, or -1 with *cause.
 */
static int feeder_job_prepare(struct xl_ctx *ctx, const char *key, const char *prefix,
			      const char *log_name, struct feeder_job *fj, char **cause)
{
	char *dir = driver_dir(ctx, cause);

	memset(fj, 0, sizeof(*fj));
	if (!dir)
		return -1;
	fj->script = write_script(ctx, dir, cause);
	if (!fj->script) {
		free(dir);
		return -1;
	}
	study_token(fj->token);
	fj->comment = xasprintf("%s%s:%s:%s%s", DRIVER_COMMENT, ctx->cfg.study, key, prefix,
				fj->token);
	fj->out = xasprintf("%s/%s", dir, log_name);
	rotate_log(fj->out);
	fj->envtok = xasprintf("XLOOP_FEEDER_TOKEN=%s%s", prefix, fj->token);
	fj->env[0] = fj->envtok;
	fj->env[1] = NULL;
	free(dir);
	return 0;
}

/* Free what feeder_job_prepare made. */
static void feeder_job_release(struct feeder_job *fj)
{
	free(fj->script);
	free(fj->comment);
	free(fj->out);
	free(fj->envtok);
	memset(fj, 0, sizeof(*fj));
}

/*
 * Queue the study's watchdog: the feeder's script, its own log
 * (.xloop/driver/watchdog.log), name and a token "watch-..." in the comment, --begin=now+XLOOP_DRIVER_WATCH_SECS.
 * No DB row: squeue under the lock is its record (driver_ensure keeps one
 * and cancels any other). 0 or an exit code.
 */
static int submit_watchdog(struct xl_ctx *ctx, struct slurm *s, const char *key, char **cause)
{
	struct feeder_job fj;
	struct slurm_submit req;
	char *begin;
	long long job;
	int rc, ambiguous = 0;

	/* its own log: a feeder's may be what fails */
	if (feeder_job_prepare(ctx, key, DRIVER_WATCH_PREFIX, "watchdog.log", &fj, cause) < 0)
		return XL_ERR;
	begin = xasprintf("now+%lld", watch_secs());
	feeder_request(ctx, &req, fj.script, fj.out, fj.comment, fj.env);
	req.job_name = DRIVER_WATCH_NAME;
	req.begin = begin;
	rc = slurm_sbatch(s, &req, &job, &ambiguous, cause);
	if (rc && ambiguous)	/* the next driver_ensure sees it, or queues one */
		rc = 0;
	free(begin);
	feeder_job_release(&fj);
	return rc;
}

/* Record the intent, sbatch the feeder, record its id. 0 or an exit code. */
static int submit_feeder(struct xl_ctx *ctx, struct slurm *s, const char *key,
			 const struct work *w, char **cause)
{
	struct feeder_job fj;
	char *begin = NULL;
	struct slurm_submit req;
	struct stmt q;
	long long id = 0, job;
	int rc, ambiguous = 0, tries;

	if (feeder_job_prepare(ctx, key, "", "feeder.log", &fj, cause) < 0)
		return XL_ERR;
	if (w->ended)	/* soon: a run waits to be judged */
		begin = xasprintf("now+%d", DRIVER_JUDGE_SECS);
	else if (w->fresh && !w->dep.len)	/* work nobody fed yet: feed it now */
		begin = xstrdup("now");
	else if (!w->runnable || !w->dep.len)
		begin = xasprintf("now+%lld", retry_secs());
	/* the intent first: a crash after it leaves a row to find by token */
	if (db_prepare(&ctx->db, &q, "INSERT INTO feeder (study, token, phase, waits,"
		       " intent_at) VALUES (:study, :token, 'submitting', :waits, :now)") < 0) {
		rc = XL_ERR;
		*cause = xstrdup("unable to record the feeder in the state DB");
		goto out;
	}
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_text(&q, ":token", fj.token);
	db_bind_text(&q, ":waits", begin ? begin : w->dep.s);
	db_bind_int64(&q, ":now", (long long)time(NULL));
	rc = db_step(&q) == SQLITE_DONE ? 0 : XL_ERR;
	db_finalize(&q);
	if (rc) {
		*cause = xstrdup("unable to record the feeder in the state DB");
		goto out;
	}
	id = sqlite3_last_insert_rowid(ctx->db.h);
	crash_point("feeder-after-intent");
	for (tries = 0; tries < 2; tries++) {
		feeder_request(ctx, &req, fj.script, fj.out, fj.comment, fj.env);
		req.dependency = begin ? NULL : w->dep.s;
		req.begin = begin;
		rc = slurm_sbatch(s, &req, &job, &ambiguous, cause);
		if (rc == 0 || ambiguous || begin)
			break;
		/* a run ended between squeue and sbatch ("Job dependency
		 * problem"): start at once instead, it has work */
		FREE_AND_NULL(*cause);
		begin = xstrdup("now");
		row_exec(ctx, "UPDATE feeder SET waits = :text WHERE id = :id", id, begin);
	}
	crash_point("feeder-after-sbatch");
	if (rc == 0) {
		char jid[24];

		xsnprintf(jid, sizeof(jid), "%lld", job);
		if (db_prepare(&ctx->db, &q, "UPDATE feeder SET job_id = :job, phase = 'queued',"
			       " submitted_at = :now WHERE id = :id") == 0) {
			db_bind_text(&q, ":job", jid);
			db_bind_int64(&q, ":now", (long long)time(NULL));
			db_bind_int64(&q, ":id", id);
			db_step(&q);
			db_finalize(&q);
		}
	} else if (!ambiguous) {
		row_exec(ctx, "UPDATE feeder SET phase = 'failed', ended_at = :now,"
			 " result = :text WHERE id = :id", id, *cause);
	}
out:
	free(begin);
	feeder_job_release(&fj);
	return rc;
}

/* Cancel a pending feeder and mark its row. */
static void cancel_feeder(struct xl_ctx *ctx, struct slurm *s, const struct slurm_job *j,
			  const char *why)
{
	char *cause = NULL;
	struct stmt q;

	if (slurm_scancel(s, j->job_id, &cause) != 0) {
		warning("unable to cancel feeder job %s: %s", j->job_id, cause);
		free(cause);
		return;
	}
	if (db_prepare(&ctx->db, &q, "UPDATE feeder SET phase = 'gone', ended_at = :now,"
		       " result = :why WHERE token = :token AND phase IN ('submitting',"
		       " 'queued')") == 0) {
		db_bind_int64(&q, ":now", (long long)time(NULL));
		db_bind_text(&q, ":why", why);
		db_bind_text(&q, ":token", comment_token(j->comment));
		db_step(&q);
		db_finalize(&q);
	}
}

/* What the row of the feeder with this token waits for (malloc'd, "" unknown). */
static char *row_waits(struct xl_ctx *ctx, const char *token)
{
	struct stmt q;
	char *w = NULL;

	if (db_prepare(&ctx->db, &q, "SELECT coalesce(waits, '') FROM feeder"
		       " WHERE token = :token") == 0) {
		db_bind_text(&q, ":token", token);
		if (db_step(&q) == SQLITE_ROW)
			w = db_col_dup(&q, 0);
		db_finalize(&q);
	}
	return w ? w : xstrdup("");
}

/* Keep exactly one feeder pending while there is work. */
int driver_ensure(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
		  const char *self_job, int *submitted, char **cause)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct work w;
	const struct slurm_job *keep = NULL, *watch = NULL;
	char key[13];
	size_t i;
	int rc;

	if (strcmp(ctx->cfg.driver.mode, "slurm") != 0)
		return 0;
	study_key(ctx, key);
	rc = slurm_squeue_mine(s, &q, cause);
	if (rc)
		return rc;
	memset(&w, 0, sizeof(w));
	buf_init(&w.dep);
	sync_rows(ctx, &q, key, self_job);
	if (find_work(ctx, &q, fed, &w) < 0) {
		*cause = xstrdup("unable to read the state DB");
		rc = XL_ERR;
		goto out;
	}
	for (i = 0; i < q.nr; i++) {
		const struct slurm_job *j = &q.v[i];

		if (!ours(j, key) || j->state != SLURM_STATE_PENDING ||
		    (self_job && strcmp(j->job_id, self_job) == 0))
			continue;
		if (is_watch(j)) {	/* one watchdog while there is work, the oldest */
			if (!w.live && !w.plan && !w.ended)
				cancel_feeder(ctx, s, j, "cancelled: nothing left to watch");
			else if (watch || is_held(j))
				cancel_feeder(ctx, s, j, "cancelled: another watchdog waits");
			else
				watch = j;
			continue;
		}
		if (!w.live && !w.plan && !w.ended) {
			cancel_feeder(ctx, s, j, "cancelled: nothing left to feed");
			continue;
		}
		if (is_held(j)) {	/* it would wait forever */
			cancel_feeder(ctx, s, j, reason_slurm_held(j->reason) ?
				      "replaced: Slurm held it after a failed launch" :
				      "replaced: it was held (scontrol hold)");
			continue;
		}
		if (keep) {	/* never two: the newest goes */
			cancel_feeder(ctx, s, j, "cancelled: another feeder waits");
			continue;
		}
		keep = j;
		if (w.ended || (w.runnable && w.dep.len)) {
			char *waits = row_waits(ctx, comment_token(j->comment));

			/* a run ended unjudged while this one waits for others: one
			 * soon instead; a feeder waiting for a time while runs run:
			 * one behind them instead */
			if (w.ended && starts_with(waits, "afterany:")) {
				cancel_feeder(ctx, s, j, "replaced: a run ended unjudged, a "
					      "feeder starts soon now");
				keep = NULL;
			} else if (!w.ended && !starts_with(waits, "afterany:")) {
				cancel_feeder(ctx, s, j, "replaced: runs started, a feeder waits "
					      "behind them now");
				keep = NULL;
			}
			free(waits);
		}
	}
	if (!keep && (w.live || w.plan || w.ended)) {
		rc = submit_feeder(ctx, s, key, &w, cause);
		if (rc == 0 && submitted)
			*submitted = 1;
	}
	/* the watchdog: should this feeder be lost, held or fail at launch */
	if (rc == 0 && !watch && (w.live || w.plan || w.ended))
		rc = submit_watchdog(ctx, s, key, cause);
out:
	buf_release(&w.dep);
	slurm_jobs_release(&q);
	return rc;
}

/* 1 when q lists a feeder of the study (key) waiting, other than self_job. */
static int successor_listed(const struct slurm_jobs *q, const char *key, const char *self_job)
{
	size_t i;

	for (i = 0; i < q->nr; i++)
		if (ours(&q->v[i], key) && !is_watch(&q->v[i]) &&
		    !slurm_state_is_final(q->v[i].state) &&
		    (!self_job || strcmp(q->v[i].job_id, self_job) != 0))
			return 1;
	return 0;
}

/* Check, without the lock, that the feeder just submitted is still there. */
void driver_check_successor(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
			    const char *self_job)
{
	char key[13];
	int checks;

	if (ctx->lock_fd < 0)
		return;
	study_key(ctx, key);
	for (checks = 0; checks < DRIVER_SURVIVAL_CHECKS; checks++) {
		struct slurm_jobs q = SLURM_JOBS_INIT;
		char *cause = NULL;
		int listed = 0, submitted = 0, rc;

		flock(ctx->lock_fd, LOCK_UN);
		sleep(driver_saved_secs());	/* then squeue finds it, or it was lost */
		if (slurm_squeue_mine(s, &q, &cause) == 0)
			listed = successor_listed(&q, key, self_job);
		slurm_jobs_release(&q);
		FREE_AND_NULL(cause);
		if (listed)
			return;
		/* the lock again (its fd still open), waiting as a feeder does */
		if (lock_wait(ctx->lock_fd, driver_lock_wait_secs() * 1000) != 0) {
			warning("feeder: the next feeder may be lost and another xloop holds "
				"the study's lock; the next `xloop next` or `xloop tick` "
				"queues one");
			return;
		}
		rc = driver_ensure(ctx, s, fed, self_job, &submitted, &cause);
		if (rc)
			warning("no feeder job could be queued: %s", cause ? cause : "?");
		free(cause);
		if (rc || !submitted)
			return;
	}
}

/* Whether a feeder of the study is alive: 1, 0 with *why, or an exit code. */
int driver_watch_check(struct xl_ctx *ctx, struct slurm *s, const char *self_job, char **why,
		       char **cause)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	const struct slurm_job *held = NULL;
	char key[13];
	size_t i;
	int rc, alive = 0;

	study_key(ctx, key);
	rc = slurm_squeue_mine(s, &q, cause);
	if (rc)
		return rc;
	for (i = 0; i < q.nr && !alive; i++) {
		const struct slurm_job *j = &q.v[i];

		if (!ours(j, key) || is_watch(j) || slurm_state_is_final(j->state) ||
		    (self_job && strcmp(j->job_id, self_job) == 0))
			continue;
		if (j->state == SLURM_STATE_PENDING && is_held(j))
			held = j;
		else
			alive = 1;
	}
	if (!alive)
		*why = held ? xasprintf("feeder job %s is held (%s)", held->job_id, held->reason) :
			xstrdup("no feeder of the study is queued (cancelled, lost, or it "
				"failed at launch)");
	slurm_jobs_release(&q);
	return alive;
}

/* driver_ensure for commands that only warn when it fails. */
void driver_keep_feeder(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
			const char *self_job)
{
	char *cause = NULL;

	if (driver_ensure(ctx, s, fed, self_job, NULL, &cause) != 0)
		warning("no feeder job could be queued (driver.mode slurm): %s; the next "
			"`xloop next` or `xloop tick` tries again", cause ? cause : "?");
	free(cause);
}

/*
 * After a local edit that adds work (plan add, auto on): with driver.mode
 * slurm, driver_keep_feeder (none while the breaker is open: nothing would
 * be fed); no Slurm call in the other modes.
 */
void driver_after_edit(struct xl_ctx *ctx)
{
	struct feed_result fed;
	struct slurm s;

	if (strcmp(ctx->cfg.driver.mode, "slurm") != 0)
		return;
	memset(&fed, 0, sizeof(fed));
	fed.breaker = breaker_open_reason(ctx);
	slurm_init(&s);
	driver_keep_feeder(ctx, &s, fed.breaker ? &fed : NULL, NULL);
	free(fed.breaker);
}

/* The study's watchdog in q, a pending one first (a running one queues the next), or NULL. */
const struct slurm_job *driver_find_watch(struct xl_ctx *ctx, const struct slurm_jobs *q)
{
	const struct slurm_job *found = NULL;
	char key[13];
	size_t i;

	study_key(ctx, key);
	for (i = 0; i < q->nr; i++) {
		const struct slurm_job *j = &q->v[i];

		if (!ours(j, key) || !is_watch(j) || slurm_state_is_final(j->state))
			continue;
		if (j->state == SLURM_STATE_PENDING)
			return j;
		found = j;
	}
	return found;
}

/* Find the feeder row by job id or token; 0 when none. */
static long long find_row(struct xl_ctx *ctx, const char *job_id, const char *token)
{
	struct stmt q;
	long long id = 0;

	if (db_prepare(&ctx->db, &q, "SELECT id FROM feeder WHERE study = :study AND"
		       " (token = :token OR job_id = :job) ORDER BY id DESC LIMIT 1") < 0)
		return 0;
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_text(&q, ":token", token ? token : "");
	db_bind_text(&q, ":job", job_id ? job_id : "");
	if (db_step(&q) == SQLITE_ROW)
		id = db_col_int64(&q, 0);
	db_finalize(&q);
	return id;
}

/* The feeder's tick began. */
void driver_feeder_started(struct xl_ctx *ctx, const char *job_id, const char *token)
{
	long long id = find_row(ctx, job_id, token);
	struct stmt q;

	if (!id) {	/* a feeder xloop has no row of (a copied study): one now */
		if (db_prepare(&ctx->db, &q, "INSERT INTO feeder (study, token, phase, job_id,"
			       " intent_at) VALUES (:study, :token, 'running', :job, :now)") < 0)
			return;
		db_bind_text(&q, ":study", ctx->cfg.study);
		db_bind_text(&q, ":token", token && *token ? token : job_id ? job_id : "?");
		db_bind_text(&q, ":job", job_id ? job_id : "");
		db_bind_int64(&q, ":now", (long long)time(NULL));
		db_step(&q);
		db_finalize(&q);
		id = find_row(ctx, job_id, token);
	}
	if (db_prepare(&ctx->db, &q, "UPDATE feeder SET phase = 'running', started_at = :now,"
		       " job_id = coalesce(nullif(:job, ''), job_id) WHERE id = :id") < 0)
		return;
	db_bind_int64(&q, ":now", (long long)time(NULL));
	db_bind_text(&q, ":job", job_id ? job_id : "");
	db_bind_int64(&q, ":id", id);
	db_step(&q);
	db_finalize(&q);
}

/* The feeder's tick ended. */
void driver_feeder_ended(struct xl_ctx *ctx, const char *job_id, const char *token,
			 int ok, const char *result)
{
	long long id = find_row(ctx, job_id, token);

	if (id)
		row_exec(ctx, ok ? "UPDATE feeder SET phase = 'done', ended_at = :now,"
			 " result = :text WHERE id = :id" :
			 "UPDATE feeder SET phase = 'failed', ended_at = :now,"
			 " result = :text WHERE id = :id", id, result);
}

/* The feeder waiting now and the last one that ran, from the DB. */
int driver_status_read(struct xl_ctx *ctx, struct driver_status *st)
{
	struct stmt q;

	memset(st, 0, sizeof(*st));
	st->mode = ctx->cfg.driver.mode;
	if (db_prepare(&ctx->db, &q, "SELECT coalesce(job_id, ''), coalesce(waits, '')"
		       " FROM feeder WHERE study = :study AND phase IN ('submitting', 'queued')"
		       " ORDER BY id DESC LIMIT 1") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	if (db_step(&q) == SQLITE_ROW) {
		st->job_id = db_col_dup(&q, 0);
		st->waits = db_col_dup(&q, 1);
	}
	db_finalize(&q);
	if (db_prepare(&ctx->db, &q, "SELECT coalesce(job_id, ''), phase, coalesce(result, ''),"
		       " started_at FROM feeder WHERE study = :study AND started_at IS NOT NULL"
		       " ORDER BY started_at DESC, id DESC LIMIT 1") < 0) {
		driver_status_release(st);
		return -1;
	}
	db_bind_text(&q, ":study", ctx->cfg.study);
	if (db_step(&q) == SQLITE_ROW) {
		st->last_job = db_col_dup(&q, 0);
		st->last_phase = db_col_dup(&q, 1);
		st->last_result = db_col_dup(&q, 2);
		st->last_at = db_col_int64(&q, 3);
	}
	db_finalize(&q);
	if (!st->job_id)
		st->job_id = xstrdup("");
	if (!st->waits)
		st->waits = xstrdup("");
	if (!st->last_job) {
		st->last_job = xstrdup("");
		st->last_phase = xstrdup("");
		st->last_result = xstrdup("");
	}
	return 0;
}

/* feed_who's answer with driver.mode slurm: 1 with *text and *last_at. */
int driver_who(struct xl_ctx *ctx, char **text, long long *last_at)
{
	struct driver_status st;

	if (strcmp(ctx->cfg.driver.mode, "slurm") != 0 || driver_status_read(ctx, &st) < 0)
		return 0;
	if (*st.job_id)
		*text = xasprintf("a Slurm feeder job (id %s) waits behind the runs and keeps the "
				  "queue fed (`xloop driver status`)", st.job_id);
	else
		*text = xstrdup("no Slurm feeder job waits: nothing is left to feed (driver.mode "
				"slurm: the next `xloop next` queues one when there is work)");
	if (st.last_at)
		*last_at = st.last_at;
	driver_status_release(&st);
	return 1;
}

/* Free the status strings. */
void driver_status_release(struct driver_status *st)
{
	free(st->job_id);
	free(st->waits);
	free(st->last_job);
	free(st->last_phase);
	free(st->last_result);
	memset(st, 0, sizeof(*st));
}
