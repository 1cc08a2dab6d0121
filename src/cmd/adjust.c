/*
 * xloop adjust T --mem M | --time D: change the memory or time limit of a
 * run's job while it is still pending (seed 000 §5.5): the job keeps its
 * id, its place and its dependency. scontrol wants memory in MB, so the
 * size is converted. Checked against the partition first; recorded on the
 * attempt. A job that runs or ended needs `xloop retry` instead.
 *
 * xloop why T: why the run's job is pending: the reason explained, and
 * `sbatch --test-only` probes (the same request, without its GRES, with
 * half the memory) to name the blocker and when Slurm expects the start.
 * A job held by the chain instead names the jobs ahead of it and estimates
 * its start from how long the study's runs usually take.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "jobs/chain.h"
#include "cmd/cmd.h"
#include "loop.h"
#include "slurm/reasons.h"
#include "jobs/steps.h"
#include "jobs/steps-run.h"
#include "jobs/submit.h"

static const struct opt adjust_opts[] = {
	{ "mem", OPT_STRING, "M", "the pending job's new memory (8G); one of --mem, --time" },
	{ "time", OPT_STRING, "D", "the pending job's new time limit (2:00:00)" },
	OPT_END,
};

/* The run's latest attempt and its job as squeue shows it. 0 or an exit code. */
static int pending_job(struct xl_ctx *ctx, struct slurm *s, const char *tag,
		       struct run *r, struct attempt *a, struct slurm_jobs *q,
		       const struct slurm_job **job)
{
	char *cause = NULL;
	int rc = loop_find_run(ctx, tag, r, &cause);

	*job = NULL;
	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	if (attempts_latest(&ctx->db, r->id, a) != 0) {
		error("%s was never submitted", r->tag);
		run_release(r);
		return XL_DATAERR;
	}
	if (*a->verdict || !*a->job_id) {
		error("%s's attempt %lld is not in the queue (%s): `xloop retry %s` submits "
		      "it again", r->tag, a->n, *a->verdict ? a->verdict : a->phase, r->tag);
		rc = XL_DATAERR;
		goto fail;
	}
	rc = slurm_squeue_mine(s, q, &cause);
	if (rc) {
		error("%s", cause);
		free(cause);
		goto fail;
	}
	*job = slurm_jobs_find(q, a->job_id);
	if (!*job || (*job)->state != SLURM_STATE_PENDING) {
		error("%s's job %s is %s, not pending: its limits cannot change any more; "
		      "`xloop retry %s --mem M` or `--time D` starts a new attempt",
		      r->tag, a->job_id, *job ? (*job)->state_raw : "no longer queued",
		      r->tag);
		rc = XL_DATAERR;
		goto fail;
	}
	return 0;
fail:
	attempt_release(a);
	run_release(r);
	return rc;
}

