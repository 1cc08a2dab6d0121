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
#include "cmd/opts.h"
#include "segments.h"
#include "search/taken.h"

/* Create a one-change run. */
static int cmd_new(struct xl_ctx *ctx, const struct cmd_entry *self,
		   int argc, char **argv)
{
	const char *from = NULL, *set = NULL, *note = NULL, *segments = NULL;
	int force = 0;
	const struct opt opts[] = {
		{ "from", OPT_STRING, &from },
		{ "set", OPT_STRING, &set },
		{ "note", OPT_STRING, &note },
		{ "force", OPT_FLAG, &force },
		{ "segments", OPT_STRING, &segments },
		OPT_END,
	};
	struct new_run nr;
	long long segs;
	char **pos, *cause = NULL, *var = NULL, *value = NULL, *segs_text = NULL;
	int npos, rc;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0 ||
	    (!from && cmd_usage_error(self, "--from is required (a tag or 'best')") < 0) ||
	    (!set && cmd_usage_error(self, "--set VAR=VALUE is required") < 0)) {
		free(pos);
		return XL_USAGE;
	}
	/* checked as submit checks it, against resources.time */
	if (segments && (rc = segments_wanted(&ctx->cfg, segments, ctx->cfg.res.time, 0, &segs,
					      &cause)) != 0) {
		error("%s", cause);
		free(cause);
		free(pos);
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
	free(pos);
	return rc;
}

const struct cmd_entry cmd_new_entry = {
	"new", "T --from P|best --set VAR=VALUE [--note TEXT] [--force] [--segments N]",
	"clone a run's job.sh with exactly one variable changed",
	"The parent's job.sh is copied byte for byte except the value of VAR's one\n"
	"top-level assignment (NAME=, export NAME=, readonly NAME=, declare NAME=),\n"
	"which becomes VALUE, quoted so that bash takes it literally. Refused (exit\n"
	"65) when VAR is not assigned exactly once at top level, when the value does\n"
	"not change, or when the result would differ in more than that one line,\n"
	"and when its configuration (`xloop help best`) was run or queued already:\n"
	"a run has it, an autopilot proposal, or an entry of the plan makes it\n"
	"(`xloop retry T` runs a run again; a change of the seed variable is a\n"
	"replicate, refused only when its configuration has that seed already).\n"
	"The new job.sh is committed; parent, VAR, old and new value are recorded.\n"
	"\n"
	"options:\n"
	"  --from P    the parent run, or 'best' for the best proven run\n"
	"  --set V=X   the one change\n"
	"  --note T    why (kept with the run and in the commit message)\n"
	"  --force     allow a parent that is not proven, and a configuration that\n"
	"              was run or queued already\n"
	"  --segments N  the run's own segments.max: every submission of it (and\n"
	"              its automatic retries) runs as up to N segments unless\n"
	"              --segments says otherwise; recorded on the run and in the\n"
	"              commit (`xloop submit --help`)\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_new,
};
