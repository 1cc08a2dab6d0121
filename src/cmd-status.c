/*
 * xloop status [T]: every run of the study with its latest attempt, or one
 * run in detail. Live states come from one squeue call for all jobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "best.h"
#include "cmd.h"
#include "fsutil.h"
#include "loop.h"
#include "opts.h"
#include "study.h"

/* What one attempt looks like right now. */
struct live {
	char *state;		/* PENDING, RUNNING, ... from squeue, or "" */
	char *reason;
	char *elapsed;
};

/* One word for an attempt's state. */
static const char *state_word(const struct attempt *a, const struct slurm_job *j)
{
	if (*a->verdict)
		return a->verdict;
	if (strcmp(a->phase, "submit_failed") == 0)
		return "submit-failed";
	if (strcmp(a->phase, "submitting") == 0)
		return "submitting";
	if (j)
		return slurm_state_name(j->state);
	if (*a->state)
		return a->state;
	return "ended";		/* gone from squeue, not judged yet */
}

/* Warn when job.sh changed after a still-pending submission. */
static int changed_since_submit(struct xl_ctx *ctx, const struct run *r,
				const struct attempt *a)
{
	char *job = run_job_path(ctx->root, ctx->cfg.study, r->tag), sha[65];
	struct buf text = BUF_INIT;
	char *cause = NULL;
	int err, changed = 0;

	if (study_read_script(job, &text, &err, &cause) == 0) {
		study_sha256(text.s, text.len, sha);
		changed = *a->job_sha256 && strcmp(sha, a->job_sha256) != 0;
	}
	free(cause);
	free(job);
	buf_release(&text);
	return changed;
}

/* One run of status --json, written straight out (schemas/status.json). */
static void run_json(struct jsonw *w, const struct run *r, const struct attempt *v,
		     size_t n, const struct slurm_jobs *q, int best)
{
	const struct attempt *last = n ? &v[n - 1] : NULL;
	size_t k;

	jsonw_open(w, NULL, '{');
	jsonw_str(w, "tag", r->tag);
	if (r->parent_id) {
		jsonw_str(w, "parent", r->parent_tag);
		jsonw_open(w, "change", '{');
		jsonw_str(w, "var", r->var);
		jsonw_str(w, "old", r->old_value);
		jsonw_str(w, "new", r->new_value);
		jsonw_close(w, '}');
	} else {
		jsonw_null(w, "parent");
		jsonw_null(w, "change");
	}
	jsonw_str(w, "state", last ? state_word(last, slurm_jobs_find(q, last->job_id)) : "new");
	jsonw_bool(w, "best", best);
	jsonw_open(w, "attempts", '[');
	for (k = 0; k < n; k++) {
		const struct attempt *a = &v[k];
		const struct slurm_job *j = slurm_jobs_find(q, a->job_id);

		jsonw_open(w, NULL, '{');
		jsonw_int(w, "n", a->n);
		jsonw_str(w, "phase", a->phase);
		jsonw_str(w, "state", state_word(a, j));
		jsonw_str(w, "job_id", a->job_id);
		jsonw_str(w, "log", a->log_path);
		jsonw_str(w, "reason", j ? j->reason : a->slurm_reason);
		jsonw_str(w, "elapsed", j ? j->run_time : "");
		jsonw_str(w, "verdict", a->verdict);
		jsonw_str(w, "verdict_reason", a->verdict_reason);
		if (a->has_score)
			jsonw_real(w, "score", a->score);
		else
			jsonw_null(w, "score");
		jsonw_str(w, "resources", a->overrides);
		if (a->submitted_at)
			jsonw_int(w, "submitted_at", a->submitted_at);
		else
			jsonw_null(w, "submitted_at");
		jsonw_str_or_null(w, "class", a->failure_class);
		jsonw_str_or_null(w, "auto_retry", a->auto_retry);
		jsonw_close(w, '}');
	}
	jsonw_close(w, ']');
	jsonw_close(w, '}');
}

static void print_detail(struct xl_ctx *ctx, const struct run *r,
			 const struct attempt *v, size_t n, const struct slurm_jobs *q)
{
	size_t i;

	printf("run %s (study %s)\n", r->tag, r->study);
	if (r->parent_id)
		printf("  parent   %s\n  change   %s: %s -> %s\n", r->parent_tag, r->var,
		       r->old_value, r->new_value);
	else
		printf("  root run (adopted)\n");
	if (*r->note)
		printf("  note     %s\n", r->note);
	if (*r->commit_id)
		printf("  commit   %.12s\n", r->commit_id);
	printf("  job.sh   runs/%s/%s/job.sh\n", r->study, r->tag);
	if (n == 0)
		printf("  not submitted yet: xloop submit %s\n", r->tag);
	for (i = 0; i < n; i++) {
		const struct attempt *a = &v[i];
		const struct slurm_job *j = slurm_jobs_find(q, a->job_id);

		printf("  attempt %lld: %s", a->n, state_word(a, j));
		if (*a->job_id)
			printf(", job %s", a->job_id);
		if (j && *j->reason && strcmp(j->reason, "None") != 0)
			printf(" (%s)", j->reason);
		if (j && *j->run_time)
			printf(", elapsed %s", j->run_time);
		if (a->has_score)
			printf(", score %g", a->score);
		putchar('\n');
		if (*a->verdict_reason)
			printf("    %s\n", a->verdict_reason);
		if (*a->submit_error)
			printf("    sbatch: %s\n", a->submit_error);
		if (*a->overrides)
			printf("    resources changed: %s\n", a->overrides);
		if (*a->log_path)
			printf("    log %s\n", a->log_path);
		if (j && j->state == SLURM_STATE_PENDING && changed_since_submit(ctx, r, a))
			printf("    warning: job.sh changed after this submission; Slurm will "
			       "run the copy it saved when the job was submitted\n");
	}
}

