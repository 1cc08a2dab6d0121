/* Decisions that change xloop.json (space, auto): the file, then its commit. */
#include <stdlib.h>
#include <time.h>

#include <jansson.h>

#include "loop.h"

/* Change xloop.json as a decision. */
int loop_decide_config(struct xl_ctx *ctx, const char *const *path, size_t depth,
		       json_t *v, const char *what)
{
	char *cause = NULL, *entry, *msg, when[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	if (config_edit(ctx->root, path, depth, v, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	config_release(&ctx->cfg);
	if (config_load(&ctx->cfg, ctx->root, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	entry = xasprintf("## %s · %s\n- xloop.json changed: %s\n", when, what, what);
	msg = xasprintf("xloop: %s\n", what);
	rc = loop_decide(ctx, entry, CONFIG_FILE, msg, &cause) < 0 ? XL_ERR : XL_OK;
	if (rc)
		error("xloop.json changed, but ops/decisions.md was not: %s", cause);
	else
		loop_event(ctx, "decision", 0, 0, what);
	free(entry);
	free(msg);
	free(cause);
	return rc;
}
