/*
 * The noise-aware best (SPEC rule 10; the rule is in noise.h and `help
 * best`): runs grouped by configuration (confkey.h), each configuration
 * scored by the mean of its proven runs, the noise measured from
 * replicates. Every place that says "best" asks here.
 */
#ifndef XLOOP_BEST_H
#define XLOOP_BEST_H

#include "ctx.h"
#include "search/noise.h"
#include "runs.h"

/* What "best" means: `xloop help best`, and the end of `help space`. */
#define BEST_HELP \
	"What \"best\" means (status, next, resume, report, --from best, plan,\n" \
	"replicate best, notifications):\n" \
	"A configuration is a job.sh's top-level assignments minus the seed\n" \
	"variable, values canonical; runs with the same configuration are one\n" \
	"experiment. A replicate is a run whose one change is the seed (tag\n" \
	"B--rK); it is never a parent.\n" \
	"The best is what the model believes: among the configurations that\n" \
	"succeeded, the one with the highest posterior mean of its true score (a\n" \
	"Gaussian process over every run, Matern-5/2 over the search space's grid,\n" \
	"with a per-seed offset and a learned noise; the seed offset removed).\n" \
	"Without a search space, with a configuration off its grid, with fewer\n" \
	"than 4 runs, or when the model predicts left-out runs worse than the raw\n" \
	"means do, shrunken means choose (each mean pulled towards the grand mean\n" \
	"by its share of the noise) and status says so; while the noise is not\n" \
	"measured and no model fits, the plain means (a lead beyond a tie).\n" \
	"The best starts as the baseline and moves to the model's pick only when\n" \
	"the posterior probability that the pick is better than the best (by more\n" \
	"than metric.min_delta) is at least 0.9 (Student's t on the noise's df,\n" \
	"weighed against \"no configuration differs\"). 0.9 is calibrated on\n" \
	"the flat harness (`xloop test-search --objective flat`: every\n" \
	"configuration equal): 2 of 100 60-run streams ever change their best.\n" \
	"With a seed variable the pick also needs 2 runs (one may be a lucky\n" \
	"seed): autopilot replicates the model's pick until it has them. And it\n" \
	"must have been the pick already at an earlier verdict (one run does not\n" \
	"move the best to a configuration that only just took the lead: among\n" \
	"near-ties the best went back and forth).\n" \
	"Beside the model, paired evidence moves the best too: a configuration\n" \
	"with 2 runs or more on seeds the best has, its differences seed by seed\n" \
	"against the noise of such a difference (the replicates' noise moderated by\n" \
	"the spread of the other runs, the seed correlation from the runs that\n" \
	"share seeds), when P is at least 0.995 once charged for every\n" \
	"configuration with 2 runs (\"promotion by paired evidence\"); autopilot\n" \
	"gives one that is ahead on its pairs (P 0.9 on one look) its next pair.\n" \
	"Each move is an ops/decisions.md entry (\"best now X (was Y)\", which\n" \
	"kind, P) and a \"promotion\" event. \"Better\" follows metric.goal:\n" \
	"for goal min, better by 0.5 means 0.5 lower.\n" \
	"Confirmed is a label, never a condition: a configuration is confirmed\n" \
	"better than the baseline when a paired test on common seeds passes: its\n" \
	"confirming runs (its runs after its first, which chose it, on seeds the\n" \
	"baseline has) give d_s = C(s) - B(s) (B - C for goal min); the first 4\n" \
	"are tested, their sd pooled with twice the seed-adjusted noise, and it\n" \
	"passes when the mean exceeds max(min_delta, t(1 - alpha/32, df) se), in\n" \
	"the metric's units (alpha = search.alpha, default 0.05). status says\n" \
	"\"confirmed better than base on 2 common seeds\" or \"not confirmed yet: 1\n" \
	"of 4 confirming runs on base's seeds\" (the first run, which chose the\n" \
	"configuration, is never counted). (A proven run is another thing: one that\n" \
	"succeeded; help glossary.) Autopilot spends a run on a replicate (on the\n" \
	"baseline's seeds first) only when it is worth more to the choice of the\n" \
	"best than the exploring run (its knowledge gradient); no share of the\n" \
	"budget is set aside. The best's score is the estimate the choice uses\n" \
	"(\"model 0.9781 ± 0.007\", or the shrunken mean, or the mean under plain\n" \
	"means), the raw mean and n beside it (\"raw mean 0.97691, n=2\"). Every ±\n" \
	"is one posterior sd of the figure before it (for a mean: the noise sd\n" \
	"over sqrt(n)); \"(n=1, unchecked)\" while the noise is not measured.\n"

