/*
 * xloop sweep --set VAR=V1,V2,... [--from P|best] [--max-parallel K]: one
 * run per value, submitted as one job array (seed 002).
 * xloop sweep retry NAME: resubmit only the tasks whose latest attempt
 * failed (or never reached Slurm), as a new array of their indexes.
 * xloop sweep show NAME [--final]: each index, its run, its latest attempt
 * and verdict (reconciled first), whether all are judged, and the --then
 * step (sweep-then.h).
 * xloop sweep --then SCRIPT: one CPU step afterany on every task.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "driver/driver.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "stages/reconcile.h"
#include "jobs/segments.h"
#include "jobs/submit.h"
#include "study.h"
#include "jobs/sweep.h"
#include "jobs/sweep-then.h"

static const struct opt sweep_opts[] = {
	{ "set", OPT_STRING, "VAR=V1,V2,...", "the values, one run each (\\, in a value is a comma)",
	  OPT_REQUIRED },
	{ "from", OPT_STRING, "P|best", "the parent (default: best), a proven run unless --force" },
	{ "name", OPT_STRING, "N", "the sweep's name (default: <VAR>-sweep); its runs: N--VAR-VALUE" },
	{ "max-parallel", OPT_STRING, "K", "at most K tasks at once (the array's %K)" },
	{ "force", OPT_FLAG, NULL, "allow a parent that is not proven" },
	{ "mem", OPT_STRING, "M", "memory for this submission (recorded)" },
	{ "time", OPT_STRING, "D", "time limit for this submission (recorded)" },
	{ "segments", OPT_STRING, "N", "up to N segments per task (overrides segments.max; recorded)" },
	{ "after", OPT_STRING, "J", "wait for this job (default: the newest live job)" },
	{ "no-chain", OPT_FLAG, NULL, "wait for no job" },
	{ "then", OPT_STRING, "SCRIPT", "one CPU step afterany on every task, the results in "
	  "$XLOOP_SWEEP_RESULTS" },
	OPT_END,
};

static const struct opt sweep_show_opts[] = {
	{ "final", OPT_FLAG, NULL, "exit 75 (try later) while a task is still to be judged "
	  "(the --then step waits so)" },
	OPT_END,
};

static const struct opt sweep_retry_opts[] = {
	{ "mem", OPT_STRING, "M", "memory for the resubmitted tasks (recorded)" },
	{ "time", OPT_STRING, "D", "time limit for them (recorded)" },
	{ "segments", OPT_STRING, "N", "up to N segments per task (default: as they were given)" },
	{ "after", OPT_STRING, "J", "wait for this job (default: the newest live job)" },
	{ "no-chain", OPT_FLAG, NULL, "wait for no job" },
	OPT_END,
};

/* The latest attempt of a task: 0 found, 1 none. */
static int task_latest(struct xl_ctx *ctx, const struct sweep_task *t, struct attempt *a)
{
	int rc = attempts_latest(&ctx->db, t->run_id, a);

	return rc < 0 ? 1 : rc;
}

/* Whether a task needs (re)submitting: no attempt, refused, or failed. */
static int task_wants_submit(struct xl_ctx *ctx, const struct sweep_task *t)
{
	struct attempt a;
	int want;

	if (task_latest(ctx, t, &a) != 0)
		return 1;
	want = strcmp(a.phase, "submit_failed") == 0 || strcmp(a.verdict, "failure") == 0;
	attempt_release(&a);
	return want;
}

