/*
 * xloop new T --from P|best --set VAR=VALUE [--note TEXT] [--force]: a new
 * run whose job.sh is the parent's byte for byte but for one value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "jobs/segments.h"
#include "search/taken.h"

static const struct opt new_opts[] = {
	{ "from", OPT_STRING, "P|best", "the parent run, or 'best' for the best proven run",
	  OPT_REQUIRED },
	{ "set", OPT_STRING, "VAR=VALUE", "the one change", OPT_REQUIRED },
	{ "note", OPT_STRING, "TEXT", "why (kept with the run and in the commit message)" },
	{ "force", OPT_FLAG, NULL, "allow a parent not proven, a configuration run or queued already" },
	{ "segments", OPT_STRING, "N", "the run's own segments.max (`xloop submit --help`)" },
	OPT_END,
};

/* Create a one-change run. */
static int cmd_new(struct xl_ctx *ctx, const struct cmd_entry *self,
		   struct cmd_args *args)
{
	const char *from = args_get(args, "from"), *set = args_get(args, "set");
	const char *note = args_get(args, "note"), *segments = args_get(args, "segments");
	int force = args_flag(args, "force");
	struct new_run nr;
	long long segs;
	char **pos = args->pos, *cause = NULL, *var = NULL, *value = NULL, *segs_text = NULL;
	int rc;

	(void)self;
	/* checked as submit checks it, against resources.time */
	if (segments && (rc = segments_wanted(&ctx->cfg, segments, ctx->cfg.res.time, 0, &segs,
					      &cause)) != 0) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	if (jobsh_parse_setting(set, &var, &value, &cause) < 0) {
		rc = XL_DATAERR;
	} else if (note && !utf8_valid(note, strlen(note))) {
		cause = xstrdup("the --note is not valid UTF-8 text");
		rc = XL_DATAERR;
	} else {
		/* a configuration run or queued already: --force makes it anyway */
		rc = force ? 0 : loop_check_from(ctx, from, var, value, TAKEN_PLAN, &cause);
		if (rc == 0)
			rc = loop_new_run_with(ctx, pos[0], from, var, value, note, force,
					       segments ? (segs_text = xasprintf("%lld", segs)) : NULL,
					       &nr, &cause);
	}
	if (rc) {
		error("%s", cause ? cause : "new failed");
	} else {
		struct run *r = &nr.run;

		if (ctx->json)
			cmd_emit_json(json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:o}",
						"study", r->study, "tag", r->tag,
						"parent", r->parent_tag, "var", var,
						"old", r->old_value, "new", value, "line", nr.line,
						"commit", r->commit_id ? r->commit_id : "",
						"segments", segs_text ? json_integer(segs) :
						json_null()));
		else
			printf("created run '%s' from '%s': %s=%s (was %s), line %d of "
			       "job.sh%s%s%s\nnext: xloop submit %s\n", r->tag, r->parent_tag,
			       var, nr.new_text, nr.old_raw, nr.line,
			       segs_text ? "; up to " : "", segs_text ? segs_text : "",
			       segs_text ? " segments per submission" : "", r->tag);
		new_run_release(&nr);
	}
	free(cause);
	free(segs_text);
	free(var);
	free(value);
	return rc;
}

const struct cmd_entry cmd_new_entry = {
	.name = "new", .opts = new_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "clone a run's job.sh with exactly one variable changed",
	.help = "The parent's job.sh is copied byte for byte except the value of VAR's one\n"
	"top-level assignment (NAME=, export NAME=, readonly NAME=, declare NAME=),\n"
	"which becomes VALUE, quoted so that bash takes it literally. Refused (exit\n"
	"65) when VAR is not assigned exactly once at top level, when the value does\n"
	"not change, or when the result would differ in more than that one line,\n"
	"and when its configuration (`xloop help best`) was run or queued already:\n"
	"a run has it, an autopilot proposal, or an entry of the plan makes it\n"
	"(`xloop retry T` runs a run again; a change of the seed variable is a\n"
	"replicate, refused only when its configuration has that seed already).\n"
	"The new job.sh is committed; parent, VAR, old and new value are recorded.\n"
	"With --segments N every submission of the run (and its automatic retries)\n"
	"runs as up to N segments unless --segments says otherwise; N is recorded\n"
	"on the run and in the commit.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_new,
};
