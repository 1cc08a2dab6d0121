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
	"What \"best\" means (status, next, resume, report, --from best, plan):\n" \
	"A configuration is a job.sh's top-level assignments minus the seed\n" \
	"variable, values canonical; runs with the same configuration are one\n" \
	"experiment, and its score is the mean over its runs that succeeded with\n" \
	"a score. A replicate\n" \
	"is a run whose one change is the seed (tag B--rK); it is never a parent.\n" \
	"The noise is measured, never assumed: sigma is the pooled within-\n" \
	"configuration standard deviation over every configuration with 2 runs\n" \
	"or more (df = the sum of n - 1; intervals of a mean use it), and the\n" \
	"seed-adjusted noise is what is left of every run's score after a\n" \
	"configuration effect and a seed effect (runs with the same seed share\n" \
	"its offset): what a difference on a common seed sees. Autopilot runs\n" \
	"the baseline twice first (the noise is measured) and the best likewise.\n" \
	"The best starts as the baseline's configuration; a candidate C replaces\n" \
	"the best B on a paired comparison over common seeds:\n" \
	"  no noise estimate yet:  mean(C) - mean(B) > metric.min_delta (default\n" \
	"    0), \"unchecked\"; sigma = 0 (deterministic): the same, exact\n" \
	"  otherwise: C's confirming runs (every run after its first: the first\n" \
	"    made C worth confirming, so it is biased up and left out) on a seed\n" \
	"    B has give pairs d_s = C(s) - B(s) (B - C for goal min); the first\n" \
	"    4 are tested: k pairs, dbar their mean, s their sd pooled with twice\n" \
	"    the seed-adjusted noise (df = k - 1 + its df), and C beats B when\n" \
	"    dbar > max(min_delta, t(1 - alpha/16, df) * s / sqrt(k))\n" \
	"with alpha = search.alpha (default 0.05) shared by at most 4 looks per\n" \
	"challenger (one per confirming pair; then it is retired against this\n" \
	"best) and 4 challengers, the most autopilot confirms at once: the\n" \
	"looks of one challenger are charged, not every run of the study. On\n" \
	"300 flat 60-run studies (`xloop test-search --objective flat`, same-\n" \
	"seed runs correlated 0.5) 3% promote. A tie never promotes (a lead of 0,\n" \
	"within min_delta or within rounding). Candidates are compared again\n" \
	"until none beats the best. The best is sticky: it is remembered at each\n" \
	"verdict and changes only when another configuration beats it; each\n" \
	"change is an ops/decisions.md entry of its own (\"best now X (was Y)\",\n" \
	"the test and its numbers) and a \"promotion\" event. Autopilot runs a\n" \
	"challenger (the largest lead the rule could prove in 4 looks) on the\n" \
	"best's seeds in the best's order, and gives the best a fresh seed when\n" \
	"the challenger has all of them; `xloop replicate` takes the best's\n" \
	"seeds first too. A run is \"best\" only when its configuration is; one\n" \
	"that succeeded is \"succeeded\", not proven. Scores are shown as\n" \
	"mean ± the 95% half-width (n=N), or \"(n=1, unchecked)\".\n"

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
};

/* One run's place (best_state.runs, in id order). */
struct best_run {
	long long id;
	long cfg;		/* index into best_state.v */
	char *seed;		/* its seed value, NULL when it has none */
	int proven;		/* its latest attempt succeeded with a score */
	int open;		/* no verdict yet (queued, running) */
	double score;		/* the score when proven */
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
	struct noise_rule rule;	/* the paired rule over obs (noise.h) */
	int promotions;
};

/* What callers show about the best. */
struct best_info {
	double mean;		/* the configuration's mean */
	double half;		/* 95% half-width; 0 when unknown */
	long n;			/* proven runs in it */
	int checked;		/* 1: noise measured (or exactly 0) */
	double sd;		/* the pooled noise */
	long df;
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

/*
 * The configuration the model thinks best among those with a proven run
 * (prop_model_best: the Gaussian process's posterior mean), with its lead
 * over the best and that lead's sd (*model 1); the highest mean (*model 0,
 * *lead and *sd 0) when no model fits. -1 when nothing is proven.
 */
struct space;
long best_model_pick(const struct best_state *bs, const struct space *space, const char *seed,
		     int *model, double *lead, double *sd);

/*
 * What xloop thinks beside the proven best, for the briefing, status and
 * the report: {pick, source, change, lead, se, pairs, looks, need,
 * need_after_looks, df, state, text, interval} (schemas/next.schema.json
 * "outlook"); JSON null when nothing is proven. seed: the seed variable.
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

/* "0.953 ± 0.004 (n=3)", "0.953 (n=1, unchecked)" into buf. */
void best_format(const struct best_info *info, char *buf, size_t size);

/* {"tag", "score" (the mean), "n", "interval" (half-width or null), "checked"}. */
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
 * The seed values already used by configuration key's runs, or waiting in
 * the plan or in autopilot's proposals (malloc'd strings; free with
 * strv_free).
 */
char **best_seeds_used(struct xl_ctx *ctx, const struct best_state *bs, long cfg,
			size_t *n);



#endif
