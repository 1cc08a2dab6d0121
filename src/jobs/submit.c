/* Submitting an attempt: preflight, the end of the line, intent, sbatch, record. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lib/fsutil.h"
#include "jobs/gone.h"
#include "stages/quota.h"
#include "jobs/segments.h"
#include "jobs/steps.h"
#include "lib/sha256.h"
#include "jobs/steps-run.h"
#include "study.h"
#include "gitops.h"
#include "jobs/jobenv.h"
#include "stages/nodes.h"
#include "jobs/submit.h"
#include "jobs/watch.h"
#include "jobs/stop-bar.h"

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
char *submit_line_tail(const struct slurm_jobs *q, const struct attempt *v, size_t n)
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
int submit_last_live_job(struct xl_ctx *ctx, struct slurm *s, char **job_id,
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
	gone_cancel(ctx, s, &q);	/* never the end of the line */
	if (ctx->cfg.chain_any_user) {
		/* studies share the GPU in turn: behind the newest job of the user */
		free(*job_id);
		*job_id = submit_newest_in_partition(&q, ctx->cfg.partition);
	}
	if (!**job_id) {
		/* with any-user, none of the user's is live: no line to end */
		size_t nl = ctx->cfg.chain_any_user ? 0 : n;

		free(*job_id);
		*job_id = submit_line_tail(&q, v, nl);
		segments_line_tail(ctx, &q, v, nl, job_id);
	}
	slurm_jobs_release(&q);
	attempts_free(v, n);
	return 0;
}

