/*
 * Inside the briefing (the briefing*.c files only): what briefing.c, which
 * builds the document from the study's state, asks of briefing-live.c (the
 * running and pending jobs) and briefing-next.c (the one next action).
 */
#ifndef XLOOP_BRIEFING_IMPL_H
#define XLOOP_BRIEFING_IMPL_H

#include <stddef.h>

#include <jansson.h>

#include "ctx.h"
#include "stages/feed.h"

/* The next action: a sentence with its command in backquotes, and why. */
struct briefing_action {
	char *text;
	char *why;
};

/* The study's unfinished attempts, what each waits for, stale or not. */
json_t *briefing_live(struct xl_ctx *ctx);

/*
 * The one thing to do next into out, from the verdicts since the last
 * briefing, the live jobs and the plan. Returns 1 when it is a decision
 * about a failure or a stuck job, 0 when it is the routine of feeding.
 */
int briefing_next_action(struct xl_ctx *ctx, json_t *finished, json_t *live,
			 size_t queued, long long sweep_queued,
			 const struct feeder *who, int has_runs, int has_best,
			 int autopilot, struct briefing_action *out);

/* The next action as JSON: text, why, its command's argv and placeholders. */
json_t *briefing_action_json(const struct briefing_action *a);

#endif
