/*
 * xloop resume [--feed | --again]: for an agent that lost its session.
 * Reconcile, then tell everything since the last briefing the agent saw;
 * --again prints that last briefing once more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stages/breaker.h"
#include "briefing/briefing.h"
#include "cmd/cmd.h"
#include "stages/feed.h"

static const struct opt resume_opts[] = {
	{ "feed", OPT_FLAG, NULL, "also feed the queue, closing an open breaker" },
	{ "again", OPT_FLAG, NULL, "print the last briefing again (asks Slurm nothing, "
	  "marks nothing)" },
	OPT_END,
};

/* The briefing as text: "in short" first, for a reader of the top lines. */
static void print_text(json_t *b, int feed)
{
	json_t *who = json_object_get(json_object_get(b, "feed"), "feeder");

	printf("in short:\n  ");
	feed_print_who(json_string_value(json_object_get(who, "text")),
		       json_integer_value(json_object_get(who, "last_at")));
	printf("  next: %s\n", json_string_value(json_object_get(
		json_object_get(b, "next_action"), "text")));
	printf("  cut off? `xloop resume --again` prints this briefing again\n\n");
	briefing_print(b);
	if (!feed)
		printf("(resume submits nothing; `xloop next` or `xloop resume --feed` "
		       "feeds the queue)\n");
}

/* resume --again: the last briefing, as it was saved; nothing is asked or marked. */
static int print_again(struct xl_ctx *ctx)
{
	char *cause = NULL, *command = NULL, when[32];
	long long at = 0;
	json_t *b = briefing_saved(ctx, &command, &at, &cause);

	if (!b) {
		error("%s", cause);
		free(cause);
		return XL_NOINPUT;
	}
	if (ctx->json) {
		cmd_emit_json(b);
	} else {
		time_t t = (time_t)at;
		struct tm tm;

		if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
			xsnprintf(when, sizeof(when), "?");
		printf("(the briefing `xloop %s` printed at %s, again: nothing was asked of "
		       "Slurm since)\n", command, when);
		print_text(b, strcmp(command, "resume") != 0);
		json_decref(b);
	}
	free(command);
	return XL_OK;
}

/* Reconcile and brief; submit only with --feed. */
static int cmd_resume(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	int feed = args_flag(args, "feed");
	struct feed_request req;
	struct feed_result fed;
	struct refresh ref;
	struct slurm s;
	char *cause = NULL;
	int rc, frc = 0, reachable = 1;
	json_t *b;

	(void)self;
	if (args_flag(args, "again")) {
		if (feed)
			return cmd_usage_error(self, "--again prints the last briefing; it "
					       "does not go with --feed"), XL_USAGE;
		return print_again(ctx);
	}
	slurm_init(&s);
	memset(&fed, 0, sizeof(fed));
	memset(&req, 0, sizeof(req));
	rc = reconcile(ctx, &s, &ref, &cause);
	if (rc) {
		/* still tell the story from the DB: that is what resume is for */
		warning("Slurm could not be asked (%s); this is what the state DB knows",
			cause ? cause : "?");
		FREE_AND_NULL(cause);
		reachable = 0;
	} else if (feed) {
		/* feeding on purpose: the breaker is closed by the one who resumes */
		char *why = breaker_open_reason(ctx);

		if (why && breaker_reset(ctx, "reset by `xloop resume --feed`") == 0 &&
		    !ctx->json)
			printf("the breaker was open (%s); reset, feeding again\n", why);
		free(why);
		frc = feed_queue(ctx, &s, &ref, &req, &fed, &cause);
		if (frc)
			error("%s", cause ? cause : "unable to feed the queue");
	}
	ref.calls = s.calls;
	b = briefing_build(ctx, &ref, &fed, 1);
	briefing_save(ctx, b, "resume");
	if (ctx->json)
		cmd_emit_json(json_incref(b));
	else
		print_text(b, feed);
	briefing_mark_if_written(ctx, b);	/* seen only when all of it was written */
	json_decref(b);
	feed_result_release(&fed);
	refresh_release(&ref);
	free(cause);
	return frc ? frc : (reachable ? XL_OK : XL_TEMPFAIL);
}

const struct cmd_entry cmd_resume_entry = {
	.name = "resume", .opts = resume_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_AGENTS,
	.target = CMD_TARGET_NONE,
	.summary = "after a lost session: reconcile and tell everything since the last briefing",
	.help = "Prints the study's rules; the study so far, for a session with no memory\n"
	"of it: the best lineage (each change from the root to the best run, with\n"
	"its score), every run whose latest attempt failed and why, the latest\n"
	"entries of ops/decisions.md; every verdict since the last briefing an\n"
	"agent saw (with reasons and log tails), anything inconsistent it repaired\n"
	"(e.g. an attempt left in 'submitting'), the live jobs and what each\n"
	"pending one waits for (by job id and tag), the best run, who feeds the\n"
	"queue once this session ends, and the next action. Submits nothing\n"
	"unless --feed. Without Slurm it tells what the state DB knows (exit 75).\n"
	"Who keeps the loop going once this session ends and the next action\n"
	"come first too, under \"in short:\", for a reader of the top lines.\n"
	"\n"
	"A briefing can be read twice. It counts as seen (and \"since the last\n"
	"briefing\" moves on) only once all of it was written: when the reader\n"
	"closed the pipe early and xloop sees it (EPIPE), the next briefing\n"
	"repeats it. A pipe can take the whole briefing before `head -150`\n"
	"exits, so every briefing of next and resume is also kept\n"
	"(.xloop/briefing.json) and `xloop resume --again` prints the last one\n"
	"again, as it was (--json: the same document), asking Slurm nothing.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_resume,
};