/* The legend of every ±, where status and the briefing show the best. */
#define BEST_PM "(± is one posterior sd of the figure before it; raw mean: the plain " \
	"mean of its runs; help glossary)"

/* One configuration. */
struct best_cfg {
	char *key;
	char *config;		/* confkey.h text */
	long long rep_id;	/* the run that stands for it: its first proven
				   run that is not a replicate (0: none proven) */
	char *rep_tag;
	long long first_id;	/* its first run, proven or not */
	struct noise_cfg st;	/* over its proven runs */
	long runs;		/* every run, proven or not */
	long open;		/* runs with no verdict yet (queued, running) */
	long failed;		/* runs whose latest attempt failed */
	int rep_is_replicate;	/* rep_id is a replicate (no other run proven yet) */
	int has_est;		/* est and est_sd hold the choice's estimate of it */
	double est, est_sd;	/* its estimated true score (the metric's units) and sd */
};

/* One run's place (best_state.runs, in id order). */
struct best_run {
	long long id;
	long cfg;		/* index into best_state.v */
	char *seed;		/* its seed value, NULL when it has none */
	int proven;		/* its latest attempt succeeded with a score */
	int open;		/* no verdict yet (queued, running) */
	double score;		/* the score when proven */
	int stopped;		/* stopped early with its last value (issue 46) */
	double last;		/* that value: for autopilot's model only */
};

struct best_state {
	struct best_cfg *v;
	size_t n;
	struct best_run *runs;
	size_t nruns;
	long *slots;		/* a hash table of v by key: index + 1, 0 empty */
	size_t nslots;
	long best;		/* index into v, -1 when nothing is proven */
	long baseline;		/* the first root run's configuration, -1 */
	struct noise_est noise;	/* within-configuration: intervals (rule.within) */
	struct noise_params p;
	struct noise_obs *obs;	/* the proven runs, for the rule */
	size_t nobs;
	struct noise_rule rule;	/* the paired rule over obs (noise.h): the "confirmed" label */
	int promotions;		/* 1: the best moved in this load (P >= CHOOSE_P) */
	/* the choice (choose.h) */
	long pick;		/* the model's pick (may differ from best: P below CHOOSE_P) */
	long prev;		/* the best before (remembered, or the baseline) */
	int source;		/* enum choose_source */
	char *why;		/* why not the model, NULL when it is */
	double p_pick;		/* P(pick better than prev), NAN when unknown */
	int pick_short;		/* P above CHOOSE_P, the pick short of PROP_PICK_RUNS runs */
	int pick_new;		/* P above CHOOSE_P, the pick new at this verdict (choose.h) */
	int paired;		/* the best moved in this load on paired evidence (choose.h) */
	long pairs;		/* paired: its common seeds with prev */
	double lead, lead_sd;	/* the pick's lead over prev and its sd (goal-signed) */
	double est, est_sd;	/* the best's estimated true score and its sd */
	double p_base;		/* P(best better than the baseline), NAN: unknown or it is the baseline */
	double base_lead, base_sd;	/* the best's lead over the baseline and its sd */
	long *refs;		/* the loads that share these arrays (best.c's kept one and
				 * those handed out from it), NULL when owned alone: read only */
};

/* What callers show about the best. */
struct best_info {
	double mean;		/* the configuration's mean (the raw mean) */
	double half;		/* 95% half-width; 0 when unknown */
	long n;			/* proven runs in it */
	int checked;		/* 1: noise measured (or exactly 0) */
	double sd;		/* the pooled noise */
	long df;
	/* the headline: the estimate the choice uses (choose_estimate) */
	const char *est_kind;	/* "model", "shrunken mean" or "mean" */
	double est, est_sd;	/* it and its sd (for "mean": the mean and sd/sqrt(n); 0 unknown) */
};

