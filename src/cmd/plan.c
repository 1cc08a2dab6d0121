/*
 * xloop plan add VAR=VALUE... [--from P|best] | plan ls | plan rm ID:
 * the queue of intended one-variable changes that next/tick submit.
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
#include "plan.h"
#include "study.h"
#include "tags.h"
#include "search/taken.h"

static const struct opt plan_ls_opts[] = {
	{ "all", OPT_FLAG, NULL, "also the done, skipped and removed entries" },
	OPT_END,
};

static const struct opt plan_add_opts[] = {
	{ "from", OPT_STRING, "P|best", "the parent of every change (default: best, when used)" },
	OPT_END,
};

/*
 * Refuse what feeding would refuse later: a change `new` refuses, and a
 * configuration taken already (loop_check_change: a run or a proposal has
 * it, or an entry of the plan makes it; not checked while "best" has no
 * run yet).
 */
static int check_entry(struct xl_ctx *ctx, const char *from, const char *var,
		       const char *value, char **cause)
{
	struct run r;
	int rc = loop_find_run(ctx, from, &r, cause);

	if (rc == XL_NOINPUT && strcmp(from, "best") == 0) {
		/* no best yet: it is resolved when the entry is used */
		FREE_AND_NULL(*cause);
		return 0;
	}
	if (rc)
		return rc;
	rc = loop_check_change(ctx, &r, var, value, TAKEN_PLAN, 0, cause);
	run_release(&r);
	return rc;
}

static int plan_add_cmd(struct xl_ctx *ctx, char **pos, int npos, const char *from)
{
	char **vars = xcalloc((size_t)npos, sizeof(*vars));
	char **vals = xcalloc((size_t)npos, sizeof(*vals));
	char *cause = NULL;
	long long id;
	int i, j, rc = 0;
	json_t *ids = json_array();

	/* validate everything first: all or nothing */
	for (i = 1; i < npos && rc == 0; i++) {
		if (jobsh_parse_setting(pos[i], &vars[i], &vals[i], &cause) < 0)
			rc = XL_DATAERR;
		else
			rc = check_entry(ctx, from, vars[i], vals[i], &cause);
		for (j = 1; j < i && rc == 0; j++)
			if (strcmp(vars[j], vars[i]) == 0 && value_same(vals[j], vals[i])) {
				cause = xasprintf("%s=%s is given twice", vars[i], vals[i]);
				rc = XL_DATAERR;
			}
	}
	if (rc == 0 && db_begin_write(&ctx->db) < 0)
		rc = XL_TEMPFAIL;
	for (i = 1; i < npos && rc == 0; i++) {
		if (plan_add(&ctx->db, ctx->cfg.study, from, vars[i], vals[i], &id) < 0) {
			db_rollback(&ctx->db);
			rc = XL_ERR;
			break;
		}
		json_array_append_new(ids, json_integer(id));
	}
	if (rc == 0 && db_commit(&ctx->db) < 0)
		rc = XL_ERR;
	/* say what was added only once it is stored */
	if (rc)
		error("%s", cause ? cause : "unable to add to the plan");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:O}", "added", ids));
	else
		for (i = 1; i < npos; i++)
			printf("plan %lld: %s=%s from %s\n",
			       (long long)json_integer_value(json_array_get(ids, (size_t)i - 1)),
			       vars[i], vals[i], from);
	if (rc == 0)	/* driver.mode slurm: a feeder submits them once the session ends */
		driver_after_edit(ctx);
	json_decref(ids);
	for (i = 0; i < npos; i++) {
		free(vars[i]);
		free(vals[i]);
	}
	free(vars);
	free(vals);
	free(cause);
	return rc;
}

static int plan_ls_cmd(struct xl_ctx *ctx, int all)
{
	struct plan_entry *v;
	size_t n, i;
	json_t *a;

	if (plan_list(&ctx->db, ctx->cfg.study, !all, &v, &n) < 0)
		return XL_ERR;
	if (ctx->json) {
		a = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s}",
				"id", (json_int_t)v[i].id, "var", v[i].var, "value", v[i].value,
				"from", v[i].parent, "status", v[i].status, "run", v[i].run_tag,
				"skip_reason", v[i].skip_reason));
		cmd_emit_json(json_pack("{s:o}", "plan", a));
	} else if (n == 0) {
		printf("the plan is empty: add changes with `xloop plan add VAR=VALUE`\n");
	} else {
		for (i = 0; i < n; i++) {
			printf("%4lld  %s=%s  from %s", v[i].id, v[i].var, v[i].value, v[i].parent);
			if (all)
				printf("  [%s%s%s]", v[i].status, *v[i].run_tag ? " as " : "",
				       v[i].run_tag);
			if (*v[i].skip_reason)
				printf("  (%s)", v[i].skip_reason);
			putchar('\n');
		}
	}
	plan_entries_free(v, n);
	return XL_OK;
}

