/*
 * xloop auto on [--budget-runs N] [--budget-hours H] [--until ISO-8601] |
 * auto off | auto status: autopilot, the loop choosing its next runs. A
 * limit auto on does not name is kept from xloop.json.
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
	{ "budget-runs", OPT_STRING, "N", "stop after N runs autopilot created (0: no limit; "
	  "left out: the limit xloop.json has, none the first time)" },
	{ "budget-hours", OPT_STRING, "H", "stop after H GPU-hours of its runs (0: no limit; "
	  "left out: kept)" },
	{ "until", OPT_STRING, "ISO-8601", "stop at this UTC time (none: no end; left out: kept)" },
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

/* A budget value in words for a change line: "none" when it is no limit. */
static char *limit_words(long long runs, double hours, const char *until, int which)
{
	if (which == 0)
		return runs ? xasprintf("%lld", runs) : xstrdup("none");
	if (which == 1)
		return hours > 0 ? xasprintf("%g", hours) : xstrdup("none");
	return *until ? xstrdup(until) : xstrdup("none");
}

/* Who submits what auto on set going, after the edit: a line for people. */
static char *who_submits(struct xl_ctx *ctx, char **job_id)
{
	const char *mode = ctx->cfg.driver.mode;
	struct driver_status ds;

	*job_id = NULL;
	if (strcmp(mode, "slurm") == 0) {
		char *t = NULL;

		if (driver_status_read(ctx, &ds) == 0 && ds.job_id && *ds.job_id) {
			t = xasprintf("the feeder job %s submits it (driver.mode slurm: at once "
				      "when nothing runs, else as a run ends; `xloop driver "
				      "status`)", ds.job_id);
			*job_id = xstrdup(ds.job_id);
		}
		driver_status_release(&ds);
		return t ? t : xstrdup("no feeder job waits (nothing to feed now, or Slurm did "
				       "not answer: see above); `xloop next` submits it");
	}
	if (strcmp(mode, "scrontab") == 0 || strcmp(mode, "cron") == 0)
		return xasprintf("the next `xloop tick` of %s submits it, or `xloop next` now",
				 strcmp(mode, "cron") == 0 ? "cron" : "the scrontab entry");
	return xstrdup("`xloop next` or `xloop tick` submits it (driver.mode none: nothing "
		       "runs on its own)");
}

/*
 * auto on: switch on with a budget. What an option does not name is kept
 * from xloop.json (a limit set before stays); switched on already, what
 * was spent stays spent. Each change is printed, then what is submitted
 * first and who submits it.
 */
