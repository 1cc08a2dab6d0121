/* A Gaussian process: Matern-5/2 ARD plus a seed offset plus noise, fitted by marginal likelihood. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/gp.h"
#include "lib/util.h"

#define SQRT5 2.2360679774997896964

/* Bounds of theta (logs of standardised sds and of lengthscales on [0, 1]). */
#define LEN_LO -2.995732273553991	/* log(GP_LEN_MIN) */
#define LEN_HI 2.3		/* 10 */
#define SIG_LO -3.0
#define SIG_HI 2.3
#define SD_LO -6.9		/* 0.001 */
#define SD_HI 1.1		/* 3 */

/* Weak priors on theta (normal in the logs): centre and sd. */
static const double prior_len[2] = { 0.4, 1.0 };	/* 1.5: smooth (bench/search.py chose it) */
static const double prior_sig[2] = { 0.0, 1.0 };
static const double prior_seed[2] = { -1.6, 1.5 };	/* 0.2 */
static const double prior_noise[2] = { -1.6, 1.5 };

/* What a fit needs beside theta: the runs and the priors. */
struct fit_data {
	size_t d, n;
	const double *x, *y;
	const long *seed;
	const double *w;	/* runs each point stands for, NULL: 1 each */
	double (*prior)[2];	/* GP_NTHETA(d) centres and sds */
	int apart;		/* the lengthscales stay where they start */
};

/* L-BFGS: iterations and memory. */
#define OPT_ITERS 40
#define OPT_MEM 6

/* signal^2 * Matern-5/2 of a and b, the lengthscales' inverses in il. */
static double kf_il(const double *il, double s2, size_t d, const double *a, const double *b)
{
	double r2 = 0, r;
	size_t i;

	for (i = 0; i < d; i++) {
		double t = (a[i] - b[i]) * il[i];

		r2 += t * t;
	}
	r = sqrt(r2);
	return s2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r);
}

/* The signal part signal^2 * Matern-5/2 of a and b. */
static double kf(const double *theta, size_t d, const double *a, const double *b)
{
	double il[64] = { 0 }, *h = d > 64 ? xcalloc(d, sizeof(*h)) : il, k;
	size_t i;

	for (i = 0; i < d; i++)
		h[i] = exp(-theta[i]);
	k = kf_il(h, exp(2 * theta[d]), d, a, b);
	if (h != il)
		free(h);
	return k;
}

/* The signal part for g's hyperparameters. */
static double gkf(const struct gp *g, const double *a, const double *b)
{
	return kf_il(g->il, g->s2, g->d, a, b);
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
		  const double *w, double *k)
{
	static const double jitter[] = { 1e-8, 1e-6, 1e-4 };
	double *il = xcalloc(d + 1, sizeof(*il)), s2 = exp(2 * theta[d]);
	double sd2 = exp(2 * theta[d + 1]), n2 = exp(2 * theta[d + 2]);
	size_t i, j, t;

	for (i = 0; i < d; i++)
		il[i] = exp(-theta[i]);
	for (t = 0; t < sizeof(jitter) / sizeof(*jitter); t++) {
		for (i = 0; i < n; i++)
			for (j = 0; j <= i; j++) {
				double c = kf_il(il, s2, d, x + i * d, x + j * d);

				if (seed[i] >= 0 && seed[i] == seed[j])
					c += sd2;
				if (i == j)
					c += n2 / (w ? w[i] : 1) + jitter[t];
				k[i * n + j] = k[j * n + i] = c;
			}
		if (chol(k, n) == 0) {
			free(il);
			return 0;
		}
	}
	free(il);
	return -1;
}

/*
 * W = alpha alpha' - K^-1 (lower triangle and diagonal; K = l l'), through
 * the inverse of l: l^-1 in place of a copy, then K^-1 = l^-T l^-1.
 */
