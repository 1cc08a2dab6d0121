/* Sweeps: runs made together and submitted as one job array. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jobsh/directives.h"
#include "lib/fsutil.h"
#include "jobs/jobenv.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "stages/quota.h"
#include "jobs/segments.h"
#include "jobs/steps.h"
#include "jobs/steps-array.h"
#include "study.h"
#include "jobs/submit.h"
#include "jobs/stop-bar.h"
#include "jobs/sweep.h"
#include "jobs/sweep-then.h"
#include "jobs/watch.h"
#include "tags.h"

/* Split a comma-separated list of values. */
int sweep_split_values(const char *list, char ***v, size_t *n, char **cause)
{
	struct buf cur = BUF_INIT;
	const char *p = list;
	size_t i;

	*v = NULL;
	*n = 0;
	for (;;) {
		if (*p == '\\' && p[1] == ',') {
			buf_addc(&cur, ',');
			p += 2;
			continue;
		}
		if (*p && *p != ',') {
			buf_addc(&cur, *p++);
			continue;
		}
		if (cur.len == 0) {
			*cause = xasprintf("empty value in '%s': give V1,V2,... (\\, for a "
					   "comma inside a value)", list);
			goto fail;
		}
		for (i = 0; i < *n; i++)
			if (strcmp((*v)[i], cur.s) == 0) {
				*cause = xasprintf("value '%s' is given twice", cur.s);
				goto fail;
			}
		if (*n >= SWEEP_MAX_VALUES) {
			*cause = xasprintf("more than %d values: split the sweep",
					   SWEEP_MAX_VALUES);
			goto fail;
		}
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		(*v)[(*n)++] = buf_detach(&cur, NULL);
		if (!*p++)
			break;
	}
	return 0;
fail:
	buf_release(&cur);
	strv_free(*v, *n);
	*v = NULL;
	*n = 0;
	return XL_USAGE;
}

/* A free sweep name. */
char *sweep_auto_name(struct xl_ctx *ctx, const char *base)
{
	char *name = xstrdup(base);
	int i;

	for (i = 2;; i++) {
		struct sweep sw;
		int rc = sweeps_get(&ctx->db, ctx->cfg.study, name, &sw);

		if (rc != 0)
			return name;
		sweep_release(&sw);
		free(name);
		name = xasprintf("%s-%d", base, i);
	}
}

/* Make the sweep and its runs. */
int sweep_create(struct xl_ctx *ctx, const char *name, const char *from,
		 const char *var, char **values, size_t n, long long max_parallel,
		 int force, const char *tag_prefix, long long segs, struct sweep *sw,
		 char **cause)
{
	struct sweep row;
	struct run parent;
	size_t i;
	int rc;

	memset(sw, 0, sizeof(*sw));
	if (!valid_name(name)) {
		*cause = xasprintf("invalid sweep name '%s': use 1 to 64 letters, digits, "
				   "'.', '_' or '-', starting with a letter or digit", name);
		return XL_USAGE;
	}
	rc = sweeps_get(&ctx->db, ctx->cfg.study, name, &row);
	if (rc == 0) {
		sweep_release(&row);
		*cause = xasprintf("sweep '%s' already exists ('xloop sweep retry %s' "
				   "resubmits its failed tasks)", name, name);
		return XL_DATAERR;
	}
	if (rc < 0)
		return XL_ERR;
	/* resolve "best" once, so every task has the same parent */
	rc = loop_find_parent(ctx, from, force, &parent, cause);
	if (rc)
		return rc;
	if (segs) {
		/* each task's later steps would wait for its first segment only */
		char *names[STEPS_MAX];
		size_t k, ns = 0;

		if (steps_names(&ctx->db, parent.id, names, &ns) < 0)
			ns = 0;
		for (k = 0; k < ns; k++)
			free(names[k]);
		if (ns) {
			*cause = xasprintf("'%s' has steps and its tasks would run as segments "
					   "(segments.max, --segments): steps over segments are "
					   "not supported yet; give --segments 0 or a --time "
					   "within the limit", parent.tag);
			run_release(&parent);
			return XL_DATAERR;
		}
	}
	memset(&row, 0, sizeof(row));
	row.name = (char *)name;
	row.parent = parent.tag;
	row.var = (char *)var;
	row.max_parallel = max_parallel;
	row.created_at = time(NULL);
	if (sweeps_insert(&ctx->db, ctx->cfg.study, &row) < 0) {
		*cause = xasprintf("unable to record the sweep in the state DB");
		run_release(&parent);
		return XL_ERR;
	}
	for (i = 0; i < n; i++) {
		struct new_run nr;
		char *tag = loop_make_tag(ctx, TAG_SWEEP, tag_prefix, var, values[i]);
		char *note = xasprintf("sweep %s, index %zu", name, i);

		rc = loop_new_run(ctx, tag, parent.tag, var, values[i], note, 1, &nr,
				  cause);
		free(tag);
		free(note);
		if (rc)
			break;
		if (sweeps_add_task(&ctx->db, row.id, (long long)i, nr.run.id) < 0) {
			*cause = xasprintf("run %s was made but not added to the sweep",
					   nr.run.tag);
			rc = XL_ERR;
		}
		new_run_release(&nr);
		if (rc)
			break;
	}
	run_release(&parent);
	if (rc && i == 0) {
		/* not one run was made: leave no trace */
		sweeps_delete_empty(&ctx->db, row.id);
		return rc;
	}
	if (sweeps_get(&ctx->db, ctx->cfg.study, name, sw) != 0 && rc == 0) {
		*cause = xasprintf("unable to read sweep '%s' back", name);
		rc = XL_ERR;
	}
	return rc;
}

