/* Creating runs: files, DB, git, in that order. */
#define _GNU_SOURCE	/* memmem */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "best.h"
#include "config.h"
#include "confkey.h"
#include "fsutil.h"
#include "gitops.h"
#include "jobsh.h"
#include "driver.h"
#include "loop.h"
#include "quota.h"
#include "secrets.h"
#include "segments.h"
#include "study.h"
#include "tags.h"

/* The work tree root above root (the nearest directory holding .git), or NULL. */
static char *worktree_prefix(const char *root)
{
	char *cur = xstrdup(root);

	for (;;) {
		char *git = path_join(cur, ".git"), *slash;
		int found = path_exists(git);

		free(git);
		if (found) {
			size_t n = strlen(cur);
			char *prefix;

			if (strcmp(cur, "/") == 0)
				n = 0;
			prefix = xstrdup(root[n] == '/' ? root + n + 1 : root + n);
			free(cur);
			return prefix;
		}
		slash = strrchr(cur, '/');
		if (slash == NULL || slash == cur) {
			free(cur);
			return NULL;
		}
		*slash = '\0';
	}
}

/* Commit some study files. */
int loop_commit(struct xl_ctx *ctx, const char *const *paths, size_t n,
		const char *msg, char oid[41], char **cause)
{
	char *prefix = worktree_prefix(ctx->root);
	const char **rel = xcalloc(n + 1, sizeof(*rel));
	struct gitops_result res;
	size_t i;
	int rc;

	oid[0] = '\0';
	if (prefix == NULL) {
		warning("'%s' is not in a git repository: nothing committed "
			"(the state DB still records everything)", ctx->root);
		free(rel);
		return 0;
	}
	for (i = 0; i < n; i++)
		rel[i] = *prefix ? xasprintf("%s/%s", prefix, paths[i]) : xstrdup(paths[i]);
	memset(&res, 0, sizeof(res));
	rc = gitops_commit_paths(ctx->root, rel, n, msg, &res, cause);
	if (rc == 0)
		memcpy(oid, res.oid, sizeof(res.oid));
	for (i = 0; i < n; i++)
		free((char *)rel[i]);
	free(rel);
	free(prefix);
	return rc;
}

/* Whether committing rel takes no edit of the user's along. */
int loop_matches_head(struct xl_ctx *ctx, const char *rel, const char *text,
		      size_t len, char **cause)
{
	char *prefix = worktree_prefix(ctx->root), *path;
	struct buf b = BUF_INIT;
	int found = 0, rc;

	if (prefix == NULL)
		return 1;	/* no repository: no edit of the user's to keep */
	path = *prefix ? xasprintf("%s/%s", prefix, rel) : xstrdup(rel);
	rc = gitops_file_at_head(ctx->root, path, &b, &found, cause);
	if (rc == 0)
		rc = found && b.len == len && memcmp(b.s, text, len) == 0;
	buf_release(&b);
	free(path);
	free(prefix);
	return rc;
}

/* Check a tag for a new run. */
int loop_check_new_tag(struct xl_ctx *ctx, const char *tag, char **cause)
{
	struct run r;
	char *dir;
	int rc;

	if (!valid_name(tag)) {
		*cause = xasprintf("invalid tag '%s': use 1 to 64 letters, digits, '.', "
				   "'_' or '-', starting with a letter or digit", tag);
		return XL_USAGE;
	}
	rc = runs_get(&ctx->db, ctx->cfg.study, tag, &r);
	if (rc < 0)
		return XL_ERR;
	if (rc == 0) {
		run_release(&r);
		*cause = xasprintf("run '%s' already exists in study '%s'", tag,
				   ctx->cfg.study);
		return XL_DATAERR;
	}
	dir = run_dir(ctx->root, ctx->cfg.study, tag);
	rc = path_exists(dir);
	if (rc)
		*cause = xasprintf("'%s' already exists (not created by xloop?); "
				   "choose another tag", dir);
	free(dir);
	return rc ? XL_DATAERR : 0;
}

/* 1 when the run's latest attempt succeeded. */
int loop_run_proven(struct xl_ctx *ctx, const struct run *r)
{
	struct attempt a;
	int proven;

	if (attempts_latest(&ctx->db, r->id, &a) != 0)
		return 0;
	proven = strcmp(a.verdict, "success") == 0;
	attempt_release(&a);
	return proven;
}

/* Look a run up by tag or "best". */
int loop_find_run(struct xl_ctx *ctx, const char *tag, struct run *r, char **cause)
{
	int rc;

	if (strcmp(tag, "best") == 0) {
		rc = best_get(ctx, r, NULL);
		if (rc == 1)
			*cause = xasprintf("study '%s' has no proven run yet, so there is no "
					   "best: name a parent tag (and --force if it is "
					   "not proven)", ctx->cfg.study);
	} else {
		rc = runs_get(&ctx->db, ctx->cfg.study, tag, r);
		if (rc == 1)
			*cause = xasprintf("no run '%s' in study '%s' ('xloop status' "
					   "lists them)", tag, ctx->cfg.study);
	}
	return rc == 0 ? 0 : rc == 1 ? XL_NOINPUT : XL_ERR;
}

