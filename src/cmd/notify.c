/*
 * xloop notify test | notify flush: send a test notification now, or send
 * the outbox now. `notify queue KIND TEXT [--tag T]` queues an event in the
 * outbox; it exists for the tests (tick queues the real events), so the
 * usage line leaves it out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "notify.h"

static const struct opt notify_queue_opts[] = {
	{ "tag", OPT_STRING, "T", "the run the event is about" },
	OPT_END,
};

/* The error for "no URL configured": exit 78. */
static int no_url(const struct config *cfg)
{
	if (*cfg->notify_url_env == '\0')
		error("notifications are off: notify.url_env is \"\" in %s", CONFIG_FILE);
	else
		error("no webhook URL: set the environment variable %s to an http:// or "
		      "https:// URL (notify.url_env in %s names the variable)",
		      cfg->notify_url_env, CONFIG_FILE);
	return XL_CONFIG;
}

/* A URL that is set but unusable: exit 78 (the URL itself is not shown). */
static int check_url(const struct config *cfg, const char *url)
{
	char *cause = NULL;

	if (url == NULL || notify_check_url(url, &cause) == 0)
		return 0;
	error("%s: %s", cfg->notify_url_env, cause);
	free(cause);
	return XL_CONFIG;
}

static int notify_test_cmd(struct xl_ctx *ctx)
{
	const char *url = notify_url(&ctx->cfg);
	char *text, *cause = NULL, *shown;
	struct notify_event ev;
	int rc;

	if (url == NULL)
		return no_url(&ctx->cfg);
	if ((rc = check_url(&ctx->cfg, url)) != 0)
		return rc;
	text = xasprintf("test notification from xloop (study %s)", ctx->cfg.study);
	ev.kind = "test";
	ev.study = ctx->cfg.study;
	ev.tag = "";
	ev.text = text;
	rc = notify_send_now(&ctx->cfg, &ev, &cause);
	free(text);
	if (rc < 0) {
		error("unable to send a test notification: %s", cause);
		free(cause);
		return XL_ERR;
	}
	shown = notify_redact(url);
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:s}", "action", "test",
					"kind", ctx->cfg.notify_kind, "url", shown));
	else
		printf("sent a test notification (kind %s) to %s\n", ctx->cfg.notify_kind,
		       shown);
	free(shown);
	return XL_OK;
}

static int notify_flush_cmd(struct xl_ctx *ctx)
{
	const char *url = notify_url(&ctx->cfg);
	long long before, after;
	char *warn = NULL;
	int rc, sent;

	if ((rc = check_url(&ctx->cfg, url)) != 0)
		return rc;
	before = notify_pending(&ctx->db);
	sent = notify_flush(&ctx->db, &ctx->cfg, &warn);
	after = notify_pending(&ctx->db);
	if (before < 0 || after < 0) {
		free(warn);
		return XL_ERR;
	}
	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:i, s:I, s:I, s:s?}", "action", "flush",
					"sent", sent, "queued", (json_int_t)after,
					"dropped", (json_int_t)(url ? 0 : before),
					"warning", warn));
	} else if (url == NULL) {
		printf("no webhook URL (%s is not set): dropped %lld queued "
		       "notification%s\n", *ctx->cfg.notify_url_env ?
		       ctx->cfg.notify_url_env : "notify.url_env is \"\"", before,
		       before == 1 ? "" : "s");
	} else {
		printf("sent %d notification%s; %lld still queued\n", sent,
		       sent == 1 ? "" : "s", after);
	}
	if (warn)
		warning("%s", warn);
	free(warn);
	return warn ? XL_ERR : XL_OK;
}

static int notify_queue_cmd(struct xl_ctx *ctx, const struct cmd_entry *self,
			    const char *kind, const char *text, const char *tag)
{
	struct notify_event ev = { kind, ctx->cfg.study, tag ? tag : "", text };
	long long id;

	if (!notify_valid_kind(kind)) {
		cmd_usage_error(self, "unknown event kind '%s'", kind);
		return XL_USAGE;
	}
	if (!*text || strlen(text) > 10000) {
		error("the text must be 1 to 10000 characters");
		return XL_DATAERR;
	}
	id = notify_queue(&ctx->db, &ev);
	if (id < 0)
		return XL_ERR;
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:I}", "action", "queue", "id", (json_int_t)id));
	else
		printf("queued notification %lld\n", id);
	return XL_OK;
}

/* notify test, notify flush, notify queue KIND TEXT [--tag T] */
static int cmd_notify(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	if (cmd_is(self, "queue"))
		return notify_queue_cmd(ctx, self, args->pos[0], args->pos[1],
					args_get(args, "tag"));
	return cmd_is(self, "flush") ? notify_flush_cmd(ctx) : notify_test_cmd(ctx);
}

static const struct cmd_entry notify_subs[] = {
	{ .name = "notify test", .exec = cmd_notify,
	  .summary = "send a test event now; exit 1 when it could not be delivered" },
	{ .name = "notify flush", .exec = cmd_notify,
	  .summary = "send the queued notifications now (tick does this too); exit 1 when "
		"some are left queued or were refused", },
	{ .name = "notify queue", .opts = notify_queue_opts, .args = "KIND TEXT", .min = 2, .max = 2,
	  .exec = cmd_notify,
	  .summary = "queue an event of KIND (schemas/event.schema.json) for the next flush" },
	{ NULL },
};

const struct cmd_entry cmd_notify_entry = {
	.name = "notify", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_UNATTENDED,
	.target = CMD_TARGET_NONE,
	.summary = "send a test notification, or the queued ones, to the webhook",
	.help = "test   send a test event now; exit 1 when it could not be delivered\n"
	"flush  send the queued notifications now (tick does this too); exit 1\n"
	"       when some are left queued or were refused\n"
	"queue  queue one event (KIND TEXT [--tag T]) to be sent by the next flush\n"
	"\n"
	"The webhook URL comes only from the environment variable named by\n"
	"notify.url_env in xloop.json (default XLOOP_NOTIFY_URL), and is never\n"
	"printed beyond its scheme and host. notify.kind picks the payload:\n"
	"discord, slack, ntfy or json (schemas/event.schema.json). Without a URL,\n"
	"queued notifications are dropped when flushed.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = notify_subs,
};