/* Free a submission's result. */
void sweep_submitted_release(struct sweep_submitted *res)
{
	free(res->array_id);
	free(res->after);
	free(res->array_spec);
	free(res->attempt);
	memset(res, 0, sizeof(*res));
}

/* "0-3,5,7-8%2": the indexes of the picked tasks, ranges folded. */
static char *array_spec(const struct sweep *sw, const size_t *pick, size_t n,
			long long max_parallel)
{
	struct buf b = BUF_INIT;
	size_t i = 0, j;

	while (i < n) {
		for (j = i; j + 1 < n && sw->tasks[pick[j + 1]].idx ==
			    sw->tasks[pick[j]].idx + 1; j++)
			;
		buf_addf(&b, "%s%lld", b.len ? "," : "", sw->tasks[pick[i]].idx);
		if (j > i)
			buf_addf(&b, "%s%lld", j == i + 1 ? "," : "-", sw->tasks[pick[j]].idx);
		i = j + 1;
	}
	if (max_parallel > 0 && max_parallel < (long long)n)
		buf_addf(&b, "%%%lld", max_parallel);
	return buf_detach(&b, NULL);
}

/*
 * The array's batch script: the index picks the run, its attempt number,
 * its log; the run's own job.sh is checked against the hash recorded at
 * submission and run, so each task behaves as a single run would: with
 * stop.on under its stop watcher (its rule as rule[i] says; with
 * later_steps a stopped task exits WATCH_STOPPED_EXIT), else exec'd.
 */