static void w_matrix(const double *l, size_t n, const double *alpha, double *wm)
{
	double *li = xcalloc(n * n, sizeof(*li));
	size_t i, j, k;

	for (j = 0; j < n; j++) {
		li[j * n + j] = 1 / l[j * n + j];
		for (i = j + 1; i < n; i++) {
			double s = 0;

			for (k = j; k < i; k++)
				s -= l[i * n + k] * li[k * n + j];
			li[i * n + j] = s / l[i * n + i];
		}
	}
	for (i = 0; i < n; i++)
		for (j = 0; j <= i; j++) {
			double s = 0;

			for (k = i; k < n; k++)
				s += li[k * n + i] * li[k * n + j];
			wm[i * n + j] = alpha[i] * alpha[j] - s;
		}
	free(li);
}

/*
 * The gradient of the log marginal likelihood in theta, tr(W dK/dtheta) / 2,
 * from W's lower triangle (W and dK are symmetric: each pair i > j counts twice).
 */
static void lml_gradient(const double *theta, size_t d, size_t n, const double *x,
			 const long *seed, const double *w, const double *wm, double *grad)
{
	double s2 = exp(2 * theta[d]), sd2 = exp(2 * theta[d + 1]);
	double n2 = exp(2 * theta[d + 2]), *il = xcalloc(d + 1, sizeof(*il));
	size_t i, j, k;

	for (k = 0; k < d; k++)
		il[k] = exp(-theta[k]);
	memset(grad, 0, GP_NTHETA(d) * sizeof(*grad));
	for (i = 0; i < n; i++) {
		for (j = 0; j <= i; j++) {
			const double *xi = x + i * d, *xj = x + j * d;
			double r2 = 0, r, ex, wij = (i == j ? 0.5 : 1) * wm[i * n + j], base;

			for (k = 0; k < d; k++) {
				double t = (xi[k] - xj[k]) * il[k];

				r2 += t * t;
			}
			r = sqrt(r2);
			ex = exp(-SQRT5 * r);
			/* dk/dlog l_k = s2 * 5/3 (1 + sqrt5 r) e^-sqrt5 r * t_k^2 */
			base = s2 * 5.0 / 3.0 * (1 + SQRT5 * r) * ex;
			for (k = 0; k < d && i != j; k++) {
				double t = (xi[k] - xj[k]) * il[k];

				grad[k] += wij * base * t * t;
			}
			grad[d] += wij * 2 * s2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * ex;
			if (seed[i] >= 0 && seed[i] == seed[j])
				grad[d + 1] += wij * 2 * sd2;
			if (i == j)
				grad[d + 2] += wij * 2 * n2 / (w ? w[i] : 1);
		}
	}
	free(il);
}

/*
 * The log marginal likelihood of standardised y under theta and, when grad
 * is not NULL, its gradient in theta; -INFINITY when it cannot be computed.
 */
static double lml_grad(const double *theta, size_t d, size_t n, const double *x,
		       const long *seed, const double *w, const double *y, double *grad)
{
	double *l = xcalloc(n * n, sizeof(*l)), *a = xcalloc(n, sizeof(*a)), lml = 0;
	size_t i;

	if (factor(theta, d, n, x, seed, w, l) < 0) {
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
		double *wm = xcalloc(n * n, sizeof(*wm));

		solve_lt(l, n, a);	/* alpha */
		w_matrix(l, n, a, wm);
		lml_gradient(theta, d, n, x, seed, w, wm, grad);
		free(wm);
	}
	free(l);
	free(a);
	return lml;
}

/* theta[i] kept within its bounds. */
static double clamp_theta(size_t d, size_t i, double v)
{
	double lo = i < d ? LEN_LO : i == d ? SIG_LO : SD_LO;
	double hi = i < d ? LEN_HI : i == d ? SIG_HI : SD_HI;

	return v < lo ? lo : v > hi ? hi : v;
}

