/* The steps of a sweep: one array per later step, each task aftercorr on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/fsutil.h"
#include "jobs/jobenv.h"
#include "jobsh/directives.h"
#include "jobsh/jobsh.h"
#include "runs.h"
#include "jobs/steps.h"
#include "jobs/steps-array.h"
#include "study.h"

/* 1 when token is "<prefix>_<index>". */
int steps_array_token(const char *token)
{
	return strchr(token, '_') != NULL;
}

/* Record every later step of the tasks, one token per step array. */
int steps_array_intents(struct xl_ctx *ctx, const struct steps_array_task *t, size_t n,
			char (*tokens)[27], size_t *nsteps)
{
	size_t i, k;

	*nsteps = 0;

	for (k = 0; k < STEPS_MAX; k++)
		study_token(tokens[k]);
	for (i = 0; i < n; i++) {
		char *names[STEPS_MAX];
		size_t ns = 0;
		int rc = 0;

		if (steps_names(&ctx->db, t[i].run_id, names, &ns) < 0)
			return -1;
		if (ns > *nsteps)
			*nsteps = ns;
		for (k = 0; k < ns; k++) {
			char *log = step_log_path(ctx->root, ctx->cfg.study, t[i].tag, t[i].n,
						  names[k]);
			char *tok = xasprintf("%s_%lld", tokens[k], t[i].idx);
			struct stmt q;

			if (rc == 0 && db_prepare(&ctx->db, &q, "INSERT INTO step_job (attempt_id,"
						  " k, try, name, token, phase, log_path, intent_at)"
						  " VALUES (:a, :k, 1, :name, :token, 'submitting',"
						  " :log, :now)") == 0) {
				db_bind_int64(&q, ":a", t[i].attempt_id);
				db_bind_int64(&q, ":k", (long long)k + 2);
				db_bind_text(&q, ":name", names[k]);
				db_bind_text(&q, ":token", tok);
				db_bind_text(&q, ":log", log);
				db_bind_int64(&q, ":now", time(NULL));
				rc = db_run(&q);
			} else {
				rc = -1;
			}
			free(tok);
			free(log);
			free(names[k]);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* The job of q carrying step array token "<prefix>_<index>", or NULL. */
const struct slurm_job *steps_array_find(const struct slurm_jobs *q, const char *token)
{
	size_t i, len = strcspn(token, "_");
	const char *idx = token[len] ? token + len + 1 : "";

	for (i = 0; q && i < q->nr; i++) {
		const char *c = q->v[i].comment;
		size_t l = strlen(c);

		if (l > len && c[l - len - 1] == ':' && strncmp(c + l - len, token, len) == 0 &&
		    strcmp(q->v[i].array_task_id, idx) == 0)
			return &q->v[i];
	}
	return NULL;
}

/* One waiting task of a step array. */
struct task_row {
	long long id, k, n, idx;
	char *name, *tag, *mem, *time_, *prev, *sweep;
};

static void task_rows_free(struct task_row *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].tag);
		free(v[i].mem);
		free(v[i].time_);
		free(v[i].prev);
		free(v[i].sweep);
	}
	free(v);
}

/* The job of an attempt's step k-1 (the attempt's own for k 2), "" when none yet. */
static char *prev_job(struct db *db, long long attempt_id, long long k, const char *own)
{
	struct stmt q;
	char *job = NULL;

	if (k == 2)
		return xstrdup(own);
	if (db_prepare(db, &q, "SELECT job_id FROM step_job WHERE attempt_id = :a AND k = :k"
		       " AND phase IN ('submitted', 'ended') ORDER BY try DESC LIMIT 1") == 0) {
		db_bind_int64(&q, ":a", attempt_id);
		db_bind_int64(&q, ":k", k - 1);
		if (db_step(&q) == SQLITE_ROW)
			job = db_col_dup(&q, 0);
		db_finalize(&q);
	}
	return job ? job : xstrdup("");
}