/* The parent of new runs: a run (or the best), proven unless force. */
int loop_find_parent(struct xl_ctx *ctx, const char *from, int force, struct run *r,
		     char **cause)
{
	int rc = loop_find_run(ctx, from, r, cause);

	if (rc == 0 && !force && !loop_run_proven(ctx, r)) {
		*cause = xasprintf("parent '%s' is not proven (its latest attempt did not "
				   "succeed); pass --force to branch from it anyway", r->tag);
		run_release(r);
		rc = XL_DATAERR;
	}
	return rc;
}

/* Remove what a failed creation left (only files it created). */
static void undo_files(const char *dir)
{
	char *p;

	p = path_join(dir, "job.sh");
	unlink(p);
	free(p);
	p = path_join(dir, "cv.json");
	unlink(p);
	free(p);
	p = path_join(dir, "slurm");
	rmdir(p);
	free(p);
	rmdir(dir);
}

static int make_run_dirs(const char *root, const char *study, const char *dir,
			 char **cause)
{
	char *runs = path_join(root, "runs"), *sdir = path_join(runs, study);
	char *slurm = path_join(dir, "slurm");
	int rc = make_dir(runs, 0755, cause);

	if (rc == 0)
		rc = make_dir(sdir, 0755, cause);
	if (rc == 0 && mkdir(dir, 0755) < 0) {
		*cause = xasprintf("unable to create '%s': %s", dir, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && make_dir(slurm, 0755, cause) < 0) {
		rmdir(dir);
		rc = -1;
	}
	free(runs);
	free(sdir);
	free(slurm);
	return rc;
}

/* Create a run: files, DB row, commit. */
int loop_create_run(struct xl_ctx *ctx, struct run *r, const char *text,
		    size_t len, const char *cv_src, double cv_score, char **cause)
{
	const char *study = ctx->cfg.study;
	char *dir = run_dir(ctx->root, study, r->tag);
	char *job = path_join(dir, "job.sh"), *rel[2] = { NULL, NULL }, *msg = NULL;
	struct buf cv = BUF_INIT;
	char oid[41], token[27];
	struct secret_hit secret;
	int rc = XL_ERR, err, has_secret;

	if (cv_src && read_file(cv_src, CV_MAX_BYTES, &cv, &err, cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto out;
	}
	/* job.sh goes into git: a token written into it would be published */
	has_secret = secrets_scan(text, &secret) > 0;
	if (has_secret) {
		if (!ctx->allow_secret) {
			*cause = xasprintf("job.sh line %d holds what looks like %s; git would "
					   "publish it. Read it at run time instead, from the "
					   "environment (\"$HF_TOKEN\") or a 0600 file "
					   "(\"$(cat ~/.config/hf_token)\"). --allow-secret "
					   "commits it anyway", secret.line, secret.what);
			rc = XL_DATAERR;
			goto out;
		}
		warning("COMMITTING A SECRET: job.sh line %d holds what looks like %s "
			"(--allow-secret); it is in git history from now on", secret.line,
			secret.what);
	}
	if (make_run_dirs(ctx->root, study, dir, cause) < 0)
		goto out;
	if (write_file_atomic(job, text, len, 0755, cause) < 0)
		goto undo;
	if (cv_src) {
		char *cvp = path_join(dir, "cv.json");
		int w = write_file_atomic(cvp, cv.s, cv.len, 0644, cause);

		free(cvp);
		if (w < 0)
			goto undo;
	}
	if (db_begin_write(&ctx->db) < 0) {
		*cause = xasprintf("the state DB is busy; try again");
		rc = XL_TEMPFAIL;
		goto undo;
	}
	if (r->config == NULL || !*r->config) {
		char key[65], *why = NULL;

		free(r->config);
		free(r->config_key);
		r->config = NULL;
		r->config_key = NULL;
		if (confkey_config(text, len, &r->config, &why) == 0) {
			confkey_key(r->config, ctx->cfg.search.seed, key);
			r->config_key = xstrdup(key);
		}
		free(why);
	}
	if (runs_insert(&ctx->db, r) < 0)
		goto rollback;
	if (has_secret) {
		char *d = xasprintf("job.sh line %d holds what looks like %s; committed "
				    "with --allow-secret", secret.line, secret.what);
		int bad = loop_event(ctx, "secret-allowed", r->id, 0, d) < 0;

		free(d);
		if (bad)
			goto rollback;
	}
	if (cv_src) {
		struct attempt a;

		memset(&a, 0, sizeof(a));
		study_token(token);
		a.run_id = r->id;
		a.n = 0;
		a.token = token;
		a.phase = "adopted";
		a.log_path = "";
		a.intent_at = time(NULL);
		a.verdict = "success";
		a.verdict_reason = "adopted with a hand-run cv.json";
		a.has_score = 1;
		a.score = cv_score;
		if (attempts_insert(&ctx->db, &a) < 0)
			goto rollback;
	}
	if (db_commit(&ctx->db) < 0) {
		*cause = xasprintf("unable to record run '%s' in the state DB", r->tag);
		goto undo;
	}

	/* the run exists now; git is the record, not the truth */
	rel[0] = xasprintf("runs/%s/%s/job.sh", study, r->tag);
	if (cv_src)	/* the proof of a proven run goes with it */
		rel[1] = xasprintf("runs/%s/%s/cv.json", study, r->tag);
	if (r->parent_id)
		msg = xasprintf("xloop: new %s/%s from %s: %s\n\nOne change: %s=%s "
				"(was %s).%s%s\n", study, r->tag, r->parent_tag, r->var,
				r->var, r->new_value, r->old_value,
				r->note && *r->note ? "\n\n" : "", r->note ? r->note : "");
	else
		msg = xasprintf("xloop: adopt %s/%s\n", study, r->tag);
	if (has_secret) {
		char *m = xasprintf("%s\nWARNING: committed with --allow-secret: line %d "
				    "holds what looks like %s.\n", msg, secret.line, secret.what);

		free(msg);
		msg = m;
	}
	if (loop_commit(ctx, (const char *const *)rel, cv_src ? 2 : 1, msg, oid, cause) < 0) {
		warning("run '%s' was created but not committed: %s", r->tag, *cause);
		FREE_AND_NULL(*cause);
	} else if (*oid) {
		struct stmt q;

		if (db_prepare(&ctx->db, &q, "UPDATE run SET commit_id = :c WHERE id = :id") == 0) {
			db_bind_text(&q, ":c", oid);
			db_bind_int64(&q, ":id", r->id);
			db_step(&q);
			db_finalize(&q);
		}
		free(r->commit_id);
		r->commit_id = xstrdup(oid);
	}
	rc = XL_OK;
	goto out;
rollback:
	db_rollback(&ctx->db);
	if (*cause == NULL)
		*cause = xasprintf("unable to record run '%s' in the state DB", r->tag);
undo:
	undo_files(dir);
out:
	buf_release(&cv);
	free(rel[0]);
	free(rel[1]);
	free(msg);
	free(job);
	free(dir);
	return rc;
}

/* Free a submission's result. */
void submit_result_release(struct submit_result *res)
{
	free(res->job_id);
	free(res->log_path);
	free(res->after);
	free(res->tail);
	memset(res, 0, sizeof(*res));
}

/* 1 when a live attempt of v other than job's own waits for job (its array). */
static int waited_for(const struct slurm_jobs *q, const struct attempt *v, size_t n,
		      const char *job)
{
	size_t i, len = strcspn(job, "_");

	for (i = 0; i < n; i++) {
		size_t own = strcspn(v[i].job_id, "_");
		const struct slurm_job *j;

		if (strcspn(v[i].after_job, "_") != len ||
		    strncmp(v[i].after_job, job, len) != 0 ||
		    (own == len && strncmp(v[i].job_id, job, len) == 0))
			continue;
		j = slurm_jobs_find(q, v[i].job_id);
		if (j && !slurm_state_is_final(j->state))
			return 1;
	}
	return 0;
}

/* The end of the line among live attempts v (see loop.h). */
char *loop_line_tail(const struct slurm_jobs *q, const struct attempt *v, size_t n)
{
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = n; i-- > 0;) {
			const struct slurm_job *j = *v[i].job_id ?
				slurm_jobs_find(q, v[i].job_id) : NULL;

			if (j && !slurm_state_is_final(j->state) &&
			    (pass || !waited_for(q, v, n, v[i].job_id)))
				return xstrndup(v[i].job_id, strcspn(v[i].job_id, "_"));
		}
	return xstrdup("");
}

/* The end of the line of our unfinished attempts that squeue still lists. */
int loop_last_live_job(struct xl_ctx *ctx, struct slurm *s, char **job_id,
		       char **cause)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt *v = NULL;
	size_t n = 0;
	int rc;

	*job_id = xstrdup("");
	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return XL_ERR;
	if (n == 0 && !ctx->cfg.chain_any_user)
		return 0;
	rc = slurm_squeue_mine(s, &q, cause);
	if (rc) {
		attempts_free(v, n);
		return rc;
	}
	if (ctx->cfg.chain_any_user) {
		/* studies share the GPU in turn: behind the newest job of the user */
		free(*job_id);
		*job_id = loop_newest_in_partition(&q, ctx->cfg.partition);
		n = 0;
	}
	if (!**job_id) {
		free(*job_id);
		*job_id = loop_line_tail(&q, v, n);
		segments_line_tail(ctx, &q, v, n, job_id);
	}
	slurm_jobs_release(&q);
	attempts_free(v, n);
	return 0;
}