/* What the fit minimises: -(lml + log prior), with its gradient. */
static double objective(const double *theta, const struct fit_data *fd, double *grad)
{
	size_t i, nt = GP_NTHETA(fd->d);
	double f = lml_grad(theta, fd->d, fd->n, fd->x, fd->seed, fd->w, fd->y, grad);

	if (!isfinite(f))
		return INFINITY;
	for (i = 0; i < nt; i++) {
		double z = (theta[i] - fd->prior[i][0]) / fd->prior[i][1];

		f -= 0.5 * z * z;
		grad[i] = fd->apart && i < fd->d ? 0 : -(grad[i] - z / fd->prior[i][1]);
	}
	return -f;
}

/* Projected L-BFGS from theta (in place); returns the objective there. */
static double minimise(double *theta, const struct fit_data *fd)
{
	size_t d = fd->d, nt = GP_NTHETA(d), i, it, m = 0, head = 0;
	double *g = xcalloc(nt, sizeof(*g)), *gn = xcalloc(nt, sizeof(*gn));
	double *p = xcalloc(nt, sizeof(*p)), *tn = xcalloc(nt, sizeof(*tn));
	double *s = xcalloc(OPT_MEM * nt, sizeof(*s)), *yv = xcalloc(OPT_MEM * nt, sizeof(*yv));
	double rho[OPT_MEM], al[OPT_MEM], f, fn = INFINITY;

	for (i = 0; i < nt; i++)
		theta[i] = clamp_theta(d, i, theta[i]);
	f = objective(theta, fd, g);
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
			fn = objective(tn, fd, gn);
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
	free(g->il);
	g->il = xcalloc(g->d + 1, sizeof(*g->il));
	for (i = 0; i < g->d; i++)
		g->il[i] = exp(-g->theta[i]);
	g->s2 = exp(2 * g->theta[g->d]);
	g->l = xcalloc(n * n, sizeof(*g->l));
	g->alpha = xcalloc(n, sizeof(*g->alpha));
	if (factor(g->theta, g->d, n, g->x, g->seed, g->w, g->l) < 0)
		return -1;
	memcpy(g->alpha, g->y, n * sizeof(*g->alpha));
	solve_l(g->l, n, g->alpha);
	g->lml = -0.5 * (double)n * log(2 * M_PI);
	for (i = 0; i < n; i++)
		g->lml -= 0.5 * g->alpha[i] * g->alpha[i] + log(g->l[i * n + i]);
	solve_lt(g->l, n, g->alpha);
	return 0;
}

/* Condition on the points with theta, each standing for w[i] runs (w NULL: 1). */
static int condition(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
		     const double *w, const double *y, const double *theta, double scale_hint)
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
	if (w) {
		g->w = xcalloc(n, sizeof(*g->w));
		memcpy(g->w, w, n * sizeof(*w));
	}
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

/* Condition on the runs with theta. */
int gp_condition(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
		 const double *y, const double *theta, double scale_hint)
{
	return condition(g, d, n, x, seed, NULL, y, theta, scale_hint);
}