/* The live job of q in partition with the highest id ("" when none). */
char *submit_newest_in_partition(const struct slurm_jobs *q, const char *partition)
{
	const struct slurm_job *best = NULL;
	size_t i;

	for (i = 0; i < q->nr; i++) {
		const struct slurm_job *j = &q->v[i];

		if (slurm_state_is_final(j->state) || strcmp(j->partition, partition) != 0 ||
		    slurm_is_feeder_comment(j->comment))
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
	const char *maxtime, *total;
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
	if ((total = slurm_record_get(&part.v[0], "TotalNodes")) != NULL)
		lim->nodes = strtoll(total, NULL, 10);
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
int submit_next_attempt(struct xl_ctx *ctx, const struct run *r, long long *n)
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
int submit_preflight(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		     char **cause)
{
	const struct config *c = &ctx->cfg;
	struct part_limits lim = { -1, -1, -1 };
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
	if (lim.nodes > 0)
		runs_remember_partition_nodes(&ctx->db, c->partition, lim.nodes);
	return rc;
}

/* The partition's TotalNodes as the last preflight saw it (-1: unknown). */
long long submit_partition_nodes(struct xl_ctx *ctx)
{
	struct part_limits lim;

	submit_known_limits(ctx, &lim);
	return lim.nodes;
}

/* The partition's limits as the last preflight saw them (-1: unknown). */
void submit_known_limits(struct xl_ctx *ctx, struct part_limits *lim)
{
	char *k = limit_key("maxtime", ctx->cfg.partition);

	lim->max_secs = db_kv_get(&ctx->db, k);
	free(k);
	k = limit_key("realmem", ctx->cfg.partition);
	lim->real_mb = db_kv_get(&ctx->db, k);
	free(k);
	lim->nodes = runs_partition_nodes(&ctx->db, ctx->cfg.partition);
	if (lim->max_secs <= 0)
		lim->max_secs = -1;
	if (lim->real_mb <= 0)
		lim->real_mb = -1;
}

/* Refuse malformed --mem, --time and --after values. */
int submit_check_overrides(const struct submit_opts *o, char **cause)
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
int submit_check_script(struct xl_ctx *ctx, const char *tag, struct buf *text,
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
		sha256_hex(text->s, text->len, sha);
	free(job);
	return rc;
}

/*
 * The job a new submission waits for: --after, else the end of the line
 * (unless --no-chain), "" for none. A live array task "12_3" becomes its
 * array "12", so the chain waits for every task.
 */
int submit_resolve_after(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
			 char **after, char **cause)
{
	int rc = 0;

	*after = NULL;
	if (o->after)
		*after = xstrdup(o->after);
	else if (!o->no_chain && (rc = submit_last_live_job(ctx, s, after, cause)) == 0)
		(*after)[strcspn(*after, "_")] = '\0';
	if (!*after)
		*after = xstrdup("");
	return rc;
}

/* "--mem=M --time=D" as recorded on the attempt ("" when none). */
char *submit_overrides_text(const struct submit_opts *o)
{
	struct buf over = BUF_INIT;

	if (o->mem)
		buf_addf(&over, "--mem=%s", o->mem);
	if (o->time)
		buf_addf(&over, "%s--time=%s", over.len ? " " : "", o->time);
	if (o->segments)
		buf_addf(&over, "%s--segments=%s", over.len ? " " : "", o->segments);
	if (o->exclude)
		buf_addf(&over, "%s--exclude=%s", over.len ? " " : "", o->exclude);
	return buf_detach(&over, NULL);
}

/* The value of "--NAME=V" in recorded overrides, or NULL. */
char *submit_override_value(const char *overrides, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = overrides; p && *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (strncmp(p, "--", 2) == 0 && strncmp(p + 2, name, n) == 0 && p[2 + n] == '=')
			return xstrndup(p + 3 + n, strcspn(p + 3 + n, " "));
	return NULL;
}

/* One attempt on its way from the checks to sbatch (submit_attempt's steps). */
struct submission {
	const struct run *r;
	const struct submit_opts *o;	/* the caller's, or own */
	struct submit_opts own;		/* with the run's own --segments */
	char *run_segs;			/* `new --segments N`, or NULL */
	const char *mem, *time_;	/* o's, else xloop.json's */
	long long segs;			/* segments.max of the attempt (0: not segmented) */
	struct buf text;		/* job.sh */
	char sha[65], token[27];
	char *over;			/* the overrides as recorded */
	struct attempt a;		/* the intent's row */
	size_t nsteps;			/* the run's steps after job.sh */
	char code[41], changes[65];	/* the code it runs (gitops_code_state); "": unknown */
	int rule_on;			/* the stop rule applies (submit_stop_rule_on) */
};

/*
 * Whether the stop rule applies to r's next attempt (issue 45): not to a
 * root run (the baseline), nor to a run whose one change is the seed
 * (replicates and confirming runs), nor to a retry of a stopped run (it
 * runs to its end). `xloop stop` stops any of them.
 */
int submit_stop_rule_on(struct xl_ctx *ctx, const struct run *r)
{
	const char *seed = ctx->cfg.search.seed;
	struct attempt a;
	int stopped = 0;

	if (!r->parent_id || (*seed && strcmp(r->var, seed) == 0))
		return 0;
	if (attempts_latest(&ctx->db, r->id, &a) == 0) {
		stopped = strcmp(a.verdict, "stopped") == 0;
		attempt_release(&a);
	}
	return !stopped;
}

/* The run's later steps: each script there, executable, `bash -n`. */
static int check_steps(struct xl_ctx *ctx, struct submission *sub, char **cause)
{
	char *names[STEPS_MAX];
	size_t i, n = 0;
	int rc = 0;

	if (steps_names(&ctx->db, sub->r->id, names, &n) < 0) {
		*cause = xasprintf("unable to read the steps of run '%s'", sub->r->tag);
		return XL_ERR;
	}
	sub->nsteps = n;
	for (i = 0; i < n; i++) {
		char *p = step_path(ctx->root, ctx->cfg.study, sub->r->tag, names[i]);
		struct buf t = BUF_INIT;
		int err;

		if (rc == 0 && study_read_script(p, &t, &err, cause) < 0)
			rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		else if (rc == 0 && access(p, X_OK) < 0) {
			*cause = xasprintf("'%s' is not executable (chmod +x it)", p);
			rc = XL_DATAERR;
		} else if (rc == 0 && study_bash_syntax(p, t.s, cause) < 0)
			rc = XL_DATAERR;
		buf_release(&t);
		free(p);
		free(names[i]);
	}
	return rc;
}

/*
 * Everything checked before anything is written: the overrides, the
 * segments, job.sh, the partition's limits, and the job it chains onto
 * (res->after). An exit code.
 */
static int submit_checks(struct xl_ctx *ctx, struct slurm *s, struct submission *sub,
			 struct submit_result *res, char **cause)
{
	const struct config *c = &ctx->cfg;
	int rc;

	if (!sub->o->segments && (sub->run_segs = runs_segments(&ctx->db, sub->r->id)) != NULL) {
		/* `new --segments N`: the run's own, recorded like a flag */
		sub->own = *sub->o;
		sub->own.segments = sub->run_segs;
		sub->o = &sub->own;
	}
	sub->mem = sub->o->mem ? sub->o->mem : c->res.mem;
	sub->time_ = sub->o->time ? sub->o->time : c->res.time;
	rc = submit_check_overrides(sub->o, cause);
	if (rc == 0)
		rc = segments_wanted(c, sub->o->segments, sub->time_, sub->o->time != NULL,
				     &sub->segs, cause);
	if (rc == 0)
		rc = submit_check_script(ctx, sub->r->tag, &sub->text, sub->sha, cause);
	if (rc == 0) {
		/* pin the code it runs; a study outside git has none to pin */
		char *why = NULL;

		if (gitops_code_state(ctx->root, sub->code, sub->changes, &why) != 0)
			sub->code[0] = sub->changes[0] = '\0';
		free(why);
	}
	if (rc == 0)
		rc = check_steps(ctx, sub, cause);
	sub->rule_on = submit_stop_rule_on(ctx, sub->r);
	if (rc == 0)
		rc = submit_preflight(ctx, s, sub->o, cause);
	if (rc == 0)
		rc = submit_resolve_after(ctx, s, sub->o, &res->after, cause);
	if (!res->after)
		res->after = xstrdup("");
	return rc;
}

/*
 * The intent: the attempt's row (phase submitting, its token) and its
 * segment 1 in one transaction; from its commit on, a crash leaves a row
 * to reconcile. An exit code.
 */
static int record_intent(struct xl_ctx *ctx, struct submission *sub, struct submit_result *res,
			 char **cause)
{
	const struct config *c = &ctx->cfg;
	struct attempt *a = &sub->a;

	if (db_begin_write(&ctx->db) < 0) {
		*cause = xasprintf("the state DB is busy; try again");
		return XL_TEMPFAIL;
	}
	if (submit_next_attempt(ctx, sub->r, &res->n) < 0)
		goto fail;
	res->log_path = run_log_path(ctx->root, c->study, sub->r->tag, res->n);
	study_token(sub->token);
	sub->over = submit_overrides_text(sub->o);
	memset(a, 0, sizeof(*a));
	a->run_id = sub->r->id;
	a->n = res->n;
	a->token = sub->token;
	a->phase = "submitting";
	a->log_path = res->log_path;
	a->job_sha256 = sub->sha;
	a->partition = c->partition;
	a->gres = c->res.gres;
	a->cpus = c->res.cpus;
	a->mem = (char *)sub->mem;
	a->time_limit = (char *)sub->time_;
	a->overrides = sub->over;
	a->after_job = res->after;
	a->intent_at = time(NULL);
	a->auto_retry = (char *)sub->o->auto_retry;
	a->lane = sub->o->lane;
	if (attempts_insert(&ctx->db, a) < 0)
		goto fail;
	if (*sub->code && attempts_set_code(&ctx->db, a->id, sub->code, sub->changes) < 0)
		goto fail;
	if (sub->segs && segments_insert_first(ctx, a->id, sub->token, sub->segs) < 0)
		goto fail;
	/* each later step's intent, its own token, in the same transaction */
	if (steps_record_intents(ctx, sub->r, a->id, res->n) < 0)
		goto fail;
	crash_point("submit-in-transaction");
	if (db_commit(&ctx->db) < 0)
		goto fail_nocommit;
	return 0;
fail:
	db_rollback(&ctx->db);
fail_nocommit:
	*cause = xasprintf("unable to record the attempt in the state DB");
	return XL_ERR;
}

/*
 * What sbatch answered (rc, slurm_sbatch's): the job id recorded (then
 * segment 2 queued behind it); a limit's refusal drops the intent
 * (back-pressure: no attempt, no log, no verdict); a clear failure marks
 * it submit_failed; an ambiguous one stays 'submitting' for reconcile.
 */
static int record_answer(struct xl_ctx *ctx, struct slurm *s, const struct submission *sub,
			 int rc, long long id, struct submit_result *res, char **cause)
{
	if (rc == 0) {
		free(res->job_id);
		res->job_id = xasprintf("%lld", id);
		if (attempts_set_submitted(&ctx->db, sub->a.id, res->job_id, time(NULL)) < 0) {
			/* the job runs; the next reconcile finds it by its token */
			*cause = xasprintf("job %s was submitted but could not be recorded; "
					   "'xloop next' will find it by its token", res->job_id);
			rc = XL_TEMPFAIL;
		}
		res->tail = xstrdup(res->job_id);
		if (rc == 0 && sub->segs)
			segments_started(ctx, s, sub->a.id, res->job_id, &res->tail);
	} else if (s->refused_by) {
		char *why = xasprintf("held back by the Slurm limit %s (sbatch refused the job; "
				      "it is submitted when one of your jobs has ended)",
				      s->refused_by);

		attempts_release_intent(&ctx->db, sub->a.id);
		quota_refused(ctx, s->refused_by);
		free(*cause);
		*cause = why;
		res->limit = s->refused_by;
		free(res->log_path);
		res->log_path = NULL;
	} else if (!res->ambiguous) {
		attempts_set_submit_failed(&ctx->db, sub->a.id, *cause);
	}
	return rc;
}

/*
 * sbatch the recorded intent: its comment (the token), the chain, the
 * run's environment, segments' wrapper when segmented; then record what
 * sbatch answered. An exit code.
 */
static int run_sbatch(struct xl_ctx *ctx, struct slurm *s, const struct submission *sub,
		      struct submit_result *res, char **cause)
{
	const struct config *c = &ctx->cfg;
	const struct run *r = sub->r;
	char *job = run_job_path(ctx->root, c->study, r->tag);
	char *comment, *dep = NULL, *excl, *wrap = NULL;
	struct segments_req sreq = { NULL, NULL };
	struct slurm_submit req;
	struct jobenv env;
	struct jobenv_job jj = { r->tag, NULL, res->n, STEP_FIRST, 1 };
	char rid[RUN_IDENT_LEN + 1];
	long long id = 0;
	int rc;

	if (runs_ident(&ctx->db, c->study, r->tag, rid) < 0)
		BUG("run '%s' is not in the DB", r->tag);
	jj.run_id = rid;
	jobenv_init(&env, c, ctx->root, &jj);
	comment = xasprintf("xloop:%s/%s#%lld:%s", c->study, r->tag, res->n, sub->token);
	if (*res->after)
		dep = xasprintf("afterany:%s", res->after);
	slurm_fill_request(&ctx->cfg, ctx->root, &req, sub->mem, sub->time_, dep);
	req.script = job;
	req.job_name = r->tag;
	req.output = res->log_path;
	req.comment = comment;
	req.env = jobenv_vec(&env);
	req.append = 1;	/* a start after a requeue adds to the log (issue 34) */
	excl = runs_exclude_nodes(&ctx->db, c->study, sub->o->exclude, time(NULL),
				  submit_partition_nodes(ctx));
	req.exclude = excl;
	if (c->stop.on && stop_bar_write(ctx, r, sub->rule_on, cause) < 0) {
		attempts_set_submit_failed(&ctx->db, sub->a.id, *cause);
		rc = XL_ERR;
	} else if (sub->segs ? segments_prepare(ctx, r->tag, res->n, sub->token, sub->sha,
					 sub->text.s, sub->segs, sub->rule_on, sub->nsteps > 0,
					 &req, &sreq, cause) < 0 :
	    c->stop.on && watch_write_wrapper(ctx, r->tag, res->n, sub->token, sub->text.s,
					      sub->rule_on, sub->nsteps > 0, &wrap, cause) < 0) {
		attempts_set_submit_failed(&ctx->db, sub->a.id, *cause);
		rc = XL_ERR;
	} else {
		if (wrap)
			req.script = wrap;	/* the stop watcher's, job.sh its child */
		rc = slurm_sbatch(s, &req, &id, &res->ambiguous, cause);
		crash_point("submit-after-sbatch");
		rc = record_answer(ctx, s, sub, rc, id, res, cause);
	}
	if (rc == 0 && sub->nsteps) {
		/* the later steps, afterok one on the other; what fails waits for reconcile */
		struct attempt a = sub->a;
		char *why = NULL;

		a.job_id = res->job_id;
		if (steps_submit_pending(ctx, s, &a, NULL, &why))
			warning("a step of attempt %lld was not submitted: %s (the next "
				"reconcile tries again)", res->n, why);
		free(why);
	}
	jobenv_release(&env);
	segments_req_release(&sreq);
	free(wrap);
	free(excl);
	free(comment);
	free(dep);
	free(job);
	return rc;
}

/* Preflight, record the intent, run sbatch, record the answer. */
int submit_attempt(struct xl_ctx *ctx, struct slurm *s, const struct run *r,
		   const struct submit_opts *o, struct submit_result *res, char **cause)
{
	struct submission sub;
	int rc;

	memset(&sub, 0, sizeof(sub));
	sub.r = r;
	sub.o = o;
	buf_init(&sub.text);
	memset(res, 0, sizeof(*res));
	res->job_id = xstrdup("");
	rc = submit_checks(ctx, s, &sub, res, cause);
	if (rc == 0)
		rc = record_intent(ctx, &sub, res, cause);
	if (rc == 0) {
		crash_point("submit-after-intent");
		rc = run_sbatch(ctx, s, &sub, res, cause);
	}
	buf_release(&sub.text);
	free(sub.run_segs);
	free(sub.over);
	return rc;
}