/* Change a pending job's memory or time. */
static int cmd_adjust(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	struct submit_opts o;
	struct slurm_jobs q = SLURM_JOBS_INIT;
	const struct slurm_job *job;
	struct attempt a;
	struct slurm s;
	struct run r;
	struct stmt st;
	char *cause = NULL, *value, *detail;
	int rc;

	cmd_submit_opts(args, &o);
	o.no_chain = 1;
	if (!!o.mem == !!o.time)
		return cmd_usage_error(self, "give one of --mem M or --time D"), XL_USAGE;
	rc = submit_check_overrides(&o, &cause);
	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	slurm_init(&s);
	rc = pending_job(ctx, &s, args->pos[0], &r, &a, &q, &job);
	if (rc) {
		slurm_jobs_release(&q);
		return rc;
	}
	/* the partition must allow it, as for a submission */
	rc = submit_preflight(ctx, &s, &o, &cause);
	if (rc == 0) {
		value = o.mem ? xasprintf("%lld", config_mem_mb(o.mem)) : xstrdup(o.time);
		rc = slurm_scontrol_update(&s, a.job_id, o.mem ? "MinMemoryNode" : "TimeLimit",
					   value, &cause);
		free(value);
	}
	if (rc) {
		error("%s", cause ? cause : "scontrol update failed");
		goto out;
	}
	if (db_prepare(&ctx->db, &st, o.mem ?
		       "UPDATE attempt SET mem = :v, overrides = trim(coalesce(overrides, '')"
		       " || ' adjust:--mem=' || :v) WHERE id = :id" :
		       "UPDATE attempt SET time_limit = :v, overrides = trim(coalesce(overrides,"
		       " '') || ' adjust:--time=' || :v) WHERE id = :id") == 0) {
		db_bind_text(&st, ":v", o.mem ? o.mem : o.time);
		db_bind_int64(&st, ":id", a.id);
		db_step(&st);
		db_finalize(&st);
	}
	detail = xasprintf("job %s adjusted while pending: --%s %s (was %s)", a.job_id,
			   o.mem ? "mem" : "time", o.mem ? o.mem : o.time,
			   o.mem ? a.mem : a.time_limit);
	loop_event(ctx, "adjusted", r.id, a.id, detail);
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:I, s:s, s:s, s:s}", "tag", r.tag, "attempt",
					(json_int_t)a.n, "job_id", a.job_id,
					"field", o.mem ? "mem" : "time", "value",
					o.mem ? o.mem : o.time));
	else
		printf("%s: %s; it keeps its place and its dependency\n", r.tag, detail);
	free(detail);
out:
	free(cause);
	slurm_jobs_release(&q);
	attempt_release(&a);
	run_release(&r);
	return rc;
}

const struct cmd_entry cmd_adjust_entry = {
	.name = "adjust", .opts = adjust_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_NONE,
	.summary = "change a pending job's memory or time limit in place (scontrol update)",
	.help = "For a job still pending: `scontrol update jobid=ID MinMemoryNode=MB` or\n"
	"`TimeLimit=D`, so the job keeps its id, its place in the queue and its\n"
	"dependency. The value is checked against the partition's MaxTime and its\n"
	"nodes' memory first, and recorded on the attempt. Slurm lets users lower\n"
	"a time limit; raising one may need an operator. A running or finished\n"
	"job needs `xloop retry T --mem M` instead.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_adjust,
};

/* One sbatch --test-only probe. */
struct probe {
	const char *name;
	time_t start;
	char *error;
};

/* "job 12 (LR-0.1, running for 20 s)" of a chain job (malloc'd). */
static char *chain_job_text(const struct chain_job *cj)
{
	char *el = chain_duration(cj->elapsed), *t;

	t = xasprintf("job %s (%s%s%s%s%s)", cj->id, *cj->tag ? cj->tag : "not this study's",
		      cj->array ? ", an array" : "", cj->running ? ", running" : ", pending",
		      cj->running && cj->elapsed >= 0 ? " for " : "",
		      cj->running && cj->elapsed >= 0 ? el : "");
	free(el);
	return t;
}

/*
 * Why a job held by the chain waits: the jobs ahead of it, and when it may
 * start from how long the study's runs usually take (not from --time).
 * 1 when the job waits for no live job (nothing printed), else an exit code.
 */