static int auto_on(struct xl_ctx *ctx, const struct cmd_entry *self, const char *runs,
		   const char *hours, const char *until)
{
	const struct config *c = &ctx->cfg;
	long long n = c->autopilot.budget_runs;
	double h = c->autopilot.budget_hours;
	const char *errstr, *keys[3] = { "budget_runs", "budget_hours", "until" };
	char *end = NULL, *what, *budget, *spent = NULL, key[128], *u;
	char *first = NULL, *who = NULL, *job_id = NULL;
	struct auto_status st;
	struct buf lines = BUF_INIT;
	json_t *changes = json_array();
	long long since;
	int rc, again, k, was_on = c->autopilot.on;

	if (runs && parse_ll(runs, 0, 1000000, &n, &errstr) < 0) {
		cmd_usage_error(self, "--budget-runs: '%s' is %s", runs, errstr);
		json_decref(changes);
		return XL_USAGE;
	}
	if (hours && ((h = strtod(hours, &end)), end == hours || *end || !(h >= 0) || h > 1e9)) {
		cmd_usage_error(self, "--budget-hours: '%s' is not a number >= 0", hours);
		json_decref(changes);
		return XL_USAGE;
	}
	if (until && *until && strcmp(until, "none") != 0 && config_parse_iso(until) < 0) {
		cmd_usage_error(self, "--until: '%s' is not an ISO-8601 UTC time like "
				"2026-12-02T06:00:00Z (or none)", until);
		json_decref(changes);
		return XL_USAGE;
	}
	u = xstrdup(!until ? c->autopilot.until : strcmp(until, "none") == 0 ? "" : until);
	if (c->search.space.n == 0)
		warning("the search space is empty: autopilot proposes nothing until "
			"`xloop space set VAR=...`");
	if (!*c->search.seed)
		warning("no seed variable: gains are not checked against noise "
			"(`xloop space seed VAR`)");
	/* on already: the spending goes on (since stays) */
	again = c->autopilot.on && c->autopilot.since > 0;
	since = again ? c->autopilot.since : (long long)time(NULL);
	if (again && autopilot_status(ctx, &st) == 0) {
		spent = xasprintf("; spent so far: %lld run%s, %.2f GPU-hours", st.runs,
				  st.runs == 1 ? "" : "s", st.hours);
		auto_status_release(&st);
	}
	/* each change, before -> after; a limit kept is said too */
	if (!was_on) {
		buf_adds(&lines, "  autopilot.on: false -> true\n");
		json_array_append_new(changes, json_pack("{s:s, s:s, s:s}", "key", "autopilot.on",
							 "from", "false", "to", "true"));
	}
	for (k = 0; k < 3; k++) {
		char *from = limit_words(c->autopilot.budget_runs, c->autopilot.budget_hours,
					 c->autopilot.until, k);
		char *to = limit_words(n, h, u, k);
		const char *opt = k == 0 ? runs : k == 1 ? hours : until;

		if (strcmp(from, to) != 0) {
			buf_addf(&lines, "  autopilot.%s: %s -> %s\n", keys[k], from, to);
			json_array_append_new(changes, json_pack("{s:s+, s:s, s:s}", "key",
				"autopilot.", keys[k], "from", from, "to", to));
		} else if (!opt && strcmp(to, "none") != 0) {
			buf_addf(&lines, "  autopilot.%s: %s, kept (--%s not given)\n", keys[k], to,
				 k == 0 ? "budget-runs" : k == 1 ? "budget-hours" : "until");
		}
		free(from);
		free(to);
	}
	budget = budget_words(n, h, u);
	what = xasprintf("autopilot on (budget: %s%s)", budget, spent ? spent : "");
	rc = loop_decide_config(ctx, auto_path, 1, auto_json(1, n, h, u, since), what);
	if (rc == 0 && again)	/* a new budget: its end is said again */
		db_kv_set(&ctx->db, said_key(ctx, key, sizeof(key)), 0);
	if (rc == 0) {
		/* driver.mode slurm: a feeder proposes them once the session ends */
		driver_after_edit(ctx);
		first = autopilot_first(ctx);
		who = who_submits(ctx, &job_id);
	}
	if (rc == 0 && ctx->json) {
		cmd_emit_json(json_pack("{s:b, s:s, s:O, s:s, s:o}", "on", 1, "budget", budget,
					"changes", changes, "first", first, "feeder",
					job_id ? json_string(job_id) : json_null()));
	} else if (rc == 0) {
		printf("%s: next and tick propose runs when the plan is empty\n", what);
		fputs(lines.s, stdout);
		printf("first: %s\n%s\n", first, who);
	}
	free(first);
	free(who);
	free(job_id);
	free(spent);
	free(what);
	free(budget);
	free(u);
	buf_release(&lines);
	json_decref(changes);
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
		cmd_emit_json(json_pack("{s:s, s:b, s:s, s:I, s:f, s:I, s:f, s:o, s:I, s:o}",
			"schema", "xloop.auto/1", "on", st.on, "budget", budget,
			"spent_runs", (json_int_t)st.runs, "spent_gpu_hours", st.hours,
			"in_flight", (json_int_t)st.live, "in_flight_gpu_hours", st.live_hours,
			"stopped", st.stopped ? json_string(st.stopped) : json_null(),
			"space_vars", (json_int_t)ctx->cfg.search.space.n,
			"best", has_best ? best_json(best.tag, &bi) : json_null()));
	} else {
		printf("autopilot %s; budget: %s; spent: %lld run%s, %.2f GPU-hours\n",
		       st.on ? "on" : "off", budget, st.runs, st.runs == 1 ? "" : "s", st.hours);
		/* xloop knows a job ended only once reconcile saw it: till then its
		 * hours grow with the clock, and the next tick or next settles them */
		if (st.live)
			printf("in flight: %lld job%s, %.2f of those GPU-hours, counted up to "
			       "now (one that ended since the last tick or next counts on "
			       "until the next one)\n", st.live, st.live == 1 ? "" : "s",
			       st.live_hours);
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
	"        finishes. A limit not named is kept from xloop.json: the first\n"
	"        auto on without --budget-runs has no run limit, a later one keeps\n"
	"        the limit set before (--budget-runs 0, --budget-hours 0, --until\n"
	"        none remove one). It prints each change (before -> after) and each\n"
	"        limit kept, what is submitted first, and who submits it (the\n"
	"        feeder job's id with driver.mode slurm). auto on again while on\n"
	"        (to raise the budget) keeps what was spent; after auto off it\n"
	"        counts from zero.\n"
	"off     only the plan feeds the queue\n"
	"status  the switch, the budget, what is spent, why it stopped; a job not\n"
	"        yet seen to end counts up to now (in flight: one that ended since\n"
	"        the last tick or next grows until one runs and settles it)\n"
	"When on and the plan is empty, next and tick propose one run at a time:\n"
	"while no run is proven, the baseline itself when it never ran\n"
	"(adopt without --cv; it counts in the budget; if it fails, autopilot\n"
	"waits for you to fix it and `xloop retry` it, and no feeder polls);\n"
	"first the replicates the noise rule needs (the baseline's second run and\n"
	"the best's; then the challenger with the largest lead the rule could\n"
	"confirm in its 4 looks, at most 4 confirming at once: its runs take the\n"
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
	"they run (queue.depth deep, queue.lanes wide) and spread out: the runs\n"
	"in flight are a batch chosen together, a variable one of them changes\n"
	"from a parent not changed again from that parent while another change\n"
	"is left (BENCHMARKS.md 5 (i)). The reason gives the\n"
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