/* The live job of q in partition with the highest id ("" when none). */
char *loop_newest_in_partition(const struct slurm_jobs *q, const char *partition)
{
	const struct slurm_job *best = NULL;
	size_t i;

	for (i = 0; i < q->nr; i++) {
		const struct slurm_job *j = &q->v[i];

		if (slurm_state_is_final(j->state) || strcmp(j->partition, partition) != 0 ||
		    driver_is_feeder_comment(j->comment))
			continue;	/* a feeder is never a chain target */
		if (!best || j->id > best->id)
			best = j;
	}
	return xstrdup(best ? best->job_id : "");
}

/* The largest value of key among records, as an integer; -1 when none. */
static long long max_field(const struct slurm_records *recs, const char *key,
			   const char *filter_key, const char *filter_has)
{
	long long best = -1, v;
	const char *errstr;
	size_t i;

	for (i = 0; i < recs->nr; i++) {
		const char *val = slurm_record_get(&recs->v[i], key);
		const char *f = filter_key ? slurm_record_get(&recs->v[i], filter_key) : NULL;

		if (filter_key && (!f || !slurm_list_has(f, filter_has)))
			continue;
		if (val && parse_ll(val, 0, LLONG_MAX, &v, &errstr) == 0 && v > best)
			best = v;
	}
	return best;
}

