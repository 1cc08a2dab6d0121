/* Paired evidence beside the model (pure): a configuration against the best, seed by seed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/paired.h"
#include "lib/util.h"

/* A seed to vary (propose.h's prop_seed_varies, without its module: it calls this one). */
static int seed_varies(const struct prop_input *in)
{
	return *in->seed && !(in->noise.df >= PROP_SAME_DF && in->noise.sd == 0);
}

/* One seed's runs of a configuration: their mean, and the last run's index. */
struct seed_mean {
	const char *seed;
	double sum;
	long n;
	size_t last;
};

/* Order by seed value. */
static int seed_mean_cmp(const void *a, const void *b)
{
	return strcmp(((const struct seed_mean *)a)->seed, ((const struct seed_mean *)b)->seed);
}

/* Configuration cfg's proven runs by seed (sorted, one entry a seed) into v; their count. */
static size_t seed_means(const struct prop_input *in, long cfg, struct seed_mean *v)
{
	size_t i, n = 0, k = 0;

	for (i = 0; i < in->nruns; i++) {
		const struct prop_run *r = &in->runs[i];

		if (r->cfg == cfg && r->proven && r->seed && isfinite(r->score))
			v[n++] = (struct seed_mean){ r->seed, r->score, 1, i };
	}
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), seed_mean_cmp);
	for (i = 1; i < n; i++) {
		if (strcmp(v[i].seed, v[k].seed) == 0) {
			v[k].sum += v[i].sum;
			v[k].n++;
			if (v[i].last > v[k].last)
				v[k].last = v[i].last;
		} else {
			v[++k] = v[i];
		}
	}
	return k + 1;
}

/* Every proven run as the two-way fit sees it, in run order, built once a choice. */
struct paired_obs {
	struct noise_obs *o;
	size_t *before;		/* before[i]: how many of o come from runs [0, i) */
};

/* A run's seed and index, to sort by seed. */
struct run_seed {
	const char *seed;
	size_t i;
};

/* Order by seed value. */
static int run_seed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct run_seed *)a)->seed, ((const struct run_seed *)b)->seed);
}

/* in's proven runs with a seed index each (sorted once: a study of 10,000 runs). */
static void paired_obs_init(const struct prop_input *in, struct paired_obs *po)
{
	struct run_seed *idx = xcalloc(in->nruns + 1, sizeof(*idx));
	size_t i, ns = 0, k = 0;
	long *ids = xcalloc(in->nruns + 1, sizeof(*ids)), next = -1;

	for (i = 0; i < in->nruns; i++) {
		ids[i] = -1;
		if (in->runs[i].seed)
			idx[ns++] = (struct run_seed){ in->runs[i].seed, i };
	}
	qsort(idx, ns, sizeof(*idx), run_seed_cmp);
	for (i = 0; i < ns; i++) {
		if (i == 0 || strcmp(idx[i].seed, idx[i - 1].seed) != 0)
			next++;
		ids[idx[i].i] = next;
	}
	po->o = xcalloc(in->nruns + 1, sizeof(*po->o));
	po->before = xcalloc(in->nruns + 2, sizeof(*po->before));
	for (i = 0; i < in->nruns; i++) {
		const struct prop_run *r = &in->runs[i];

		po->before[i] = k;
		if (r->proven && isfinite(r->score)) {
			po->o[k].cfg = r->cfg;
			po->o[k].seed = ids[i];
			po->o[k].score = r->score;
			k++;
		}
	}
	po->before[in->nruns] = k;
	free(idx);
	free(ids);
}

/* Free what paired_obs_init made. */
static void paired_obs_release(struct paired_obs *po)
{
	free(po->o);
	free(po->before);
}

/*
 * The noise a paired difference sees, from the runs [0, upto) alone:
 * *s0 the variance of one difference on a common seed, *df its degrees of
 * freedom; m the configurations but b with 2 runs or more then. -1: not
 * measured.
 */
static int paired_noise(const struct prop_input *in, const struct paired_obs *po, size_t upto,
			long a, long b, double *s0, double *df, long *m)
{
	struct noise_cfg *st = xcalloc(in->n + 1, sizeof(*st)), other = { 0 };
	struct noise_est within, resid;
	double nu0 = CHOOSE_PAIRED_SPREAD_DF, s2, q, r1;
	size_t i;

	for (i = 0; i < upto; i++) {
		const struct prop_run *r = &in->runs[i];

		if (!r->proven || !isfinite(r->score) || r->cfg < 0 || (size_t)r->cfg >= in->n)
			continue;
		noise_add(&st[r->cfg], r->score);
		if (r->cfg != a)
			noise_add(&other, r->score);
	}
	noise_pool(st, in->n, &within);
	*m = 0;
	for (i = 0; i < in->n; i++)
		*m += (long)i != b && st[i].n >= PROP_PICK_RUNS;
	free(st);
	/* the replicates and the spread lend too few degrees of freedom to tell noise from a lead */
	if (within.df <= 0 || (double)within.df + (double)other.n - 1 < CHOOSE_PAIRED_MIN_DF)
		return -1;
	noise_resid(po->o, po->before[upto], in->n, &resid);
	/* one run's noise, moderated by the spread of every other configuration's runs */
	s2 = (nu0 * (other.n > 1 ? other.ss / (double)(other.n - 1) : 0) +
	      (double)within.df * within.sd * within.sd) / (nu0 + (double)within.df);
	/*
	 * 1 - the seed correlation: the two-way fit's residual (what is left
	 * of a run once its configuration and its seed are known) against
	 * that, pulled towards no correlation with CHOOSE_SEED_CORR_DF
	 * degrees of freedom
	 */
	q = resid.df > 0 && s2 > 0 ? fmin(1, resid.sd * resid.sd / s2) : 1;
	r1 = ((double)resid.df * q + CHOOSE_SEED_CORR_DF) / ((double)resid.df + CHOOSE_SEED_CORR_DF);
	*s0 = 2 * s2 * r1;
	*df = nu0 + (double)within.df;
	return 0;
}