/* Fit theta, then condition. */
int gp_fit(struct gp *g, size_t d, size_t n, const double *x, const long *seed,
	   const double *y, const struct gp_opts *o)
{
	/* starts: lengthscale, signal, seed, noise (standardised sds) */
	static const double starts[][4] = {
		{ 0.4, 1.0, 0.1, 0.3 }, { 0.15, 1.0, 0.05, 0.05 }, { 1.5, 0.7, 0.3, 0.7 },
	};
	size_t nf = n < GP_FIT_MAX ? n : GP_FIT_MAX, nt = GP_NTHETA(d), i, r;
	size_t nstarts = nf > GP_FIT_MAX / 2 || o->apart ? 2 : 3;
	double *fx, *fy, *fw, *th, *best, fbest = INFINITY;
	struct fit_data fd;
	struct gp tmp;
	long *fs;
	int rc;

	memset(g, 0, sizeof(*g));
	if (n == 0)
		return -1;
	fx = xcalloc(nf * d + 1, sizeof(*fx));
	fy = xcalloc(nf, sizeof(*fy));
	fs = xcalloc(nf, sizeof(*fs));
	fw = xcalloc(nf, sizeof(*fw));
	th = xcalloc(nt, sizeof(*th));
	best = xcalloc(nt, sizeof(*best));
	memset(&fd, 0, sizeof(fd));
	fd.prior = xcalloc(nt, sizeof(*fd.prior));
	/* standardised as the whole data is */
	memset(&tmp, 0, sizeof(tmp));
	{
		double *all = xcalloc(n, sizeof(*all));

		standardise(&tmp, n, y, o->scale_hint, all);
		free(all);
	}
	/* the hyperparameters from at most GP_FIT_MAX runs, evenly spaced */
	for (i = 0; i < nf; i++) {
		size_t k = nf == n ? i : i * n / nf;

		memcpy(fx + i * d, x + k * d, d * sizeof(*x));
		fs[i] = seed[k];
		fw[i] = o->w ? o->w[k] : 1;
		fy[i] = (y[k] - tmp.ymean) / tmp.yscale;
	}
	for (i = 0; i < nt; i++) {
		const double *p = i < d ? prior_len : i == d ? prior_sig : i == d + 1 ?
				  prior_seed : prior_noise;

		fd.prior[i][0] = p[0];
		fd.prior[i][1] = p[1];
	}
	if (o->noise_df > 0) {
		/* the noise measured on replicates: the prior says so, surer with more */
		double sn = o->noise_sd / tmp.yscale;

		fd.prior[d + 2][0] = log(sn > exp(SD_LO) ? sn : exp(SD_LO));
		fd.prior[d + 2][1] = 0.2 + 1 / sqrt((double)o->noise_df);
	}
	fd.apart = o->apart;
	fd.d = d;
	fd.n = nf;
	fd.x = fx;
	fd.y = fy;
	fd.seed = fs;
	fd.w = fw;
	for (i = 0; i < nt; i++)
		best[i] = fd.prior[i][0];
	for (r = 0; r < nstarts; r++) {
		double f;

		for (i = 0; i < d; i++)
			th[i] = o->apart ? LEN_LO : log(starts[r][0]);
		th[d] = log(starts[r][1]);
		th[d + 1] = log(starts[r][2]);
		th[d + 2] = r == 0 ? fd.prior[d + 2][0] : log(starts[r][3]);
		f = minimise(th, &fd);
		if (f < fbest) {
			fbest = f;
			memcpy(best, th, nt * sizeof(*th));
		}
	}
	rc = condition(g, d, n, x, seed, o->w, y, best, o->scale_hint);
	free(fw);
	free(fx);
	free(fy);
	free(fs);
	free(th);
	free(best);
	free(fd.prior);
	return rc;
}

