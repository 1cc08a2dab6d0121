/* The stop rule that knows the noise: see stop-rule.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/stop-rule.h"
#include "lib/util.h"
#include "search/noise.h"

/* Set c->v[k] = v, growing the curve with NANs. */
static void curve_set(struct stop_curve *c, size_t k, double v)
{
	size_t i;

	if (k >= c->len) {
		c->v = xreallocarray(c->v, k + 1, sizeof(*c->v));
		for (i = c->len; i <= k; i++)
			c->v[i] = NAN;
		c->len = k + 1;
	}
	c->v[k] = v;
}

/* A progress file's text as a curve. */
void stop_curve_parse(const char *text, struct stop_curve *c)
{
	const char *s = text;

	c->v = NULL;
	c->len = 0;
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		char line[256], *p, *end;
		size_t len;
		long long k;
		double v;

		if (!nl)
			break;	/* a line still being written */
		len = (size_t)(nl - s);
		s = nl + 1;
		if (len >= sizeof(line))
			continue;
		memcpy(line, s - len - 1, len);
		line[len] = '\0';
		p = line + strspn(line, " \t");
		if (strncmp(p, "epoch", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
			continue;
		p += 5 + strspn(p + 5, " \t");
		if (*p < '0' || *p > '9')
			continue;
		k = strtoll(p, &end, 10);
		if ((*end != ' ' && *end != '\t') || k < 0 || k > STOP_MAX_EPOCH)
			continue;
		p = end + strspn(end, " \t");
		v = strtod(p, &end);
		if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r'))
			continue;
		curve_set(c, (size_t)k, isfinite(v) ? v : NAN);
	}
}

/* Free a curve's values. */
void stop_curve_release(struct stop_curve *c)
{
	FREE_AND_NULL(c->v);
	c->len = 0;
}

/* The sum of squares within configurations at epoch k and its df (added to *ss, *df). */
static void noise_ss(const struct stop_curve *runs, size_t n, size_t k, double *ss, long *df)
{
	size_t i, j;
	char *done = xcalloc(n + 1, 1);

	for (i = 0; i < n; i++) {
		double sum = 0, mean;
		long m = 0;

		if (done[i] || runs[i].cfg < 0)
			continue;
		for (j = i; j < n; j++)
			if (runs[j].cfg == runs[i].cfg) {
				done[j] = 1;
				if (k < runs[j].len && isfinite(runs[j].v[k])) {
					sum += runs[j].v[k];
					m++;
				}
			}
		if (m < 2)
			continue;
		mean = sum / (double)m;
		for (j = i; j < n; j++)
			if (runs[j].cfg == runs[i].cfg && k < runs[j].len && isfinite(runs[j].v[k]))
				*ss += (runs[j].v[k] - mean) * (runs[j].v[k] - mean);
		*df += m - 1;
	}
	free(done);
}

/* The seed noise near epoch k, pooled over configurations and epochs k - window .. k + window. */
double stop_noise_at(const struct stop_curve *runs, size_t n, size_t k, size_t window, long *df)
{
	double ss = 0;
	size_t e = k > window ? k - window : 0;

	*df = 0;
	for (; e <= k + window; e++)
		noise_ss(runs, n, e, &ss, df);
	return *df ? sqrt(ss / (double)*df) : NAN;
}

/* The seed noise pooled over epochs k .. max - 1. */
static double tail_noise(const struct stop_curve *runs, size_t n, size_t k, size_t max, long *df)
{
	double ss = 0;

	*df = 0;
	for (; k < max; k++)
		noise_ss(runs, n, k, &ss, df);
	return *df ? sqrt(ss / (double)*df) : NAN;
}

/* The mean of configuration cfg's finite values at k; *m how many (0: NAN). */
static double mean_at(const struct stop_curve *runs, size_t n, long cfg, size_t k, long *m)
{
	double sum = 0;
	size_t i;

	*m = 0;
	for (i = 0; i < n; i++)
		if (runs[i].cfg == cfg && k < runs[i].len && isfinite(runs[i].v[k])) {
			sum += runs[i].v[k];
			(*m)++;
		}
	return *m ? sum / (double)*m : NAN;
}

/* The bar of one configuration at k (NAN when it did not reach k). */
static double bar_of(const struct stop_curve *runs, size_t n, long cfg, size_t k, double sd,
		     const struct stop_params *p)
{
	long m;
	double mean = mean_at(runs, n, cfg, k, &m);

	if (!m)
		return NAN;
	sd *= p->z * sqrt(1 + 1 / (double)m);
	return p->goal_max ? mean - sd : mean + sd;
}

/* The largest rise (goal min: fall) from epoch k to its last value among the curves that reached k. */
static double largest_rise(const struct stop_curve *runs, size_t n, size_t k, int goal_max)
{
	double r = 0;
	size_t i, e;

	for (i = 0; i < n; i++) {
		if (k >= runs[i].len || !isfinite(runs[i].v[k]))
			continue;
		for (e = runs[i].len - 1; e > k && !isfinite(runs[i].v[e]); e--)
			;
		r = fmax(r, goal_max ? runs[i].v[e] - runs[i].v[k] : runs[i].v[k] - runs[i].v[e]);
	}
	return r;
}

/* The bar at each epoch below max. */
size_t stop_bar(const struct stop_curve *runs, size_t n, long best, long parent,
		const struct stop_params *p, double *bar, size_t max)
{
	size_t k, last = 0;

	for (k = 0; k < max; k++) {
		long df, tdf;
		double sd, b, q, tail;

		bar[k] = NAN;
		if ((long long)k <= p->warmup || best < 0)
			continue;
		sd = stop_noise_at(runs, n, k, STOP_NOISE_WINDOW, &df);
		if (!df)
			continue;
		/* a few replicates measure the noise loosely: Student's t widens the margin */
		sd *= noise_t_quantile(0.975, (double)df) / STOP_Z975;
		/* never narrower than the noise from k to the end, where the run is judged */
		tail = tail_noise(runs, n, k, max, &tdf);
		if (tdf)
			sd = fmax(sd, tail * noise_t_quantile(0.975, (double)tdf) / STOP_Z975);
		b = bar_of(runs, n, best, k, sd, p);
		if (parent >= 0 && parent != best) {
			/* the less demanding of the two, where both reached k */
			q = bar_of(runs, n, parent, k, sd, p);
			if (isnan(q) || isnan(b))
				continue;
			b = p->goal_max ? fmin(b, q) : fmax(b, q);
		}
		if (isnan(b))
			continue;
		bar[k] = b;
		last = k + 1;
	}
	/* behind at k, and not to reach the last bar even rising as much as any curve did from k */
	for (k = 0; last && k + 1 < last; k++) {
		double rise = largest_rise(runs, n, k, p->goal_max), cap;

		if (isnan(bar[k]))
			continue;
		cap = p->goal_max ? bar[last - 1] - rise : bar[last - 1] + rise;
		bar[k] = p->goal_max ? fmin(bar[k], cap) : fmax(bar[k], cap);
	}
	return last;
}

/* The first epoch at which v has been behind bar p->behind epochs running, or -1. */
long long stop_first_behind(const double *v, size_t len, const double *bar, size_t nbar,
			    const struct stop_params *p)
{
	long long run = 0;
	size_t k;

	if (p->behind < 1)
		return -1;
	for (k = 0; k < len; k++) {
		int behind;

		if (isnan(v[k]))
			continue;	/* not reported, or NaN: the plainest rule's */
		behind = k < nbar && !isnan(bar[k]) &&
			 (p->goal_max ? v[k] < bar[k] : v[k] > bar[k]);
		run = behind ? run + 1 : 0;
		if (run >= p->behind)
			return (long long)k;
	}
	return -1;
}

/* The stop-bar file's text. */
void stop_bar_text(const double *bar, size_t nbar, const struct stop_params *p, struct buf *b)
{
	size_t k;

	buf_addf(b, "# xloop's stop bar: the values to beat (xloop help adopt: progress)\n"
		 "behind %lld\n", p->behind);
	for (k = 0; k < nbar; k++)
		if (!isnan(bar[k]))
			buf_addf(b, "bar %zu %.9g\n", k, bar[k]);
}

/* A stop-bar file's text back. */
int stop_bar_parse(const char *text, double **bar, size_t *nbar, long long *behind)
{
	struct stop_curve c = { NULL, 0, -1 };
	const char *s = text;
	int have = 0;

	*behind = 0;
	while (s && *s) {
		const char *nl = strchr(s, '\n');
		char *end;
		long long k;
		double v;

		if (!nl)
			break;
		if (strncmp(s, "behind ", 7) == 0) {
			*behind = strtoll(s + 7, &end, 10);
			have = end != s + 7;
		} else if (strncmp(s, "bar ", 4) == 0 && s[4] >= '0' && s[4] <= '9') {
			k = strtoll(s + 4, &end, 10);
			v = strtod(end, &end);
			if (k <= STOP_MAX_EPOCH && end <= nl && isfinite(v))
				curve_set(&c, (size_t)k, v);
		}
		s = nl + 1;
	}
	*bar = c.v;
	*nbar = c.len;
	return have ? 0 : -1;
}