/* Print (or emit) what one array submission did. */
static void report(struct xl_ctx *ctx, const struct sweep *sw, const size_t *pick,
		   const struct sweep_submitted *res)
{
	size_t i;

	if (ctx->json) {
		json_t *tasks = json_array();

		for (i = 0; i < res->nr; i++) {
			const struct sweep_task *t = &sw->tasks[pick[i]];
			char *job = xasprintf("%s_%lld", res->array_id, t->idx);
			char *log = run_log_path(ctx->root, ctx->cfg.study, t->tag,
						 res->attempt[i]);

			json_array_append_new(tasks, json_pack(
				"{s:I, s:s, s:s, s:I, s:s, s:s}", "index", (json_int_t)t->idx,
				"tag", t->tag, "value", t->value, "attempt",
				(json_int_t)res->attempt[i], "job_id", job, "log", log));
			free(job);
			free(log);
		}
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "sweep", sw->name,
					"var", sw->var, "array_job_id", res->array_id,
					"array", res->array_spec, "after", *res->after ?
					json_string(res->after) : json_null(), "tasks", tasks));
		return;
	}
	printf("submitted sweep %s (%s) as array job %s, --array=%s%s%s\n", sw->name,
	       sw->var, res->array_id, res->array_spec,
	       *res->after ? ", after job " : "", res->after);
	for (i = 0; i < res->nr; i++) {
		const struct sweep_task *t = &sw->tasks[pick[i]];

		printf("  [%lld] %-24s %s=%s  attempt %lld, job %s_%lld\n", t->idx, t->tag,
		       sw->var, t->value, res->attempt[i], res->array_id, t->idx);
	}
}

/* Submit the picked tasks and report; an exit code. */
static int submit_picked(struct xl_ctx *ctx, struct slurm *s, const struct sweep *sw,
			 const size_t *pick, size_t n, const struct submit_opts *o,
			 const char *then)
{
	struct sweep_submitted res;
	char *cause = NULL;
	int rc = sweep_submit(ctx, s, sw, pick, n, o, then, &res, &cause);

	if (rc) {
		error("%s", cause ? cause : "the sweep was not submitted");
		if (res.ambiguous)
			fprintf(stderr, "xloop: sbatch may have submitted the array anyway; "
				"'xloop next' will find its tasks by their token before "
				"anything is submitted again\n");
	} else {
		report(ctx, sw, pick, &res);
		/* driver.mode slurm: a feeder judges the tasks once they end */
		driver_keep_feeder(ctx, s, NULL, NULL);
	}
	free(cause);
	sweep_submitted_release(&res);
	return rc;
}

/* Judge what ended, so "failed" is up to date; a failure here is not fatal. */
static void refresh(struct xl_ctx *ctx, struct slurm *s)
{
	struct refresh ref;
	char *cause = NULL;

	if (reconcile(ctx, s, &ref, &cause) == 0)
		refresh_release(&ref);
	free(cause);
}

/* xloop sweep retry NAME. */
static int sweep_retry(struct xl_ctx *ctx, struct slurm *s, const char *name,
		       const struct submit_opts *o)
{
	struct sweep sw;
	struct submit_opts own;
	size_t *pick, n = 0, i;
	char *carried = NULL, *then;
	int rc = sweeps_get(&ctx->db, ctx->cfg.study, name, &sw);

	if (rc) {
		error(rc > 0 ? "no sweep '%s' in study '%s'" : "unable to read sweep '%s' "
		      "of study '%s'", name, ctx->cfg.study);
		return rc > 0 ? XL_NOINPUT : XL_ERR;
	}
	refresh(ctx, s);
	pick = xcalloc(sw.nr ? sw.nr : 1, sizeof(*pick));
	for (i = 0; i < sw.nr; i++)
		if (task_wants_submit(ctx, &sw.tasks[i]))
			pick[n++] = i;
	/* tasks that needed segments still do: the --segments they were given */
	for (i = 0; i < n && !o->segments && !carried; i++) {
		struct attempt a;

		if (task_latest(ctx, &sw.tasks[pick[i]], &a) == 0) {
			carried = submit_override_value(a.overrides, "segments");
			attempt_release(&a);
		}
	}
	if (carried) {
		own = *o;
		own.segments = carried;
		o = &own;
	}
	if (n == 0) {
		if (ctx->json)
			cmd_emit_json(json_pack("{s:s, s:s, s:[]}", "sweep", sw.name,
						"array_job_id", "", "tasks"));
		else
			printf("sweep %s: no task failed (each one succeeded or is still "
			       "queued or running); nothing submitted\n", sw.name);
		rc = 0;
	} else {
		/* the --then step runs again, after the retried tasks */
		then = sweep_then_script(ctx, sw.id);
		rc = submit_picked(ctx, s, &sw, pick, n, o, then);
		free(then);
	}
	free(pick);
	free(carried);
	sweep_release(&sw);
	return rc;
}

