/*
 * xloop breaker [status|reset]: whether the circuit breaker stopped the
 * feeding (breaker.h) and why; reset closes it so next/tick feed again,
 * counting only verdicts from then on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "breaker.h"
#include "cmd/cmd.h"
#include "cmd/opts.h"

/* Show or reset the breaker. */
static int cmd_breaker(struct xl_ctx *ctx, const struct cmd_entry *self,
		       int argc, char **argv)
{
	char **pos, *why;
	int npos, rc, reset;

	rc = opts_parse(ctx, self, NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 0, 1) < 0 ||
	    (npos == 1 && strcmp(pos[0], "status") != 0 && strcmp(pos[0], "reset") != 0 &&
	     cmd_usage_error(self, "'status' or 'reset'") < 0)) {
		free(pos);
		return XL_USAGE;
	}
	reset = npos == 1 && strcmp(pos[0], "reset") == 0;
	free(pos);
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

const struct cmd_entry cmd_breaker_entry = {
	"breaker", "[status|reset]",
	"whether failures in a row stopped the feeding, and reset it",
	"After breaker.program consecutive program failures (default 2), or\n"
	"breaker.infra infra failures (default 3), or a GPU job whose START line\n"
	"shows no GPU, next and tick stop submitting (plan, --set and automatic\n"
	"retries), notify once and say why in the briefing. `xloop breaker reset`\n"
	"(or `xloop resume --feed`) closes it; verdicts before the reset no longer\n"
	"count.\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_breaker,
};