/* Add m runs, same theta and standardisation: the factor grows by m rows. */
int gp_extend(struct gp *g, size_t m, const double *x, const long *seed, const double *y)
{
	size_t n0 = g->n, n = n0 + m, d = g->d, i, j, k;
	double *l, *c, sd2 = exp(2 * g->theta[d + 1]), n2 = exp(2 * g->theta[d + 2]);
	int rc = -1;

	if (m == 0)
		return 0;
	g->x = xreallocarray(g->x, n * d + 1, sizeof(*g->x));
	memcpy(g->x + n0 * d, x, m * d * sizeof(*x));
	g->seed = xreallocarray(g->seed, n, sizeof(*g->seed));
	memcpy(g->seed + n0, seed, m * sizeof(*seed));
	g->y = xreallocarray(g->y, n, sizeof(*g->y));
	for (i = 0; i < m; i++)
		g->y[n0 + i] = (y[i] - g->ymean) / g->yscale;
	if (g->w) {
		g->w = xreallocarray(g->w, n, sizeof(*g->w));
		for (i = 0; i < m; i++)
			g->w[n0 + i] = 1;
	}
	g->n = n;
	/* [l 0; b c] with l b_i = k(old, new_i), c c' = K22 - b b' */
	l = xcalloc(n * n, sizeof(*l));
	c = xcalloc(m * m, sizeof(*c));
	for (i = 0; i < n0; i++)
		memcpy(l + i * n, g->l + i * n0, (i + 1) * sizeof(*l));
	for (i = 0; i < m; i++) {
		double *row = l + (n0 + i) * n;
		const double *xi = g->x + (n0 + i) * d;

		for (k = 0; k < n0; k++)
			row[k] = gp_cov(g->theta, d, xi, g->seed[n0 + i], g->x + k * d, g->seed[k], 0);
		solve_l(g->l, n0, row);
	}
	for (i = 0; i < m; i++)
		for (j = 0; j <= i; j++) {
			const double *xi = g->x + (n0 + i) * d, *xj = g->x + (n0 + j) * d;
			double v = gkf(g, xi, xj);

			if (g->seed[n0 + i] >= 0 && g->seed[n0 + i] == g->seed[n0 + j])
				v += sd2;
			if (i == j)
				v += n2 + 1e-8;
			for (k = 0; k < n0; k++)
				v -= l[(n0 + i) * n + k] * l[(n0 + j) * n + k];
			c[i * m + j] = c[j * m + i] = v;
		}
	if (chol(c, m) == 0) {
		for (i = 0; i < m; i++)
			memcpy(l + (n0 + i) * n + n0, c + i * m, (i + 1) * sizeof(*l));
		free(g->l);
		g->l = l;
		l = NULL;
		free(g->alpha);
		g->alpha = xcalloc(n, sizeof(*g->alpha));
		memcpy(g->alpha, g->y, n * sizeof(*g->alpha));
		solve_l(g->l, n, g->alpha);
		g->lml = -0.5 * (double)n * log(2 * M_PI);
		for (i = 0; i < n; i++)
			g->lml -= 0.5 * g->alpha[i] * g->alpha[i] + log(g->l[i * n + i]);
		solve_lt(g->l, n, g->alpha);
		rc = 0;
	}
	free(l);
	free(c);
	/* not positive definite as it grew: factor it whole (with jitter) */
	return rc == 0 ? 0 : refactor(g);
}

/* v = l^-1 k(x, runs) for f at x. */
static double *cross(const struct gp *g, const double *x)
{
	double *v = xcalloc(g->n, sizeof(*v));
	size_t i;

	for (i = 0; i < g->n; i++)
		v[i] = gkf(g, x, g->x + i * g->d);
	return v;
}

/* The posterior mean of f(x) alone (no variance: cheap). */
double gp_mean(const struct gp *g, const double *x)
{
	double m = 0;
	size_t i;

	for (i = 0; i < g->n; i++)
		m += gkf(g, x, g->x + i * g->d) * g->alpha[i];
	return g->ymean + g->yscale * m;
}

