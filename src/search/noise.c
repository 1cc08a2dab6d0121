/* Noise-aware best: pooled noise, Student's t, the promotion rule. */
#include <math.h>
#include <stddef.h>

#include "search/noise.h"

/* Welford's update. */
void noise_add(struct noise_cfg *c, double score)
{
	double delta = score - c->mean;

	if (c->n == 0)
		c->first = score;
	c->n++;
	c->mean += delta / (double)c->n;
	c->ss += delta * (score - c->mean);
}

/* Pooled within-configuration standard deviation. */
void noise_pool(const struct noise_cfg *v, size_t n, struct noise_est *out)
{
	double ss = 0;
	long df = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].n < 2)
			continue;
		ss += v[i].ss > 0 ? v[i].ss : 0;
		df += v[i].n - 1;
	}
	out->df = df;
	out->sd = df ? sqrt(ss / (double)df) : 0;
	/* rounding leaves dust where every replicate scored the same */
	if (out->sd < 1e-12)
		out->sd = 0;
}

#define LENTZ_TINY 1e-300

/* One term aa of a modified Lentz evaluation: updates c, d; the factor. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < LENTZ_TINY)
		*d = LENTZ_TINY;
	*c = 1 + aa / *c;
	if (fabs(*c) < LENTZ_TINY)
		*c = LENTZ_TINY;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = LENTZ_TINY, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		h *= lentz_step(aa, &c, &d);
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		del = lentz_step(aa, &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* The regularised incomplete beta function I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/* Student's t distribution function. */
double noise_t_cdf(double t, double df)
{
	double tail = 0.5 * beta_inc(df / 2, 0.5, df / (df + t * t));

	return t >= 0 ? 1 - tail : tail;
}

/* Student's t quantile by bisection. */
double noise_t_quantile(double p, double df)
{
	double lo = -1e7, hi = 1e7;
	int i;

	for (i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (noise_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* The mean of a configuration's confirming runs (every run after its first). */
double noise_confirming_mean(const struct noise_cfg *c)
{
	if (c->n < 2)
		return c->mean;
	return ((double)c->n * c->mean - c->first) / (double)(c->n - 1);
}

/* Compare a candidate with the incumbent. */
void noise_compare(const struct noise_cfg *cand, const struct noise_cfg *inc,
		   const struct noise_est *nz, const struct noise_params *p, long m,
		   struct noise_cmp *out)
{
	double se, q;

	out->diff = p->goal_max ? cand->mean - inc->mean : inc->mean - cand->mean;
	out->need = p->min_delta > 0 ? p->min_delta : 0;
	out->sigmas = 0;
	out->checked = nz->df > 0;
	out->beats = 0;
	out->wants_replicate = 0;
	if (cand->n < 1 || inc->n < 1)
		return;
	if (nz->df == 0 || nz->sd == 0) {
		out->beats = out->diff > out->need;
		return;
	}
	/* the first run chose the candidate for confirmation: the test is on the
	 * runs after it (fresh seeds), which that choice cannot bias */
	if (cand->n >= 2) {
		double cmean = noise_confirming_mean(cand);

		out->diff = p->goal_max ? cmean - inc->mean : inc->mean - cmean;
		se = nz->sd * sqrt(1.0 / (double)(cand->n - 1) + 1.0 / (double)inc->n);
	} else {
		se = nz->sd * sqrt(1.0 / (double)cand->n + 1.0 / (double)inc->n);
	}
	q = noise_t_quantile(1 - p->alpha / (double)(m > 0 ? m : 1), (double)nz->df);
	if (q * se > out->need)
		out->need = q * se;
	out->sigmas = out->diff / se;
	out->beats = cand->n >= 2 && out->diff > out->need;
	out->wants_replicate = !out->beats && out->diff > (p->min_delta > 0 ? p->min_delta : 0);
}

/* The looks the rule counts: every run of a candidate, NOISE_MIN_LOOKS at least. */
long noise_looks(const struct noise_cfg *v, size_t n, size_t baseline)
{
	long m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (i != baseline)
			m += v[i].n;
	return m > NOISE_MIN_LOOKS ? m : NOISE_MIN_LOOKS;
}

/* The best configuration under the rule. */
size_t noise_choose(const struct noise_cfg *v, size_t n, size_t baseline,
		    const struct noise_est *nz, const struct noise_params *p, long m,
		    int *promotions)
{
	size_t inc = baseline, i;
	int changed = 1, moves = 0;

	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			struct noise_cmp c;

			if (i == inc || v[i].n == 0)
				continue;
			noise_compare(&v[i], &v[inc], nz, p, m, &c);
			if (c.beats) {
				inc = i;
				changed = 1;
				moves++;
			}
		}
	}
	if (promotions)
		*promotions = moves;
	return inc;
}

/* Half-width of a 95% interval of a mean. */
double noise_halfwidth(const struct noise_est *nz, long n)
{
	if (nz->df == 0 || n < 1)
		return 0;
	return noise_t_quantile(0.975, (double)nz->df) * nz->sd / sqrt((double)n);
}
