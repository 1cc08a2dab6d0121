/* xloop decide TEXT [--run T]: append a decision to ops/decisions.md and commit it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "loop.h"
#include "cmd/opts.h"

/* Record a free-text decision. */
static int cmd_decide(struct xl_ctx *ctx, const struct cmd_entry *self,
		      int argc, char **argv)
{
	const char *tag = NULL;
	const struct opt opts[] = {
		{ "run", OPT_STRING, &tag },
		OPT_END,
	};
	char **pos, *cause = NULL, *entry, *msg, when[32];
	struct run r;
	time_t now = time(NULL);
	struct tm tm;
	int npos, rc;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0) {
		free(pos);
		return XL_USAGE;
	}
	if (!*pos[0] || strlen(pos[0]) > 10000 || !utf8_valid(pos[0], strlen(pos[0]))) {
		error("the decision text must be 1 to 10000 characters of UTF-8 text");
		free(pos);
		return XL_DATAERR;
	}
	if (tag) {
		rc = loop_find_run(ctx, tag, &r, &cause);
		if (rc) {
			error("%s", cause);
			free(cause);
			free(pos);
			return rc;
		}
		run_release(&r);
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	entry = xasprintf("## %s · decision%s%s\n%s\n", when, tag ? " on " : "",
			  tag ? tag : "", pos[0]);
	msg = xasprintf("xloop: decision%s%s\n\n%s\n", tag ? " on " : "", tag ? tag : "",
			pos[0]);
	rc = loop_decide(ctx, entry, NULL, msg, &cause) < 0 ? XL_ERR : XL_OK;
	if (rc == XL_OK)
		loop_event(ctx, "decision", 0, 0, pos[0]);
	if (rc)
		error("%s", cause);
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:o}", "decision", pos[0], "run",
					tag ? json_string(tag) : json_null()));
	else
		printf("recorded in ops/decisions.md\n");
	free(entry);
	free(msg);
	free(cause);
	free(pos);
	return rc;
}

const struct cmd_entry cmd_decide_entry = {
	"decide", "TEXT [--run T]", "append a decision to ops/decisions.md and commit it",
	"Commits only ops/decisions.md; whatever else you staged stays staged.\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_decide,
};