/* The rows of step array prefix that still wait for their sbatch. */
static int task_rows_load(struct db *db, const char *prefix, struct task_row **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(db, &q, "SELECT s.id, s.k, s.name, s.token, a.n, coalesce(a.job_id, ''),"
		       " r.tag, coalesce(a.mem, ''), coalesce(a.time_limit, ''), a.id,"
		       " coalesce(sw.name, '')"
		       " FROM step_job s JOIN attempt a ON a.id = s.attempt_id"
		       " JOIN run r ON r.id = a.run_id LEFT JOIN sweep_task t ON t.run_id = r.id"
		       " LEFT JOIN sweep sw ON sw.id = t.sweep_id WHERE s.token >= :lo AND s.token < :hi"
		       " AND s.phase = 'submitting' ORDER BY s.id") < 0)
		return -1;
	{
		char *lo = xasprintf("%s_", prefix), *hi = xasprintf("%s`", prefix);

		db_bind_text(&q, ":lo", lo);	/* '`' follows '_' */
		db_bind_text(&q, ":hi", hi);
		free(lo);
		free(hi);
	}
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		struct task_row *r;
		const char *tok = db_col_text(&q, 3);

		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		r = &(*v)[(*n)++];
		r->id = db_col_int64(&q, 0);
		r->k = db_col_int64(&q, 1);
		r->name = db_col_dup(&q, 2);
		r->idx = strtoll(tok + strcspn(tok, "_") + 1, NULL, 10);
		r->n = db_col_int64(&q, 4);
		r->tag = db_col_dup(&q, 6);
		r->mem = db_col_dup(&q, 7);
		r->time_ = db_col_dup(&q, 8);
		r->sweep = db_col_dup(&q, 10);
		r->prev = prev_job(db, db_col_int64(&q, 9), r->k, db_col_text(&q, 5));
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* "0-3,5": the tasks' indexes, ranges folded (v in ascending index order). */
static char *spec_of(const struct task_row *v, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i = 0, j;

	while (i < n) {
		for (j = i; j + 1 < n && v[j + 1].idx == v[j].idx + 1; j++)
			;
		buf_addf(&b, "%s%lld", b.len ? "," : "", v[i].idx);
		if (j > i)
			buf_addf(&b, "%s%lld", j == i + 1 ? "," : "-", v[j].idx);
		i = j + 1;
	}
	return buf_detach(&b, NULL);
}

/* The array's batch script: the index picks the run and attempt, then execs NAME.sh. */
static char *array_script(struct xl_ctx *ctx, const struct task_row *v, size_t n,
			  const char *header)
{
	struct buf b = BUF_INIT;
	char *q;
	size_t i;

	buf_addf(&b, "#!/bin/bash\n# written by xloop: step '%s' of a sweep of study %s\n%s",
		 v[0].name, ctx->cfg.study, header);
	buf_adds(&b, "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n");
	for (i = 0; i < n; i++) {
		char rid[RUN_IDENT_LEN + 1];

		if (runs_ident(&ctx->db, ctx->cfg.study, v[i].tag, rid) < 0)
			BUG("run '%s' is not in the DB", v[i].tag);
		buf_addf(&b, "%lld) tag=%s n=%lld rid=%s ;;\n", v[i].idx, v[i].tag, v[i].n, rid);
	}
	buf_adds(&b, "*) echo \"xloop: array index '${SLURM_ARRAY_TASK_ID:-}' is not "
		 "part of this submission\" >&2; exit 64 ;;\nesac\n");
	q = jobsh_quote(ctx->root);
	buf_addf(&b, "export XLOOP_ROOT=%s\n", q);
	free(q);
	q = jobsh_quote(ctx->cfg.study);
	buf_addf(&b, "export XLOOP_STUDY=%s XLOOP_TAG=\"$tag\" XLOOP_ATTEMPT=\"$n\" "
		 "XLOOP_STEP=%s XLOOP_SEGMENT=1\n", q, v[0].name);
	free(q);
	buf_adds(&b, "export XLOOP_RUN_DIR=\"$XLOOP_ROOT/runs/$XLOOP_STUDY/$tag\"\n");
	jobenv_shell(&ctx->cfg, &b);
	buf_addf(&b, "exec >\"$XLOOP_RUN_DIR/slurm/attempt$n.%s.out\" 2>&1\n"
		 "exec \"$XLOOP_RUN_DIR/%s.sh\"\n", v[0].name, v[0].name);
	return buf_detach(&b, NULL);
}

/* Mark rows [0, n) of v submit_failed with why. */
static void fail_rows(struct xl_ctx *ctx, const struct task_row *v, size_t n, const char *why)
{
	size_t i;

	for (i = 0; i < n; i++)
		db_exec_row(&ctx->db, "UPDATE step_job SET phase = 'submit_failed', state = :text"
			    " WHERE id = :id", v[i].id, why, 0);
}

