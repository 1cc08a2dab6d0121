/* Segments: one attempt as several jobs that continue from a checkpoint. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "lib/fsutil.h"
#include "jobs/jobenv.h"
#include "loop.h"
#include "jobs/segments.h"
#include "jobs/segments-impl.h"
#include "jobs/steps.h"
#include "stages/nodes.h"
#include "study.h"

/* Record segment 1 with the attempt's token. */
int segments_insert_first(struct xl_ctx *ctx, long long attempt_id, const char *token,
			  long long max)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "INSERT INTO segment (attempt_id, k, max, token, state,"
		       " intent_at) VALUES (:att, 1, :max, :token, 'current', :now)") < 0)
		return -1;
	db_bind_int64(&q, ":att", attempt_id);
	db_bind_int64(&q, ":max", max);
	db_bind_text(&q, ":token", token);
	db_bind_int64(&q, ":now", time(NULL));
	return db_run(&q);
}

void seg_release(struct seg *g)
{
	free(g->token);
	free(g->job_id);
	free(g->state);
	memset(g, 0, sizeof(*g));
}

#define SEG_COLS "id, k, try, max, intent_at, coalesce(started_at, 0), token," \
		 " coalesce(job_id, ''), state"

static void seg_read(struct stmt *q, struct seg *g)
{
	g->id = db_col_int64(q, 0);
	g->k = db_col_int64(q, 1);
	g->try_ = db_col_int64(q, 2);
	g->max = db_col_int64(q, 3);
	g->intent_at = db_col_int64(q, 4);
	g->started_at = db_col_int64(q, 5);
	g->token = db_col_dup(q, 6);
	g->job_id = db_col_dup(q, 7);
	g->state = db_col_dup(q, 8);
}