static int why_chain(struct xl_ctx *ctx, struct slurm *s, const struct run *r,
		     const struct attempt *a, const struct slurm_job *job,
		     const struct reason_info *ri)
{
	struct chain c;
	struct chain_job *me, *cur;
	const struct chain_job **ahead = NULL;
	size_t nahead = 0, samples = 0, i;
	long long typical, wait = 0, pending_runs = 0;
	int lower_bound = 0, known = 1;
	char *cause = NULL, *basis, *blocker, *first, *est = NULL;
	json_t *arr = json_array();
	int rc = chain_load(ctx, s, &c, &cause);

	if (rc) {
		error("%s", cause ? cause : "unable to read the queue");
		free(cause);
		json_decref(arr);
		return rc;
	}
	me = chain_find(&c, a->job_id);
	if (strcmp(job->reason, "Dependency") != 0 &&
	    (!me || !*me->after || !chain_find(&c, me->after))) {
		/* not waiting for a live job: the probes tell more */
		chain_release(&c);
		json_decref(arr);
		return 1;
	}
	/* walk back to the head of the line (no loop: at most every job once) */
	for (cur = me; cur && *cur->after && nahead < c.n;) {
		cur = chain_find(&c, cur->after);
		if (!cur)
			break;
		ahead = xreallocarray(ahead, nahead + 1, sizeof(*ahead));
		ahead[nahead++] = cur;
	}
	typical = chain_typical_secs(ctx, &samples);
	if (typical >= 0) {
		char *t = chain_duration(typical);

		basis = xasprintf("a run of this study usually takes %s (the median of its "
				  "last %zu successful attempt%s)", t, samples,
				  samples == 1 ? "" : "s");
		free(t);
	} else {
		basis = NULL;
	}
	for (i = 0; i < nahead; i++) {
		const struct chain_job *j = ahead[i];

		if (j->running && typical >= 0) {
			wait += typical > j->elapsed ? typical - j->elapsed : 0;
		} else if (j->running && j->elapsed >= 0) {
			/* nothing finished yet: it takes at least as long as it ran */
			typical = j->elapsed;
			lower_bound = 1;
			basis = xasprintf("no run of this study has succeeded yet; the running "
					  "one has taken %lld s so far, so each run ahead is taken "
					  "to last at least that", j->elapsed);
		} else if (!j->running) {
			pending_runs += j->pending;
		}
		json_array_append_new(arr, json_pack("{s:s, s:o, s:s, s:o, s:I}",
			"job_id", j->id, "tag", *j->tag ? json_string(j->tag) : json_null(),
			"state", j->running ? "RUNNING" : "PENDING",
			"elapsed_s", j->running && j->elapsed >= 0 ? json_integer(j->elapsed) :
				json_null(), "pending_tasks", (json_int_t)j->pending));
	}
	if (typical >= 0)
		wait += typical * pending_runs;
	else
		known = 0;
	if (!basis)
		basis = xstrdup("no run of this study has succeeded yet and none runs: "
				"no estimate");
	first = nahead ? chain_job_text(ahead[0]) :
		xasprintf("job %s, which is no longer queued", *a->after_job ? a->after_job :
			  me && *me->after ? me->after : "?");
	if (known) {
		char *d = chain_duration(wait);

		est = !lower_bound && wait < 5 ? xstrdup("any moment now") :
			xasprintf("in %s %s", lower_bound ? "at least" : "about", d);
		free(d);
	}
	blocker = xasprintf("the chain: it waits for %s; %s", first,
			    known ? est : "when it starts is not known yet");
	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:s, s:[], s:s, s:o, s:o, s:o,"
					" s:o, s:s}",
			"tag", r->tag, "job_id", a->job_id, "reason", job->reason,
			"meaning", ri->meaning, "kind", reason_kind_name(ri->kind), "probes",
			"blocker", blocker,
			"waits_for", nahead ? json_string(ahead[0]->id) : json_null(),
			"ahead", arr,
			"starts_in_s", known ? json_integer(wait) : json_null(),
			"typical_s", typical >= 0 ? json_integer(typical) : json_null(),
			"estimate_basis", basis));
	} else {
		printf("%s (job %s) is pending: %s\n  %s\n", r->tag, a->job_id,
		       *job->reason ? job->reason : "no reason given", ri->meaning);
		for (i = 0; i < nahead; i++) {
			char *t = chain_job_text(ahead[i]);

			printf("  %s %s\n", i ? "which waits for" : "waits for", t);
			free(t);
		}
		printf("  expected start: %s (%s)\n", known ? est : "unknown", basis);
		printf("blocker: %s\n", blocker);
		json_decref(arr);
	}
	free(est);
	free(first);
	free(blocker);
	free(basis);
	free(ahead);
	chain_release(&c);
	return 0;
}

