/*
 * Paired evidence (pure): a configuration compared with the best seed by
 * seed, beside the model (choose.h). docs/search.md, "Paired evidence
 * beside the model".
 */
#ifndef XLOOP_PAIRED_H
#define XLOOP_PAIRED_H

#include <stddef.h>

#include "search/propose.h"

/*
 * Paired evidence beside the model (paired.c; choose.c's paired_move moves the best): a configuration
 * with PROP_PICK_RUNS runs or more and at least 2 runs on seeds the best
 * has is compared with the best seed by seed. The noise of one difference:
 * the replicates' variance moderated with CHOOSE_PAIRED_SPREAD_DF degrees of
 * freedom of the spread of every other configuration's runs, times 2 (1 -
 * the seed correlation), that correlation from the two-way fit's residual
 * (noise_resid) pulled towards none with CHOOSE_SEED_CORR_DF degrees of
 * freedom; each configuration looked at as of the run that completed its
 * last pair (a new run elsewhere does not look at it again). The best
 * moves when the one-sided P of the lead, charged for the m configurations
 * with 2 runs or more (1 - m (1 - P), Bonferroni), is at least 1 -
 * CHOOSE_PAIRED_ALPHA. Autopilot gives a configuration whose P (one look)
 * is at least CHOOSE_PAIRED_NEXT its next pair (on a seed the best has,
 * else the best a fresh seed) up to CHOOSE_PAIRED_PAIRS common seeds.
 * Calibrated on `xloop test-search --objective flat|lead --vars 2|5|8`
 * (2026-12-06; docs/search.md): alpha 0.01 with next-pair 0.8 moved 11% of
 * flat streams of 5 variables (100), 0.003 with 0.9 4%; 0.005 with 0.9 the
 * plain lead the best at run 15 in 96-98% (50 streams), the peak objective
 * as before.
 */
#define CHOOSE_PAIRED_ALPHA 0.005
#define CHOOSE_PAIRED_NEXT 0.9
#define CHOOSE_PAIRED_PAIRS 4
#define CHOOSE_SEED_CORR_DF 2.0
/* The paired evidence needs this many degrees of freedom of replicates and spread together. */
#define CHOOSE_PAIRED_MIN_DF 4.0
/*
 * The noise is fitted for at most this many configurations a choice, the
 * largest leads (times the square root of their pairs) first: a study of
 * 10,000 runs has many configurations with pairs.
 */
#define PAIRED_EVAL_MAX 8
/* Degrees of freedom the spread of the other configurations' runs lends one run's noise. */
#define CHOOSE_PAIRED_SPREAD_DF 2.0

/* The paired evidence of one configuration against the best. */
struct paired {
	long cfg;		/* -1: none */
	size_t k;		/* common seeds */
	double lead, se, df;	/* the mean difference (goal-signed), its sd, the t's df */
	double p;		/* one-sided P of a lead beyond min_delta, one look */
	double padj;		/* the same charged for m configurations compared */
	long m;			/* configurations but the best with 2 runs or more */
};

/*
 * The configuration (not b, with PROP_PICK_RUNS runs) whose paired evidence
 * against b is strongest (into *best); when pairs_below > 0, only those with
 * fewer common seeds. -1 when none has 2 common seeds and a lead.
 */
long paired_best(const struct prop_input *in, long b, size_t pairs_below, struct paired *best);

/*
 * A configuration whose paired evidence against in->best could move it with
 * more pairs (one-look P at least CHOOSE_PAIRED_NEXT, fewer than
 * CHOOSE_PAIRED_PAIRS common seeds), -1; *pairs its common seeds.
 */
long paired_next(const struct prop_input *in, size_t *pairs);

#endif
