/* A Gaussian process: Matern-5/2 ARD plus a seed offset plus noise, fitted by marginal likelihood. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/gp.h"
#include "util.h"

#define SQRT5 2.2360679774997896964

/* Bounds of theta (logs of standardised sds and of lengthscales on [0, 1]). */
#define LEN_LO -3.0		/* 0.05 */
#define LEN_HI 2.3		/* 10 */
#define SIG_LO -3.0
#define SIG_HI 2.3
#define SD_LO -6.9		/* 0.001 */
#define SD_HI 1.1		/* 3 */

/* Weak priors on theta (normal in the logs): centre and sd. */
static const double prior_len[2] = { -0.9, 1.0 };	/* 0.4 */
static const double prior_sig[2] = { 0.0, 1.0 };
static const double prior_seed[2] = { -1.6, 1.5 };	/* 0.2 */
static const double prior_noise[2] = { -1.6, 1.5 };

/* L-BFGS: iterations and memory. */
#define OPT_ITERS 40
#define OPT_MEM 6

/* The signal part signal^2 * Matern-5/2 of a and b. */
static double kf(const double *theta, size_t d, const double *a, const double *b)
{
	double r2 = 0, r, s2 = exp(2 * theta[d]);
	size_t i;

	for (i = 0; i < d; i++) {
		double t = (a[i] - b[i]) / exp(theta[i]);

		r2 += t * t;
	}
	r = sqrt(r2);
	return s2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r);
}

/* The covariance of two runs. */
double gp_cov(const double *theta, size_t d, const double *a, long sa, const double *b,
	      long sb, int same)
{
	double k = kf(theta, d, a, b);

	if (sa >= 0 && sa == sb)
		k += exp(2 * theta[d + 1]);
	if (same)
		k += exp(2 * theta[d + 2]);
	return k;
}

/* a (n x n, symmetric) into its lower Cholesky factor in place; -1 when not positive definite. */
static int chol(double *a, size_t n)
{
	size_t i, j, k;

	for (j = 0; j < n; j++) {
		double s = a[j * n + j];

		for (k = 0; k < j; k++)
			s -= a[j * n + k] * a[j * n + k];
		if (!(s > 0))
			return -1;
		a[j * n + j] = sqrt(s);
		for (i = j + 1; i < n; i++) {
			double t = a[i * n + j];

			for (k = 0; k < j; k++)
				t -= a[i * n + k] * a[j * n + k];
			a[i * n + j] = t / a[j * n + j];
		}
		for (k = j + 1; k < n; k++)
			a[j * n + k] = 0;
	}
	return 0;
}

/* Solve l z = b in place (l lower, n x n). */
static void solve_l(const double *l, size_t n, double *b)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		double s = b[i];

		for (k = 0; k < i; k++)
			s -= l[i * n + k] * b[k];
		b[i] = s / l[i * n + i];
	}
}

/* Solve l' z = b in place. */
static void solve_lt(const double *l, size_t n, double *b)
{
	size_t i, k;

	for (i = n; i-- > 0;) {
		double s = b[i];

		for (k = i + 1; k < n; k++)
			s -= l[k * n + i] * b[k];
		b[i] = s / l[i * n + i];
	}
}

/* The covariance matrix of n runs into k, factored (with jitter when needed); -1: not even then. */
static int factor(const double *theta, size_t d, size_t n, const double *x, const long *seed,
		  double *k)
{
	static const double jitter[] = { 1e-8, 1e-6, 1e-4 };
	size_t i, j, t;

	for (t = 0; t < sizeof(jitter) / sizeof(*jitter); t++) {
		for (i = 0; i < n; i++)
			for (j = 0; j <= i; j++) {
				double c = gp_cov(theta, d, x + i * d, seed[i], x + j * d, seed[j],
						  i == j);

				k[i * n + j] = k[j * n + i] = c + (i == j ? jitter[t] : 0);
			}
		if (chol(k, n) == 0)
			return 0;
	}
	return -1;
}