/* The --then step's line and JSON (null when the sweep has none). */
static json_t *show_then(struct xl_ctx *ctx, struct slurm *s, const struct sweep *sw)
{
	struct sweep_then t;
	json_t *o;

	if (sweep_then_get(ctx, s, sw->id, &t) != 0)
		return json_null();
	if (!ctx->json) {
		char try_[32] = "";

		if (t.try_ > 1)
			xsnprintf(try_, sizeof(try_), " (try %lld)", t.try_);
		printf("  then%s: %s%s%s %s%s%s (its outcome, not a run's verdict)\n"
		       "        log %s\n", try_, *t.job_id ? "job " : "", t.job_id,
		       *t.job_id ? "," : "", *t.state ? t.state : t.phase,
		       *t.exit_code ? " " : "", t.exit_code, t.log);
	}
	o = json_pack("{s:s, s:s, s:o, s:o, s:s, s:s, s:I}", "script", t.script, "phase",
		      t.phase, "state", *t.state ? json_string(t.state) : json_null(),
		      "exit_code", *t.exit_code ? json_string(t.exit_code) : json_null(),
		      "log", t.log, "results", t.results, "try", (json_int_t)t.try_);
	json_object_set_new(o, "job_id", *t.job_id ? json_string(t.job_id) : json_null());
	sweep_then_release(&t);
	return o;
}

/*
 * xloop sweep show NAME: with want_final, XL_TEMPFAIL while a task is
 * still to be judged (printed all the same).
 */
static int sweep_show(struct xl_ctx *ctx, struct slurm *s, const char *name, int want_final)
{
	json_t *tasks = json_array(), *then;
	struct sweep sw;
	size_t i, open = 0;
	int rc = sweeps_get(&ctx->db, ctx->cfg.study, name, &sw);

	if (rc) {
		json_decref(tasks);
		error(rc > 0 ? "no sweep '%s' in study '%s'" : "unable to read sweep '%s' "
		      "of study '%s'", name, ctx->cfg.study);
		return rc > 0 ? XL_NOINPUT : XL_ERR;
	}
	refresh(ctx, s);	/* the verdicts of what ended */
	if (!ctx->json)
		printf("sweep %s: %s from %s, %zu tasks%s\n", sw.name, sw.var, sw.parent,
		       sw.nr, sw.max_parallel ? "" : "");
	for (i = 0; i < sw.nr; i++) {
		const struct sweep_task *t = &sw.tasks[i];
		struct attempt a;
		int has = task_latest(ctx, t, &a) == 0;
		const char *state = !has ? "NOT SUBMITTED" : *a.verdict ? a.verdict :
			*a.state ? a.state : a.phase;

		/* judged, or it never reached Slurm: nothing more comes of it */
		open += has && !*a.verdict && strcmp(a.phase, "submit_failed") != 0;

		json_array_append_new(tasks, json_pack(
			"{s:I, s:s, s:s, s:I, s:s, s:s, s:o}", "index", (json_int_t)t->idx,
			"tag", t->tag, "value", t->value, "attempt",
			(json_int_t)(has ? a.n : 0), "job_id", has ? a.job_id : "",
			"state", state, "score", has && a.has_score ?
			json_real(a.score) : json_null()));
		json_object_set_new(json_array_get(tasks, i), "verdict", has && *a.verdict ?
				    json_string(a.verdict) : json_null());
		if (!ctx->json) {
			printf("  [%lld] %-24s %s=%-10s attempt %lld  %-14s", t->idx, t->tag,
			       sw.var, t->value, has ? a.n : 0, state);
			if (has && a.has_score)
				printf(" score %g", a.score);
			if (has && *a.job_id)
				printf("  job %s", a.job_id);
			putchar('\n');
		}
		if (has)
			attempt_release(&a);
	}
	then = show_then(ctx, s, &sw);
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:I, s:o, s:b, s:o}", "sweep", sw.name,
					"var", sw.var, "parent", sw.parent, "max_parallel",
					(json_int_t)sw.max_parallel, "tasks", tasks, "final",
					open == 0, "then", then));
	else {
		if (open)
			printf("  not final: %zu task%s still to be judged\n", open,
			       open == 1 ? "" : "s");
		json_decref(then);
		json_decref(tasks);
	}
	sweep_release(&sw);
	return want_final && open ? XL_TEMPFAIL : 0;
}

