/*
 * What a run is worth (pure): the knowledge gradient, the expected rise of
 * the model's best posterior mean among the configurations run once the
 * run's score is known (Frazier, Powell and Dayanik 2009, correlated
 * beliefs). A confirming run (a replicate of one of the best few) is
 * proposed only when it is worth more than the exploring run the
 * acquisition chose; no share of the budget is set aside for them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/paired.h"
#include "search/propose-impl.h"
#include "lib/util.h"

/* Configurations the choice is among: the best this many by the model's mean, and the best. */
#define KG_SET 24
/* Replicates weighed: of the best this many by the model's mean, and of the best. */
#define KG_REPLICATES 5

/* z Phi(z) + phi(z). */
static double kg_f(double z)
{
	return z * 0.5 * erfc(-z / sqrt(2.0)) + exp(-0.5 * z * z) / sqrt(2 * M_PI);
}

/* qsort's order for prop_kg: slope up, then mean up. */
static const double *kg_a, *kg_b;
static int by_slope(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;

	if (kg_b[i] != kg_b[j])
		return kg_b[i] < kg_b[j] ? -1 : 1;
	return (kg_a[i] > kg_a[j]) - (kg_a[i] < kg_a[j]);
}

/* E[max_i (a_i + b_i Z)] - max_i a_i for Z standard normal: the upper envelope's breakpoints. */
double prop_kg(const double *a, const double *b, size_t n)
{
	size_t *o = xcalloc(n + 1, sizeof(*o)), *env = xcalloc(n + 1, sizeof(*env)), i, k = 0;
	double *c = xcalloc(n + 1, sizeof(*c)), kg = 0;

	for (i = 0; i < n; i++)
		o[i] = i;
	kg_a = a;
	kg_b = b;
	qsort(o, n, sizeof(*o), by_slope);
	for (i = 0; i < n; i++) {
		size_t t = o[i];

		/* equal slopes: only the highest mean counts (sorted last) */
		if (i + 1 < n && b[o[i + 1]] == b[t])
			continue;
		while (k > 0) {
			size_t j = env[k - 1];
			double x = (a[j] - a[t]) / (b[t] - b[j]);

			if (k > 1 && x <= c[k - 1]) {
				k--;
				continue;
			}
			c[k] = x;
			break;
		}
		if (k == 0)
			c[0] = -INFINITY;
		env[k++] = t;
	}
	for (i = 0; i + 1 < k; i++)
		kg += (b[env[i + 1]] - b[env[i]]) * kg_f(-fabs(c[i + 1]));
	free(o);
	free(env);
	free(c);
	return kg > 0 ? kg : 0;
}

/* A seed value's index in the model (GP_SEED_FRESH: no run has it; -1: none). */
long prop_model_seed(const struct prop_model *m, const char *seed)
{
	size_t i;

	if (seed == NULL || !*seed)
		return -1;
	for (i = 0; i < m->nseeds; i++)
		if (strcmp(m->seeds[i], seed) == 0)
			return m->g.w ? GP_SEED_FRESH : (long)i;
	return GP_SEED_FRESH;
}

/* The choice's set: each member's f, prepared once. */
struct kg_set {
	long *idx;
	struct gp_ref *refs;	/* one more slot: the run weighed */
	double *mu, *b;
	size_t n;
};