/*
 * The log marginal likelihood of standardised y under theta and, when grad
 * is not NULL, its gradient in theta; -INFINITY when it cannot be computed.
 */
static double lml_grad(const double *theta, size_t d, size_t n, const double *x,
		       const long *seed, const double *y, double *grad)
{
	double *l = xcalloc(n * n, sizeof(*l)), *a = xcalloc(n, sizeof(*a)), lml = 0;
	size_t i, j, k, nt = GP_NTHETA(d);

	if (factor(theta, d, n, x, seed, l) < 0) {
		free(l);
		free(a);
		return -INFINITY;
	}
	memcpy(a, y, n * sizeof(*a));
	solve_l(l, n, a);
	for (i = 0; i < n; i++)
		lml -= 0.5 * a[i] * a[i] + log(l[i * n + i]);
	lml -= 0.5 * (double)n * log(2 * M_PI);
	if (grad) {
		/* W = alpha alpha' - K^-1; dlml = tr(W dK) / 2 */
		double *w = xcalloc(n * n, sizeof(*w)), *e = xcalloc(n, sizeof(*e));
		double s2 = exp(2 * theta[d]), sd2 = exp(2 * theta[d + 1]);
		double n2 = exp(2 * theta[d + 2]);

		solve_lt(l, n, a);	/* alpha */
		for (j = 0; j < n; j++) {
			/* column j of K^-1 */
			memset(e, 0, n * sizeof(*e));
			e[j] = 1;
			solve_l(l, n, e);
			solve_lt(l, n, e);
			for (i = 0; i < n; i++)
				w[i * n + j] = a[i] * a[j] - e[i];
		}
		memset(grad, 0, nt * sizeof(*grad));
		for (i = 0; i < n; i++) {
			for (j = 0; j < n; j++) {
				const double *xi = x + i * d, *xj = x + j * d;
				double r2 = 0, r, ex, wij = w[i * n + j], base;

				for (k = 0; k < d; k++) {
					double t = (xi[k] - xj[k]) / exp(theta[k]);

					r2 += t * t;
				}
				r = sqrt(r2);
				ex = exp(-SQRT5 * r);
				/* dk/dlog l_k = s2 * 5/3 (1 + sqrt5 r) e^-sqrt5 r * t_k^2 */
				base = s2 * 5.0 / 3.0 * (1 + SQRT5 * r) * ex;
				for (k = 0; k < d; k++) {
					double t = (xi[k] - xj[k]) / exp(theta[k]);

					grad[k] += 0.5 * wij * base * t * t;
				}
				grad[d] += 0.5 * wij * 2 * s2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * ex;
				if (seed[i] >= 0 && seed[i] == seed[j])
					grad[d + 1] += 0.5 * wij * 2 * sd2;
				if (i == j)
					grad[d + 2] += 0.5 * wij * 2 * n2;
			}
		}
		free(w);
		free(e);
	}
	free(l);
	free(a);
	return lml;
}

/* A normal prior's centre and sd for theta[i]. */
static const double *prior_of(size_t d, size_t i)
{
	return i < d ? prior_len : i == d ? prior_sig : i == d + 1 ? prior_seed : prior_noise;
}

/* theta[i] kept within its bounds. */
static double clamp_theta(size_t d, size_t i, double v)
{
	double lo = i < d ? LEN_LO : i == d ? SIG_LO : SD_LO;
	double hi = i < d ? LEN_HI : i == d ? SIG_HI : SD_HI;

	return v < lo ? lo : v > hi ? hi : v;
}

/* What the fit minimises: -(lml + log prior), with its gradient. */
static double objective(const double *theta, size_t d, size_t n, const double *x,
			const long *seed, const double *y, double *grad)
{
	size_t i, nt = GP_NTHETA(d);
	double f = lml_grad(theta, d, n, x, seed, y, grad);

	if (!isfinite(f))
		return INFINITY;
	for (i = 0; i < nt; i++) {
		const double *p = prior_of(d, i);
		double z = (theta[i] - p[0]) / p[1];

		f -= 0.5 * z * z;
		grad[i] = -(grad[i] - z / p[1]);
	}
	return -f;
}