static char *wrapper_script(struct xl_ctx *ctx, const struct sweep *sw,
			    const size_t *pick, size_t n, const long long *attempt,
			    char (*sha)[65], const char *header, const char *token, long long segs,
			    const int *rule, int later_steps)
{
	struct buf b = BUF_INIT;
	char *q;
	size_t i;

	buf_addf(&b, "#!/bin/bash\n# written by xloop: sweep %s of study %s\n%s",
		 sw->name, ctx->cfg.study, header);
	buf_adds(&b, "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n");
	for (i = 0; i < n; i++) {
		char rid[RUN_IDENT_LEN + 1];

		if (runs_ident(&ctx->db, ctx->cfg.study, sw->tasks[pick[i]].tag, rid) < 0)
			BUG("run '%s' is not in the DB", sw->tasks[pick[i]].tag);
		buf_addf(&b, "%lld) tag=%s n=%lld sha=%s rid=%s rule=%s ;;\n",
			 sw->tasks[pick[i]].idx, sw->tasks[pick[i]].tag, attempt[i], sha[i], rid,
			 rule[i] ? "on" : "off");
	}
	buf_adds(&b, "*) echo \"xloop: array index '${SLURM_ARRAY_TASK_ID:-}' is not "
		 "part of this submission\" >&2; exit 64 ;;\nesac\n");
	q = jobsh_quote(ctx->root);
	buf_addf(&b, "export XLOOP_ROOT=%s\n", q);
	free(q);
	q = jobsh_quote(ctx->cfg.study);
	buf_addf(&b, "export XLOOP_STUDY=%s XLOOP_TAG=\"$tag\" XLOOP_ATTEMPT=\"$n\" "
		 "XLOOP_STEP=%s XLOOP_SEGMENT=1\n", q, STEP_FIRST);
	free(q);
	buf_adds(&b, "export XLOOP_RUN_DIR=\"$XLOOP_ROOT/runs/$XLOOP_STUDY/$tag\"\n");
	jobenv_shell(&ctx->cfg, &b);
	if (segs) {
		/* segment 1 of the task's attempt: its own segments wrapper, the
		 * one its continuations (plain jobs) run, in this very process
		 * (so the batch shell that gets the signal is the wrapper) */
		buf_addf(&b, "exec >>\"$XLOOP_RUN_DIR/slurm/attempt$n.out\" 2>&1\n"
			 "exec \"$XLOOP_ROOT/.xloop/segments/%s_$SLURM_ARRAY_TASK_ID.sh\"\n",
			 token);
		return buf_detach(&b, NULL);
	}
	buf_adds(&b,
		 "exec >\"$XLOOP_RUN_DIR/slurm/attempt$n.out\" 2>&1\n"
		 "if command -v sha256sum >/dev/null &&\n"
		 "   ! echo \"$sha  $XLOOP_RUN_DIR/job.sh\" | sha256sum -c --status; then\n"
		 "\techo \"xloop: $XLOOP_RUN_DIR/job.sh changed after it was submitted; "
		 "not running it\" >&2\n\texit 65\nfi\n");
	if (!ctx->cfg.stop.on) {
		buf_adds(&b, "exec \"$XLOOP_RUN_DIR/job.sh\"\n");
		return buf_detach(&b, NULL);
	}
	if (later_steps)	/* a stopped task that runs again: no step after it */
		buf_addf(&b, "xl_stopped_exit=%d\n", WATCH_STOPPED_EXIT);
	watch_shell(&ctx->cfg, 1, &b);
	buf_adds(&b, "xl_rule=$rule\t# the task's own\n");
	watch_run_child(&b, later_steps);
	return buf_detach(&b, NULL);
}

/* One array on its way from the checks to sbatch (sweep_submit's steps). */
struct array_sub {
	const struct sweep *sw;
	const size_t *pick;		/* the tasks, indexes into sw->tasks */
	size_t n;
	const struct submit_opts *o;
	const char *mem, *time_;	/* o's, else xloop.json's */
	long long segs;			/* segments.max of each task (0: not segmented) */
	struct buf header;		/* the first job.sh's #SBATCH lines */
	char (*sha)[65];		/* each task's job.sh */
	long long *ids;			/* each task's intent row */
	char token[27];
	char *dir;			/* .xloop/sweeps/NAME */
	char steps[STEPS_MAX][27];	/* each later step array's token */
	size_t nsteps;
	const char *then;		/* --then's script, or NULL */
};

/*
 * Everything checked before anything is written: the overrides, the
 * segments, every task's job.sh, the partition's limits, the job the array
 * chains onto (res->after); then the array's spec and its directory. An
 * exit code.
 */
static int array_checks(struct xl_ctx *ctx, struct slurm *s, struct array_sub *as,
			struct sweep_submitted *res, char **cause)
{
	struct buf text = BUF_INIT;
	char *rel;
	size_t i;
	int rc;