/*
 * Check the request against the partition's MaxTime and its nodes'
 * RealMemory: a job over either would wait forever.
 */
static int preflight_limits(struct slurm *s, const char *partition, const char *time,
			    int time_from_flag, const char *mem, int mem_from_flag,
			    long long cpus, struct part_limits *lim, char **cause)
{
	struct slurm_records part = SLURM_RECORDS_INIT, nodes = SLURM_RECORDS_INIT;
	const char *maxtime;
	long long max_secs = -1, real;
	int unknown, rc;

	rc = slurm_scontrol_show(s, "partition", partition, &part, &unknown, cause);
	if (rc)
		goto out;
	if (unknown || part.nr == 0) {
		*cause = xasprintf("partition '%s' does not exist (xloop.json "
				   "slurm.partition; 'sinfo -s' lists them)", partition);
		rc = XL_CONFIG;
		goto out;
	}
	maxtime = slurm_record_get(&part.v[0], "MaxTime");
	if (maxtime && slurm_parse_duration(maxtime, &max_secs, NULL) == 0 && max_secs > 0)
		lim->max_secs = max_secs;
	if (lim->max_secs > 0 && config_time_secs(time) > max_secs) {
		*cause = xasprintf("--time %s is longer than partition '%s' allows "
				   "(MaxTime=%s): Slurm would leave the job pending "
				   "forever (PartitionTimeLimit); lower %s", time,
				   partition, maxtime, time_from_flag ? "--time" :
				   "resources.time in xloop.json");
		rc = time_from_flag ? XL_DATAERR : XL_CONFIG;
		goto out;
	}
	rc = slurm_scontrol_show(s, "node", NULL, &nodes, &unknown, cause);
	if (rc)
		goto out;
	real = max_field(&nodes, "CPUTot", "Partitions", partition);
	if (real > 0 && cpus > real) {
		*cause = xasprintf("resources.cpus %lld is more than any node of partition "
				   "'%s' has (CPUTot=%lld): the job could never start "
				   "(PartitionConfig); lower it in xloop.json", cpus,
				   partition, real);
		rc = XL_CONFIG;
		goto out;
	}
	real = max_field(&nodes, "RealMemory", "Partitions", partition);
	if (real > 0)
		lim->real_mb = real;
	if (real > 0 && config_mem_mb(mem) > real) {
		*cause = xasprintf("--mem %s is more than any node of partition '%s' has "
				   "(RealMemory=%lldM): the job could never start; "
				   "lower %s", mem, partition, real,
				   mem_from_flag ? "--mem" : "resources.mem in xloop.json");
		rc = mem_from_flag ? XL_DATAERR : XL_CONFIG;
	}
out:
	slurm_records_release(&part);
	slurm_records_release(&nodes);
	return rc;
}

/* The first attempt number with neither a DB row nor a log file. */
int loop_next_attempt(struct xl_ctx *ctx, const struct run *r, long long *n)
{
	struct attempt a;
	int rc = attempts_latest(&ctx->db, r->id, &a);

	if (rc < 0)
		return -1;
	*n = rc == 0 ? a.n + 1 : 1;
	if (rc == 0)
		attempt_release(&a);
	for (;; (*n)++) {
		char *log = run_log_path(ctx->root, ctx->cfg.study, r->tag, *n);
		int taken = path_exists(log);

		free(log);
		if (!taken)
			return 0;
	}
}

