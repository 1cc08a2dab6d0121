/* A quadratic response surface: Bayesian linear regression on quadratic features. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/surface.h"
#include "util.h"

/* How many features d variables have. */
static size_t nfeatures(size_t d)
{
	return 1 + 2 * d + (d <= SURFACE_PAIRS_MAX ? d * (d - 1) / 2 : 0);
}

/* The features of u (centred on the middle of the grid). */
static void features(size_t d, const double *u, double *f)
{
	size_t i, j, k = 0;

	f[k++] = 1;
	for (i = 0; i < d; i++)
		f[k++] = u[i] - 0.5;
	for (i = 0; i < d; i++)
		f[k++] = (u[i] - 0.5) * (u[i] - 0.5);
	if (d > SURFACE_PAIRS_MAX)
		return;
	for (i = 0; i < d; i++)
		for (j = i + 1; j < d; j++)
			f[k++] = (u[i] - 0.5) * (u[j] - 0.5);
}

/* a (p x p, symmetric positive definite) into its inverse; -1 when it is not. */
static int spd_invert(double *a, size_t p)
{
	double *l = xcalloc(p * p, sizeof(*l)), *col = xcalloc(p, sizeof(*col));
	size_t i, j, k;
	int rc = 0;

	/* Cholesky: a = l l' */
	for (j = 0; j < p && rc == 0; j++) {
		double sum = a[j * p + j];

		for (k = 0; k < j; k++)
			sum -= l[j * p + k] * l[j * p + k];
		if (sum <= 0) {
			rc = -1;
			break;
		}
		l[j * p + j] = sqrt(sum);
		for (i = j + 1; i < p; i++) {
			double s = a[i * p + j];

			for (k = 0; k < j; k++)
				s -= l[i * p + k] * l[j * p + k];
			l[i * p + j] = s / l[j * p + j];
		}
	}
	/* column by column: l l' x = e_c */
	for (size_t c = 0; c < p && rc == 0; c++) {
		for (i = 0; i < p; i++) {
			double s = i == c ? 1 : 0;

			for (k = 0; k < i; k++)
				s -= l[i * p + k] * col[k];
			col[i] = s / l[i * p + i];
		}
		for (i = p; i-- > 0;) {
			double s = col[i];

			for (k = i + 1; k < p; k++)
				s -= l[k * p + i] * col[k];
			col[i] = s / l[i * p + i];
		}
		for (i = 0; i < p; i++)
			a[i * p + c] = col[i];
	}
	free(l);
	free(col);
	return rc;
}

/* One fit with noise s (normalised); the weighted residual sum of squares. */
static int fit_once(struct surface *s, const double *u, const double *yn, const double *w,
		    size_t npts, double noise, double *rss)
{
	size_t p = s->p, k, i, j;
	double beta = 1 / (noise * noise), *f = xcalloc(p, sizeof(*f));
	double *b = xcalloc(p, sizeof(*b));

	memset(s->cov, 0, p * p * sizeof(*s->cov));
	for (i = 0; i < p; i++)
		s->cov[i * p + i] = i == 0 ? 1e-6 : SURFACE_PRIOR;	/* the level is free */
	for (k = 0; k < npts; k++) {
		features(s->d, u + k * s->d, f);
		for (i = 0; i < p; i++) {
			b[i] += beta * w[k] * f[i] * yn[k];
			for (j = 0; j < p; j++)
				s->cov[i * p + j] += beta * w[k] * f[i] * f[j];
		}
	}
	if (spd_invert(s->cov, p) < 0) {
		free(f);
		free(b);
		return -1;
	}
	for (i = 0; i < p; i++) {
		s->coef[i] = 0;
		for (j = 0; j < p; j++)
			s->coef[i] += s->cov[i * p + j] * b[j];
	}
	*rss = 0;
	for (k = 0; k < npts; k++) {
		double m = 0;

		features(s->d, u + k * s->d, f);
		for (i = 0; i < p; i++)
			m += s->coef[i] * f[i];
		*rss += w[k] * (yn[k] - m) * (yn[k] - m);
	}
	free(f);
	free(b);
	return 0;
}

/* Fit the surface. */
int surface_fit(struct surface *s, size_t d, const double *u, const double *y,
		const double *w, size_t npts, double noise_sd)
{
	double sw = 0, mean = 0, var = 0, noise, rss, *yn;
	size_t k;
	int rc;

	memset(s, 0, sizeof(*s));
	if (npts == 0)
		return -1;
	s->d = d;
	s->p = nfeatures(d);
	for (k = 0; k < npts; k++) {
		sw += w[k];
		mean += w[k] * y[k];
	}
	mean /= sw;
	for (k = 0; k < npts; k++)
		var += w[k] * (y[k] - mean) * (y[k] - mean);
	var /= sw;
	s->ymean = mean;
	s->yscale = sqrt(var);
	if (s->yscale < noise_sd)
		s->yscale = noise_sd;
	if (s->yscale < 1e-12)
		s->yscale = 1e-12 + 1e-9 * fabs(mean);
	yn = xcalloc(npts, sizeof(*yn));
	for (k = 0; k < npts; k++)
		yn[k] = (y[k] - mean) / s->yscale;
	/* never an exact fit: the seed noise, at least 5% of the spread */
	noise = noise_sd / s->yscale;
	if (noise < 0.05)
		noise = 0.05;
	s->coef = xcalloc(s->p, sizeof(*s->coef));
	s->cov = xcalloc(s->p * s->p, sizeof(*s->cov));
	rc = fit_once(s, u, yn, w, npts, noise, &rss);
	/* a misfit larger than the noise widens the noise (one refit) */
	if (rc == 0 && npts > s->p + 1 && rss / (double)(npts - s->p) > noise * noise)
		rc = fit_once(s, u, yn, w, npts, sqrt(rss / (double)(npts - s->p)), &rss);
	free(yn);
	if (rc < 0)
		surface_release(s);
	return rc;
}

/* Predict at u. */
void surface_predict(const struct surface *s, const double *u, double *mean, double *sd)
{
	double *f = xcalloc(s->p, sizeof(*f)), m = 0, v = 0;
	size_t i, j;

	features(s->d, u, f);
	for (i = 0; i < s->p; i++) {
		m += s->coef[i] * f[i];
		for (j = 0; j < s->p; j++)
			v += f[i] * s->cov[i * s->p + j] * f[j];
	}
	free(f);
	*mean = s->ymean + s->yscale * m;
	*sd = s->yscale * sqrt(v > 0 ? v : 0);
}

/* Free the surface. */
void surface_release(struct surface *s)
{
	free(s->coef);
	free(s->cov);
	memset(s, 0, sizeof(*s));
}