/*
 * A run with steps whose job.sh job has ended while a later step is live
 * or waits: say which (its Reason), 0; 1 when that is not the case.
 */
static int why_step(struct xl_ctx *ctx, struct slurm *s, const char *tag)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt a;
	struct run r;
	char *cause = NULL, *t = NULL;
	int rc = 1;

	if (loop_find_run(ctx, tag, &r, &cause) != 0) {
		free(cause);
		return 1;	/* pending_job says why */
	}
	if (attempts_latest(&ctx->db, r.id, &a) == 0) {
		if (!*a.verdict && *a.job_id && slurm_squeue_mine(s, &q, &cause) == 0) {
			const struct slurm_job *j = slurm_jobs_find(&q, a.job_id);

			if (!j || slurm_state_is_final(j->state))
				t = steps_live_text(ctx, a.id, &q);
		}
		if (t) {
			if (ctx->json)
				cmd_emit_json(json_pack("{s:s, s:s, s:n, s:s, s:s, s:[], s:s}",
					"tag", r.tag, "job_id", a.job_id, "reason", "meaning",
					"job.sh's job (step 1) has ended; a later step runs or "
					"waits afterok on the step before it", "kind", "wait",
					"probes", "blocker", t));
			else
				printf("%s: step 1 '%s' (job %s) has ended; %s\n"
				       "  a later step waits afterok on the step before it\n",
				       r.tag, STEP_FIRST, a.job_id, t);
			rc = 0;
		}
		attempt_release(&a);
	}
	free(t);
	free(cause);
	slurm_jobs_release(&q);
	run_release(&r);
	return rc;
}

/* Why the job waits. */
static int cmd_why(struct xl_ctx *ctx, const struct cmd_entry *self, struct cmd_args *args)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	const struct slurm_job *job;
	const struct reason_info *ri;
	struct probe pr[3] = { { "as submitted", 0, NULL }, { "without its GRES", 0, NULL },
			       { "with half the memory", 0, NULL } };
	struct slurm_submit req;
	struct attempt a;
	struct slurm s;
	struct run r;
	json_t *probes = json_array();
	char *script, *half, *blocker;
	time_t now = time(NULL);
	int rc, i;

	(void)self;
	slurm_init(&s);
	if ((rc = why_step(ctx, &s, args->pos[0])) != 1) {
		json_decref(probes);
		return rc;
	}
	rc = pending_job(ctx, &s, args->pos[0], &r, &a, &q, &job);
	if (rc) {
		json_decref(probes);
		slurm_jobs_release(&q);
		return rc;
	}
	ri = reason_explain(job->reason);
	/* held by the chain (its Reason may still say None just after a change):
	 * the probes ignore dependencies, their times would mean nothing */
	rc = why_chain(ctx, &s, &r, &a, job, ri);
	if (rc != 1) {
		json_decref(probes);
		slurm_jobs_release(&q);
		attempt_release(&a);
		run_release(&r);
		return rc;
	}
	script = run_job_path(ctx->root, ctx->cfg.study, r.tag);
	half = xasprintf("%lldM", (config_mem_mb(*a.mem ? a.mem : ctx->cfg.res.mem) + 1) / 2);
	for (i = 0; i < 3; i++) {
		char *cause = NULL;

		slurm_fill_request(&ctx->cfg, ctx->root, &req,
				   i == 2 ? half : *a.mem ? a.mem : NULL,
				   *a.time_limit ? a.time_limit : NULL, NULL);
		req.script = script;
		req.gres = i == 1 ? NULL : *a.gres ? a.gres : NULL;
		if (slurm_sbatch_test(&s, &req, &pr[i].start, &cause) != 0)
			pr[i].error = cause ? cause : xstrdup("sbatch --test-only failed");
		else
			free(cause);
		json_array_append_new(probes, json_pack("{s:s, s:o, s:o, s:o}", "probe",
			pr[i].name, "start", pr[i].error ? json_null() : json_integer(pr[i].start),
			"starts_in_s", pr[i].error ? json_null() :
				json_integer(pr[i].start > now ? pr[i].start - now : 0),
			"error", pr[i].error ? json_string(pr[i].error) : json_null()));
	}
	/* a probe that starts clearly sooner names what the job waits for */
