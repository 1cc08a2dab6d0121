/*
 * xloop auto on [--budget-runs N] [--budget-hours H] [--until ISO-8601] |
 * auto off | auto status: autopilot, the loop choosing its next runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search/autopilot.h"
#include "search/best.h"
#include "cmd/cmd.h"
#include "driver/driver.h"
#include "loop.h"

static const struct opt auto_on_opts[] = {
	{ "budget-runs", OPT_STRING, "N", "stop after N runs autopilot created" },
	{ "budget-hours", OPT_STRING, "H", "stop after H GPU-hours of its runs" },
	{ "until", OPT_STRING, "ISO-8601", "stop at this UTC time" },
	OPT_END,
};

static const char *const auto_path[1] = { "autopilot" };

/* The autopilot object of xloop.json. */
static json_t *auto_json(int on, long long runs, double hours, const char *until,
			 long long since)
{
	return json_pack("{s:b, s:I, s:f, s:s, s:I}", "on", on, "budget_runs",
			 (json_int_t)runs, "budget_hours", hours, "until", until,
			 "since", (json_int_t)since);
}

/* The budget in words. */
static char *budget_words(long long runs, double hours, const char *until)
{
	struct buf b = BUF_INIT;

	if (runs)
		buf_addf(&b, "%lld runs", runs);
	if (hours > 0)
		buf_addf(&b, "%s%g GPU-hours", b.len ? ", " : "", hours);
	if (*until)
		buf_addf(&b, "%suntil %s", b.len ? ", " : "", until);
	if (!b.len)
		buf_adds(&b, "no limit");
	return buf_detach(&b, NULL);
}

static char *budget_text(const struct config *c)
{
	return budget_words(c->autopilot.budget_runs, c->autopilot.budget_hours,
			    c->autopilot.until);
}

/* The kv key of "autopilot stopped was said" (search/autopilot.c's say_stopped). */
static const char *said_key(struct xl_ctx *ctx, char *key, size_t size)
{
	xsnprintf(key, size, "autopilot_said:%s", ctx->cfg.study);
	return key;
}

/* auto on: a new budget; switched on already, what was spent stays spent. */
static int auto_on(struct xl_ctx *ctx, const struct cmd_entry *self, const char *runs,
		   const char *hours, const char *until)
{
	long long n = 0;
	double h = 0;
	const char *errstr;
	char *end = NULL, *what, *budget, *spent = NULL, key[128];
	struct auto_status st;
	long long since;
	int rc, again;

	if (runs && parse_ll(runs, 1, 1000000, &n, &errstr) < 0) {
		cmd_usage_error(self, "--budget-runs: '%s' is %s", runs, errstr);
		return XL_USAGE;
	}
	if (hours && ((h = strtod(hours, &end)), end == hours || *end || !(h > 0) || h > 1e9)) {
		cmd_usage_error(self, "--budget-hours: '%s' is not a positive number", hours);
		return XL_USAGE;
	}
	if (until && config_parse_iso(until) < 0) {
		cmd_usage_error(self, "--until: '%s' is not an ISO-8601 UTC time like "
				"2026-12-02T06:00:00Z", until);
		return XL_USAGE;
	}
	if (ctx->cfg.search.space.n == 0)
		warning("the search space is empty: autopilot proposes nothing until "
			"`xloop space set VAR=...`");
	if (!*ctx->cfg.search.seed)
		warning("no seed variable: gains are not checked against noise "
			"(`xloop space seed VAR`)");
	/* on already: a new budget, the spending goes on (since stays) */
	again = ctx->cfg.autopilot.on && ctx->cfg.autopilot.since > 0;
	since = again ? ctx->cfg.autopilot.since : (long long)time(NULL);
	if (again && autopilot_status(ctx, &st) == 0) {
		spent = xasprintf("; spent so far: %lld run%s, %.2f GPU-hours", st.runs,
				  st.runs == 1 ? "" : "s", st.hours);
		auto_status_release(&st);
	}
	budget = budget_words(n, h, until ? until : "");
	what = xasprintf("autopilot on (budget: %s%s)", budget, spent ? spent : "");
	rc = loop_decide_config(ctx, auto_path, 1, auto_json(1, n, h, until ? until : "",
							      since), what);
	if (rc == 0 && again)	/* a new budget: its end is said again */
		db_kv_set(&ctx->db, said_key(ctx, key, sizeof(key)), 0);
	if (rc == 0 && ctx->json)
		cmd_emit_json(json_pack("{s:b, s:s}", "on", 1, "budget", budget));
	else if (rc == 0)
		printf("%s: next and tick propose runs when the plan is empty\n", what);
	free(spent);
	if (rc == 0)	/* driver.mode slurm: a feeder proposes them once the session ends */
		driver_after_edit(ctx);
	free(what);
	free(budget);
	return rc;
}

