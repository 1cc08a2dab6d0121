/*
 * Autopilot's choice of the next run (pure). In this order:
 *
 * 1. replicates the noise rule needs (with a seed variable), on common
 *    seeds: propose_confirm below (propose-confirm.c says the order);
 * 2. while the best few proven configurations (search.branch of them,
 *    highest mean first; the best always among them) have an untried
 *    neighbour: a one-variable change of one of them to any value of a
 *    space variable, near or far. A quadratic response surface (surface.h)
 *    fitted to every proven configuration rates each untried change (never
 *    a configuration already run, queued or proposed) by its predicted
 *    score plus half a standard deviation of that prediction; the highest is
 *    proposed. The surface's pair terms let a change of a configuration
 *    off the best pay off when two variables must move together; the
 *    standard deviation sends the search where nothing was run yet; every
 *    variable stays a candidate after the others moved. Without a surface
 *    (nothing to fit, a value off the grid): the untried neighbours, each
 *    variable in turn (the turn rotates from proposal to proposal);
 * 3. when the best few have no untried neighbour: the untried neighbours
 *    of the best 3 x search.branch;
 * 4. nothing: converged (no untried neighbour of those).
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
	double score;		/* when proven */
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
	unsigned long turn;	/* rotates the variables */
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

/* Choose; out->kind PROP_NONE means converged (reason says so). */
void propose_next(const struct prop_input *in, struct prop_out *out);
void prop_out_release(struct prop_out *out);

#endif
