/*
 * Noise-aware best (pure): the statistics behind `help best`.
 *
 * A configuration's score is the mean of its proven runs. The noise is the
 * pooled within-configuration standard deviation over every configuration
 * with two runs or more (replicates: runs that differ only in the seed), df
 * = sum of (n - 1). The incumbent starts as the baseline's configuration;
 * a candidate C replaces the incumbent I when d = mean(C) - mean(I) (the
 * other way round for goal min) satisfies
 *
 *   noise unknown (df = 0): d > min_delta                 ("unchecked")
 *   sigma = 0 (df > 0):     d > min_delta                 (exact)
 *   otherwise:              n(C) >= 2 and d' > max(min_delta,
 *                             t(1 - alpha/m, df) * sigma * sqrt(1/(n(C)-1) + 1/n(I)))
 *
 * where d' uses the mean of C's confirming runs (every run after its first:
 * the first run is what made C worth confirming, so it is biased up by
 * that choice and left out of the test),
 *
 * with m the number of looks: every run of a candidate (a configuration
 * other than the baseline's), and never fewer than NOISE_MIN_LOOKS. A
 * candidate is tested again after each of its runs, so each run is at most
 * one new test, and a one-sided pooled t bound at the Bonferroni level
 * alpha/m keeps the chance of any false promotion over the tests so far
 * below alpha. The floor is for the first runs: with m the candidates so
 * far (1, 2, 3...) the early tests ran at alpha/1, alpha/2 ... on a noise
 * estimate of one or two degrees of freedom, and 7 to 12% of flat studies
 * of 60 runs promoted a seed's luck (`xloop test-search --objective flat`,
 * streams 101-250); with the floor, 2%. Candidates are compared again until none beats the
 * incumbent (each promotion raises the incumbent's mean, so this ends).
 * The best is sticky: the search starts from the last best (best.c
 * remembers it at each verdict), so it changes only when another
 * configuration beats it, never because the noise estimate or m moved.
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

/* How cand compares with inc. */
struct noise_cmp {
	double diff;		/* improvement of cand over inc (goal-signed) */
	double need;		/* what the rule asks of diff */
	double sigmas;		/* diff / (sigma * sqrt(1/n1 + 1/n2)); 0 when unknown */
	int beats;		/* the rule promotes cand */
	int checked;		/* noise was known */
	int wants_replicate;	/* ahead of inc but not proven better: more runs would tell */
};

/* The mean of c's runs after its first (its mean when n < 2). */
double noise_confirming_mean(const struct noise_cfg *c);

/* m of the rule: the runs of every configuration but baseline's, at least this. */
#define NOISE_MIN_LOOKS 20

long noise_looks(const struct noise_cfg *v, size_t n, size_t baseline);

/* Compare cand with inc under the rule, m looks in the family (noise_looks). */
void noise_compare(const struct noise_cfg *cand, const struct noise_cfg *inc,
		   const struct noise_est *nz, const struct noise_params *p, long m,
		   struct noise_cmp *out);

/*
 * The best of v[0, n) under the rule, starting from the incumbent (an index);
 * v[i].n == 0 entries are skipped. Returns the index; *promotions (when not
 * NULL) gets how many times the incumbent changed.
 */
size_t noise_choose(const struct noise_cfg *v, size_t n, size_t baseline,
		    const struct noise_est *nz, const struct noise_params *p, long m,
		    int *promotions);

/* Half-width of the 95% interval of a mean of n runs (0 when unknown). */
double noise_halfwidth(const struct noise_est *nz, long n);

#endif
