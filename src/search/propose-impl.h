/* The proposer's halves (private to src/search/): propose.c the replicates, propose-change.c the changes. */
#ifndef XLOOP_PROPOSE_IMPL_H
#define XLOOP_PROPOSE_IMPL_H

#include "search/gp.h"
#include "search/propose.h"

/* The model of a study: the GP and each configuration's grid position. */
struct prop_model {
	struct gp g;
	size_t d;
	double *u;		/* in->n x d positions */
	int *on;		/* 1: u is set (every variable on the grid) */
	double *mean;		/* the posterior mean of f at each configuration on (goal-signed) */
	size_t nobs, nopen;	/* proven runs, pending runs fantasized */
	size_t npts;		/* points the model saw: nobs less runs again on a seed their
				 * configuration had, or configurations beyond PROP_RUNS_MAX */
	long top;		/* the model's best among proven configurations, -1 */
	const char **seeds;	/* the seed values, by the model's index */
	size_t nseeds;
};

/* prop_model_fit's flags: condition on the pending runs too; configurations apart (gp_opts). */
#define PROP_FIT_FANTASIZE 1
#define PROP_FIT_APART 2
/*
 * Fit the model to every proven run on the grid (scores turned round for
 * goal min: the model maximises) and, with PROP_FIT_FANTASIZE, condition
 * on the pending runs at their posterior mean; -1 when nothing can be
 * fitted.
 */
int prop_model_fit(const struct prop_input *in, int flags, struct prop_model *m);
void prop_model_release(struct prop_model *m);
/* A seed value's index in m (GP_SEED_FRESH: no run has it; -1: no seed). */
long prop_model_seed(const struct prop_model *m, const char *seed);

/*
 * With a model: the one-variable change the acquisition chooses, or a
 * replicate of one of the best few when that is worth more (its knowledge
 * gradient, propose-value.c); 0 when no model fits or nothing is left.
 */
int prop_model_choice(const struct prop_input *in, struct prop_out *out);
/* Without a model: the neighbour walk, else PROP_NONE (converged, or nothing to change). */
void prop_change(const struct prop_input *in, struct prop_out *out);
/* The baseline's runs up front (the noise is measured there first): 1 with *out. */
int propose_upfront(const struct prop_input *in, struct prop_out *out);

/* E[max_i (a_i + b_i Z)] - max_i a_i, Z standard normal (the knowledge gradient). */
double prop_kg(const double *a, const double *b, size_t n);
/* The knowledge gradient of a run at grid position u on seed (propose-value.c). */
double prop_value_move(const struct prop_input *in, const struct prop_model *m, const double *u,
		       const char *seed);
/* A replicate of the model's pick while it is short of PROP_PICK_RUNS runs: 1 with *out. */
int prop_value_pick(const struct prop_input *in, const struct prop_model *m, struct prop_out *out);
/* The next pair of a configuration the paired evidence may move the best to: 1 with *out. */
int prop_value_paired(const struct prop_input *in, struct prop_out *out);
/* The first of configuration of's seeds (run order) that c lacks; NULL: none. */
const char *prop_seed_lacking(const struct prop_input *in, long of, long c);
/*
 * The replicate of one of the best few worth most to the choice of the
 * best, when it is worth more than explore: 1 with *out.
 */
int prop_value_replicate(const struct prop_input *in, const struct prop_model *m, double explore,
			 struct prop_out *out);

#endif