/* xloop sweep --set VAR=V1,V2,... */
static int sweep_new(struct xl_ctx *ctx, struct slurm *s, const char *set,
		     const char *from, const char *name_opt, long long k, int force,
		     const struct submit_opts *o, const char *then)
{
	char *var = NULL, *list = NULL, *name = NULL, *cause = NULL, **values = NULL;
	size_t n = 0, i, *pick = NULL;
	long long segs = 0;
	struct sweep sw;
	int rc;

	memset(&sw, 0, sizeof(sw));
	if (jobsh_parse_setting(set, &var, &list, &cause) < 0) {
		rc = XL_DATAERR;
		goto out;
	}
	rc = sweep_split_values(list, &values, &n, &cause);
	if (rc)
		goto out;
	rc = submit_check_overrides(o, &cause);
	if (rc == 0) {
		/* refused before any run is made */
		rc = segments_wanted(&ctx->cfg, o->segments, o->time ? o->time :
				     ctx->cfg.res.time, o->time != NULL, &segs, &cause);
	}
	if (rc == 0 && then) {
		/* refused before any run is made */
		struct buf text = BUF_INIT;
		int err;

		if (study_read_script(then, &text, &err, &cause) < 0)
			rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		buf_release(&text);
	}
	if (rc)
		goto out;
	if (name_opt) {
		name = xstrdup(name_opt);
	} else {
		char *base = xasprintf("%s-sweep", var);

		name = sweep_auto_name(ctx, valid_name(base) ? base : "sweep");
		free(base);
	}
	rc = sweep_create(ctx, name, from ? from : "best", var, values, n, k, force,
			  name_opt, segs, &sw, &cause);
	if (rc) {
		if (sw.nr)
			fprintf(stderr, "xloop: %zu of %zu runs were made; 'xloop sweep retry "
				"%s' submits them\n", sw.nr, n, name);
		goto out;
	}
	pick = xcalloc(sw.nr, sizeof(*pick));
	for (i = 0; i < sw.nr; i++)
		pick[i] = i;
	rc = submit_picked(ctx, s, &sw, pick, sw.nr, o, then);
	if (rc)
		fprintf(stderr, "xloop: the runs of sweep %s exist; 'xloop sweep retry %s' "
			"submits them once the cause is fixed\n", name, name);
out:
	if (cause)
		error("%s", cause);
	free(cause);
	free(var);
	free(list);
	free(name);
	free(pick);
	strv_free(values, n);
	sweep_release(&sw);
	return rc;
}

/* The submit options a sweep and its retry take; -1 after a usage error. */
static int sweep_submit_opts(const struct cmd_entry *self, struct cmd_args *args,
			     struct submit_opts *o)
{
	cmd_submit_opts(args, o);
	if (o->after && o->no_chain)
		return cmd_usage_error(self, "--after and --no-chain contradict each other");
	return 0;
}

/* sweep --set VAR=V1,V2,... */
static int cmd_sweep(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	const char *set = args_get(args, "set"), *maxp = args_get(args, "max-parallel");
	struct submit_opts o;
	const char *errstr;
	long long k = 0;
	struct slurm s;

	if (sweep_submit_opts(self, args, &o) < 0)
		return XL_USAGE;
	if (maxp && parse_ll(maxp, 1, 1000, &k, &errstr) < 0)
		return cmd_usage_error(self, "--max-parallel wants a number from 1 to 1000"),
		       XL_USAGE;
	slurm_init(&s);
	return sweep_new(ctx, &s, set, args_get(args, "from"), args_get(args, "name"), k,
			 args_flag(args, "force"), &o, args_get(args, "then"));
}

/* sweep retry NAME */
static int cmd_sweep_retry(struct xl_ctx *ctx, const struct cmd_entry *self,
			   struct cmd_args *args)
{
	struct submit_opts o;
	struct slurm s;

	if (sweep_submit_opts(self, args, &o) < 0)
		return XL_USAGE;
	slurm_init(&s);
	return sweep_retry(ctx, &s, args->pos[0], &o);
}