/* Projected L-BFGS from theta (in place); returns the objective there. */
static double minimise(double *theta, size_t d, size_t n, const double *x, const long *seed,
		       const double *y)
{
	size_t nt = GP_NTHETA(d), i, it, m = 0, head = 0;
	double *g = xcalloc(nt, sizeof(*g)), *gn = xcalloc(nt, sizeof(*gn));
	double *p = xcalloc(nt, sizeof(*p)), *tn = xcalloc(nt, sizeof(*tn));
	double *s = xcalloc(OPT_MEM * nt, sizeof(*s)), *yv = xcalloc(OPT_MEM * nt, sizeof(*yv));
	double rho[OPT_MEM], al[OPT_MEM], f, fn = INFINITY;

	for (i = 0; i < nt; i++)
		theta[i] = clamp_theta(d, i, theta[i]);
	f = objective(theta, d, n, x, seed, y, g);
	for (it = 0; it < OPT_ITERS && isfinite(f); it++) {
		double step = 1, gp = 0, gamma = 1, moved = 0;
		size_t k, q;

		/* two-loop recursion: p = -H g */
		for (i = 0; i < nt; i++)
			p[i] = -g[i];
		for (k = 0; k < m; k++) {
			q = (head + OPT_MEM - 1 - k) % OPT_MEM;
			al[q] = 0;
			for (i = 0; i < nt; i++)
				al[q] += s[q * nt + i] * p[i];
			al[q] *= rho[q];
			for (i = 0; i < nt; i++)
				p[i] -= al[q] * yv[q * nt + i];
		}
		if (m > 0) {
			double sy = 0, yy = 0;

			q = (head + OPT_MEM - 1) % OPT_MEM;
			for (i = 0; i < nt; i++) {
				sy += s[q * nt + i] * yv[q * nt + i];
				yy += yv[q * nt + i] * yv[q * nt + i];
			}
			gamma = sy / yy;
		}
		for (i = 0; i < nt; i++)
			p[i] *= gamma;
		for (k = m; k-- > 0;) {
			double b = 0;

			q = (head + OPT_MEM - 1 - k) % OPT_MEM;
			for (i = 0; i < nt; i++)
				b += yv[q * nt + i] * p[i];
			b *= rho[q];
			for (i = 0; i < nt; i++)
				p[i] += s[q * nt + i] * (al[q] - b);
		}
		for (i = 0; i < nt; i++)
			gp += p[i] * g[i];
		if (!(gp < 0)) {
			/* not a descent direction: restart from the gradient */
			m = 0;
			for (i = 0; i < nt; i++)
				p[i] = -g[i];
			gp = 0;
			for (i = 0; i < nt; i++)
				gp += p[i] * g[i];
		}
		{
			/* at most a step of 1 in any log */
			double big = 0;

			for (i = 0; i < nt; i++)
				big = fabs(p[i]) > big ? fabs(p[i]) : big;
			if (big > 1)
				step = 1 / big;
		}
		/* backtracking (Armijo) */
		for (k = 0; k < 20; k++) {
			for (i = 0; i < nt; i++)
				tn[i] = clamp_theta(d, i, theta[i] + step * p[i]);
			fn = objective(tn, d, n, x, seed, y, gn);
			if (fn <= f + 1e-4 * step * gp)
				break;
			step *= 0.5;
		}
		if (k == 20 || !isfinite(fn))
			break;
		q = head;
		{
			double sy = 0;

			for (i = 0; i < nt; i++) {
				s[q * nt + i] = tn[i] - theta[i];
				yv[q * nt + i] = gn[i] - g[i];
				sy += s[q * nt + i] * yv[q * nt + i];
				moved += fabs(s[q * nt + i]);
			}
			if (sy > 1e-12) {
				rho[q] = 1 / sy;
				head = (head + 1) % OPT_MEM;
				m = m < OPT_MEM ? m + 1 : OPT_MEM;
			}
		}
		memcpy(theta, tn, nt * sizeof(*theta));
		memcpy(g, gn, nt * sizeof(*g));
		if (f - fn < 1e-7 * (1 + fabs(f)) && moved < 1e-5) {
			f = fn;
			break;
		}
		f = fn;
	}
	free(g);
	free(gn);
	free(p);
	free(tn);
	free(s);
	free(yv);
	return f;
}

