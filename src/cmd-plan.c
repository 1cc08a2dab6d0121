/*
 * xloop plan add VAR=VALUE... [--from P|best] | plan ls | plan rm ID:
 * the queue of intended one-variable changes that next/tick submit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "jobsh.h"
#include "loop.h"
#include "opts.h"
#include "plan.h"
#include "study.h"

/* Check that the parent's job.sh assigns var exactly once. */
static int check_entry(struct xl_ctx *ctx, const char *from, const char *var,
		       char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *jv;
	struct buf text = BUF_INIT;
	struct run r;
	char *path;
	int rc, err;

	rc = loop_find_run(ctx, from, &r, cause);
	if (rc == XL_NOINPUT && strcmp(from, "best") == 0) {
		/* no best yet: it is resolved when the entry is used */
		FREE_AND_NULL(*cause);
		return 0;
	}
	if (rc)
		return rc;
	path = run_job_path(ctx->root, ctx->cfg.study, r.tag);
	rc = XL_DATAERR;
	if (study_read_script(path, &text, &err, cause) < 0)
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
	else if (jobsh_scan(text.s, text.len, &vars, cause) == 0 &&
		 jobsh_find(&vars, var, &jv, cause) == 0)
		rc = 0;
	if (rc && *cause) {
		char *c = xasprintf("%s (in %s's job.sh)", *cause, r.tag);

		free(*cause);
		*cause = c;
	}
	jobsh_vars_release(&vars);
	buf_release(&text);
	free(path);
	run_release(&r);
	return rc;
}

static int plan_add_cmd(struct xl_ctx *ctx, char **pos, int npos, const char *from)
{
	char **vars = xcalloc((size_t)npos, sizeof(*vars));
	char **vals = xcalloc((size_t)npos, sizeof(*vals));
	char *cause = NULL;
	long long id;
	int i, rc = 0;
	json_t *ids = json_array();

	/* validate everything first: all or nothing */
	for (i = 1; i < npos && rc == 0; i++) {
		if (jobsh_parse_setting(pos[i], &vars[i], &vals[i], &cause) < 0)
			rc = XL_DATAERR;
		else
			rc = check_entry(ctx, from, vars[i], &cause);
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

/* The plan subcommands. */
static int cmd_plan(struct xl_ctx *ctx, const struct cmd_entry *self,
		    int argc, char **argv)
{
	const char *from = NULL, *errstr;
	int all = 0;
	const struct opt opts[] = {
		{ "from", OPT_STRING, &from },
		{ "all", OPT_FLAG, &all },
		OPT_END,
	};
	char **pos;
	long long id;
	int npos, rc;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (npos >= 1 && strcmp(pos[0], "add") == 0 && npos >= 2) {
		rc = plan_add_cmd(ctx, pos, npos, from ? from : "best");
	} else if (npos == 1 && (strcmp(pos[0], "ls") == 0 || strcmp(pos[0], "list") == 0)) {
		rc = plan_ls_cmd(ctx, all);
	} else if (npos == 2 && strcmp(pos[0], "rm") == 0) {
		if (parse_ll(pos[1], 1, (long long)1 << 53, &id, &errstr) < 0) {
			cmd_usage_error(self, "plan rm: '%s' is not an entry id", pos[1]);
			rc = XL_USAGE;
		} else {
			rc = plan_mark(&ctx->db, ctx->cfg.study, id, "removed", 0, NULL);
			if (rc == 1)
				error("no queued plan entry %lld ('xloop plan ls')", id);
			else if (rc == 0 && !ctx->json)
				printf("removed plan entry %lld\n", id);
			else if (rc == 0)
				cmd_emit_json(json_pack("{s:I}", "removed", (json_int_t)id));
			rc = rc == 1 ? XL_NOINPUT : rc ? XL_ERR : XL_OK;
		}
	} else {
		cmd_usage_error(self, npos == 0 ? "missing subcommand (add, ls, rm)" :
				"bad arguments for plan %s", npos ? pos[0] : "");
		rc = XL_USAGE;
	}
	free(pos);
	return rc;
}

const struct cmd_entry cmd_plan_entry = {
	"plan", "add VAR=VALUE... [--from P|best] | ls [--all] | rm ID",
	"the queue of one-variable changes that next and tick submit",
	"add   queue changes (each becomes one run); the parent's job.sh must assign\n"
	"      VAR exactly once at top level. --from defaults to best, resolved\n"
	"      when the entry is used.\n"
	"ls    the queued entries (--all: also done, skipped and removed ones)\n"
	"rm    remove a queued entry\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_plan,
};