/*
 * Read every run of the study into configurations and choose the best.
 * Reads only: a run whose configuration is not stored yet (made before
 * migration 6) is read from its job.sh; keys follow the current seed. 0 or -1.
 */
int best_load(struct xl_ctx *ctx, struct best_state *bs);

/*
 * Store what best_load computes on the fly: the configurations of old
 * runs, and every key after the seed variable changed. For commands that
 * write anyway (feeding, space seed). 0 or -1.
 */
int best_persist(struct xl_ctx *ctx);
void best_release(struct best_state *bs);

/*
 * Remember the best (after a verdict): the next best_load starts from it,
 * so the best changes only when another configuration beats it. 0 or -1.
 */
int best_remember(struct xl_ctx *ctx);
/*
 * Whether the best moved away from the one remembered (best_remember): 1
 * with an ops/decisions.md entry of its own (what replaced what, by which
 * test, with which numbers) into *entry, a heading fragment unique to this
 * promotion into *once and a one-line summary into *summary (malloc'd);
 * 0 unchanged (or nothing remembered yet), -1 error. The caller writes the
 * entry, then best_remember.
 */
int best_promotion(struct xl_ctx *ctx, char **entry, char **once, char **summary);

struct space;

/*
 * The best and its label, for the briefing, status and the report: {pick,
 * source, change, lead, se, p, pairs, looks, confirmed, proven (its old name), state, text,
 * interval, why} (schemas/next.schema.json "outlook"); JSON null when
 * nothing succeeded. seed: the seed variable.
 */
struct json_t *best_outlook(const struct best_state *bs, const struct space *space,
			    const char *seed);

/* Forget it (the configurations changed: the seed variable). */
int best_forget(struct xl_ctx *ctx);

/* The configuration of run_id in bs, or -1. */
long best_find_run(const struct best_state *bs, long long run_id);
/* The configuration with key, or -1. */
long best_find_key(const struct best_state *bs, const char *key);
/* info for configuration i. */
void best_info_of(const struct best_state *bs, long i, struct best_info *info);

/*
 * The best run (the one standing for the best configuration) into *r and
 * what to show into *info (may be NULL): 0 found, 1 none proven, -1 error.
 */
int best_get(struct xl_ctx *ctx, struct run *r, struct best_info *info);

/*
 * The headline figure with the raw mean beside it: "model 0.9781 ± 0.007
 * (raw mean 0.97691, n=2)", "mean 0.953 ± 0.002 (n=3)", "mean 0.953 (n=1,
 * unchecked)" into buf. Every ± is one posterior sd (BEST_PM).
 */
void best_format(const struct best_info *info, char *buf, size_t size);

/*
 * {"tag", "score" (the mean), "n", "interval" (half-width or null),
 * "checked", "noise_sd", "estimate", "estimate_sd", "estimate_kind"}.
 */
struct json_t;
struct json_t *best_json(const char *tag, const struct best_info *info);

/*
 * The lines of a verdict's decision entry that compare the attempt's
 * configuration (its mean now) with its parent's and with the best before
 * (best_key; NULL: unknown), in units of the noise. Appended to e.
 */
struct buf;
void best_verdict_lines(struct xl_ctx *ctx, long long attempt_id, const char *best_key,
			struct buf *e);

/*
 * The seed values configuration cfg has: its runs', and those waiting for
 * it in the plan (entries from one of its runs, or from "best" when it is
 * the best) or in autopilot's proposals (malloc'd strings; free with
 * strv_free). Another configuration's seeds are not counted: replicates
 * of two configurations share seeds, which pairs them.
 */
char **best_seeds_used(struct xl_ctx *ctx, const struct best_state *bs, long cfg,
			size_t *n);

/*
 * The first seed configuration ref has (its runs that succeeded or are
 * open, in run order, then its waiting plan entries and proposals) that is
 * not in used, malloc'd; NULL when none (or ref is -1). The rule of every
 * replicate: a reference's seeds a configuration lacks first, then fresh.
 */
char *best_next_seed(struct xl_ctx *ctx, const struct best_state *bs, long ref,
		     char **used, size_t nused);



#endif