/* The standardised targets; sets g->ymean, g->yscale. */
static void standardise(struct gp *g, size_t n, const double *y, double scale_hint, double *out)
{
	double m = 0, v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m += y[i];
	m /= (double)n;
	for (i = 0; i < n; i++)
		v += (y[i] - m) * (y[i] - m);
	v = sqrt(v / (double)n);
	g->ymean = m;
	g->yscale = v > 1e-12 * (1 + fabs(m)) ? v : scale_hint > 0 ? scale_hint : 1;
	for (i = 0; i < n; i++)
		out[i] = (y[i] - m) / g->yscale;
}

/* Factor and solve for g's runs (standardised already); -1 when it cannot. */
static int refactor(struct gp *g)
{
	size_t n = g->n, i;

	free(g->l);
	free(g->alpha);
	g->l = xcalloc(n * n, sizeof(*g->l));
	g->alpha = xcalloc(n, sizeof(*g->alpha));
	if (factor(g->theta, g->d, n, g->x, g->seed, g->l) < 0)
		return -1;
	memcpy(g->alpha, g->y, n * sizeof(*g->alpha));
	solve_l(g->l, n, g->alpha);
	g->lml = -0.5 * (double)n * log(2 * M_PI);
	for (i = 0; i < n; i++)
		g->lml -= 0.5 * g->alpha[i] * g->alpha[i] + log(g->l[i * n + i]);
	solve_lt(g->l, n, g->alpha);
	return 0;
}

/* Condition on the runs with theta. */
int gp_condition(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
		 const double *y, const double *theta, double scale_hint)
{
	memset(g, 0, sizeof(*g));
	if (n == 0)
		return -1;
	g->d = d;
	g->n = n;
	g->x = xcalloc(n * d + 1, sizeof(*g->x));
	memcpy(g->x, x, n * d * sizeof(*x));
	g->seed = xcalloc(n, sizeof(*g->seed));
	memcpy(g->seed, seed, n * sizeof(*seed));
	g->y = xcalloc(n, sizeof(*g->y));
	standardise(g, n, y, scale_hint, g->y);
	g->theta = xcalloc(GP_NTHETA(d), sizeof(*g->theta));
	memcpy(g->theta, theta, GP_NTHETA(d) * sizeof(*theta));
	if (refactor(g) < 0) {
		gp_release(g);
		return -1;
	}
	return 0;
}

/* Fit theta, then condition. */
int gp_fit(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
	   const double *y, double scale_hint)
{
	/* starts: lengthscale, signal, seed, noise (standardised sds) */
	static const double starts[][4] = {
		{ 0.4, 1.0, 0.1, 0.3 }, { 0.15, 1.0, 0.05, 0.05 }, { 1.5, 0.7, 0.3, 0.7 },
	};
	size_t nf = n < GP_FIT_MAX ? n : GP_FIT_MAX, nt = GP_NTHETA(d), i, r;
	size_t nstarts = nf > GP_FIT_MAX / 2 ? 2 : 3;
	double *fx = xcalloc(nf * d + 1, sizeof(*fx)), *fy = xcalloc(nf, sizeof(*fy));
	double *th = xcalloc(nt, sizeof(*th)), *best = xcalloc(nt, sizeof(*best));
	double fbest = INFINITY;
	long *fs = xcalloc(nf, sizeof(*fs));
	struct gp tmp;
	int rc;

	memset(g, 0, sizeof(*g));
	if (n == 0) {
		free(fx);
		free(fy);
		free(th);
		free(best);
		free(fs);
		return -1;
	}
	/* the hyperparameters from at most GP_FIT_MAX runs, evenly spaced */
	for (i = 0; i < nf; i++) {
		size_t k = nf == n ? i : i * n / nf;

		memcpy(fx + i * d, x + k * d, d * sizeof(*x));
		fs[i] = seed[k];
		fy[i] = y[k];
	}
	/* standardised as the whole data is */
	memset(&tmp, 0, sizeof(tmp));
	{
		double *all = xcalloc(n, sizeof(*all));

		standardise(&tmp, n, y, scale_hint, all);
		for (i = 0; i < nf; i++)
			fy[i] = (fy[i] - tmp.ymean) / tmp.yscale;
		free(all);
	}
	for (i = 0; i < nt; i++)
		best[i] = prior_of(d, i)[0];
	for (r = 0; r < nstarts; r++) {
		double f;

		for (i = 0; i < d; i++)
			th[i] = log(starts[r][0]);
		th[d] = log(starts[r][1]);
		th[d + 1] = log(starts[r][2]);
		th[d + 2] = log(starts[r][3]);
		f = minimise(th, d, nf, fx, fs, fy);
		if (f < fbest) {
			fbest = f;
			memcpy(best, th, nt * sizeof(*th));
		}
	}
	rc = gp_condition(g, d, n, x, seed, y, best, scale_hint);
	free(fx);
	free(fy);
	free(th);
	free(best);
	free(fs);
	return rc;
}