/* The kv key caching a partition limit ("maxtime", "realmem"). */
static char *limit_key(const char *what, const char *partition)
{
	return xasprintf("limit.%s.%s", what, partition);
}

/* Check the resources against the partition, remembering its limits. */
int loop_preflight(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		   char **cause)
{
	const struct config *c = &ctx->cfg;
	struct part_limits lim = { -1, -1 };
	int rc = preflight_limits(s, c->partition, o->time ? o->time : c->res.time,
				  o->time != NULL, o->mem ? o->mem : c->res.mem,
				  o->mem != NULL, c->res.cpus, &lim, cause);
	char *k;

	if (lim.max_secs > 0) {
		k = limit_key("maxtime", c->partition);
		db_kv_set(&ctx->db, k, lim.max_secs);
		free(k);
	}
	if (lim.real_mb > 0) {
		k = limit_key("realmem", c->partition);
		db_kv_set(&ctx->db, k, lim.real_mb);
		free(k);
	}
	return rc;
}

/* The partition's limits as the last preflight saw them (-1: unknown). */
void loop_known_limits(struct xl_ctx *ctx, struct part_limits *lim)
{
	char *k = limit_key("maxtime", ctx->cfg.partition);

	lim->max_secs = db_kv_get(&ctx->db, k);
	free(k);
	k = limit_key("realmem", ctx->cfg.partition);
	lim->real_mb = db_kv_get(&ctx->db, k);
	free(k);
	if (lim->max_secs <= 0)
		lim->max_secs = -1;
	if (lim->real_mb <= 0)
		lim->real_mb = -1;
}

/* Refuse malformed --mem, --time and --after values. */
int loop_check_overrides(const struct submit_opts *o, char **cause)
{
	if (o->mem && !config_valid_mem(o->mem)) {
		*cause = xasprintf("invalid --mem '%s': use a size like 16G or 4000M", o->mem);
		return XL_USAGE;
	}
	if (o->time && !config_valid_time(o->time)) {
		*cause = xasprintf("invalid --time '%s': use Slurm's form, like 2:00:00 "
				   "or 1-00:00:00", o->time);
		return XL_USAGE;
	}
	if (o->after && (!*o->after || strspn(o->after, "0123456789_") != strlen(o->after))) {
		*cause = xasprintf("invalid --after '%s': give a Slurm job id", o->after);
		return XL_USAGE;
	}
	return 0;
}

/* Read a run's job.sh and check it can be submitted; its sha256 into sha. */
int loop_check_script(struct xl_ctx *ctx, const char *tag, struct buf *text,
		      char sha[65], char **cause)
{
	char *job = run_job_path(ctx->root, ctx->cfg.study, tag);
	int err, rc = 0;

	if (study_read_script(job, text, &err, cause) < 0)
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
	else if (access(job, X_OK) < 0) {
		*cause = xasprintf("'%s' is not executable (chmod +x it)", job);
		rc = XL_DATAERR;
	} else if (study_bash_syntax(job, text->s, cause) < 0)
		rc = XL_DATAERR;
	else
		study_sha256(text->s, text->len, sha);
	free(job);
	return rc;
}

/*
 * The job a new submission waits for: --after, else the end of the line
 * (unless --no-chain), "" for none. A live array task "12_3" becomes its
 * array "12", so the chain waits for every task.
 */
int loop_resolve_after(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		       char **after, char **cause)
{
	int rc = 0;

	*after = NULL;
	if (o->after)
		*after = xstrdup(o->after);
	else if (!o->no_chain && (rc = loop_last_live_job(ctx, s, after, cause)) == 0)
		(*after)[strcspn(*after, "_")] = '\0';
	if (!*after)
		*after = xstrdup("");
	return rc;
}

/* "--mem=M --time=D" as recorded on the attempt ("" when none). */
char *loop_overrides_text(const struct submit_opts *o)
{
	struct buf over = BUF_INIT;

	if (o->mem)
		buf_addf(&over, "--mem=%s", o->mem);
	if (o->time)
		buf_addf(&over, "%s--time=%s", over.len ? " " : "", o->time);
	if (o->segments)
		buf_addf(&over, "%s--segments=%s", over.len ? " " : "", o->segments);
	return buf_detach(&over, NULL);
}