/* The posterior of f(x). */
void gp_predict(const struct gp *g, const double *x, double *mean, double *var)
{
	double *k = cross(g, x), m = 0, v = g->s2;
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

	v = 2 * g->s2 - 2 * gkf(g, a, b);
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

/* f(b)'s cross-covariances, solved once for gp_predict_vs. */
void gp_ref_init(const struct gp *g, const double *b, struct gp_ref *r)
{
	double v;

	memset(r, 0, sizeof(*r));
	r->b = xcalloc(g->d + 1, sizeof(*r->b));
	memcpy(r->b, b, g->d * sizeof(*b));
	gp_predict(g, b, &r->mean, &v);
	r->v = cross(g, b);
	solve_l(g->l, g->n, r->v);
}

/* The posterior of f(a) and of f(a) - f(r's point): one solve. */
void gp_predict_vs(const struct gp *g, const double *a, const struct gp_ref *r, double *mean,
		   double *var, double *dmean, double *dvar)
{
	double *k = cross(g, a), m = 0, v = g->s2, dv = 2 * g->s2 - 2 * gkf(g, a, r->b);
	size_t i;

	for (i = 0; i < g->n; i++)
		m += k[i] * g->alpha[i];
	solve_l(g->l, g->n, k);
	for (i = 0; i < g->n; i++) {
		v -= k[i] * k[i];
		dv -= (k[i] - r->v[i]) * (k[i] - r->v[i]);
	}
	*mean = g->ymean + g->yscale * m;
	*var = (v > 0 ? v : 0) * g->yscale * g->yscale;
	*dmean = *mean - r->mean;
	*dvar = (dv > 0 ? dv : 0) * g->yscale * g->yscale;
	free(k);
}

/* The covariance of f at each ref with a new run's score at (a, sa), and that score's variance. */
void gp_obs_cov(const struct gp *g, const double *a, long sa, const struct gp_ref *refs,
		size_t m, double *cov, double *var)
{
	double *k = cross(g, a), sd2 = exp(2 * g->theta[g->d + 1]), n2 = exp(2 * g->theta[g->d + 2]);
	double v = g->s2 + n2 + (sa != -1 ? sd2 : 0), sc2 = g->yscale * g->yscale;
	size_t i, j;

	for (i = 0; i < g->n; i++)
		if (sa >= 0 && g->seed[i] == sa)
			k[i] += sd2;
	solve_l(g->l, g->n, k);
	for (i = 0; i < g->n; i++)
		v -= k[i] * k[i];
	*var = (v > 1e-12 ? v : 1e-12) * sc2;
	for (j = 0; j < m; j++) {
		double c = gkf(g, refs[j].b, a);

		for (i = 0; i < g->n; i++)
			c -= refs[j].v[i] * k[i];
		cov[j] = c * sc2;
	}
	free(k);
}

/* Leave-one-out residuals in closed form (K^-1 y)_i / (K^-1)_ii: their mean square. */
/* (K^-1)_ii for every run: the squared norm of column i of l^-1. */
static double *kinv_diag(const struct gp *g)
{
	size_t n = g->n, i, j;
	double *z = xcalloc(n + 1, sizeof(*z)), *diag = xcalloc(n + 1, sizeof(*diag));

	for (i = 0; i < n; i++) {
		memset(z, 0, n * sizeof(*z));
		z[i] = 1;
		for (j = i; j < n; j++) {
			double s = z[j];
			size_t k;

			for (k = i; k < j; k++)
				s -= g->l[j * n + k] * z[k];
			z[j] = s / g->l[j * n + j];
			diag[i] += z[j] * z[j];
		}
	}
	free(z);
	return diag;
}

/*
 * Run i left out: its predictive mean is y_i - alpha_i / (K^-1)_ii and its
 * variance 1 / (K^-1)_ii (standardised), so its error is
 * alpha_i / (K^-1)_ii and its log density
 * -(log(2 pi / (K^-1)_ii) + alpha_i^2 / (K^-1)_ii) / 2.
 */
void gp_loo(const struct gp *g, double *mse, double *lpd)
{
	double *diag = kinv_diag(g), ss = 0;
	size_t i;

	*lpd = 0;
	for (i = 0; i < g->n; i++) {
		double r = diag[i] > 0 ? g->alpha[i] / diag[i] * g->yscale : 0;

		ss += r * r;
		if (diag[i] > 0)
			*lpd -= 0.5 * (log(2 * M_PI / diag[i]) + g->alpha[i] * g->alpha[i] / diag[i]);
	}
	free(diag);
	*mse = g->n ? ss / (double)g->n : 0;
}

void gp_ref_release(struct gp_ref *r)
{
	free(r->v);
	free(r->b);
	memset(r, 0, sizeof(*r));
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
	free(g->il);
	free(g->w);
	memset(g, 0, sizeof(*g));
}