/* A configuration's differences from the best on their common seeds. */
struct diffs {
	long cfg;
	size_t k, upto;		/* common seeds; the runs up to the one that completed the last */
	double dbar, ss;	/* their mean and sum of squared deviations */
};

/* Configuration a's differences from b (bv: b's seeds) into *out; av: scratch. */
static void paired_diffs(const struct prop_input *in, long a, const struct seed_mean *bv,
			 size_t nb, struct seed_mean *av, struct diffs *out)
{
	double d[64];
	size_t na, j = 0, i;

	memset(out, 0, sizeof(*out));
	out->cfg = a;
	na = seed_means(in, a, av);
	for (i = 0; i < na && out->k < 64; i++) {
		while (j < nb && strcmp(bv[j].seed, av[i].seed) < 0)
			j++;
		if (j < nb && strcmp(bv[j].seed, av[i].seed) == 0) {
			d[out->k++] = (in->p.goal_max ? 1 : -1) *
				      (av[i].sum / (double)av[i].n - bv[j].sum / (double)bv[j].n);
			if (av[i].last + 1 > out->upto)
				out->upto = av[i].last + 1;
			if (bv[j].last + 1 > out->upto)
				out->upto = bv[j].last + 1;
		}
	}
	for (i = 0; i < out->k; i++)
		out->dbar += d[i] / (double)out->k;
	for (i = 0; i < out->k; i++)
		out->ss += (d[i] - out->dbar) * (d[i] - out->dbar);
}

/* Most promising first: the larger lead times the square root of the pairs. */
static int diffs_cmp(const void *a, const void *b)
{
	const struct diffs *x = a, *y = b;
	double zx = x->dbar * sqrt((double)x->k), zy = y->dbar * sqrt((double)y->k);

	return zx > zy ? -1 : zx < zy ? 1 : (x->cfg > y->cfg) - (x->cfg < y->cfg);
}

/* The test of e against b, as of the run that completed its last pair; 0 with *out. */
static int paired_eval(const struct prop_input *in, const struct paired_obs *po,
		       const struct diffs *e, long b, struct paired *out)
{
	double md = in->p.min_delta > 0 ? in->p.min_delta : 0, s0, dfn, sd2;

	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	out->k = e->k;
	if (paired_noise(in, po, e->upto, e->cfg, b, &s0, &dfn, &out->m) < 0)
		return -1;
	sd2 = (e->ss + dfn * s0) / ((double)e->k - 1 + dfn);
	out->cfg = e->cfg;
	out->df = (double)e->k - 1 + dfn;
	out->lead = e->dbar;
	out->se = sqrt(sd2 / (double)e->k);
	out->p = out->se > 0 ? noise_t_cdf((e->dbar - md) / out->se, out->df) : e->dbar > md;
	if (out->m < 1)
		out->m = 1;
	out->padj = 1 - (double)out->m * (1 - out->p);
	return 0;
}

/* The strongest paired evidence against b (paired.h). */
long paired_best(const struct prop_input *in, long b, size_t pairs_below, struct paired *best)
{
	double md = in->p.min_delta > 0 ? in->p.min_delta : 0;
	struct seed_mean *bv, *av;
	struct diffs *dv;
	struct paired_obs po;
	size_t nb, a, nd = 0, i;

	memset(best, 0, sizeof(*best));
	best->cfg = -1;
	if (in->noise.df <= 0 || !seed_varies(in) || b < 0)
		return -1;
	bv = xcalloc(in->nruns + 1, sizeof(*bv));
	av = xcalloc(in->nruns + 1, sizeof(*av));
	dv = xcalloc(in->n + 1, sizeof(*dv));
	nb = seed_means(in, b, bv);
	/* only a lead on 2 common seeds or more can move the best or ask for a pair */
	for (a = 0; a < in->n && nb > 0; a++) {
		if ((long)a == b || in->v[a].rep_tag == NULL || in->v[a].st.n < PROP_PICK_RUNS)
			continue;
		paired_diffs(in, (long)a, bv, nb, av, &dv[nd]);
		if (dv[nd].k >= 2 && dv[nd].dbar > md && (pairs_below == 0 || dv[nd].k < pairs_below))
			nd++;
	}
	/* the noise is fitted for the few most promising only (a study of 10,000 runs) */
	qsort(dv, nd, sizeof(*dv), diffs_cmp);
	if (nd > PAIRED_EVAL_MAX)
		nd = PAIRED_EVAL_MAX;
	if (nd > 0)
		paired_obs_init(in, &po);
	for (i = 0; i < nd; i++) {
		struct paired e;

		if (paired_eval(in, &po, &dv[i], b, &e) < 0)
			continue;
		if (best->cfg < 0 || e.padj > best->padj ||
		    (e.padj == best->padj && e.cfg < best->cfg))
			*best = e;
	}
	if (nd > 0)
		paired_obs_release(&po);
	free(bv);
	free(av);
	free(dv);
	return best->cfg;
}

/* A configuration whose paired evidence against the best could move it with more pairs. */
long paired_next(const struct prop_input *in, size_t *pairs)
{
	struct paired e;

	*pairs = 0;
	if (paired_best(in, in->best, CHOOSE_PAIRED_PAIRS, &e) < 0 || e.p < CHOOSE_PAIRED_NEXT)
		return -1;
	*pairs = e.k;
	return e.cfg;
}