#define SOONER(x, y) (!pr[x].error && (pr[y].error || pr[x].start + 30 < pr[y].start))
	if (*a.gres && SOONER(1, 0))
		blocker = xasprintf("the GPU (%s): without it the job could start %s", a.gres,
				    pr[1].start <= now + 30 ? "now" : "sooner");
	else if (SOONER(2, 0))
		blocker = xasprintf("memory (%s): with %s it could start sooner", a.mem, half);
	else if (!pr[0].error && pr[0].start <= now + 30)
		blocker = xasprintf("nothing in its request: it could start now, so it waits "
				    "on its reason (%s)", *job->reason ? job->reason : "none");
	else if (pr[0].error)
		blocker = xasprintf("its request as such: %s", pr[0].error);
	else
		blocker = xasprintf("the time and CPUs of jobs ahead of it: Slurm expects "
				    "it to start in %lld min", (long long)(pr[0].start - now + 59) / 60);
#undef SOONER
	if (ctx->json) {
		/* "None" is null in JSON, as in every document */
		int none = !*job->reason || strcmp(job->reason, "None") == 0;

		cmd_emit_json(json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:s}", "tag", r.tag,
					"job_id", a.job_id, "reason", none ? json_null() :
					json_string(job->reason), "meaning",
					ri->meaning, "kind", reason_kind_name(ri->kind),
					"probes", probes, "blocker", blocker));
	} else {
		printf("%s (job %s) is pending: %s\n  %s\n", r.tag, a.job_id,
		       *job->reason ? job->reason : "no reason given", ri->meaning);
		for (i = 0; i < 3; i++) {
			printf("  %-22s ", pr[i].name);
			if (pr[i].error)
				printf("refused: %s\n", pr[i].error);
			else if (pr[i].start <= now + 30)
				printf("could start now\n");
			else
				printf("would start in %lld min\n",
				       (long long)(pr[i].start - now + 59) / 60);
		}
		printf("blocker: %s\n", blocker);
		json_decref(probes);
	}
	for (i = 0; i < 3; i++)
		free(pr[i].error);
	free(blocker);
	free(half);
	free(script);
	slurm_jobs_release(&q);
	attempt_release(&a);
	run_release(&r);
	return 0;
}

const struct cmd_entry cmd_why_entry = {
	.name = "why", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_NONE,
	.summary = "why a run's job is pending: its reason explained, and what blocks it",
	.help = "The job's Reason with its meaning, then three `sbatch --test-only`\n"
	"probes (nothing is submitted): the request as submitted, without its\n"
	"GRES, and with half the memory. A probe that could start clearly sooner\n"
	"names the blocker (the GPU, memory); otherwise Slurm's expected start\n"
	"for the request as it is.\n"
	"\n"
	"A job held by the chain (Reason Dependency; --test-only ignores\n"
	"dependencies) instead names the jobs ahead of it, by job id and tag, and\n"
	"estimates its start from how long the study's runs usually take: the\n"
	"median run time of its latest 20 successful attempts, less what the\n"
	"running job has run, plus one run per job waiting ahead (with no success\n"
	"yet: at least the running job's time so far per job). Never from --time.\n"
	"`xloop prioritize T` moves a job to the front of the line.\n"
	"\n"
	"For a run with steps (adopt --step) whose job.sh job has ended, it names\n"
	"the later step that runs or waits (blocker: \"step 2 'eval' PENDING\n"
	"(Dependency), job 12\").\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_why,
};
