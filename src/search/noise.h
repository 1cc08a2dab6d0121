/*
 * Noise-aware best (pure): the statistics behind `help best`.
 *
 * A configuration's score is the mean of its proven runs. Two noise
 * estimates: within (the pooled within-configuration standard deviation over
 * configurations with two runs or more, df = sum of (n - 1); intervals of a
 * mean use it) and resid (score = configuration effect + seed effect +
 * noise, fitted over every run: runs with the same seed share the seed's
 * offset, so it is the noise a difference on a common seed sees).
 *
 * The incumbent starts as the baseline's configuration; a candidate C
 * replaces the incumbent I on a paired comparison over common seeds:
 *
 *   noise unknown (within df = 0): d > min_delta on the means ("unchecked")
 *   sigma = 0 (within df > 0):     d > min_delta on the means (exact)
 *   otherwise: the confirming pairs are C's runs after its first (the first
 *     made C worth confirming: biased up by that choice, left out) on a seed
 *     I has; the first NOISE_LOOKS of them, k, are tested; d_s = C(s) - I(s)
 *     (the other way round for goal min), dbar their mean, and
 *       s^2 = ((k - 1) s_pairs^2 + df0 * 2 resid^2) / (k - 1 + df0)
 *     (df0 = resid's df; within's when resid's is 0), df = k - 1 + df0;
 *     C beats I when k >= 1 and dbar > max(min_delta,
 *       t(1 - alpha / (NOISE_LOOKS * NOISE_LABELLED), df) * s / sqrt(k)).
 *
 * Each confirming pair is one look and a configuration has at most
 * NOISE_LOOKS (then it is retired against this incumbent), and alpha is
 * shared by NOISE_LABELLED configurations: Bonferroni over looks and
 * configurations, not over every run of the study. The label never moves
 * the best (choose.h). Calibrated on `xloop test-search --objective flat
 * --budget 60` (a per-seed offset shared by every configuration, as on
 * real studies): 9 of streams 1..300 label some configuration confirmed (3%),
 * 1 the best (2026-12-05). A tie never passes (d = 0, or within
 * min_delta, or within rounding). The best is sticky: the search starts
 * from the last best (best.c remembers it at each verdict).
 */
#ifndef XLOOP_NOISE_H
#define XLOOP_NOISE_H

#include <stddef.h>

/* One configuration's proven runs. */
struct noise_cfg {
	double mean;
	double ss;		/* sum of squared deviations from the mean */
	long n;
	double first;		/* the first run's score (it chose the candidate) */
};

struct noise_est {
	double sd;		/* pooled standard deviation */
	long df;		/* 0: unknown */
};

struct noise_params {
	int goal_max;
	double min_delta;
	double alpha;		/* family-wise level, e.g. 0.05 */
};

/* Add a score to a configuration (Welford). */
void noise_add(struct noise_cfg *c, double score);

/* The pooled within-configuration noise of v[0, n). */
void noise_pool(const struct noise_cfg *v, size_t n, struct noise_est *out);

/* P(T <= t) for Student's t with df degrees of freedom. */
double noise_t_cdf(double t, double df);
/* The p-quantile of Student's t (0 < p < 1). */
double noise_t_quantile(double p, double df);

/* One proven run as the rule sees it (in run order). */
struct noise_obs {
	long cfg;		/* its configuration */
	long seed;		/* its seed (an index, noise_seed_ids); -1: none */
	double score;
};

/*
 * The declared design: a challenger is tested on at most NOISE_LOOKS
 * confirming pairs (one look per pair), and alpha is shared by
 * NOISE_CHALLENGERS challengers; each look runs at alpha / (NOISE_LOOKS *
 * NOISE_CHALLENGERS). The proposer keeps at most NOISE_CHALLENGERS alive.
 */
#define NOISE_LOOKS 4
#define NOISE_CHALLENGERS 4
/*
 * The configurations the "confirmed" label is shared by: alpha / (NOISE_LOOKS
 * * NOISE_LABELLED) a look. Since best is the model's pick, autopilot gives
 * every pick a second run on a seed the baseline has, so more than
 * NOISE_CHALLENGERS configurations get pairs: at 4, 18 of flat streams
 * 1..300 labelled some configuration confirmed (6%; the goal is 5%), at 8, 9
 * (3%; 2026-12-05).
 */
#define NOISE_LABELLED 8

/* Everything the rule reads. */
struct noise_rule {
	const struct noise_obs *o;	/* proven runs, in run order */
	size_t n;
	size_t ncfg;
	struct noise_est within;	/* noise_pool: intervals, and the fallback */
	struct noise_est resid;		/* noise_resid: what a paired difference sees */
	struct noise_params p;
	long *head, *next;		/* each configuration's runs in o, in order */
};

/* Seed values to indices (equal strings, equal index; NULL: -1) into ids. */
void noise_seed_ids(const char *const *seeds, size_t n, long *ids);

/*
 * The residual noise of score = configuration effect + seed effect + noise
 * over o[0, n) (runs without a seed are left out): df = runs - configurations
 * - seeds + connected groups; 0 when nothing is shared.
 */
void noise_resid(const struct noise_obs *o, size_t n, size_t ncfg, struct noise_est *out);

/* Fill r: within from v (per configuration), resid from o; release it after. */
void noise_rule_init(struct noise_rule *r, const struct noise_obs *o, size_t n,
		     const struct noise_cfg *v, size_t ncfg, const struct noise_params *p);
void noise_rule_release(struct noise_rule *r);

/* How cand compares with inc. */
struct noise_cmp {
	double diff;		/* lead of cand over inc (goal-signed): the mean paired
				   difference on the confirming pairs; before any, the
				   difference on the first run's seed, else of the means */
	double need;		/* what the rule asks of diff */
	double sigmas;		/* diff / its standard error; 0 when unknown */
	double se;		/* that standard error; 0 when unknown */
	long pairs;		/* confirming pairs tested (at most NOISE_LOOKS) */
	long df;		/* of the test */
	int beats;		/* the rule promotes cand */
	int checked;		/* noise was known */
	int paired;		/* the paired test ran (else plain or exact) */
	int wants_replicate;	/* ahead of inc, not confirmed, looks left: more runs would tell */
};

/* The mean of c's runs after its first (its mean when n < 2). */
double noise_confirming_mean(const struct noise_cfg *c);

/* Compare configuration cand with inc under the rule. */
void noise_compare(const struct noise_rule *r, long cand, long inc, struct noise_cmp *out);

/* What the paired test would ask of a lead after `pairs` confirming pairs (noise.c). */
double noise_need(const struct noise_rule *r, long pairs);

/*
 * The best under the rule, starting from the incumbent start: candidates
 * (configurations with a proven run) are compared again until none beats
 * the incumbent. *promotions (when not NULL) gets how many times it changed.
 */
long noise_choose(const struct noise_rule *r, long start, int *promotions);

/* Half-width of the 95% interval of a mean of n runs (0 when unknown). */
double noise_halfwidth(const struct noise_est *nz, long n);

#endif
