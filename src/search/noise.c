/* Noise-aware best: pooled noise, Student's t, the promotion rule. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "search/noise.h"
#include "lib/util.h"

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
		double mid = (lo + hi) / 2, lo0 = lo, hi0 = hi;

		if (noise_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
		/* a step that moved neither end repeats itself to the end: the
		 * same answer, after about 80 steps instead of 200 */
		if (lo == lo0 && hi == hi0)
			break;
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

/* Seed strings to indices. */
void noise_seed_ids(const char *const *seeds, size_t n, long *ids)
{
	size_t i, j;
	long next = 0;

	for (i = 0; i < n; i++) {
		ids[i] = -1;
		if (seeds[i] == NULL)
			continue;
		for (j = 0; j < i; j++)
			if (seeds[j] && strcmp(seeds[j], seeds[i]) == 0) {
				ids[i] = ids[j];
				break;
			}
		if (ids[i] < 0)
			ids[i] = next++;
	}
}

/* Union-find's root of x. */
static size_t uf_root(size_t *up, size_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

/* Whether o is a run the two-way fit counts. */
static int fits(const struct noise_obs *o, size_t ncfg)
{
	return o->seed >= 0 && o->cfg >= 0 && (size_t)o->cfg < ncfg;
}

/* Alternate configuration and seed effects (e: ncfg + seeds) until they settle. */
static void backfit(const struct noise_obs *o, size_t n, size_t ncfg, size_t nodes,
		    const long *cnt, double *e, double *sum)
{
	size_t i, k;
	int it, side;

	for (it = 0; it < 500; it++) {
		double moved = 0;

		for (side = 0; side < 2; side++) {
			memset(sum, 0, nodes * sizeof(*sum));
			for (i = 0; i < n; i++) {
				size_t c = (size_t)o[i].cfg, s = ncfg + (size_t)o[i].seed;

				if (!fits(&o[i], ncfg))
					continue;
				if (side == 0)
					sum[c] += o[i].score - e[s];
				else
					sum[s] += o[i].score - e[c];
			}
			for (k = side ? ncfg : 0; k < (side ? nodes : ncfg); k++) {
				double v = cnt[k] ? sum[k] / (double)cnt[k] : 0;

				if (fabs(v - e[k]) > moved)
					moved = fabs(v - e[k]);
				e[k] = v;
			}
		}
		if (moved < 1e-13)
			break;
	}
}

/* Residual noise after configuration and seed effects. */
void noise_resid(const struct noise_obs *o, size_t n, size_t ncfg, struct noise_est *out)
{
	long nseed = 0, df, groups = 0, parts = 0, used = 0;
	double *e, *sum, ss = 0;
	long *cnt;
	size_t *up, i, k, nodes;

	out->sd = 0;
	out->df = 0;
	for (i = 0; i < n; i++)
		if (o[i].seed >= nseed)
			nseed = o[i].seed + 1;
	nodes = ncfg + (size_t)nseed;
	e = xcalloc(nodes + 1, sizeof(*e));
	sum = xcalloc(nodes + 1, sizeof(*sum));
	cnt = xcalloc(nodes + 1, sizeof(*cnt));
	up = xcalloc(nodes + 1, sizeof(*up));
	for (k = 0; k < nodes; k++)
		up[k] = k;
	for (i = 0; i < n; i++) {
		if (!fits(&o[i], ncfg))
			continue;
		used++;
		cnt[o[i].cfg]++;
		cnt[ncfg + (size_t)o[i].seed]++;
		up[uf_root(up, (size_t)o[i].cfg)] = uf_root(up, ncfg + (size_t)o[i].seed);
	}
	for (k = 0; k < nodes; k++) {
		if (cnt[k] == 0)
			continue;
		parts++;
		groups += uf_root(up, k) == k;
	}
	df = used - parts + groups;
	if (df > 0) {
		backfit(o, n, ncfg, nodes, cnt, e, sum);
		for (i = 0; i < n; i++) {
			double r;

			if (!fits(&o[i], ncfg))
				continue;
			r = o[i].score - e[o[i].cfg] - e[ncfg + (size_t)o[i].seed];
			ss += r * r;
		}
		out->df = df;
		out->sd = sqrt(ss / (double)df);
		if (out->sd < 1e-12)
			out->sd = 0;
	}
	free(e);
	free(sum);
	free(cnt);
	free(up);
}

/* The rule's inputs, and each configuration's runs as a list in run order. */
void noise_rule_init(struct noise_rule *r, const struct noise_obs *o, size_t n,
		     const struct noise_cfg *v, size_t ncfg, const struct noise_params *p)
{
	long *tail;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->n = n;
	r->ncfg = ncfg;
	r->p = *p;
	r->head = xcalloc(ncfg + 1, sizeof(*r->head));
	r->next = xcalloc(n + 1, sizeof(*r->next));
	tail = xcalloc(ncfg + 1, sizeof(*tail));
	for (i = 0; i < ncfg; i++)
		r->head[i] = tail[i] = -1;
	for (i = 0; i < n; i++) {
		long c = o[i].cfg;

		r->next[i] = -1;
		if (c < 0 || (size_t)c >= ncfg)
			continue;
		if (tail[c] < 0)
			r->head[c] = (long)i;
		else
			r->next[tail[c]] = (long)i;
		tail[c] = (long)i;
	}
	free(tail);
	noise_pool(v, ncfg, &r->within);
	noise_resid(o, n, ncfg, &r->resid);
}

void noise_rule_release(struct noise_rule *r)
{
	free(r->head);
	free(r->next);
	r->head = r->next = NULL;
}

/* The mean of configuration c's runs from o[from] on (seed s only unless s < -1). */
static double mean_of(const struct noise_rule *r, long c, size_t from, long s, long *count)
{
	double sum = 0;
	long i;

	*count = 0;
	if (c < 0 || (size_t)c >= r->ncfg)
		return 0;
	for (i = r->head[c]; i >= 0; i = r->next[i])
		if ((size_t)i >= from && (s < -1 || r->o[i].seed == s)) {
			sum += r->o[i].score;
			(*count)++;
		}
	return *count ? sum / (double)*count : 0;
}

/* The variance of one paired difference the noise says, and its df. */
static double pair_var(const struct noise_rule *r, long *df0)
{
	if (r->resid.df > 0) {
		*df0 = r->resid.df;
		return 2 * r->resid.sd * r->resid.sd;
	}
	*df0 = r->within.df;
	return 2 * r->within.sd * r->within.sd;
}

/* The bound the paired test puts on a lead over k pairs whose own variance is s2. */
static double bound_of(const struct noise_rule *r, long k, double s2, long *df, double *se)
{
	long df0;
	double v0 = pair_var(r, &df0), v, level;

	if (k < 1)
		k = 1;
	*df = k - 1 + df0;
	v = *df > 0 ? ((double)(k - 1) * s2 + (double)df0 * v0) / (double)*df : v0;
	*se = sqrt(v / (double)k);
	if (*df <= 0)
		return INFINITY;
	level = r->p.alpha / (double)(NOISE_LOOKS * NOISE_LABELLED);
	return noise_t_quantile(1 - level, (double)*df) * *se;
}

/*
 * What the test would ask of a lead after `pairs` confirming pairs (their
 * spread the noise's), the runs that make them adding as many degrees of
 * freedom to the noise estimate.
 */
double noise_need(const struct noise_rule *r, long pairs)
{
	struct noise_rule ahead = *r;
	long df, df0;
	double se, md = r->p.min_delta > 0 ? r->p.min_delta : 0, q;

	if (ahead.resid.df > 0)
		ahead.resid.df += pairs;
	else
		ahead.within.df += pairs;
	q = bound_of(&ahead, pairs, pair_var(&ahead, &df0), &df, &se);
	return q > md ? q : md;
}

/* A lead too small to tell from a tie: within min_delta, or rounding. */
static int is_tie(double d, double scale, double min_delta)
{
	return d <= (min_delta > 0 ? min_delta : 0) || d <= 1e-9 * (fabs(scale) + 1);
}

/* The index of configuration c's first run in r->o, or r->n. */
static size_t first_run(const struct noise_rule *r, long c)
{
	return c >= 0 && (size_t)c < r->ncfg && r->head[c] >= 0 ? (size_t)r->head[c] : r->n;
}

/* The confirming pairs of cand against inc: count, sum and sum of squares of d. */
static long pairs_of(const struct noise_rule *r, long cand, long inc, double *sum,
		     double *sum2)
{
	size_t first = first_run(r, cand);
	int sign = r->p.goal_max ? 1 : -1;
	long k = 0, i, j;

	*sum = *sum2 = 0;
	if (first >= r->n)
		return 0;
	for (i = r->next[first]; i >= 0 && k < NOISE_LOOKS; i = r->next[i]) {
		long cnt, ccnt;
		double iv, cv, d;
		int dup = 0;

		if (r->o[i].seed < 0)
			continue;
		for (j = r->next[first]; j != i; j = r->next[j])
			dup |= r->o[j].seed == r->o[i].seed;
		if (dup)
			continue;
		iv = mean_of(r, inc, 0, r->o[i].seed, &cnt);
		if (cnt == 0)
			continue;
		cv = mean_of(r, cand, first + 1, r->o[i].seed, &ccnt);
		d = sign * (cv - iv);
		*sum += d;
		*sum2 += d * d;
		k++;
	}
	return k;
}

/* Compare a candidate with the incumbent. */
void noise_compare(const struct noise_rule *r, long cand, long inc, struct noise_cmp *out)
{
	double cm, im, md = r->p.min_delta > 0 ? r->p.min_delta : 0, sum, sum2, s2 = 0;
	int sign = r->p.goal_max ? 1 : -1;
	long nc, ni, k, df0;

	memset(out, 0, sizeof(*out));
	cm = mean_of(r, cand, 0, -2, &nc);
	im = mean_of(r, inc, 0, -2, &ni);
	out->diff = sign * (cm - im);
	out->need = md;
	if (nc < 1 || ni < 1)
		return;
	if (r->within.df == 0 || r->within.sd == 0) {
		/* unchecked, or exact: the means */
		out->checked = r->within.df > 0;
		out->beats = !is_tie(out->diff, im, md);
		return;
	}
	out->checked = 1;
	out->paired = 1;
	k = pairs_of(r, cand, inc, &sum, &sum2);
	out->pairs = k;
	if (k == 0) {
		/* nothing to test yet: the lead on the first run's seed, else of the means */
		size_t first = first_run(r, cand);
		long cnt;
		double iv = r->o[first].seed >= 0 ?
			    mean_of(r, inc, 0, r->o[first].seed, &cnt) : (cnt = 0, 0);

		if (cnt > 0)
			out->diff = sign * (r->o[first].score - iv);
		{
			double q = bound_of(r, 1, pair_var(r, &df0), &out->df, &out->se);

			out->need = q > md ? q : md;
		}
	} else {
		double q;

		if (k >= 2)
			s2 = (sum2 - sum * sum / (double)k) / (double)(k - 1);
		out->diff = sum / (double)k;
		q = bound_of(r, k, s2 < 0 ? 0 : s2, &out->df, &out->se);
		out->need = q > md ? q : md;
		out->beats = out->diff > out->need && !is_tie(out->diff, im, md);
	}
	out->sigmas = out->se > 0 ? out->diff / out->se : 0;
	out->wants_replicate = !out->beats && k < NOISE_LOOKS && !is_tie(out->diff, im, md);
}

/* The best configuration under the rule. */
long noise_choose(const struct noise_rule *r, long start, int *promotions)
{
	long inc = start, i, count;
	int changed = 1, moves = 0, rounds = 0;

	/* each promotion raises the bar; the round cap only guards a cycle */
	while (changed && rounds++ < 100) {
		changed = 0;
		for (i = 0; i < (long)r->ncfg; i++) {
			struct noise_cmp c;

			if (i == inc)
				continue;
			mean_of(r, i, 0, -2, &count);
			if (count == 0)
				continue;
			noise_compare(r, i, inc, &c);
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
