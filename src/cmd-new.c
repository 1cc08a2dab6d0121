/*
 * xloop new T --from P|best --set VAR=VALUE [--note TEXT] [--force]: a new
 * run whose job.sh is the parent's byte for byte but for one value.
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
#include "study.h"

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

/* Create a one-change run. */
static int cmd_new(struct xl_ctx *ctx, const struct cmd_entry *self,
		   int argc, char **argv)
{
	const char *from = NULL, *set = NULL, *note = NULL;
	int force = 0;
	const struct opt opts[] = {
		{ "from", OPT_STRING, &from },
		{ "set", OPT_STRING, &set },
		{ "note", OPT_STRING, &note },
		{ "force", OPT_FLAG, &force },
		OPT_END,
	};
	struct buf text = BUF_INIT, out = BUF_INIT;
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	struct run parent, r;
	char **pos, *cause = NULL, *var = NULL, *value = NULL, *ppath = NULL;
	int npos, rc, err, have_parent = 0;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0 ||
	    (!from && cmd_usage_error(self, "--from is required (a tag or 'best')") < 0) ||
	    (!set && cmd_usage_error(self, "--set VAR=VALUE is required") < 0)) {
		free(pos);
		return XL_USAGE;
	}
	if (jobsh_parse_setting(set, &var, &value, &cause) < 0) {
		rc = XL_DATAERR;
		goto fail;
	}
	rc = loop_check_new_tag(ctx, pos[0], &cause);
	if (rc)
		goto fail;
	rc = loop_find_run(ctx, from, &parent, &cause);
	if (rc)
		goto fail;
	have_parent = 1;
	if (!loop_run_proven(ctx, &parent) && !force) {
		cause = xasprintf("parent '%s' is not proven (its latest attempt did not "
				  "succeed); pass --force to branch from it anyway",
				  parent.tag);
		rc = XL_DATAERR;
		goto fail;
	}
	ppath = run_job_path(ctx->root, ctx->cfg.study, parent.tag);
	if (study_read_script(ppath, &text, &err, &cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto fail;
	}
	if (jobsh_rewrite(text.s, text.len, var, value, &out, &ch, &cause) < 0) {
		char *c = xasprintf("cannot change %s in %s: %s", var, ppath, cause);

		free(cause);
		cause = c;
		rc = XL_DATAERR;
		goto fail;
	}
	if (study_bash_syntax("the new job.sh", out.s, &cause) < 0) {
		rc = XL_DATAERR;
		goto fail;
	}
	warn_literal_paths(ctx, &parent, text.s);

	memset(&r, 0, sizeof(r));
	r.study = ctx->cfg.study;
	r.tag = pos[0];
	r.parent_id = parent.id;
	r.parent_tag = parent.tag;
	r.var = var;
	r.old_value = ch.old_value ? ch.old_value : ch.old_raw;
	r.new_value = value;
	r.note = (char *)note;
	rc = loop_create_run(ctx, &r, out.s, out.len, NULL, 0, &cause);
	if (rc)
		goto fail;
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s}",
					"study", r.study, "tag", r.tag, "parent", parent.tag,
					"var", var, "old", r.old_value, "new", value,
					"line", ch.line, "commit", r.commit_id ? r.commit_id : ""));
	else
		printf("created run '%s' from '%s': %s=%s (was %s), line %d of job.sh\n"
		       "next: xloop submit %s\n", r.tag, parent.tag, var, ch.new_text,
		       ch.old_raw, ch.line, r.tag);
	free(r.commit_id);
	rc = XL_OK;
	goto out;
fail:
	error("%s", cause ? cause : "new failed");
	if (!rc)
		rc = XL_ERR;
out:
	if (have_parent)
		run_release(&parent);
	jobsh_change_release(&ch);
	buf_release(&text);
	buf_release(&out);
	free(cause);
	free(var);
	free(value);
	free(ppath);
	free(pos);
	return rc;
}

const struct cmd_entry cmd_new_entry = {
	"new", "T --from P|best --set VAR=VALUE [--note TEXT] [--force]",
	"clone a run's job.sh with exactly one variable changed",
	"The parent's job.sh is copied byte for byte except the value of VAR's one\n"
	"top-level assignment (NAME=, export NAME=, readonly NAME=, declare NAME=),\n"
	"which becomes VALUE, quoted so that bash takes it literally. Refused (exit\n"
	"65) when VAR is not assigned exactly once at top level, when the value does\n"
	"not change, or when the result would differ in more than that one line.\n"
	"The new job.sh is committed; parent, VAR, old and new value are recorded.\n"
	"\n"
	"options:\n"
	"  --from P    the parent run, or 'best' for the best proven run\n"
	"  --set V=X   the one change\n"
	"  --note T    why (kept with the run and in the commit message)\n"
	"  --force     allow a parent that is not proven\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_new,
};