/* sweep show NAME */
static int cmd_sweep_show(struct xl_ctx *ctx, const struct cmd_entry *self,
			  struct cmd_args *args)
{
	struct slurm s;

	(void)self;
	slurm_init(&s);
	return sweep_show(ctx, &s, args->pos[0], args_flag(args, "final"));
}

static const struct cmd_entry sweep_subs[] = {
	{ .name = "sweep", .opts = sweep_opts, .exec = cmd_sweep,
	  .summary = "one run per value, submitted as one job array" },
	{ .name = "sweep retry", .opts = sweep_retry_opts, .args = "NAME", .min = 1, .max = 1,
	  .exec = cmd_sweep_retry,
	  .summary = "resubmit the sweep's failed tasks as a new array" },
	{ .name = "sweep show", .opts = sweep_show_opts, .args = "NAME", .min = 1, .max = 1,
	  .exec = cmd_sweep_show,
	  .summary = "the sweep's tasks, their verdicts, and the --then step's outcome" },
	{ NULL },
};

const struct cmd_entry cmd_sweep_entry = {
	.name = "sweep", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "one run per value, submitted as one job array; resubmit failed indexes",
	.help = "xloop sweep --set VAR=V1,V2,...: makes one run per value, each one change\n"
	"from the same parent (committed like `xloop new`), and submits them as\n"
	"one job array (--array=0-N[%K]). Array index i is always the i-th value's\n"
	"run; each task runs that run's job.sh with its own attempt number and log\n"
	"(runs/<study>/<tag>/slurm/attemptN.out), so verdicts work as for single\n"
	"runs. The array is chained afterany on the last job of the line. An array\n"
	"a Slurm limit refuses (QOSMaxSubmitJobPerUserLimit & co.) is back-pressure:\n"
	"exit 75 names the limit, no task gets an attempt, and `xloop sweep retry\n"
	"NAME` submits them once one of your jobs has ended.\n"
	"\n"
	"xloop sweep retry NAME: resubmits only the tasks whose latest attempt\n"
	"failed (or never reached Slurm) as a new array of their indexes\n"
	"(--array=3,5[%K]), each as its next attempt; --mem/--time apply to them,\n"
	"and they keep the --segments they were given unless --segments says.\n"
	"Nothing is submitted when no task failed. A sweep with --then gets its\n"
	"summary again (try 2, 3...; `sweep show` reports the newest), afterany on\n"
	"the retry's arrays, its results covering every task of the sweep; an\n"
	"older try that has not started yet is cancelled.\n"
	"\n"
	"Segments (segments.max > 0 or --segments N) continue task by task: each\n"
	"array task is segment 1 of its run's attempt; a task that exits 85 or\n"
	"ends TIMEOUT after the signal continues as a plain job of its own\n"
	"(afternotok on that task, same directory and log), and each task gets one\n"
	"verdict from its last segment. Runs queued behind the sweep wait for the\n"
	"array and for every continuation of its tasks.\n"
	"\n"
	"Steps (adopt --step): each later step of the runs is an array of its own,\n"
	"each task --dependency=aftercorr on its own task of the step before\n"
	"(--kill-on-invalid-dep=yes: Slurm drops the evaluation of a task whose\n"
	"training failed), one verdict per task. --then SCRIPT adds one CPU step\n"
	"(no GPU unless its own #SBATCH asks) afterany on every array of the\n"
	"sweep: it runs whatever happens to the tasks, with the sweep's results\n"
	"(`sweep show NAME --json`: tag, value, verdict, score per task) in the\n"
	"file named by $XLOOP_SWEEP_RESULTS; its log is .xloop/sweeps/NAME/then.out,\n"
	"and `sweep show NAME` reports its outcome (never a run's verdict). A step\n"
	"retried alone for the machine's fault runs as a plain job: while the\n"
	"summary is pending, xloop adds that job to its Dependency (scontrol\n"
	"update); should it have started already, it waits (`sweep show --final`,\n"
	"an hour at most) until every task is judged, so its results are final\n"
	"(\"final\": true).\n"
	"\n"
	"With driver.mode slurm, a feeder job waits behind the tasks afterwards (as\n"
	"after `next`), so they are judged once they end with no other xloop call.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = sweep_subs, .dflt = &sweep_subs[0],
};
