/*
 * Autopilot's choice of the next run (pure). In this order:
 *
 * 1. replicates the noise rule needs (with a seed variable), on common
 *    seeds: propose_confirm below (propose-confirm.c says the order);
 * 2. with a model: the model's pick again while it is not the best and has
 *    fewer than PROP_PICK_RUNS runs (below), else
 *    a one-variable change (propose-change.c): a Gaussian process (gp.h)
 *    over every proven run (each run's seed shares an offset with the other
 *    runs of that seed; runs still pending count as the model expects them
 *    to score, so proposals made while they run spread out, and a variable
 *    a run in flight changes from a parent is not changed again from that
 *    parent while another move is left: the batch in flight is chosen
 *    together, each lane a different line) rates every
 *    move of the best few configurations by the model (search.branch of
 *    them or 10, whichever is more, and the best; the best 64 when none of
 *    their moves is left; beyond 300 proven runs the model sees each
 *    configuration's mean instead of its runs): any value of any space
 *    variable, near or far, never a configuration already run, queued or
 *    proposed. The move with the highest upper confidence bound (mean +
 *    2 sd) of its lead over the model's best among the configurations run
 *    is proposed: the acquisition
 *    chooses both the variable and the parent. The path to an optimum
 *    whose variables must move together may take several runs, one change
 *    each. Without a model (nothing proven on the grid): the untried
 *    neighbours of the best few by mean, each variable in turn (the turn
 *    rotates from proposal to proposal);
 * 3. when those have no untried neighbour: the untried neighbours of the
 *    best 3 x search.branch;
 * 4. nothing: converged.
 */
#ifndef XLOOP_PROPOSE_H
#define XLOOP_PROPOSE_H

#include <stddef.h>

#include "search/noise.h"
#include "search/space.h"

/* One run as the proposer sees it (in run order). */
struct prop_run {
	long cfg;		/* index into prop_input.v */
	const char *seed;	/* its seed value, NULL: none */
	int proven;		/* succeeded with a score */
	int open;		/* no verdict yet (queued, running) */
	double score;		/* when proven (partial: its value at the stop) */
	/*
	 * stopped early (issue 46), not proven: the model is fitted to its value
	 * at the stop (a lower-fidelity observation); the means, the pairs and
	 * the configuration's representative are not, so it is never the best
	 */
	int partial;
};

/* A configuration as the proposer sees it. */
struct prop_cfg {
	const char *key;
	const char *config;	/* confkey.h text */
	const char *rep_tag;	/* its run to branch from; NULL: nothing proven */
	struct noise_cfg st;	/* proven runs */
	long open;		/* runs (and proposals) not judged yet */
};

struct prop_input {
	const struct prop_cfg *v;
	size_t n;
	const struct prop_run *runs;	/* every run of the study */
	size_t nruns;
	long best, baseline;	/* indexes, -1: none */
	struct noise_est noise;
	struct noise_params p;
	long m;			/* unused: the paired rule counts its own looks */
	const struct space *space;
	const char *seed;	/* "" none */
	long replicates, confirm_max, branch;
	long budget_runs;	/* autopilot's run budget, 0: none (raises the cap) */
	const char *const *taken;	/* keys run, queued or proposed, beyond v */
	size_t ntaken;
	unsigned long turn;	/* rotates the variables (without a model) */
	const char *metric;
};

enum prop_kind { PROP_NONE, PROP_REPLICATE, PROP_CHANGE };

struct prop_out {
	enum prop_kind kind;
	long cfg;		/* the parent configuration */
	const char *var;	/* a space variable or the seed */
	char *value;		/* PROP_CHANGE: the new value (malloc'd) */
	char *config;		/* PROP_CHANGE: the new configuration (malloc'd) */
	char *reason;		/* one line (malloc'd) */
};

/*
 * Step 1 (propose-confirm.c): the replicate the rule needs, on a seed the
 * best has (out->value; NULL: a fresh seed). 1 when *out is one.
 */
int propose_confirm(const struct prop_input *in, struct prop_out *out);

/*
 * The model's best among the proven configurations (by the posterior mean
 * of its score averaged over seeds) into *idx, and its predicted lead over
 * configuration over (an index; -1: none, *lead and *sd 0) with the sd of
 * that lead, in the metric's units, positive when idx is better under the
 * goal. -1 (and *idx -1) when no model can be fitted or over is off the grid.
 */
int prop_model_best(const struct prop_input *in, long over, long *idx, double *lead,
		    double *sd);

/*
 * With a seed that varies (a seed variable, and not PROP_SAME_DF degrees of
 * freedom of replicates that all tied: on wine the baseline's two seeds
 * scored the same, 0.9719, and other configurations swing by 0.06),
 * the best moves only to a configuration with at least PROP_PICK_RUNS runs,
 * and the proposer replicates the model's pick until it has them: one run
 * may be one lucky seed (wine, stream 8 of BENCHMARKS.md 5(d): a one-run
 * pick at P 0.98 whose true score was below the baseline's).
 */
#define PROP_PICK_RUNS 2
#define PROP_SAME_DF 3
int prop_seed_varies(const struct prop_input *in);

/* Choose; out->kind PROP_NONE means converged (reason says so). */
void propose_next(const struct prop_input *in, struct prop_out *out);
void prop_out_release(struct prop_out *out);

#endif