/* plan add VAR=VALUE... [--from P|best] */
static int cmd_plan_add(struct xl_ctx *ctx, const struct cmd_entry *self,
			struct cmd_args *args)
{
	const char *from = args_get(args, "from");
	/* plan_add_cmd reads the changes from pos[1] on, pos[0] the word "add" */
	char **pos = xcalloc((size_t)args->npos + 2, sizeof(*pos));
	int rc;

	(void)self;
	pos[0] = "add";
	memcpy(pos + 1, args->pos, (size_t)args->npos * sizeof(*pos));
	rc = plan_add_cmd(ctx, pos, args->npos + 1, from ? from : "best");
	free(pos);
	return rc;
}

/* plan ls [--all] (also bare `xloop plan`, and `plan list`) */
static int cmd_plan_ls(struct xl_ctx *ctx, const struct cmd_entry *self,
		       struct cmd_args *args)
{
	(void)self;
	return plan_ls_cmd(ctx, args_flag(args, "all"));
}

/* plan rm ID */
static int cmd_plan_rm(struct xl_ctx *ctx, const struct cmd_entry *self,
		       struct cmd_args *args)
{
	char **pos = args->pos;
	const char *errstr;
	long long id;
	int rc;

	if (parse_ll(pos[0], 1, (long long)1 << 53, &id, &errstr) < 0) {
		cmd_usage_error(self, "plan rm: '%s' is not an entry id", pos[0]);
		return XL_USAGE;
	}
	rc = plan_mark(&ctx->db, ctx->cfg.study, id, "removed", 0, NULL);
	if (rc == 1)
		error("no queued plan entry %lld ('xloop plan ls')", id);
	else if (rc == 0 && !ctx->json)
		printf("removed plan entry %lld\n", id);
	else if (rc == 0)
		cmd_emit_json(json_pack("{s:I}", "removed", (json_int_t)id));
	return rc == 1 ? XL_NOINPUT : rc ? XL_ERR : XL_OK;
}

static const struct cmd_entry plan_subs[] = {
	{ .name = "plan ls", .opts = plan_ls_opts, .exec = cmd_plan_ls,
	  .summary = "the queued entries (also bare `xloop plan`)" },
	{ .name = "plan list", .opts = plan_ls_opts, .flags = CMD_HIDDEN, .exec = cmd_plan_ls,
	  .summary = "the same as plan ls" },
	{ .name = "plan add", .opts = plan_add_opts, .args = "VAR=VALUE...", .min = 1, .max = -1,
	  .exec = cmd_plan_add,
	  .summary = "queue changes, each to become one run" },
	{ .name = "plan rm", .args = "ID", .min = 1, .max = 1, .exec = cmd_plan_rm,
	  .summary = "remove a queued entry" },
	{ NULL },
};

const struct cmd_entry cmd_plan_entry = {
	.name = "plan", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "the queue of one-variable changes that next and tick submit",
	.help = "ls    the queued entries (also bare `xloop plan`); --all: also the done,\n"
	"      skipped and removed ones, with the run each became or why not\n"
	"add   queue changes (each becomes one run, tagged VAR-VALUE: `xloop help\n"
	"      tags`). Refused at once, all or nothing, when `new` would refuse it\n"
	"      later: the parent's job.sh must assign VAR exactly once at top level\n"
	"      and not to VALUE already; and when its CONFIGURATION (the job.sh's\n"
	"      assignments but the seed: `xloop help best`) was run or queued\n"
	"      already, whatever parent and change led to it: a run has it, an\n"
	"      autopilot proposal, or an entry of the plan makes it (a change of\n"
	"      the seed variable: when that configuration has that seed). Numbers\n"
	"      compare by value (0.05 = 5e-2 = 0.050). --from defaults to best,\n"
	"      resolved when the entry is used: an entry that cannot become a run\n"
	"      by then (best has that value now, or its configuration was made\n"
	"      meanwhile) is skipped, and the briefing says so; it stays queued\n"
	"      while there is no best yet. With driver.mode slurm it leaves the\n"
	"      feeder job that submits them once the session ends (`xloop help\n"
	"      driver`); Slurm unreachable is a warning, the entries are stored.\n"
	"rm    remove a queued entry\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = plan_subs, .dflt = &plan_subs[0],
};