/* Preflight, record the intent, run sbatch, record the answer. */
int loop_submit(struct xl_ctx *ctx, struct slurm *s, const struct run *r,
		const struct submit_opts *o, struct submit_result *res, char **cause)
{
	const struct config *c = &ctx->cfg;
	char *job = run_job_path(ctx->root, c->study, r->tag);
	char *dir = run_dir(ctx->root, c->study, r->tag);
	struct buf text = BUF_INIT, env[6];
	const char *mem = o->mem ? o->mem : c->res.mem;
	const char *time_ = o->time ? o->time : c->res.time;
	const char *envp[7];
	struct segments_req sreq = { NULL, NULL };
	long long segs = 0;
	char sha[65], token[27], *comment = NULL, *dep = NULL, *over = NULL;
	struct slurm_submit req;
	struct attempt a;
	long long id;
	int rc, i;

	memset(res, 0, sizeof(*res));
	res->job_id = xstrdup("");
	for (i = 0; i < 6; i++)
		buf_init(&env[i]);

	rc = loop_check_overrides(o, cause);
	if (rc == 0)
		rc = segments_wanted(c, o->segments, time_, o->time != NULL, &segs, cause);
	if (rc == 0)
		rc = loop_check_script(ctx, r->tag, &text, sha, cause);
	if (rc == 0)
		rc = loop_preflight(ctx, s, o, cause);
	if (rc == 0)
		rc = loop_resolve_after(ctx, s, o, &res->after, cause);
	if (!res->after)
		res->after = xstrdup("");
	if (rc)
		goto out;

	/* the intent: from here on a crash leaves a row to reconcile */
	if (db_begin_write(&ctx->db) < 0) {
		*cause = xasprintf("the state DB is busy; try again");
		rc = XL_TEMPFAIL;
		goto out;
	}
	if (loop_next_attempt(ctx, r, &res->n) < 0)
		goto db_fail;
	res->log_path = run_log_path(ctx->root, c->study, r->tag, res->n);
	study_token(token);
	over = loop_overrides_text(o);
	memset(&a, 0, sizeof(a));
	a.run_id = r->id;
	a.n = res->n;
	a.token = token;
	a.phase = "submitting";
	a.log_path = res->log_path;
	a.job_sha256 = sha;
	a.partition = c->partition;
	a.gres = c->res.gres;
	a.cpus = c->res.cpus;
	a.mem = (char *)mem;
	a.time_limit = (char *)time_;
	a.overrides = over;
	a.after_job = res->after;
	a.intent_at = time(NULL);
	a.auto_retry = (char *)o->auto_retry;
	a.lane = o->lane;
	if (attempts_insert(&ctx->db, &a) < 0)
		goto db_fail;
	if (segs && segments_insert_first(ctx, a.id, token, segs) < 0)
		goto db_fail;
	crash_point("submit-in-transaction");
	if (db_commit(&ctx->db) < 0)
		goto db_fail_nocommit;

	crash_point("submit-after-intent");
	comment = xasprintf("xloop:%s/%s#%lld:%s", c->study, r->tag, res->n, token);
	if (*res->after)
		dep = xasprintf("afterany:%s", res->after);
	buf_addf(&env[0], "XLOOP_RUN_DIR=%s", dir);
	buf_addf(&env[1], "XLOOP_TAG=%s", r->tag);
	buf_addf(&env[2], "XLOOP_ATTEMPT=%lld", res->n);
	buf_addf(&env[3], "XLOOP_STUDY=%s", c->study);
	buf_addf(&env[4], "XLOOP_ROOT=%s", ctx->root);
	buf_addf(&env[5], "XLOOP_SEGMENT=1");
	for (i = 0; i < 6; i++)
		envp[i] = env[i].s;
	envp[segs ? 6 : 5] = NULL;
	loop_fill_request(ctx, &req, mem, time_, dep);
	req.script = job;
	req.job_name = r->tag;
	req.output = res->log_path;
	req.comment = comment;
	req.env = envp;
	if (segs && segments_prepare(ctx, r->tag, res->n, token, sha, text.s, segs, &req,
				     &sreq, cause) < 0) {
		attempts_set_submit_failed(&ctx->db, a.id, *cause);
		rc = XL_ERR;
		goto out;
	}
	rc = slurm_sbatch(s, &req, &id, &res->ambiguous, cause);
	crash_point("submit-after-sbatch");
	if (rc == 0) {
		free(res->job_id);
		res->job_id = xasprintf("%lld", id);
		if (attempts_set_submitted(&ctx->db, a.id, res->job_id, time(NULL)) < 0) {
			/* the job runs; the next reconcile finds it by its token */
			*cause = xasprintf("job %s was submitted but could not be recorded; "
					   "'xloop next' will find it by its token", res->job_id);
			rc = XL_TEMPFAIL;
		}
		res->tail = xstrdup(res->job_id);
		if (rc == 0 && segs)
			segments_started(ctx, s, a.id, res->job_id, &res->tail);
	} else if (s->refused_by) {
		/* back-pressure, not a failure: no attempt, no log, no verdict */
		char *why = xasprintf("held back by the Slurm limit %s (sbatch refused the job; "
				      "it is submitted when one of your jobs has ended)",
				      s->refused_by);

		attempts_release_intent(&ctx->db, a.id);
		quota_refused(ctx, s->refused_by);
		free(*cause);
		*cause = why;
		res->limit = s->refused_by;
		free(res->log_path);
		res->log_path = NULL;
	} else if (!res->ambiguous) {
		attempts_set_submit_failed(&ctx->db, a.id, *cause);
	}
	/* ambiguous: the row stays 'submitting' for reconciliation */
	goto out;
db_fail:
	db_rollback(&ctx->db);
db_fail_nocommit:
	*cause = xasprintf("unable to record the attempt in the state DB");
	rc = XL_ERR;
out:
	for (i = 0; i < 6; i++)
		buf_release(&env[i]);
	segments_req_release(&sreq);
	buf_release(&text);
	free(over);
	free(comment);
	free(dep);
	free(job);
	free(dir);
	return rc;
}