/* The best KG_SET configurations run by the model's mean, and in->best. */
static void set_init(const struct prop_input *in, const struct prop_model *m, struct kg_set *s)
{
	size_t i, j;

	memset(s, 0, sizeof(*s));
	s->idx = xcalloc(KG_SET + 2, sizeof(*s->idx));
	s->refs = xcalloc(KG_SET + 2, sizeof(*s->refs));
	s->mu = xcalloc(KG_SET + 2, sizeof(*s->mu));
	s->b = xcalloc(KG_SET + 2, sizeof(*s->b));
	while (s->n < KG_SET) {
		long pick = -1;

		for (i = 0; i < in->n; i++) {
			int dup = 0;

			if (!m->on[i] || in->v[i].st.n == 0 || in->v[i].rep_tag == NULL)
				continue;
			for (j = 0; j < s->n; j++)
				dup |= s->idx[j] == (long)i;
			if (!dup && (pick < 0 || m->mean[i] > m->mean[pick]))
				pick = (long)i;
		}
		if (pick < 0)
			break;
		s->idx[s->n++] = pick;
	}
	if (in->best >= 0 && m->on[in->best] && in->v[in->best].st.n > 0) {
		for (j = 0; j < s->n && s->idx[j] != in->best; j++)
			;
		if (j == s->n)
			s->idx[s->n++] = in->best;
	}
	for (i = 0; i < s->n; i++) {
		gp_ref_init(&m->g, m->u + (size_t)s->idx[i] * m->d, &s->refs[i]);
		s->mu[i] = s->refs[i].mean;
	}
}

static void set_release(struct kg_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		gp_ref_release(&s->refs[i]);
	free(s->idx);
	free(s->refs);
	free(s->mu);
	free(s->b);
	memset(s, 0, sizeof(*s));
}

/*
 * The knowledge gradient of one run at u with seed sa (prop_model_seed);
 * member: its index in s when it is a configuration of the set, else -1
 * (a new configuration joins the set for the run).
 */
static double value_at(const struct prop_model *m, struct kg_set *s, const double *u, long sa,
		       long member)
{
	double var, *cov = xcalloc(s->n + 2, sizeof(*cov)), kg;
	size_t n = s->n, i;

	if (member < 0) {
		gp_ref_init(&m->g, u, &s->refs[n]);
		s->mu[n] = s->refs[n].mean;
		n++;
	}
	gp_obs_cov(&m->g, u, sa, s->refs, n, cov, &var);
	for (i = 0; i < n; i++)
		s->b[i] = cov[i] / sqrt(var);
	kg = prop_kg(s->mu, s->b, n);
	if (member < 0)
		gp_ref_release(&s->refs[s->n]);
	free(cov);
	return kg;
}

/* The knowledge gradient of a run of the configuration at u on seed (the parent's). */
double prop_value_move(const struct prop_input *in, const struct prop_model *m, const double *u,
		       const char *seed)
{
	struct kg_set s;
	double kg;

	set_init(in, m, &s);
	kg = value_at(m, &s, u, prop_model_seed(m, seed), -1);
	set_release(&s);
	return kg;
}

/* Whether configuration c has a run (proven or open) with seed value. */
static int has_seed(const struct prop_input *in, long c, const char *value)
{
	size_t i;

	for (i = 0; i < in->nruns; i++)
		if (in->runs[i].cfg == c && in->runs[i].seed &&
		    (in->runs[i].proven || in->runs[i].open) && strcmp(in->runs[i].seed, value) == 0)
			return 1;
	return 0;
}

/*
 * The first of configuration of's seeds (its run order, proven or open runs)
 * that c lacks; NULL: none (propose-impl.h).
 */
const char *prop_seed_lacking(const struct prop_input *in, long of, long c)
{
	size_t i;

	for (i = 0; i < in->nruns; i++) {
		const struct prop_run *r = &in->runs[i];

		if (r->cfg == of && r->seed && (r->proven || r->open) &&
		    !has_seed(in, c, r->seed))
			return r->seed;
	}
	return NULL;
}

/* Whether a replicate can differ from its parent: a seed to vary, not seen to change nothing. */
int prop_seed_varies(const struct prop_input *in)
{
	return *in->seed && !(in->noise.df >= PROP_SAME_DF && in->noise.sd == 0);
}