	rc = submit_check_overrides(as->o, cause);
	if (rc == 0)
		rc = segments_wanted(&ctx->cfg, as->o->segments, as->time_, as->o->time != NULL,
				     &as->segs, cause);
	if (rc == 0 && as->segs && as->n) {
		char *names[STEPS_MAX];
		size_t k, ns = 0;

		if (steps_names(&ctx->db, as->sw->tasks[as->pick[0]].run_id, names, &ns) < 0)
			ns = 0;
		for (k = 0; k < ns; k++)
			free(names[k]);
		if (ns) {
			*cause = xasprintf("the runs of sweep %s have steps and would run as "
					   "segments (segments.max, --segments): steps over "
					   "segments are not supported yet; give --segments 0 or "
					   "a --time within the limit", as->sw->name);
			rc = as->o->segments ? XL_DATAERR : XL_CONFIG;
		}
	}
	for (i = 0; rc == 0 && i < as->n; i++) {
		buf_reset(&text);
		rc = submit_check_script(ctx, as->sw->tasks[as->pick[i]].tag, &text, as->sha[i],
					 cause);
		if (i == 0 && rc == 0)
			sbatch_header_lines(text.s, &as->header);
	}
	buf_release(&text);
	if (rc == 0)
		rc = submit_preflight(ctx, s, as->o, cause);
	if (rc == 0)
		rc = submit_resolve_after(ctx, s, as->o, &res->after, cause);
	if (!res->after)
		res->after = xstrdup("");
	if (rc)
		return rc;
	if (as->then && (rc = sweep_then_prepare(ctx, as->sw->name, as->then, cause)) != 0)
		return rc;
	res->array_spec = array_spec(as->sw, as->pick, as->n, as->sw->max_parallel);
	/* .xloop/ exists (main made it); the wrapper scripts live below it */
	rel = path_join(ctx->root, ".xloop/sweeps");
	as->dir = path_join(rel, as->sw->name);
	rc = make_dir(rel, 0700, cause) < 0 || make_dir(as->dir, 0700, cause) < 0;
	free(rel);
	return rc ? XL_ERR : 0;
}

/* The intents, one per task (token "<array token>_<index>"), in one transaction. */
static int record_intents(struct xl_ctx *ctx, struct array_sub *as,
			  struct sweep_submitted *res, char **cause)
{
	const struct config *c = &ctx->cfg;
	char *over;
	size_t i;

	if (db_begin_write(&ctx->db) < 0) {
		*cause = xasprintf("the state DB is busy; try again");
		return XL_TEMPFAIL;
	}
	study_token(as->token);
	over = submit_overrides_text(as->o);
	for (i = 0; i < as->n; i++) {
		const struct sweep_task *t = &as->sw->tasks[as->pick[i]];
		struct run r;
		struct attempt a;
		char *tok, *log;
		int bad;

		memset(&r, 0, sizeof(r));
		r.id = t->run_id;
		r.tag = t->tag;
		if (submit_next_attempt(ctx, &r, &res->attempt[i]) < 0)
			goto fail;
		tok = xasprintf("%s_%lld", as->token, t->idx);
		log = run_log_path(ctx->root, c->study, t->tag, res->attempt[i]);
		memset(&a, 0, sizeof(a));
		a.run_id = t->run_id;
		a.n = res->attempt[i];
		a.token = tok;
		a.phase = "submitting";
		a.log_path = log;
		a.job_sha256 = as->sha[i];
		a.partition = c->partition;
		a.gres = c->res.gres;
		a.cpus = c->res.cpus;
		a.mem = (char *)as->mem;
		a.time_limit = (char *)as->time_;
		a.overrides = over;
		a.after_job = res->after;
		a.intent_at = time(NULL);
		bad = attempts_insert(&ctx->db, &a) < 0 ||
		      (as->segs && segments_insert_first(ctx, a.id, tok, as->segs) < 0);
		as->ids[i] = a.id;
		free(tok);
		free(log);
		if (bad)
			goto fail;
	}
	free(over);
	over = NULL;
	{
		/* each later step: an array of its own, one token for it */
		struct steps_array_task *st = xcalloc(as->n ? as->n : 1, sizeof(*st));
		int bad;

		for (i = 0; i < as->n; i++) {
			st[i].run_id = as->sw->tasks[as->pick[i]].run_id;
			st[i].attempt_id = as->ids[i];
			st[i].n = res->attempt[i];
			st[i].idx = as->sw->tasks[as->pick[i]].idx;
			st[i].tag = as->sw->tasks[as->pick[i]].tag;
		}
		bad = steps_array_intents(ctx, st, as->n, as->steps, &as->nsteps) < 0;
		free(st);
		if (bad)
			goto fail;
	}
	if (as->then) {
		/* the --then step waits for every array: their tokens in step order */
		struct buf after = BUF_INIT;
		int bad;

		buf_adds(&after, as->token);
		for (i = 0; i < as->nsteps; i++)
			buf_addf(&after, " %s", as->steps[i]);
		bad = sweep_then_intent(ctx, as->sw->id, as->sw->name, after.s) < 0;
		buf_release(&after);
		if (bad)
			goto fail;
	}
	if (db_commit(&ctx->db) < 0)
		goto fail_nocommit;
	return 0;
fail:
	free(over);
	db_rollback(&ctx->db);
fail_nocommit:
	*cause = xasprintf("unable to record the attempts in the state DB");
	return XL_ERR;
}