/* The parts of an sbatch request that come from xloop.json. */
void loop_fill_request(struct xl_ctx *ctx, struct slurm_submit *req, const char *mem,
		       const char *time_, const char *dependency)
{
	const struct config *c = &ctx->cfg;

	memset(req, 0, sizeof(*req));
	req->partition = c->partition;
	req->gres = c->res.gres;
	req->cpus = c->res.cpus;
	req->mem = mem;
	req->time = time_;
	req->account = c->account;
	req->qos = c->qos;
	req->dependency = dependency;
	req->workdir = ctx->root;
	req->nice = c->nice;
}

/* Append to the decision log and commit it. */
int loop_decide(struct xl_ctx *ctx, const char *entry, const char *evidence,
		const char *msg, char **cause)
{
	return loop_decide_once(ctx, NULL, entry, evidence, msg, cause);
}

/* Whether a "## " line of text contains mark. */
static int heading_has(const char *text, const char *mark)
{
	const char *line = text, *end;
	size_t n = strlen(mark);

	for (; *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if (strncmp(line, "## ", 3) == 0 && memmem(line, (size_t)(end - line), mark, n))
			return 1;
	}
	return 0;
}

/* Append (unless mark's entry is there) and commit. */
int loop_decide_once(struct xl_ctx *ctx, const char *mark, const char *entry,
		     const char *evidence, const char *msg, char **cause)
{
	char *path = path_join(ctx->root, "ops/decisions.md"), *dir, oid[41], *ev;
	size_t n = 1;
	struct buf b = BUF_INIT;
	const char *rel[2] = { "ops/decisions.md", evidence };
	int err, rc = -1;

	dir = path_join(ctx->root, "ops");
	if (make_dir(dir, 0755, cause) < 0)
		goto out;
	if (read_file(path, 64 << 20, &b, &err, cause) < 0) {
		if (err != ENOENT)
			goto out;
		FREE_AND_NULL(*cause);
		buf_adds(&b, "# Decisions\n");
	}
	if (mark && heading_has(b.s, mark))
		goto commit;	/* written before a crash: commit it, once */
	if (b.len && b.s[b.len - 1] != '\n')
		buf_addc(&b, '\n');
	buf_addf(&b, "\n%s", entry);
	if (b.s[b.len - 1] != '\n')
		buf_addc(&b, '\n');
	if (write_file_atomic(path, b.s, b.len, 0644, cause) < 0)
		goto out;
	crash_point("decide-after-write");
commit:
	ev = evidence ? path_join(ctx->root, evidence) : NULL;
	if (ev && path_exists(ev))
		n = 2;	/* a missing cv.json is left alone, not deleted from git */
	free(ev);
	if (loop_commit(ctx, rel, n, msg, oid, cause) < 0) {
		/* the DB is the truth; the entry stays in the file for the next commit */
		warning("decision recorded in ops/decisions.md but not committed: %s", *cause);
		FREE_AND_NULL(*cause);
	}
	rc = 0;
out:
	free(dir);
	free(path);
	buf_release(&b);
	return rc;
}

