/* xloop decide TEXT [--run T]: append a decision to ops/decisions.md and commit it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "loop.h"

static const struct opt decide_opts[] = {
	{ "run", OPT_STRING, "T", "the run the decision is about (it must exist)" },
	OPT_END,
};

/* Record a free-text decision. */
static int cmd_decide(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	const char *tag = args_get(args, "run");
	char **pos = args->pos, *cause = NULL, *entry, *msg, when[32];
	struct run r;
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	(void)self;
	if (!*pos[0] || strlen(pos[0]) > 10000 || !utf8_valid(pos[0], strlen(pos[0]))) {
		error("the decision text must be 1 to 10000 characters of UTF-8 text");
		return XL_DATAERR;
	}
	if (tag) {
		rc = loop_find_run(ctx, tag, &r, &cause);
		if (rc) {
			error("%s", cause);
			free(cause);
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
	return rc;
}

const struct cmd_entry cmd_decide_entry = {
	.name = "decide", .opts = decide_opts, .args = "TEXT", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "append a decision to ops/decisions.md and commit it",
	.help = "Commits only ops/decisions.md; whatever else you staged stays staged.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_decide,
};
