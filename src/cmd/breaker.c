/*
 * xloop breaker [status|reset]: whether the circuit breaker stopped the
 * feeding (breaker.h) and why; reset closes it so next/tick feed again,
 * counting only verdicts from then on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "stages/breaker.h"
#include "cmd/cmd.h"

/* Show or reset the breaker (breaker status, breaker reset). */
static int cmd_breaker(struct xl_ctx *ctx, const struct cmd_entry *self,
		       struct cmd_args *args)
{
	int reset = strcmp(self->name, "breaker reset") == 0;
	char *why;

	(void)args;
	why = breaker_open_reason(ctx);
	/* a reset when closed still starts the count afresh */
	if (reset && breaker_reset(ctx, "reset by `xloop breaker reset`") < 0) {
		error("unable to reset the breaker in the state DB");
		free(why);
		return XL_ERR;
	}
	if (ctx->json)
		cmd_emit_json(json_pack("{s:b, s:o, s:b}", "open", why && !reset, "reason",
					why ? json_string(why) : json_null(), "reset",
					reset && why));
	else if (!why)
		printf("the breaker is closed: next and tick feed the queue%s\n",
		       reset ? " (verdicts so far no longer count)" : "");
	else if (reset)
		printf("breaker reset: next and tick feed the queue again (it was open: %s)\n",
		       why);
	else
		printf("the breaker is OPEN, feeding is stopped: %s\n"
		       "fix the cause, then `xloop breaker reset`\n", why);
	free(why);
	return 0;
}

static const struct cmd_entry breaker_subs[] = {
	{ .name = "breaker status", .exec = cmd_breaker,
	  .summary = "whether the breaker is open, and why (also bare `xloop breaker`)" },
	{ .name = "breaker reset", .exec = cmd_breaker,
	  .summary = "close the breaker: next and tick feed again" },
	{ NULL },
};

const struct cmd_entry cmd_breaker_entry = {
	.name = "breaker", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_NONE,
	.summary = "whether failures in a row stopped the feeding, and reset it",
	.help = "After breaker.program consecutive program failures (default 2), or\n"
	"breaker.infra infra failures (default 3), or a GPU job whose START line\n"
	"shows no GPU, next and tick stop submitting (plan, --set and automatic\n"
	"retries), notify once and say why in the briefing. `xloop breaker reset`\n"
	"(or `xloop resume --feed`) closes it; verdicts before the reset no longer\n"
	"count. A run stopped early (`xloop help adopt`: progress) is no failure\n"
	"and is skipped, except that 3 in a row stopped by the rule at their first\n"
	"epoch (0 or 1) open it too (the job may be broken; breaker.program 0: never).\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = breaker_subs, .dflt = &breaker_subs[0],
};