/* Show the study, or one run. */
static int cmd_status(struct xl_ctx *ctx, const struct cmd_entry *self,
		      int argc, char **argv)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt_walk walk;
	struct json_stream js;
	struct run *runs = NULL, best;
	struct slurm s;
	char **pos, *cause = NULL;
	size_t nruns = 0, i;
	struct best_info bi;
	char shown[128];
	int npos, rc, sq, have_best;

	rc = opts_parse(ctx, self, NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 0, 1) < 0) {
		free(pos);
		return XL_USAGE;
	}
	if (npos == 1) {
		runs = xcalloc(1, sizeof(*runs));
		rc = loop_find_run(ctx, pos[0], runs, &cause);
		if (rc) {
			error("%s", cause);
			free(cause);
			free(runs);
			free(pos);
			return rc;
		}
		nruns = 1;
	} else if (runs_list(&ctx->db, ctx->cfg.study, &runs, &nruns) < 0) {
		free(pos);
		return XL_ERR;
	}
	free(pos);

	/* one squeue call for every live job; without Slurm, say so and go on */
	slurm_init(&s);
	sq = slurm_squeue_mine(&s, &q, &cause);
	if (sq) {
		warning("live states unknown: %s", cause);
		FREE_AND_NULL(cause);
	}
	rc = XL_OK;
	have_best = best_get(ctx, &best, &bi) == 0;

	if (attempt_walk_open(&ctx->db, ctx->cfg.study, npos ? runs[0].id : 0, &walk) < 0) {
		rc = XL_ERR;
	} else if (ctx->json) {
		/* streamed: a study of 10,000 runs is tens of MB of JSON */
		json_t *head = json_pack("{s:s, s:s, s:s, s:o, s:b}",
					 "schema", "xloop.status/1",
					 "study", ctx->cfg.study,
					 "metric", ctx->cfg.metric,
					 "best", have_best ? json_string(best.tag) : json_null(),
					 "slurm_reachable", sq == 0);

		json_object_set_new(head, "best_score", have_best ?
				    best_json(best.tag, &bi) : json_null());
		cmd_json_begin(&js, head, "runs");
	} else if (npos == 0) {
		printf("study %s: %zu run%s", ctx->cfg.study, nruns, nruns == 1 ? "" : "s");
		if (have_best) {
			best_format(&bi, shown, sizeof(shown));
			printf(", best %s: %s %s", best.tag, ctx->cfg.metric, shown);
		}
		printf("\n%-2s%-20s %-14s %-28s %-13s %3s %-10s %-10s %s\n", "", "TAG",
		       "PARENT", "CHANGE", "STATE", "ATT", "JOB", "ELAPSED", "SCORE");
	}
	for (i = 0; rc == XL_OK && i < nruns; i++) {
		struct run *r = &runs[i];
		struct attempt *v = NULL, *a;
		const struct slurm_job *j;
		size_t n = 0;
		char change[64], score[32];

		if (attempt_walk_run(&walk, r->id, &v, &n) < 0) {
			rc = XL_ERR;	/* a broken document and exit 70 */
			break;
		}
		a = n ? &v[n - 1] : NULL;
		j = a ? slurm_jobs_find(&q, a->job_id) : NULL;
		if (ctx->json) {
			run_json(&js.w, r, v, n, &q, have_best && best.id == r->id);
			if (js.out.len >= 1 << 16)
				cmd_json_flush(&js);
		} else if (npos == 1) {
			print_detail(ctx, r, v, n, &q);
		} else {
			if (r->parent_id) {
				int w = snprintf(change, sizeof(change), "%s %s->%s", r->var,
						 r->old_value, r->new_value);

				if (w < 0 || (size_t)w >= sizeof(change))
					xsnprintf(change + sizeof(change) - 4, 4, "...");
			} else {
				xsnprintf(change, sizeof(change), "(root)");
			}
			if (a && a->has_score)
				xsnprintf(score, sizeof(score), "%g", a->score);
			else
				xsnprintf(score, sizeof(score), "-");
			printf("%-2s%-20s %-14s %-28s %-13s %3lld %-10s %-10s %s\n",
			       have_best && best.id == r->id ? "*" : "", r->tag,
			       r->parent_id ? r->parent_tag : "-", change,
			       a ? state_word(a, j) : "new", a ? a->n : 0LL,
			       a && *a->job_id ? a->job_id : "-",
			       j && *j->run_time ? j->run_time : "-", score);
			if (a && j && j->state == SLURM_STATE_PENDING &&
			    changed_since_submit(ctx, r, a))
				printf("  warning: %s's job.sh changed after submission; Slurm "
				       "will run the copy it saved then\n", r->tag);
		}
		attempts_free(v, n);
	}
	if (ctx->json && rc != XL_ERR)
		cmd_json_end(&js);
	attempt_walk_close(&walk);
	if (have_best)
		run_release(&best);
	runs_free(runs, nruns);
	slurm_jobs_release(&q);
	return rc == XL_ERR ? XL_ERR : XL_OK;
}

const struct cmd_entry cmd_status_entry = {
	"status", "[T]", "show every run of the study, or one run in detail",
	"One row per run: tag, parent, change (VAR old->new), state, attempt, job\n"
	"id, elapsed time, score; '*' marks the best proven run. With T, the run's\n"
	"lineage and all its attempts. Live states come from a single squeue call.\n",
	CMD_DB | CMD_NOROOT, cmd_status,
};
