/*
 * A quadratic response surface (pure): what autopilot's proposer believes
 * about the score between the configurations it has run.
 *
 * Each configuration is a point u in [0, 1]^d (its position on each
 * variable's grid of the search space, 0 the first value, 1 the last). The
 * model is Bayesian linear regression on the features 1, u_i, u_i^2 and
 * u_i u_j (the pairs only while d <= SURFACE_PAIRS_MAX), each point weighted
 * by its number of runs: the coefficients have a N(0, 1 / SURFACE_PRIOR)
 * prior in units of the scores' spread, the noise is the measured seed noise (or the fit's
 * residual when that is larger). A prediction is a mean and the standard
 * deviation of that mean (how unsure the fit is there): far from every run
 * it is wide, so an optimistic choice (mean + k sd) explores there, and the
 * pair terms let the fit see that two variables must move together.
 */
#ifndef XLOOP_SURFACE_H
#define XLOOP_SURFACE_H

#include <stddef.h>

#define SURFACE_PAIRS_MAX 12
/* the prior's precision on each coefficient (the benchmark chose it) */
#define SURFACE_PRIOR 0.1

struct surface {
	size_t d, p;		/* variables, features */
	double *coef;		/* p posterior means (normalised units) */
	double *cov;		/* p x p posterior covariance */
	double ymean, yscale;	/* y = ymean + yscale * model */
};

/*
 * Fit to npts points: u[k * d + i] the position of point k on variable i,
 * y[k] its mean score, w[k] its number of runs; noise_sd the seed noise
 * (0: unknown). Returns -1 when there is nothing to fit (no point).
 */
int surface_fit(struct surface *s, size_t d, const double *u, const double *y,
		const double *w, size_t npts, double noise_sd);

/* The predicted score at u (d positions) and the sd of that prediction. */
void surface_predict(const struct surface *s, const double *u, double *mean, double *sd);

void surface_release(struct surface *s);

#endif