/* Add m runs, same theta and standardisation. */
int gp_extend(struct gp *g, size_t m, const double *x, const long *seed, const double *y)
{
	size_t n = g->n + m, d = g->d, i;

	if (m == 0)
		return 0;
	g->x = xreallocarray(g->x, n * d + 1, sizeof(*g->x));
	memcpy(g->x + g->n * d, x, m * d * sizeof(*x));
	g->seed = xreallocarray(g->seed, n, sizeof(*g->seed));
	memcpy(g->seed + g->n, seed, m * sizeof(*seed));
	g->y = xreallocarray(g->y, n, sizeof(*g->y));
	for (i = 0; i < m; i++)
		g->y[g->n + i] = (y[i] - g->ymean) / g->yscale;
	g->n = n;
	return refactor(g);
}

/* v = l^-1 k(x, runs) for f at x. */
static double *cross(const struct gp *g, const double *x)
{
	double *v = xcalloc(g->n, sizeof(*v));
	size_t i;

	for (i = 0; i < g->n; i++)
		v[i] = kf(g->theta, g->d, x, g->x + i * g->d);
	return v;
}

/* The posterior of f(x). */
void gp_predict(const struct gp *g, const double *x, double *mean, double *var)
{
	double *k = cross(g, x), m = 0, v = kf(g->theta, g->d, x, x);
	size_t i;

	for (i = 0; i < g->n; i++)
		m += k[i] * g->alpha[i];
	solve_l(g->l, g->n, k);
	for (i = 0; i < g->n; i++)
		v -= k[i] * k[i];
	*mean = g->ymean + g->yscale * m;
	*var = (v > 0 ? v : 0) * g->yscale * g->yscale;
	free(k);
}

/* The posterior of f(a) - f(b). */
void gp_predict_diff(const struct gp *g, const double *a, const double *b, double *mean,
		     double *var)
{
	double *ka = cross(g, a), *kb = cross(g, b), m = 0, v;
	size_t i;

	v = kf(g->theta, g->d, a, a) + kf(g->theta, g->d, b, b) - 2 * kf(g->theta, g->d, a, b);
	for (i = 0; i < g->n; i++) {
		ka[i] -= kb[i];
		m += ka[i] * g->alpha[i];
	}
	solve_l(g->l, g->n, ka);
	for (i = 0; i < g->n; i++)
		v -= ka[i] * ka[i];
	*mean = g->yscale * m;
	*var = (v > 0 ? v : 0) * g->yscale * g->yscale;
	free(ka);
	free(kb);
}

/* Free a model. */
void gp_release(struct gp *g)
{
	free(g->x);
	free(g->seed);
	free(g->y);
	free(g->l);
	free(g->alpha);
	free(g->theta);
	memset(g, 0, sizeof(*g));
}