/* sbatch the rows of one step array that wait on the same array before. */
static int submit_rows(struct xl_ctx *ctx, struct slurm *s, const char *prefix,
		       struct task_row *v, size_t n, char **cause)
{
	const struct config *c = &ctx->cfg;
	char *first = step_path(ctx->root, c->study, v[0].tag, v[0].name);
	char *dir = path_join(ctx->root, ".xloop/steps"), *path, *script, *spec, *dep, *comment;
	char *out, *arr = xstrndup(v[0].prev, strcspn(v[0].prev, "_"));
	char *name = xasprintf("%s.%s", v[0].sweep, v[0].name);
	struct buf text = BUF_INIT, header = BUF_INIT;
	struct slurm_submit req;
	long long id = 0;
	int rc, err, ambiguous = 0;
	size_t i;

	path = xasprintf("%s/%s.sh", dir, prefix);
	out = xasprintf("%s/%%A_%%a.out", dir);
	if (study_read_script(first, &text, &err, cause) < 0) {
		rc = XL_DATAERR;
		fail_rows(ctx, v, n, *cause);
		goto out;
	}
	sbatch_header_lines(text.s, &header);
	script = array_script(ctx, v, n, header.s ? header.s : "");
	rc = make_dir(dir, 0700, cause) < 0 ||
		write_file_atomic(path, script, strlen(script), 0700, cause) < 0 ? XL_ERR : 0;
	free(script);
	if (rc)
		goto out;
	spec = spec_of(v, n);
	dep = xasprintf("aftercorr:%s", arr);
	comment = xasprintf("xloop:%s/sweep-step:%s:%s", c->study, v[0].name, prefix);
	steps_fill_request(c, ctx->root, text.s, v[0].mem, v[0].time_, 0, dep, &req);
	req.kill_invalid_dep = 1;
	req.script = path;
	req.job_name = name;	/* "SWEEP.STEP" */
	req.output = out;
	req.comment = comment;
	req.array = spec;
	crash_point("steps-array-before-sbatch");
	rc = slurm_sbatch(s, &req, &id, &ambiguous, cause);
	crash_point("steps-array-after-sbatch");
	if (rc == 0) {
		for (i = 0; i < n; i++) {
			struct stmt q;
			char *job = xasprintf("%lld_%lld", id, v[i].idx);

			if (db_prepare(&ctx->db, &q, "UPDATE step_job SET phase = 'submitted',"
				       " job_id = :j, after_job = :after, submitted_at = :now"
				       " WHERE id = :id") == 0) {
				db_bind_text(&q, ":j", job);
				db_bind_text(&q, ":after", v[i].prev);
				db_bind_int64(&q, ":now", time(NULL));
				db_bind_int64(&q, ":id", v[i].id);
				db_run(&q);
			}
			free(job);
		}
	} else if (!ambiguous && !s->refused_by) {
		fail_rows(ctx, v, n, *cause);
	}
	free(spec);
	free(dep);
	free(comment);
out:
	buf_release(&text);
	buf_release(&header);
	free(first);
	free(dir);
	free(path);
	free(out);
	free(arr);
	free(name);
	return rc;
}

/* Submit what waits of step array prefix, once each task's step before has a job. */
int steps_array_submit(struct xl_ctx *ctx, struct slurm *s, const char *token, char **cause)
{
	char *prefix = xstrndup(token, strcspn(token, "_"));
	struct task_row *v;
	size_t n, i, m = 0;
	int rc = 0;

	if (task_rows_load(&ctx->db, prefix, &v, &n) < 0) {
		free(prefix);
		*cause = xasprintf("unable to read the step intents of a sweep");
		return XL_ERR;
	}
	for (i = 0; i < n; i++)
		if (!*v[i].prev)
			goto out;	/* a step before has no job yet: wait */
	/* those on the first one's array before (a task retried alone is not) */
	for (i = 0; i < n; i++) {
		size_t l = strcspn(v[0].prev, "_");

		if (strncmp(v[i].prev, v[0].prev, l) == 0 && v[i].prev[l] == '_') {
			struct task_row t = v[m];

			v[m++] = v[i];
			v[i] = t;
		}
	}
	if (m)
		rc = submit_rows(ctx, s, prefix, v, m, cause);
out:
	task_rows_free(v, n);
	free(prefix);
	return rc;
}