/* The model's pick, while it has fewer than PROP_PICK_RUNS runs (the best cannot move to it yet). */
int prop_value_pick(const struct prop_input *in, const struct prop_model *m, struct prop_out *out)
{
	const struct prop_cfg *c;
	const char *seed;
	size_t i;

	if (m->top < 0 || m->top == in->best || !prop_seed_varies(in))
		return 0;
	c = &in->v[m->top];
	if (c->st.n + c->open >= PROP_PICK_RUNS)
		return 0;
	for (i = 0; i < in->nruns; i++)
		if (in->runs[i].cfg == m->top && !in->runs[i].proven && !in->runs[i].open)
			return 0;	/* a run of it failed: not asked again and again */
	seed = prop_seed_lacking(in, in->baseline, m->top);
	memset(out, 0, sizeof(*out));
	out->kind = PROP_REPLICATE;
	out->cfg = m->top;
	out->var = in->seed;
	out->value = seed ? xstrdup(seed) : NULL;
	out->reason = xasprintf("replicate of %s (%g, n=%ld) on %s: the model's pick, and the "
				"best moves only to a configuration with %d runs (one may be a "
				"lucky seed)", c->rep_tag, c->st.mean, c->st.n,
				seed ? "a seed the baseline has" : "a fresh seed", PROP_PICK_RUNS);
	return 1;
}

/*
 * The next pair of a configuration whose paired evidence against the best
 * could move it (paired_next): it runs on a seed the best has and it
 * lacks, else the best on a fresh seed. 1 with *out.
 */
int prop_value_paired(const struct prop_input *in, struct prop_out *out)
{
	size_t pairs;
	long c;
	const char *seed;

	if (in->best < 0 || !prop_seed_varies(in))
		return 0;
	c = paired_next(in, &pairs);
	if (c < 0 || in->v[c].open > 0 || in->v[in->best].open > 0)
		return 0;
	seed = prop_seed_lacking(in, in->best, c);
	memset(out, 0, sizeof(*out));
	out->kind = PROP_REPLICATE;
	out->cfg = seed ? c : in->best;
	out->var = in->seed;
	out->value = seed ? xstrdup(seed) : NULL;
	out->reason = seed ?
		xasprintf("replicate of %s (%g, n=%ld) on a seed the best has: ahead of the best "
			  "%s on %zu common seeds, not plainly yet (its next pair)",
			  in->v[c].rep_tag, in->v[c].st.mean, in->v[c].st.n,
			  in->v[in->best].rep_tag, pairs) :
		xasprintf("replicate of the best %s (%g, n=%ld) on a fresh seed: %s is ahead of it "
			  "on %zu common seeds, not plainly yet, and has every seed it has",
			  in->v[in->best].rep_tag, in->v[in->best].st.mean, in->v[in->best].st.n,
			  in->v[c].rep_tag, pairs);
	return 1;
}

/* The replicate worth most, when it is worth more than explore (the exploring run's value). */
int prop_value_replicate(const struct prop_input *in, const struct prop_model *m, double explore,
			 struct prop_out *out)
{
	struct kg_set s;
	long top = -1;
	double best_kg = 0;
	const char *top_seed = NULL;
	size_t i;

	if (!prop_seed_varies(in))
		return 0;	/* no seed to vary, or deterministic */
	set_init(in, m, &s);
	for (i = 0; i < s.n; i++) {
		long c = s.idx[i];
		const char *seed;
		double kg;

		if (i >= KG_REPLICATES && c != in->best)
			continue;
		seed = prop_seed_lacking(in, in->baseline, c);
		kg = value_at(m, &s, m->u + (size_t)c * m->d, seed ? prop_model_seed(m, seed) :
			      GP_SEED_FRESH, (long)i);
		if (kg > best_kg) {
			best_kg = kg;
			top = c;
			top_seed = seed;
		}
	}
	set_release(&s);
	if (top < 0 || !(best_kg > explore))
		return 0;
	memset(out, 0, sizeof(*out));
	out->kind = PROP_REPLICATE;
	out->cfg = top;
	out->var = in->seed;
	out->value = top_seed ? xstrdup(top_seed) : NULL;
	out->reason = xasprintf("replicate of %s (%g, n=%ld) on %s: worth more to the choice of "
				"the best than exploring (expected gain %.2g against %.2g, the "
				"knowledge gradient)", in->v[top].rep_tag, in->v[top].st.mean,
				in->v[top].st.n, top_seed ? "a seed the baseline has" :
				"a fresh seed", best_kg, explore);
	return 1;
}