static int auto_status(struct xl_ctx *ctx)
{
	struct auto_status st;
	struct best_info bi;
	struct run best;
	char *budget, shown[128];
	int has_best;

	if (autopilot_status(ctx, &st) < 0)
		return XL_ERR;
	budget = budget_text(&ctx->cfg);
	has_best = best_get(ctx, &best, &bi) == 0;
	if (has_best)
		best_format(&bi, shown, sizeof(shown));
	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:b, s:s, s:I, s:f, s:o, s:I, s:o}",
			"schema", "xloop.auto/1", "on", st.on, "budget", budget,
			"spent_runs", (json_int_t)st.runs, "spent_gpu_hours", st.hours,
			"stopped", st.stopped ? json_string(st.stopped) : json_null(),
			"space_vars", (json_int_t)ctx->cfg.search.space.n,
			"best", has_best ? best_json(best.tag, &bi) : json_null()));
	} else {
		printf("autopilot %s; budget: %s; spent: %lld run%s, %.2f GPU-hours\n",
		       st.on ? "on" : "off", budget, st.runs, st.runs == 1 ? "" : "s", st.hours);
		if (st.stopped)
			printf("stopped: %s\n", st.stopped);
		printf("space: %zu variable%s; seed: %s\n", ctx->cfg.search.space.n,
		       ctx->cfg.search.space.n == 1 ? "" : "s",
		       *ctx->cfg.search.seed ? ctx->cfg.search.seed : "none (gains unchecked)");
		if (has_best)
			printf("best: %s, %s %s\n", best.tag, ctx->cfg.metric, shown);
	}
	if (has_best)
		run_release(&best);
	free(budget);
	auto_status_release(&st);
	return XL_OK;
}

/* auto off: only the plan feeds the queue. */
static int auto_off(struct xl_ctx *ctx)
{
	const struct config *c = &ctx->cfg;
	int rc;

	rc = loop_decide_config(ctx, auto_path, 1, auto_json(0, c->autopilot.budget_runs,
				c->autopilot.budget_hours, c->autopilot.until,
				c->autopilot.since), "autopilot off");
	if (rc == 0 && !ctx->json)
		printf("autopilot off: only the plan feeds the queue\n");
	else if (rc == 0)
		cmd_emit_json(json_pack("{s:b}", "on", 0));
	return rc;
}

/* auto on [--budget-runs N] [--budget-hours H] [--until T], auto off, auto status. */
static int cmd_auto(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	if (cmd_is(self, "on"))
		return auto_on(ctx, self, args_get(args, "budget-runs"),
			       args_get(args, "budget-hours"), args_get(args, "until"));
	return cmd_is(self, "off") ? auto_off(ctx) : auto_status(ctx);
}

static const struct cmd_entry auto_subs[] = {
	{ .name = "auto on", .opts = auto_on_opts, .exec = cmd_auto,
	  .summary = "switch autopilot on, with a budget" },
	{ .name = "auto off", .exec = cmd_auto,
	  .summary = "switch autopilot off: only the plan feeds the queue" },
	{ .name = "auto status", .exec = cmd_auto,
	  .summary = "the switch, the budget, what is spent, why it stopped" },
	{ NULL },
};

const struct cmd_entry cmd_auto_entry = {
	.name = "auto", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "autopilot: the loop proposes its next runs when the plan is empty",
	.help = "on      switch autopilot on, with a budget: --budget-runs counts every run\n"
	"        autopilot creates (proposals and replicates, failures included; not\n"
	"        plan entries, not infra retries, not a proposal that never became\n"
	"        a run), --budget-hours their GPU-hours (elapsed x GPUs a node x\n"
	"        nodes, every attempt; GPUs a node are the gpu entry's count in\n"
	"        --gres, 2 in gpu:2,mps:400, 1 in gpu or gpu:a100; a job whose\n"
	"        --gres names no gpu, CPU-only, counts 1 a node), --until a\n"
	"        UTC time. At the limit nothing new is submitted; what is in Slurm\n"
	"        finishes. auto on again while on (to raise the budget) sets the\n"
	"        budget anew from its options and keeps what was spent; after auto\n"
	"        off it counts from zero.\n"
	"off     only the plan feeds the queue\n"
	"status  the switch, the budget, what is spent, why it stopped\n"
	"When on and the plan is empty, next and tick propose one run at a time:\n"
	"while no configuration is proven, the baseline itself when it never ran\n"
	"(adopt without --cv; it counts in the budget; if it fails, autopilot\n"
	"waits for you to fix it and `xloop retry` it, and no feeder polls);\n"
	"first the replicates the noise rule needs (the baseline's second run and\n"
	"the best's; then the challenger with the largest lead the rule could\n"
	"prove in its 4 looks, at most 4 confirming at once: its runs take the\n"
	"best's seeds it lacks in the best's order, and the best a fresh seed\n"
	"when the challenger has them all; no budget cap), then one-variable\n"
	"changes to any value in the space, near or far, never a configuration\n"
	"already run or queued (a run, another proposal, or an entry of the plan\n"
	"has it): a Gaussian process over every proven run (Matern-5/2 on the\n"
	"grid positions, a learned noise, an offset shared by the runs of each\n"
	"seed) rates every change of the best few configurations by the model\n"
	"(search.branch or 10, whichever is more, and the best; the best 64\n"
	"when theirs are all taken) by the upper confidence bound (mean + 2 sd)\n"
	"of its lead over the model's best among the configurations run, which\n"
	"chooses both the variable and the parent. Runs still queued or running\n"
	"count as the model expects them to score, so proposals are made while\n"
	"they run (queue.depth deep) and spread out. The reason gives the\n"
	"model's prediction. Each proposal is recorded before its run is made:\n"
	"killed at any point, the next call finishes it, once. It stops at the\n"
	"budget or when no one-variable change of a configuration run is left\n"	"(converged), and says so once in the briefing and as a notification.\n"
	"Every proposal is an ops/decisions.md entry with its reason. A proposal\n"
	"that fails does not trip the breaker unless failures repeat the same way.\n"
	"With driver.mode slurm, auto on leaves the feeder job that proposes them\n"
	"once the session ends (`xloop help driver`; Slurm unreachable: a warning).\n"
	"The switch and budget are decisions in xloop.json (autopilot.*); the\n"
	"spending is in the state DB. See `help space`, `help best`.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = auto_subs, .dflt = &auto_subs[2],
};