/*
 * The array's batch script (.xloop/sweeps/NAME/submit-TOKEN.sh), and each
 * task's segments wrapper when segmented, into *path. On failure every
 * intent is marked submit_failed. 0 or XL_ERR.
 */
static int write_scripts(struct xl_ctx *ctx, const struct array_sub *as,
			 const struct sweep_submitted *res, char **path, char **cause)
{
	int *rule = xcalloc(as->n ? as->n : 1, sizeof(*rule)), rc = 0;
	char *script;
	size_t i;

	for (i = 0; i < as->n; i++) {
		/* each task's stop rule, as a single run's (issue 45) */
		struct run r;

		if (runs_get(&ctx->db, ctx->cfg.study, as->sw->tasks[as->pick[i]].tag, &r) != 0)
			BUG("run '%s' is not in the DB", as->sw->tasks[as->pick[i]].tag);
		rule[i] = submit_stop_rule_on(ctx, &r);
		/* and its values to beat, as a single run's (issue 46) */
		if (rc == 0 && ctx->cfg.stop.on && stop_bar_write(ctx, &r, rule[i], cause) < 0)
			rc = -1;
		run_release(&r);
	}
	script = wrapper_script(ctx, as->sw, as->pick, as->n, res->attempt, as->sha,
				as->header.s, as->token, as->segs, rule, as->nsteps > 0);

	*path = xasprintf("%s/submit-%s.sh", as->dir, as->token);
	for (i = 0; as->segs && rc == 0 && i < as->n; i++) {
		/* each task's segments wrapper: its segment 1 and continuations run it */
		char *tok = xasprintf("%s_%lld", as->token, as->sw->tasks[as->pick[i]].idx);
		char *w = NULL;

		rc = segments_write_wrapper(ctx, as->sw->tasks[as->pick[i]].tag, res->attempt[i],
					    tok, as->sha[i], as->header.s ? as->header.s : "",
					    as->segs, rule[i], as->nsteps > 0, &w, cause);
		free(tok);
		free(w);
	}
	if (rc < 0 || write_file_atomic(*path, script, strlen(script), 0700, cause) < 0) {
		rc = XL_ERR;
		for (i = 0; i < as->n; i++)
			attempts_set_submit_failed(&ctx->db, as->ids[i], *cause);
	}
	free(script);
	free(rule);
	return rc;
}

/*
 * sbatch the array (script at path), then record what it answered: each
 * task's job id "<array>_<index>"; a limit's refusal drops every intent
 * (back-pressure: the tasks wait, unsubmitted, for `sweep retry`); when
 * sbatch clearly failed otherwise, every intent submit_failed (an
 * ambiguous answer leaves them for reconcile).
 */
