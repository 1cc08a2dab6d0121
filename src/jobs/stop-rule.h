/*
 * The stop rule that knows the noise (issue 46), as pure functions. At
 * submit xloop writes the values to beat, one per epoch, into the run's
 * directory ($XLOOP_RUN_DIR/stop-bar); the stop watcher on the node
 * (watch.c, awk) compares each reported epoch with them. A run stops when
 * it is behind the bar at `behind` reported epochs running after the
 * warm-up. The bar at epoch K is the best configuration's mean curve at
 * K (and its parent's: the less demanding of the two), less z times the
 * seed noise at K (the pooled sd of replicates at K and the epochs beside
 * it, or from K to the end when that is larger) times sqrt(1 + 1/n), n the runs in that mean, times t(0.975, df) /
 * 1.96 for the df the replicates give; only epochs both reached, at the
 * same index. And never above the last epoch's bar less the largest rise
 * (goal min: fall) any curve read made from K to its end: a run stops
 * only when, even rising as much as any run did, it would not reach the
 * bar at the end (a late bloomer behind at K is not stopped).
 * No replicates reaching K, no bar at K: the rule needs the noise.
 */
#ifndef XLOOP_STOP_RULE_H
#define XLOOP_STOP_RULE_H

#include <stddef.h>

#include "lib/buf.h"

/*
 * The defaults of stop.warmup, stop.behind and stop.noise_z, calibrated on
 * `./build.sh bench stop` (BENCHMARKS.md, section 8): change them only with
 * that table.
 */
#define STOP_WARMUP 10
#define STOP_BEHIND 5
#define STOP_NOISE_Z 3.0

/* The highest epoch index a curve keeps. */
#define STOP_MAX_EPOCH 100000

/* One run's curve: v[K] the value reported at epoch K (NAN: none), len entries. */
struct stop_curve {
	double *v;
	size_t len;
	long cfg;		/* its configuration (any id; -1: none) */
};

/* The rule's knobs (xloop.json's stop section). */
struct stop_params {
	long long warmup;	/* no bar at epochs 0..warmup */
	long long behind;	/* epochs running behind the bar that stop a run */
	double z;		/* the margin in noise sds */
	int goal_max;
};

/*
 * A progress file's text as a curve: "epoch K VALUE" lines (complete
 * ones; a later line for the same K replaces the earlier, NaN and
 * infinite values kept as NAN). c->cfg is left as it was.
 */
void stop_curve_parse(const char *text, struct stop_curve *c);
void stop_curve_release(struct stop_curve *c);

/*
 * The seed noise near epoch k: the within-configuration sd pooled over the
 * configurations of runs[0, n) with at least two finite values at an
 * epoch, and over the epochs k - window .. k + window (accuracy moves in
 * steps: two seeds often tie at one epoch); NAN when none (*df 0).
 */
double stop_noise_at(const struct stop_curve *runs, size_t n, size_t k, size_t window, long *df);

/* The epochs either side of K whose replicates measure the noise at K. */
#define STOP_NOISE_WINDOW 2
/* The normal's 0.975 quantile: the margin is z sds times t(0.975, df) / this. */
#define STOP_Z975 1.959963984540054

/*
 * The bar: bar[k] for k < max (NAN: no bar at k) from the runs of
 * configuration best and of parent (-1: none; the same as best: best
 * alone), the noise of every configuration of runs and the rises of
 * every curve of runs. Returns the number of epochs up to the last bar
 * (0: no bar at all).
 */
size_t stop_bar(const struct stop_curve *runs, size_t n, long best, long parent,
		const struct stop_params *p, double *bar, size_t max);

/*
 * The rule on a curve as the watcher applies it: the first epoch K at
 * which v is behind bar for p->behind reported epochs running (an epoch
 * without a bar, or with a value not behind it, starts the count again;
 * NaN values are the plainest rule's), or -1.
 */
long long stop_first_behind(const double *v, size_t len, const double *bar, size_t nbar,
			    const struct stop_params *p);

/* The stop-bar file's text: "behind R" then "bar K VALUE" for each bar. */
void stop_bar_text(const double *bar, size_t nbar, const struct stop_params *p, struct buf *b);

/*
 * A stop-bar file's text back: *bar (malloc'd, NAN where none), *nbar and
 * *behind; -1 when it has no "behind" line.
 */
int stop_bar_parse(const char *text, double **bar, size_t *nbar, long long *behind);

/* Why a run stopped by this rule (the watcher's words, for the verdict). */
#define STOP_BEHIND_WHY "behind the best by more than the noise"

#endif