/* Append to the event journal. */
int loop_event(struct xl_ctx *ctx, const char *kind, long long run_id,
	       long long attempt_id, const char *detail)
{
	struct stmt q;
	int rc;

	if (db_prepare(&ctx->db, &q, "INSERT INTO event (at, kind, run_id, attempt_id,"
		       " detail) VALUES (:at, :kind, :run, :att, :detail)") < 0)
		return -1;
	db_bind_int64(&q, ":at", time(NULL));
	db_bind_text(&q, ":kind", kind);
	if (run_id)
		db_bind_int64(&q, ":run", run_id);
	else
		db_bind_null(&q, ":run");
	if (attempt_id)
		db_bind_int64(&q, ":att", attempt_id);
	else
		db_bind_null(&q, ":att");
	db_bind_text(&q, ":detail", detail);
	rc = db_step(&q);
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Free what loop_new_run made. */
void new_run_release(struct new_run *nr)
{
	run_release(&nr->run);
	free(nr->new_text);
	free(nr->old_raw);
	memset(nr, 0, sizeof(*nr));
}

/* Warn when the parent's script names its own run literally. */
static void warn_literal_paths(struct xl_ctx *ctx, const struct run *parent,
			       const char *text)
{
	char *dir = run_dir(ctx->root, ctx->cfg.study, parent->tag);
	char *rel = xasprintf("runs/%s/%s", ctx->cfg.study, parent->tag);
	int line;

	if (jobsh_mentions(text, dir, &line) || jobsh_mentions(text, rel, &line))
		warning("the parent's job.sh names its own run directory on line %d; "
			"use \"$XLOOP_RUN_DIR\" instead, or the new run will write "
			"into the parent's directory", line);
	free(dir);
	free(rel);
}

/* Make a one-change run. */
int loop_new_run(struct xl_ctx *ctx, const char *tag, const char *from,
		 const char *var, const char *value, const char *note, int force,
		 struct new_run *out, char **cause)
{
	struct buf text = BUF_INIT, nt = BUF_INIT;
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	struct run parent;
	char *ppath = NULL;
	const char *old;
	int rc, err;

	memset(out, 0, sizeof(*out));
	rc = loop_check_new_tag(ctx, tag, cause);
	if (rc)
		return rc;
	rc = loop_find_parent(ctx, from, force, &parent, cause);
	if (rc)
		return rc;
	ppath = run_job_path(ctx->root, ctx->cfg.study, parent.tag);
	if (study_read_script(ppath, &text, &err, cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto out;
	}
	if (jobsh_rewrite(text.s, text.len, var, value, &nt, &ch, cause) < 0) {
		char *c = xasprintf("cannot change %s in %s: %s", var, ppath, *cause);

		free(*cause);
		*cause = c;
		rc = XL_DATAERR;
		goto out;
	}
	if (study_bash_syntax("the new job.sh", nt.s, cause) < 0) {
		rc = XL_DATAERR;
		goto out;
	}
	warn_literal_paths(ctx, &parent, text.s);
	out->run.study = xstrdup(ctx->cfg.study);
	out->run.tag = xstrdup(tag);
	out->run.parent_id = parent.id;
	out->run.parent_tag = xstrdup(parent.tag);
	out->run.var = xstrdup(var);
	old = ch.old_value ? ch.old_value : ch.old_raw;
	out->run.old_value = utf8_clean(old, strlen(old));	/* shown, never used */
	out->run.new_value = xstrdup(value);
	out->run.note = xstrdup(note ? note : "");
	rc = loop_create_run(ctx, &out->run, nt.s, nt.len, NULL, 0, cause);
	if (rc) {
		run_release(&out->run);
		goto out;
	}
	out->line = ch.line;
	out->new_text = xstrdup(ch.new_text);
	out->old_raw = xstrdup(ch.old_raw);
out:
	run_release(&parent);
	jobsh_change_release(&ch);
	buf_release(&text);
	buf_release(&nt);
	free(ppath);
	return rc;
}

/* Refuse a change `new` would refuse, or one made from this parent already. */
int loop_check_change(struct xl_ctx *ctx, const struct run *parent, const char *var,
		      const char *value, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *jv;
	struct buf text = BUF_INIT;
	struct run *kids = NULL;
	size_t nkids = 0, i;
	char *path = run_job_path(ctx->root, ctx->cfg.study, parent->tag), *quoted;
	int rc = XL_DATAERR, err, same;

	if (study_read_script(path, &text, &err, cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto out;
	}
	if (jobsh_scan(text.s, text.len, &vars, cause) < 0 ||
	    jobsh_find(&vars, var, &jv, cause) < 0) {
		char *c = xasprintf("%s (in %s's job.sh)", *cause, parent->tag);

		free(*cause);
		*cause = c;
		goto out;
	}
	quoted = jobsh_quote(value);
	same = jv->value ? value_same(jv->value, value) : strcmp(jv->raw, quoted) == 0;
	free(quoted);
	if (same) {
		*cause = xasprintf("%s is %s in %s's job.sh already: the run would change "
				   "nothing", var, jv->raw, parent->tag);
		goto out;
	}
	if (runs_children(&ctx->db, parent->id, var, &kids, &nkids) < 0) {
		*cause = xasprintf("unable to read the runs of '%s'", parent->tag);
		rc = XL_ERR;
		goto out;
	}
	for (i = 0; i < nkids; i++)
		if (value_same(kids[i].new_value, value)) {
			*cause = xasprintf("%s=%s from %s was made already: run %s (`xloop "
					   "retry %s` runs it again)", var, value, parent->tag,
					   kids[i].tag, kids[i].tag);
			goto out;
		}
	rc = 0;
out:
	runs_free(kids, nkids);
	jobsh_vars_release(&vars);
	buf_release(&text);
	free(path);
	return rc;
}