static int sbatch_array(struct xl_ctx *ctx, struct slurm *s, const struct array_sub *as,
			const char *path, struct sweep_submitted *res, char **cause)
{
	const struct config *c = &ctx->cfg;
	char *out = xasprintf("%s/%%A_%%a.out", as->dir), *dep = NULL, *sig = NULL;
	char *comment = xasprintf("xloop:%s/sweep:%s:%s", c->study, as->sw->name, as->token);
	struct slurm_submit req;
	long long arr = 0;
	size_t i;
	int rc;

	if (*res->after)
		dep = xasprintf("afterany:%s", res->after);
	slurm_fill_request(&ctx->cfg, ctx->root, &req, as->mem, as->time_, dep);
	req.script = path;
	req.job_name = as->sw->name;
	req.output = out;
	req.comment = comment;
	req.array = res->array_spec;
	if (as->segs)
		req.signal = sig = segments_signal(c);
	rc = slurm_sbatch(s, &req, &arr, &res->ambiguous, cause);
	crash_point("sweep-after-sbatch");
	if (rc == 0) {
		free(res->array_id);
		res->array_id = xasprintf("%lld", arr);
		for (i = 0; i < as->n; i++) {
			char *job = xasprintf("%lld_%lld", arr, as->sw->tasks[as->pick[i]].idx);

			if (attempts_set_submitted(&ctx->db, as->ids[i], job, time(NULL)) < 0) {
				FREE_AND_NULL(*cause);
				*cause = xasprintf("array %lld was submitted but not all tasks "
						   "could be recorded; 'xloop next' will find "
						   "them by their token", arr);
				rc = XL_TEMPFAIL;
			}
			free(job);
		}
	} else if (s->refused_by) {
		/* back-pressure, as for single runs: no attempt, no verdict */
		for (i = 0; i < as->n; i++)
			attempts_release_intent(&ctx->db, as->ids[i]);
		quota_refused(ctx, s->refused_by);
		FREE_AND_NULL(*cause);
		*cause = xasprintf("held back by the Slurm limit %s (sbatch refused the array; "
				   "no task has an attempt: 'xloop sweep retry %s' submits them "
				   "when one of your jobs has ended)", s->refused_by,
				   as->sw->name);
		res->limit = s->refused_by;
	} else if (!res->ambiguous) {
		for (i = 0; i < as->n; i++)
			attempts_set_submit_failed(&ctx->db, as->ids[i], *cause);
	}
	free(out);
	free(comment);
	free(dep);
	free(sig);
	return rc;
}

/* Submit some tasks of a sweep as one array. */
int sweep_submit(struct xl_ctx *ctx, struct slurm *s, const struct sweep *sw,
		 const size_t *pick, size_t n, const struct submit_opts *o,
		 const char *then, struct sweep_submitted *res, char **cause)
{
	struct array_sub as;
	char *path = NULL;
	size_t i;
	int rc;

	memset(&as, 0, sizeof(as));
	as.sw = sw;
	as.pick = pick;
	as.n = n;
	as.o = o;
	as.then = then;
	as.mem = o->mem ? o->mem : ctx->cfg.res.mem;
	as.time_ = o->time ? o->time : ctx->cfg.res.time;
	buf_init(&as.header);
	as.sha = xcalloc(n ? n : 1, sizeof(*as.sha));
	as.ids = xcalloc(n ? n : 1, sizeof(*as.ids));
	memset(res, 0, sizeof(*res));
	res->array_id = xstrdup("");
	res->attempt = xcalloc(n ? n : 1, sizeof(*res->attempt));
	res->nr = n;
	rc = array_checks(ctx, s, &as, res, cause);
	if (rc == 0)
		rc = record_intents(ctx, &as, res, cause);
	if (rc == 0) {
		crash_point("sweep-after-intent");
		rc = write_scripts(ctx, &as, res, &path, cause);
	}
	if (rc == 0)
		rc = sbatch_array(ctx, s, &as, path, res, cause);
	for (i = 0; rc == 0 && i < as.nsteps; i++) {
		/* step k's array, aftercorr on step k-1's (a failure waits for reconcile) */
		char *why = NULL;

		crash_point("sweep-steps-before-array");
		if (steps_array_submit(ctx, s, as.steps[i], &why))
			warning("step %zu of sweep %s is not submitted yet: %s ('xloop next' "
				"tries again)", i + 2, sw->name, why);
		free(why);
	}
	if (rc == 0 && as.then) {
		char *why = NULL;

		crash_point("sweep-then-before-submit");
		if (sweep_then_submit_pending(ctx, s, NULL, &why))
			warning("the --then step of sweep %s is not submitted yet: %s ('xloop "
				"next' tries again)", sw->name, why);
		free(why);
	}
	buf_release(&as.header);
	free(as.sha);
	free(as.ids);
	free(as.dir);
	free(path);
	return rc;
}