/* The newest try of segment k of an attempt (k 0: the current one). 0, 1 none, -1. */
int seg_get(struct xl_ctx *ctx, long long attempt_id, long long k, struct seg *g)
{
	struct stmt q;
	int rc;

	memset(g, 0, sizeof(*g));
	if (db_prepare(&ctx->db, &q, k ? "SELECT " SEG_COLS " FROM segment WHERE"
		       " attempt_id = :att AND k = :k ORDER BY try DESC LIMIT 1" :
		       "SELECT " SEG_COLS " FROM segment WHERE attempt_id = :att"
		       " AND state = 'current' ORDER BY k DESC LIMIT 1") < 0)
		return -1;
	db_bind_int64(&q, ":att", attempt_id);
	if (k)
		db_bind_int64(&q, ":k", k);
	rc = db_step(&q);
	if (rc == SQLITE_ROW)
		seg_read(&q, g);
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

void seg_att_release(struct seg_att *t)
{
	free(t->tag);
	free(t->token);
	free(t->log);
	free(t->partition);
	free(t->gres);
	free(t->mem);
	free(t->time_);
	free(t->over);
	memset(t, 0, sizeof(*t));
}

int seg_att_get(struct xl_ctx *ctx, long long attempt_id, struct seg_att *t)
{
	struct stmt q;
	int rc;

	memset(t, 0, sizeof(*t));
	if (db_prepare(&ctx->db, &q, "SELECT r.tag, t.token, t.log_path, coalesce(t.partition,"
		       " ''), coalesce(t.gres, ''), coalesce(t.mem, ''), coalesce(t.time_limit,"
		       " ''), t.n, coalesce(t.cpus, 0), coalesce(t.overrides, '') FROM attempt t"
		       " JOIN run r ON r.id = t.run_id WHERE t.id = :id") < 0)
		return -1;
	db_bind_int64(&q, ":id", attempt_id);
	rc = db_step(&q);
	if (rc == SQLITE_ROW) {
		t->tag = db_col_dup(&q, 0);
		t->token = db_col_dup(&q, 1);
		t->log = db_col_dup(&q, 2);
		t->partition = db_col_dup(&q, 3);
		t->gres = db_col_dup(&q, 4);
		t->mem = db_col_dup(&q, 5);
		t->time_ = db_col_dup(&q, 6);
		t->n = db_col_int64(&q, 7);
		t->cpus = db_col_int64(&q, 8);
		t->over = db_col_dup(&q, 9);
	}
	db_finalize(&q);
	return rc == SQLITE_ROW ? 0 : -1;
}

/*
 * The nodes a next segment of attempt t must not run on (malloc'd, or NULL):
 * lost, those that failed the segment before it (NODE_FAIL, BOOT_FAIL, on a
 * partition of more nodes), the attempt's own --exclude and the avoided ones.
 */
char *seg_exclude(struct xl_ctx *ctx, const struct seg_att *t, const char *lost)
{
	long long nodes = runs_partition_nodes(&ctx->db, *t->partition ? t->partition :
					       ctx->cfg.partition);
	const char *own = t->over ? strstr(t->over, "--exclude=") : NULL;
	struct buf extra = BUF_INIT;
	char *x;

	if (lost && *lost && nodes > 1)
		buf_adds(&extra, lost);
	if (own) {
		own += strlen("--exclude=");
		buf_addf(&extra, "%s%.*s", extra.len ? "," : "", (int)strcspn(own, " "), own);
	}
	x = runs_exclude_nodes(&ctx->db, ctx->cfg.study, extra.len ? extra.s : NULL, time(NULL),
			       nodes);
	buf_release(&extra);
	return x;
}

/*
 * The pending jobs (an array as a whole) of the study's unjudged attempts
 * whose after_job is `after`, each once. *ids malloc'd.
 */
static size_t pending_behind(struct xl_ctx *ctx, const struct slurm_jobs *q, const char *after,
			     char ***ids)
{
	struct stmt st;
	size_t n = 0, k;

	*ids = NULL;
	if (db_prepare(&ctx->db, &st, "SELECT DISTINCT job_id FROM attempt WHERE"
		       " after_job = :from AND verdict IS NULL AND job_id IS NOT NULL"
		       " AND job_id != ''") < 0)
		return 0;
	db_bind_text(&st, ":from", after);
	while (db_step(&st) == SQLITE_ROW) {
		const char *id = db_col_text(&st, 0);
		size_t len = strcspn(id, "_");	/* an array as a whole */
		int keep = 1, pending = 0;

		for (k = 0; k < n; k++)
			keep &= strlen((*ids)[k]) != len || strncmp((*ids)[k], id, len) != 0;
		for (k = 0; q && keep && k < q->nr; k++)
			if ((strncmp(q->v[k].job_id, id, len) == 0 && !q->v[k].job_id[len]) ||
			    (strncmp(q->v[k].array_job_id, id, len) == 0 &&
			     !q->v[k].array_job_id[len]))
				pending |= q->v[k].state == SLURM_STATE_PENDING;
		if (keep && pending) {
			*ids = xreallocarray(*ids, n + 1, sizeof(**ids));
			(*ids)[n++] = xstrndup(id, len);
		}
	}
	db_finalize(&st);
	return n;
}

/*
 * The array whose task ran segment 1 of the attempt (a sweep's task), or
 * NULL. Its continuations are plain jobs of their own.
 */
static char *first_array(struct xl_ctx *ctx, long long attempt_id)
{
	struct stmt st;
	char *arr = NULL;

	if (db_prepare(&ctx->db, &st, "SELECT job_id FROM segment WHERE attempt_id = :att"
		       " AND k = 1 AND job_id LIKE '%\\_%' ESCAPE '\\' ORDER BY try DESC"
		       " LIMIT 1") < 0)
		return NULL;
	db_bind_int64(&st, ":att", attempt_id);
	if (db_step(&st) == SQLITE_ROW)
		arr = xstrndup(db_col_text(&st, 0), strcspn(db_col_text(&st, 0), "_"));
	db_finalize(&st);
	return arr;
}

/*
 * "afterany:ARR:C1:C2...": the array and the live continuations of its
 * tasks, what a run queued behind a segmented sweep waits for.
 */
static char *array_dependency(struct xl_ctx *ctx, const struct slurm_jobs *q, const char *arr)
{
	struct buf b = BUF_INIT;
	struct stmt st;

	buf_addf(&b, "afterany:%s", arr);
	if (db_prepare(&ctx->db, &st, "SELECT DISTINCT job_id FROM segment WHERE state IN"
		       " ('queued', 'current') AND job_id NOT LIKE '%\\_%' ESCAPE '\\' AND"
		       " attempt_id IN (SELECT attempt_id FROM segment WHERE k = 1 AND job_id"
		       " LIKE :arr || '\\_%' ESCAPE '\\') ORDER BY id") < 0)
		return buf_detach(&b, NULL);
	db_bind_text(&st, ":arr", arr);
	while (db_step(&st) == SQLITE_ROW) {
		const struct slurm_job *j = q ? slurm_jobs_find(q, db_col_text(&st, 0)) : NULL;

		/* not in q at all: queued after q was read */
		if (!j || !slurm_state_is_final(j->state))
			buf_addf(&b, ":%s", db_col_text(&st, 0));
	}
	db_finalize(&st);
	return buf_detach(&b, NULL);
}

/*
 * Move the study's pending jobs chained onto `from` (their attempts'
 * after_job) onto `to`, the continuation of attempt_id: the line goes on
 * after it. Runs queued behind a segmented sweep wait for the array and
 * every live continuation of its tasks (their after_job stays the array).
 */
static void rechain(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
		    long long attempt_id, const char *from, const char *to)
{
	char *dep = xasprintf("afterany:%s", to), **ids, *arr = first_array(ctx, attempt_id);
	size_t n = pending_behind(ctx, q, from, &ids), i;

	for (i = 0; i < n; i++) {
		char *cause = NULL;
		struct stmt u;

		if (slurm_scontrol_update(s, ids[i], "Dependency", dep, &cause) != 0)
			warning("job %s still waits for job %s, not its continuation %s: %s",
				ids[i], from, to, cause ? cause : "scontrol failed");
		else if (db_prepare(&ctx->db, &u, "UPDATE attempt SET after_job = :to WHERE"
				    " after_job = :from AND verdict IS NULL AND (job_id = :id"
				    " OR job_id LIKE :id || '\\_%' ESCAPE '\\')") == 0) {
			db_bind_text(&u, ":to", to);
			db_bind_text(&u, ":from", from);
			db_bind_text(&u, ":id", ids[i]);
			db_step(&u);
			db_finalize(&u);
		}
		free(cause);
		free(ids[i]);
	}
	free(ids);
	free(dep);
	if (!arr)
		return;
	dep = array_dependency(ctx, q, arr);
	n = pending_behind(ctx, q, arr, &ids);
	for (i = 0; i < n; i++) {
		char *cause = NULL;

		if (slurm_scontrol_update(s, ids[i], "Dependency", dep, &cause) != 0)
			warning("job %s waits for sweep array %s but not its continuation %s: %s",
				ids[i], arr, to, cause ? cause : "scontrol failed");
		free(cause);
		free(ids[i]);
	}
	free(ids);
	free(dep);
	free(arr);
}

/*
 * Queue segment k of the attempt behind job `after` (intent, sbatch,
 * record), try `try_`, away from seg_exclude's nodes (lost: `after`'s).
 * 0, or -1 (the intent stays for the next tick). While `after` runs, k is
 * held: it starts only once the job behind it made a checkpoint (its
 * wrapper releases it then; reconcile when the wrapper could not), so a
 * segment that saved nothing starts nothing.
 */
static int queue_segment(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			 long long attempt_id, long long k, long long try_, long long max,
			 const char *after, const char *lost)
{
	const struct config *c = &ctx->cfg;
	struct seg_att t;
	struct slurm_submit req;
	struct jobenv env;
	struct jobenv_job jj = { NULL, NULL, 0, STEP_FIRST, k };
	char rid[RUN_IDENT_LEN + 1];
	char token[27], *cause = NULL, *comment = NULL, *dep = NULL, *script, *excl = NULL;
	long long segid = 0, id;
	int ambiguous = 0, rc = -1, i;
	struct stmt st;

	if (seg_att_get(ctx, attempt_id, &t) < 0)
		return -1;
	script = segments_wrapper_path(ctx, t.token);
	memset(&env, 0, sizeof(env));
	if (!path_exists(script)) {
		warning("segment %lld of %s attempt %lld not queued: its wrapper %s is gone",
			k, t.tag, t.n, script);
		goto out;
	}
	/* the intent first: a crash after it never submits this segment twice */
	study_token(token);
	if (db_begin_write(&ctx->db) < 0)
		goto out;
	if (db_prepare(&ctx->db, &st, "INSERT INTO segment (attempt_id, k, try, max, token,"
		       " state, intent_at) VALUES (:att, :k, :try, :max, :token, 'submitting',"
		       " :now)") < 0) {
		db_rollback(&ctx->db);
		goto out;
	}
	db_bind_int64(&st, ":att", attempt_id);
	db_bind_int64(&st, ":k", k);
	db_bind_int64(&st, ":try", try_);
	db_bind_int64(&st, ":max", max);
	db_bind_text(&st, ":token", token);
	db_bind_int64(&st, ":now", time(NULL));
	i = db_step(&st);
	db_finalize(&st);
	if (i != SQLITE_DONE) {
		db_rollback(&ctx->db);
		goto out;
	}
	segid = sqlite3_last_insert_rowid(ctx->db.h);
	if (db_commit(&ctx->db) < 0)
		goto out;
	crash_point("segment-after-intent");

	if (runs_ident(&ctx->db, c->study, t.tag, rid) < 0)
		BUG("run '%s' is not in the DB", t.tag);
	jj.tag = t.tag;
	jj.run_id = rid;
	jj.attempt = t.n;
	jobenv_init(&env, c, ctx->root, &jj);
	comment = xasprintf("xloop:%s/%s#%lld.%lld:%s", c->study, t.tag, t.n, k, token);
	dep = xasprintf("afternotok:%s", after);
	slurm_fill_request(&ctx->cfg, ctx->root, &req, t.mem, t.time_, dep);
	req.partition = t.partition;
	req.gres = t.gres;
	req.cpus = t.cpus;
	req.script = script;
	req.job_name = t.tag;
	req.output = t.log;
	req.comment = comment;
	req.env = jobenv_vec(&env);
	req.append = 1;
	req.kill_invalid_dep = 1;
	excl = seg_exclude(ctx, &t, lost);
	req.exclude = excl;
	{
		const struct slurm_job *aj = q ? slurm_jobs_find(q, after) : NULL;

		/* not in q: `after` ended (reconcile decided to go on) */
		req.hold = !q || (aj && !slurm_state_is_final(aj->state));
	}
	{
		char *sig = segments_signal(c);

		req.signal = sig;
		rc = slurm_sbatch(s, &req, &id, &ambiguous, &cause);
		free(sig);
	}
	crash_point("segment-after-sbatch");
	if (rc == 0) {
		char *jid = xasprintf("%lld", id);

		db_exec_row(&ctx->db, "UPDATE segment SET job_id = :text, state = 'queued'"
			    " WHERE id = :id", segid, jid, 0);
		crash_point("segment-after-record");
		rechain(ctx, s, q, attempt_id, after, jid);
		free(jid);
	} else {
		if (!ambiguous)
			db_exec_row(&ctx->db, "UPDATE segment SET state = 'submit_failed',"
				    " outcome = :text WHERE id = :id", segid,
				    cause ? cause : "sbatch failed", 0);
		warning("segment %lld of %s attempt %lld not queued: %s", k, t.tag, t.n,
			cause ? cause : "sbatch failed");
		rc = -1;
	}
out:
	jobenv_release(&env);
	free(cause);
	free(comment);
	free(dep);
	free(excl);
	free(script);
	seg_att_release(&t);
	return rc;
}

/*
 * The job carrying token in scontrol's answer (*sc, release it), which
 * also shows jobs that ended: 0 with *j (NULL when Slurm has none), -1
 * when scontrol failed (nothing is known then).
 */
static int scontrol_by_token(struct slurm *s, const char *token, struct slurm_jobs *sc,
			     const struct slurm_job **j)
{
	char *cause = NULL;
	int unknown = 0;

	*j = NULL;
	if (slurm_scontrol_job(s, NULL, sc, &unknown, &cause) != 0) {
		free(cause);
		return -1;
	}
	*j = slurm_jobs_find_token(sc, token);
	return 0;
}

/*
 * Make sure segment cur->k + 1 is queued (or adopted after a crash) while
 * cur runs: at most one job per (attempt, segment, try); a new one away
 * from the nodes `lost` (cur's, when they failed it; NULL).
 */
void seg_keep_next(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
		   long long attempt_id, const struct seg *cur, const char *cur_job,
		   const char *lost)
{
	struct seg nx;
	int rc;

	if (cur->k >= cur->max || !*cur_job)
		return;
	if (strchr(cur_job, '_')) {
		/* a sweep's task: its continuation, a plain job of its own, is
		 * queued once the task runs (not for every task of a throttled
		 * array at once); a task that ended first gets it then */
		const struct slurm_job *j = q ? slurm_jobs_find(q, cur_job) : NULL;

		if (!q || (j && j->state == SLURM_STATE_PENDING))
			return;
	}
	rc = seg_get(ctx, attempt_id, cur->k + 1, &nx);
	if (rc < 0)
		return;
	if (rc == 1) {
		queue_segment(ctx, s, q, attempt_id, cur->k + 1, 1, cur->max, cur_job, lost);
		return;
	}
	if (strcmp(nx.state, "submitting") == 0) {
		struct slurm_jobs sc = { 0 };
		const struct slurm_job *j = slurm_jobs_find_token(q, nx.token);
		int gone = 0;

		/* squeue shows no job that ended: scontrol still does (MinJobAge) */
		if (!j && q && time(NULL) - nx.intent_at >= attempts_orphan_secs())
			gone = !scontrol_by_token(s, nx.token, &sc, &j);
		if (j) {
			/* sbatch answered but the answer was never recorded: adopt it */
			db_exec_row(&ctx->db, "UPDATE segment SET job_id = :text, state = 'queued'"
				    " WHERE id = :id", nx.id, j->job_id, 0);
			loop_event(ctx, "repaired", 0, attempt_id, "a segment left in "
				   "'submitting' was found by its token");
			if (!slurm_state_is_final(j->state))
				rechain(ctx, s, q, attempt_id, cur_job, j->job_id);
		} else if (gone) {
			db_exec_row(&ctx->db, "UPDATE segment SET state = 'submit_failed', outcome ="
				    " 'sbatch never answered and no job carries its token'"
				    " WHERE id = :id", nx.id, NULL, 0);
			queue_segment(ctx, s, q, attempt_id, nx.k, nx.try_ + 1, cur->max,
				      cur_job, lost);
		}
		slurm_jobs_release(&sc);
	} else if (strcmp(nx.state, "submit_failed") == 0 && nx.try_ < SEG_TRIES_MAX) {
		queue_segment(ctx, s, q, attempt_id, nx.k, nx.try_ + 1, cur->max, cur_job, lost);
	}
	seg_release(&nx);
}

/* Record segment 1's job and queue segment 2. */
void segments_started(struct xl_ctx *ctx, struct slurm *s, long long attempt_id,
		      const char *job_id, char **tail)
{
	struct seg cur;
	struct seg nx;

	if (seg_get(ctx, attempt_id, 1, &cur) != 0)
		return;
	db_exec_row(&ctx->db, "UPDATE segment SET job_id = :text WHERE id = :id", cur.id,
		    job_id, 0);
	seg_keep_next(ctx, s, NULL, attempt_id, &cur, job_id, NULL);
	if (seg_get(ctx, attempt_id, 2, &nx) == 0) {
		if (*nx.job_id && tail) {
			free(*tail);
			*tail = xstrdup(nx.job_id);
		}
		seg_release(&nx);
	}
	seg_release(&cur);
}

/* Adopt or queue the next segment of a live attempt. */
void segments_keep_next(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
			const struct attempt *a)
{
	struct seg cur;

	if (seg_get(ctx, a->id, 0, &cur) != 0)
		return;
	if (!*cur.job_id && *a->job_id)
		db_exec_row(&ctx->db, "UPDATE segment SET job_id = :text WHERE id = :id",
			    cur.id, a->job_id, 0);
	seg_keep_next(ctx, s, q, a->id, &cur, a->job_id, NULL);
	seg_release(&cur);
}

/*
 * The newest live queued segment of the attempt, as the chain's tail: one
 * q shows live, or one queued since q was read (its intent not older than
 * q). One q does not show though it was read after the segment was queued
 * is gone (a controller back from an older state lost it): no tail.
 */
void segments_tail(struct xl_ctx *ctx, const struct slurm_jobs *q, long long attempt_id,
		   char **job_id)
{
	struct stmt st;

	if (db_prepare(&ctx->db, &st, "SELECT job_id, intent_at FROM segment WHERE"
		       " attempt_id = :att AND state = 'queued' AND job_id IS NOT NULL"
		       " ORDER BY k DESC") < 0)
		return;
	db_bind_int64(&st, ":att", attempt_id);
	while (db_step(&st) == SQLITE_ROW) {
		const struct slurm_job *j = slurm_jobs_find(q, db_col_text(&st, 0));

		if (j ? !slurm_state_is_final(j->state) : db_col_int64(&st, 1) >= q->read_at) {
			free(*job_id);
			*job_id = xstrdup(db_col_text(&st, 0));
			break;
		}
	}
	db_finalize(&st);
}

/* Map the line's tail onto its attempt's newest queued segment. */
void segments_line_tail(struct xl_ctx *ctx, const struct slurm_jobs *q,
			const struct attempt *v, size_t n, char **tail)
{
	size_t i;

	for (i = 0; **tail && i < n; i++)
		if (strcmp(v[i].job_id, *tail) == 0) {
			segments_tail(ctx, q, v[i].id, tail);
			return;
		}
}

/*
 * Mark the rows after segment k as not needed (outcome why), cancelling
 * each one Slurm shows live (q, or a fresh squeue when q is NULL). A row
 * still 'submitting' (a crash cut off its sbatch's answer) is looked up by
 * its token first: its job is recorded, then cancelled like the others.
 */
void seg_drop_after(struct xl_ctx *ctx, struct slurm *s, const struct slurm_jobs *q,
		    long long attempt_id, long long k, const char *why)
{
	struct slurm_jobs own = SLURM_JOBS_INIT;
	struct stmt st;
	char **jobs = NULL, **tokens = NULL, *cause = NULL;
	long long *ids = NULL;
	size_t n = 0, i;
	int blind = 0;

	if (db_prepare(&ctx->db, &st, "SELECT id, coalesce(job_id, ''), token FROM segment"
		       " WHERE attempt_id = :att AND k > :k AND state IN ('submitting', 'queued')") < 0)
		return;
	db_bind_int64(&st, ":att", attempt_id);
	db_bind_int64(&st, ":k", k);
	while (db_step(&st) == SQLITE_ROW) {
		const char *job = db_col_text(&st, 1), *token = db_col_text(&st, 2);

		jobs = xreallocarray(jobs, n + 1, sizeof(*jobs));
		tokens = xreallocarray(tokens, n + 1, sizeof(*tokens));
		ids = xreallocarray(ids, n + 1, sizeof(*ids));
		ids[n] = db_col_int64(&st, 0);
		tokens[n] = xstrdup(token ? token : "");
		jobs[n++] = xstrdup(job);
	}
	db_finalize(&st);
	if (n && !q) {
		/* without an answer: cancel every one that has a job */
		if (slurm_squeue_mine(s, &own, &cause))
			blind = 1;
		free(cause);
		cause = NULL;
		q = &own;
	}
	for (i = 0; i < n; i++) {
		const struct slurm_job *j;

		/* no job id: a crash cut off its sbatch's answer; its token finds it */
		if (!*jobs[i] && *tokens[i] && (j = slurm_jobs_find_token(q, tokens[i])) != NULL) {
			free(jobs[i]);
			jobs[i] = xstrdup(j->job_id);
			db_exec_row(&ctx->db, "UPDATE segment SET job_id = :text WHERE id = :id",
				    ids[i], j->job_id, 0);
		}
		j = *jobs[i] ? slurm_jobs_find(q, jobs[i]) : NULL;
		/* Slurm drops it itself (kill-on-invalid-dep); this is for the others */
		if ((blind ? *jobs[i] != '\0' : j && !slurm_state_is_final(j->state)) &&
		    slurm_scancel(s, jobs[i], &cause))
			warning("segment job %s not cancelled: %s", jobs[i], cause);
		free(cause);
		cause = NULL;
		free(jobs[i]);
		free(tokens[i]);
	}
	free(jobs);
	free(tokens);
	free(ids);
	slurm_jobs_release(&own);
	if (db_prepare(&ctx->db, &st, "UPDATE segment SET state = 'unneeded', outcome ="
		       " :why WHERE attempt_id = :att AND k > :k AND state IN"
		       " ('submitting', 'queued', 'submit_failed')") == 0) {
		db_bind_text(&st, ":why", why);
		db_bind_int64(&st, ":att", attempt_id);
		db_bind_int64(&st, ":k", k);
		db_step(&st);
		db_finalize(&st);
	}
}

/* Cancel the attempt's queued segments, then mark them unneeded. */
void segments_cancel_queued(struct xl_ctx *ctx, struct slurm *s, long long attempt_id,
			    const char *why)
{
	seg_drop_after(ctx, s, NULL, attempt_id, 0, why);
}

/* The current segment's job and its queued continuation's, "CUR?NEXT". */
char *segments_step_after(struct xl_ctx *ctx, long long attempt_id)
{
	struct seg cur, nx;
	char *after;

	if (seg_get(ctx, attempt_id, 0, &cur) != 0)
		return NULL;
	if (!*cur.job_id) {
		seg_release(&cur);
		return NULL;
	}
	if (seg_get(ctx, attempt_id, cur.k + 1, &nx) == 0 && *nx.job_id &&
	    strcmp(nx.state, "queued") == 0)
		after = xasprintf("%s?%s", cur.job_id, nx.job_id);
	else
		after = xstrdup(cur.job_id);
	seg_release(&nx);
	seg_release(&cur);
	return after;
}

/* The one number a query over attempt :att's segments answers (0 on error). */
long long seg_att_number(struct xl_ctx *ctx, const char *sql, long long attempt_id)
{
	struct stmt st;
	long long n = 0;

	if (db_prepare(&ctx->db, &st, sql) < 0)
		return 0;
	db_bind_int64(&st, ":att", attempt_id);
	if (db_step(&st) == SQLITE_ROW)
		n = db_col_int64(&st, 0);
	db_finalize(&st);
	return n;
}

/* When segment 1 of the attempt started (0: unknown). */
time_t seg_first_start(struct xl_ctx *ctx, long long attempt_id)
{
	return (time_t)seg_att_number(ctx, "SELECT coalesce(min(started_at), 0) FROM segment"
				  " WHERE attempt_id = :att AND started_at > 0", attempt_id);
}

/* The segment line of status and the briefing. */
char *segments_progress(struct xl_ctx *ctx, long long attempt_id)
{
	struct seg cur;
	time_t t, now = time(NULL);
	char *s;

	if (seg_get(ctx, attempt_id, 0, &cur) != 0)
		return NULL;
	t = seg_first_start(ctx, attempt_id);
	if (t <= 0 || cur.k == 1)
		s = xasprintf("segment %lld (at most %lld)", cur.k, cur.max);
	else {
		long long m = (now - t) / 60;

		s = m >= 60 ? xasprintf("segment %lld (at most %lld), %lld h %lld min so far",
					cur.k, cur.max, m / 60, m % 60) :
			      xasprintf("segment %lld (at most %lld), %lld min so far",
					cur.k, cur.max, m);
	}
	seg_release(&cur);
	return s;
}
