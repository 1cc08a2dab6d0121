/*
 * xloop show T: the run's lineage back to its root, one change per step.
 * xloop diff T: the run's one changed line against its parent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "runs.h"
#include "search/best.h"
#include "jobs/steps.h"
#include "study.h"

#define MAX_LINEAGE 10000

/* Print a run's ancestry. */
/*
 * A run's word: "best" when its configuration is the best (the model's
 * pick: `help best`), else what its latest attempt did: "succeeded",
 * "failed", "stopped" (early, issue 45), "pending" (no verdict yet). Only the paired test confirms, and
 * status says it. *restarts: how often Slurm restarted that attempt's job.
 */
static const char *run_status(struct xl_ctx *ctx, const struct best_state *bs,
			      const struct run *r, long long *restarts)
{
	struct attempt a;
	const char *word;
	long c = best_find_run(bs, r->id);
	int best = c >= 0 && c == bs->best && bs->v[c].st.n > 0;

	*restarts = 0;
	if (attempts_latest(&ctx->db, r->id, &a) != 0)
		return best ? "best" : "pending";
	*restarts = a.restarts;
	word = best ? "best" : !*a.verdict ? "pending" :
	       strcmp(a.verdict, "success") == 0 ? "succeeded" :
	       strcmp(a.verdict, "stopped") == 0 ? "stopped" : "failed";
	attempt_release(&a);
	return word;
}

static int cmd_show(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	struct run *chain = NULL;
	struct best_state bs;
	size_t n = 0, i;
	json_t *arr = NULL;
	int rc = 0;

	(void)self;
	memset(&bs, 0, sizeof(bs));
	chain = xcalloc(1, sizeof(*chain));
	chain[0] = *args->run;	/* taken: freed with the chain */
	args->run = NULL;
	n = 1;
	while (chain[n - 1].parent_id && n < MAX_LINEAGE) {
		chain = xreallocarray(chain, n + 1, sizeof(*chain));
		if (runs_get(&ctx->db, ctx->cfg.study, chain[n - 1].parent_tag, &chain[n]) != 0) {
			rc = XL_ERR;
			break;
		}
		n++;
	}
	if (best_load(ctx, &bs) < 0)
		rc = XL_ERR;
	if (ctx->json)
		arr = json_array();
	else if (rc == 0)
		printf("lineage of %s (newest first):\n", chain[0].tag);
	for (i = 0; i < n && rc == 0; i++) {
		const struct run *r = &chain[i];
		long long restarts;
		const char *verdict = run_status(ctx, &bs, r, &restarts);
		char again[80] = "";

		/* Slurm's own restarts of the latest attempt's job: node lost, preempted */
		if (restarts)
			xsnprintf(again, sizeof(again), " (restarted %lld time%s by Slurm)",
				  restarts, restarts == 1 ? "" : "s");
		if (arr) {
			json_array_append_new(arr, json_pack("{s:s, s:o, s:o, s:s, s:I, s:s}",
				"tag", r->tag,
				"parent", r->parent_id ? json_string(r->parent_tag) : json_null(),
				"change", r->parent_id ? json_pack("{s:s, s:s, s:s}", "var", r->var,
					"old", r->old_value, "new", r->new_value) : json_null(),
				"status", verdict, "restarts", (json_int_t)restarts, "note", r->note));
		} else if (r->parent_id) {
			printf("  %-20s %s: %s -> %s  [%s]%s%s%s\n", r->tag, r->var, r->old_value,
			       r->new_value, verdict, again, *r->note ? "  # " : "", r->note);
		} else {
			printf("  %-20s (root, adopted)  [%s]%s\n", r->tag, verdict, again);
		}
	}
	if (arr && rc == 0)
		cmd_emit_json(json_pack("{s:s, s:o}", "tag", chain[0].tag, "lineage", arr));
	else
		json_decref(arr);
	runs_free(chain, n);
	best_release(&bs);
	return rc;
}

const struct cmd_entry cmd_show_entry = {
	.name = "show", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_RUN,
	.summary = "show a run's lineage: each step back to the root and its one change",
	.help = "",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_show,
};

/* Print the run's one changed line against its parent. */
static int cmd_diff(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	char *pa = NULL, *pb = NULL, *cause = NULL, *file = NULL;
	struct step_set set;
	struct run *r = args->run;
	int rc = 0, err, first = 0, nd;

	(void)self;
	if (!r->parent_id) {
		printf("%s is a root run (adopted): it has no parent to differ from\n", r->tag);
		goto out;
	}
	/* a run with steps: the script of the step that holds the variable */
	if (steps_read(&ctx->db, ctx->root, ctx->cfg.study, r->id, r->tag, &set, &cause) == 0) {
		size_t h = steps_holder(&set, r->var);

		if (h)
			file = xasprintf("%s.sh", set.names[h]);
		step_set_release(&set);
	}
	FREE_AND_NULL(cause);
	if (!file)
		file = xstrdup("job.sh");
	pa = xasprintf("%s/runs/%s/%s/%s", ctx->root, ctx->cfg.study, r->parent_tag, file);
	pb = xasprintf("%s/runs/%s/%s/%s", ctx->root, ctx->cfg.study, r->tag, file);
	if (study_read_script(pa, &a, &err, &cause) < 0 ||
	    study_read_script(pb, &b, &err, &cause) < 0) {
		error("%s", cause);
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto out;
	}
	nd = jobsh_lines_differ(a.s, a.len, b.s, b.len, &first);
	if (nd != 1)
		warning("%s's %s differs from its parent's in %d lines (xloop made it "
			"differ in one): it was edited by hand", r->tag, file, nd);
	printf("--- runs/%s/%s/%s\n+++ runs/%s/%s/%s\n", ctx->cfg.study,
	       r->parent_tag, file, ctx->cfg.study, r->tag, file);
	if (nd > 0) {
		const char *la = a.s, *lb = b.s;
		int i;

		for (i = 1; i < first; i++) {
			const char *na = strchr(la, '\n'), *nb = strchr(lb, '\n');

			la = na ? na + 1 : la + strlen(la);
			lb = nb ? nb + 1 : lb + strlen(lb);
		}
		printf("@@ line %d @@\n-%.*s\n+%.*s\n", first, (int)strcspn(la, "\n"), la,
		       (int)strcspn(lb, "\n"), lb);
	}
out:
	free(cause);
	free(file);
	free(pa);
	free(pb);
	buf_release(&a);
	buf_release(&b);
	return rc;
}

const struct cmd_entry cmd_diff_entry = {
	.name = "diff", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_RUN,
	.summary = "show a run's one changed line against its parent's job.sh (or step)",
	.help = "",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_diff,
};
