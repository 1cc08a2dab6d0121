/*
 * The briefing of `next` and `resume` (SPEC "The briefing"): one JSON
 * document (schemas/next.schema.json) built from the DB, and its text
 * rendering for a person or an agent, most important first.
 */
#ifndef XLOOP_BRIEFING_H
#define XLOOP_BRIEFING_H

#include <jansson.h>

#include "ctx.h"
#include "stages/feed.h"
#include "runs.h"

/*
 * Everything since the last briefing that was shown: verdicts, repairs,
 * live jobs with their pending reasons explained and what each waits for,
 * the best run, what feeding submitted (fed may be NULL: nothing was fed)
 * and why it stopped, who feeds after this session (feed_who), and one next
 * action (text, argv, why). resume adds the study's rules and the study
 * so far (the best lineage, every failure, the latest decisions).
 */
json_t *briefing_build(struct xl_ctx *ctx, const struct refresh *ref,
		       const struct feed_result *fed, int resume);

/* Mark everything in the briefing as seen. */
int briefing_mark_seen(struct xl_ctx *ctx, json_t *b);

/*
 * A briefing can be read twice (a reader piped through `head` loses the
 * rest): save it before printing (.xloop/briefing.json; command is "next"
 * or "resume"), print it, then briefing_mark_if_written, which flushes
 * stdout and marks it seen only when all of it was written (a closed pipe:
 * EPIPE, not seen, the next briefing repeats it). briefing_saved reads the
 * saved one back for `resume --again` (NULL with *cause when there is none).
 */
int briefing_save(struct xl_ctx *ctx, const json_t *b, const char *command);
json_t *briefing_saved(struct xl_ctx *ctx, char **command, long long *at, char **cause);
int briefing_mark_if_written(struct xl_ctx *ctx, json_t *b);

/*
 * When attempt a (of run tag) is RUNNING but its log has been silent for
 * queue.stale_after minutes: a malloc'd line saying so and what to do.
 * NULL otherwise.
 */
char *briefing_stale(struct xl_ctx *ctx, const struct attempt *a, const char *tag);

/* The last n non-blank lines of a log as a JSON array of strings. */
json_t *briefing_log_tail(const char *path, int n);

/* A pending reason's action with TAG and JOBID filled in (malloc'd). */
char *briefing_fill_action(const char *action, const char *tag, const char *job);

/* Print the briefing as text. */
void briefing_print(const json_t *b);

#endif
