/*
 * A Gaussian process over runs (pure): what autopilot's proposer believes
 * about the score of configurations it has not run, and how sure it is.
 *
 * Each run is a point x in [0, 1]^d (its position on each variable's grid
 * of the search space, log scale where the space says log) with a seed
 * (a small integer naming the seed value; -1: no seed) and a score y. The
 * model of a run's score is
 *
 *   y = mean + f(x) + s(seed) + e
 *
 * with f a GP with covariance signal^2 * Matern-5/2 (ARD lengthscales), s a
 * per-seed offset shared by the runs that used the same seed value
 * (variance seed^2; runs with no seed share none) and e the run's own
 * noise (variance noise^2). The mean is the data's mean; the targets are
 * standardised internally (y - mean) / scale with scale the data's
 * population sd (scale_hint, or 1, when that is 0). Hyperparameters live in
 * a vector theta of GP_NTHETA(d) entries, all logs, in standardised units:
 * theta[0..d-1] the lengthscales, theta[d] the signal sd, theta[d+1] the
 * seed sd, theta[d+2] the noise sd.
 *
 * Predictions are of f (the seed offset excluded: a configuration's score
 * averaged over seeds), in the data's units.
 */
#ifndef XLOOP_GP_H
#define XLOOP_GP_H

#include <stddef.h>

#define GP_NTHETA(d) ((d) + 3)
/* at most this many runs fit the hyperparameters (evenly spaced in run order) */
#define GP_FIT_MAX 40

struct gp {
	size_t d, n;
	double *x;		/* n x d */
	long *seed;		/* n */
	double *w;		/* n runs each point stands for (noise / w), NULL: 1 */
	double *y;		/* n, standardised */
	double *l;		/* n x n lower Cholesky factor of the covariance */
	double *alpha;		/* K^-1 y */
	double *theta;		/* GP_NTHETA(d) */
	double *il, s2;		/* the lengthscales' inverses, signal^2 */
	double ymean, yscale;
	double lml;		/* log marginal likelihood of the standardised y */
};

/* The covariance of runs (a, sa) and (b, sb); same: they are the same run. */
double gp_cov(const double *theta, size_t d, const double *a, long sa, const double *b,
	      long sb, int same);

/*
 * Condition on n runs with the hyperparameters theta (copied); -1 when the
 * covariance is not positive definite even with jitter, or n is 0.
 */
int gp_condition(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
		 const double *y, const double *theta, double scale_hint);

/* What a fit knows beside the runs. */
struct gp_opts {
	double scale_hint;	/* the scores' scale when they do not vary (0: 1) */
	double noise_sd;	/* the noise measured on replicates, in the data's units */
	long noise_df;		/* its degrees of freedom (0: not measured) */
	const double *w;	/* each point the mean of w[i] runs (its noise
				 * variance noise^2 / w[i]), NULL: 1 each */
	int apart;		/* 1: the lengthscales held at their lower bound,
				 * so configurations a grid step apart barely
				 * correlate (each its own; the rest fitted) */
};

/* The lower bound of a lengthscale (the positions are on [0, 1]). */
#define GP_LEN_MIN 0.05

/*
 * Fit theta by maximising the log marginal likelihood plus weak priors
 * (bounded; the noise's centred on the measured noise when there is one)
 * from a few deterministic starts, and condition on the runs; -1 when
 * nothing can be fitted (n is 0).
 */
int gp_fit(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
	   const double *y, const struct gp_opts *o);

/*
 * Add m runs (the same theta and standardisation), e.g. fantasies of runs
 * still pending at their posterior mean; -1 as gp_condition.
 */
int gp_extend(struct gp *g, size_t m, const double *x, const long *seed, const double *y);

/* The posterior mean of f(x). */
double gp_mean(const struct gp *g, const double *x);

/* The posterior mean and variance of f(x). */
void gp_predict(const struct gp *g, const double *x, double *mean, double *var);

/* The posterior mean and variance of f(a) - f(b). */
void gp_predict_diff(const struct gp *g, const double *a, const double *b, double *mean,
		     double *var);

/* A point others are compared with (the best, say), prepared once. */
struct gp_ref {
	double *b;		/* the point (d) */
	double *v;		/* l^-1 k(runs, b) */
	double mean;		/* f(b)'s posterior mean */
};
void gp_ref_init(const struct gp *g, const double *b, struct gp_ref *r);
void gp_ref_release(struct gp_ref *r);

/* The posterior mean and variance of f(a), and of f(a) - f(b) for r's b. */
void gp_predict_vs(const struct gp *g, const double *a, const struct gp_ref *r, double *mean,
		   double *var, double *dmean, double *dvar);

/*
 * The posterior covariance of f at each of refs[0, m) with the score of a
 * new run at a with seed sa (an index of the runs' seeds; GP_SEED_FRESH: a
 * seed no run has; -1: none) into cov, and that score's predictive
 * variance (its seed offset and noise included) into *var; the data's
 * units squared. What a run there would teach about each ref (the
 * knowledge gradient, propose-change.c).
 */
#define GP_SEED_FRESH (-2)
void gp_obs_cov(const struct gp *g, const double *a, long sa, const struct gp_ref *refs,
		size_t m, double *cov, double *var);

/*
 * Each run's score predicted from the others (seed offsets and noise
 * included; closed form, n^3 / 3): the mean squared error, in the data's
 * units squared, into *mse, and the sum of the runs' log densities of the
 * standardised scores (the model's held-out fit, comparable with another
 * model's over the same scores) into *lpd.
 */
void gp_loo(const struct gp *g, double *mse, double *lpd);

void gp_release(struct gp *g);

#endif
