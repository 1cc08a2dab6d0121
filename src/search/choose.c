/* The best is the model's pick: posterior means, a sticky move at CHOOSE_P, shrunken means when the model fits poorly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/choose.h"
#include "search/paired.h"
#include "search/propose-impl.h"
#include "lib/util.h"

/* The model, or the shrunken means' estimates. */
struct choose_model {
	struct prop_model pm;
	int have_pm;
	double lpd;		/* pm's held-out fit (gp_loo) */
	double *mean, *var;	/* per configuration, goal-signed (shrunken means) */
	int *has;
};

const char *choose_source_name(enum choose_source s)
{
	switch (s) {
	case CHOOSE_MODEL:
		return "model";
	case CHOOSE_MEANS:
		return "shrunken means";
	case CHOOSE_PLAIN:
		return "plain means";
	default:
		return "none";
	}
}

/* Whether configuration i succeeded (a run to stand for it). */
static int eligible(const struct prop_input *in, long i)
{
	return i >= 0 && (size_t)i < in->n && in->v[i].st.n > 0 && in->v[i].rep_tag != NULL;
}

/*
 * Shrunken means: each configuration's mean pulled towards the grand mean
 * by tau^2 / (tau^2 + sigma^2 / n), tau^2 the spread of the configurations'
 * true scores by moments (at least 0), sigma the measured noise.
 */
static void shrink(const struct prop_input *in, double floor_sd, struct choose_model *m)
{
	double sd = in->noise.sd > floor_sd ? in->noise.sd : floor_sd, s2 = sd * sd, grand = 0, spread = 0, noise = 0, tau2;
	int sign = in->p.goal_max ? 1 : -1;
	long k = 0;
	size_t i;

	for (i = 0; i < in->n; i++)
		if (eligible(in, (long)i)) {
			grand += in->v[i].st.mean;
			k++;
		}
	if (k == 0)
		return;
	grand /= (double)k;
	for (i = 0; i < in->n; i++)
		if (eligible(in, (long)i)) {
			spread += (in->v[i].st.mean - grand) * (in->v[i].st.mean - grand);
			noise += s2 / (double)in->v[i].st.n;
		}
	tau2 = k > 1 ? spread / (double)(k - 1) - noise / (double)k : 0;
	if (tau2 < 0)
		tau2 = 0;
	for (i = 0; i < in->n; i++) {
		double n = (double)in->v[i].st.n, w;

		if (!eligible(in, (long)i))
			continue;
		w = tau2 + s2 / n > 0 ? tau2 / (tau2 + s2 / n) : 1;
		m->has[i] = 1;
		m->mean[i] = sign * (grand + w * (in->v[i].st.mean - grand));
		m->var[i] = tau2 + s2 / n > 0 ? tau2 * (s2 / n) / (tau2 + s2 / n) : 0;
	}
}

/*
 * The leave-one-out error of the raw means over the runs the model saw
 * (a stopped run's value at the stop too: prop_run.partial): each run
 * predicted by its configuration's other runs, else by every other run's mean.
 */
static double loo_means(const struct prop_input *in, const struct prop_model *pm)
{
	double *sum = xcalloc(in->n + 1, sizeof(*sum)), all = 0, ss = 0;
	long *cnt = xcalloc(in->n + 1, sizeof(*cnt)), total = 0;
	size_t i;

	for (i = 0; i < in->nruns; i++) {
		const struct prop_run *r = &in->runs[i];

		if (!(r->proven || r->partial) || r->cfg < 0 || !pm->on[r->cfg] ||
		    !isfinite(r->score))
			continue;
		sum[r->cfg] += r->score;
		cnt[r->cfg]++;
		all += r->score;
		total++;
	}
	for (i = 0; i < in->nruns && total > 1; i++) {
		const struct prop_run *r = &in->runs[i];
		double pred;

		if (!(r->proven || r->partial) || r->cfg < 0 || !pm->on[r->cfg] ||
		    !isfinite(r->score))
			continue;
		pred = cnt[r->cfg] > 1 ? (sum[r->cfg] - r->score) / (double)(cnt[r->cfg] - 1) :
		       (all - r->score) / (double)(total - 1);
		ss += (r->score - pred) * (r->score - pred);
	}
	free(sum);
	free(cnt);
	return total > 1 ? ss / (double)total : 0;
}

/*
 * The log marginal likelihood of y (standardised) under "a seed offset
 * (variance b) and noise (variance a) alone": the covariance is block
 * diagonal by seed, each block a I + b 1 1', so it is closed form.
 */
static double null_lml(const struct gp *g, double a, double b)
{
	double lml = -0.5 * (double)g->n * log(2 * M_PI);
	size_t i, j;
	char *done = xcalloc(g->n + 1, 1);

	for (i = 0; i < g->n; i++) {
		double sum = 0, sq = 0, m = 0, bb = g->seed[i] >= 0 ? b : 0;

		if (done[i])
			continue;
		for (j = i; j < g->n; j++)
			if (j == i || (g->seed[i] >= 0 && g->seed[j] == g->seed[i])) {
				done[j] = 1;
				sum += g->y[j];
				sq += g->y[j] * g->y[j];
				m++;
			}
		lml -= 0.5 * ((sq - bb * sum * sum / (a + m * bb)) / a +
			      (m - 1) * log(a) + log(a + m * bb));
	}
	free(done);
	return lml;
}

/*
 * The held-out fit of y (standardised) under "a seed offset (variance b)
 * and noise (variance a) alone": the sum of each run's log density
 * predicted from the others. The covariance is block diagonal by seed,
 * each block a I + b 1 1' of m runs, whose inverse is
 * (I - c 1 1') / a with c = b / (a + m b): left out, run i is predicted
 * with variance a / (1 - c) and mean y_i - (y_i - c S) / (1 - c), S its
 * block's sum.
 */
static double null_loo(const struct gp *g, double a, double b)
{
	double lpd = 0;
	size_t i, j;
	char *done = xcalloc(g->n + 1, 1);
	size_t *blk = xcalloc(g->n + 1, sizeof(*blk));

	for (i = 0; i < g->n; i++) {
		double sum = 0, m = 0, c, var;
		size_t nb = 0, k;

		if (done[i])
			continue;
		for (j = i; j < g->n; j++)
			if (j == i || (g->seed[i] >= 0 && g->seed[j] == g->seed[i])) {
				done[j] = 1;
				blk[nb++] = j;
				sum += g->y[j];
				m++;
			}
		c = g->seed[i] >= 0 ? b / (a + m * b) : 0;
		var = a / (1 - c);
		for (k = 0; k < nb; k++) {
			double r = (g->y[blk[k]] - c * sum) / (1 - c);

			lpd -= 0.5 * (log(2 * M_PI * var) + r * r / var);
		}
	}
	free(done);
	free(blk);
	return lpd;
}

/*
 * The weight of the model against "every configuration scores the same"
 * (a seed offset and noise alone), as the logistic of a log Bayes factor
 * estimate; the null's seed and noise sds the best of a grid.
 *
 * The smooth model: the two log marginal likelihoods, the model charged
 * one nat per hyperparameter it adds (d lengthscales and its signal:
 * fitted, they explain some noise anyway).
 *
 * The model with configurations apart (one hyperparameter beyond the null,
 * its signal): the two held-out fits, each run's log density predicted
 * from the others summed (lpd, gp_loo; null_loo), less
 * CHOOSE_LOOK_CHARGE nats per e-fold of runs beyond CHOOSE_LOOK_FROM: the
 * choice is asked again after every run, and more looks at noise find more
 * that looks like a lead. In-sample, its marginal likelihood hardly tells
 * six runs of a plain lead from noise (issue 43); held out, the
 * baseline's runs are predicted by each other, not by the rest.
 */
static double signal_weight(const struct gp *g, double lpd, int apart)
{
	double best = -INFINITY, lbf, sn, ss;

	if (g->w || g->n < 2)
		return 1;
	for (sn = 0.1; sn <= 1.5; sn *= 1.1)
		for (ss = 0.005; ss <= 1.5; ss *= 1.25) {
			double l = apart ? null_loo(g, sn * sn, ss * ss) : null_lml(g, sn * sn, ss * ss);

			if (l > best)
				best = l;
		}
	if (apart)
		lbf = lpd - best - CHOOSE_LOOK_CHARGE *
			fmax(0, log((double)g->n / CHOOSE_LOOK_FROM));
	else
		lbf = g->lml - best - (double)(g->d + 1);
	return lbf > 40 ? 1 : 1 / (1 + exp(-lbf));
}

/* Runs on the grid that succeeded. */
static long runs_on_grid(const struct prop_input *in, const struct prop_model *pm)
{
	long k = 0;
	size_t i;

	for (i = 0; i < in->nruns; i++)
		k += in->runs[i].proven && in->runs[i].cfg >= 0 && pm->on[in->runs[i].cfg];
	return k;
}

/* Try the model; NULL when it is used, else why not (malloc'd). */
static char *try_model(const struct prop_input *in, long prev, struct choice *c)
{
	struct choose_model *m = c->m;
	struct prop_model apart;
	double mse;

	if (in->space == NULL || in->space->n == 0)
		return xstrdup("no search space (`xloop space set`)");
	if (prop_model_fit(in, 0, &m->pm) < 0)
		return xstrdup("no model could be fitted");
	m->have_pm = 1;
	gp_loo(&m->pm.g, &mse, &m->lpd);
	/* the smooth model, or the one with configurations apart when it
	 * predicts left-out runs plainly better */
	if (prop_model_fit(in, PROP_FIT_APART, &apart) == 0) {
		double amse, lpd;

		gp_loo(&apart.g, &amse, &lpd);
		if (lpd > m->lpd + CHOOSE_APART_MARGIN) {
			prop_model_release(&m->pm);
			m->pm = apart;
			m->lpd = lpd;
			mse = amse;
			c->apart = 1;
		} else {
			prop_model_release(&apart);
		}
	}
	if (!m->pm.on[prev])
		return xasprintf("the best so far (%s) is off the search space's grid",
				 in->v[prev].rep_tag);
	if (runs_on_grid(in, &m->pm) < CHOOSE_MIN_RUNS)
		return xasprintf("fewer than %d runs on the grid", CHOOSE_MIN_RUNS);
	if (m->pm.g.w == NULL) {
		c->loo_model = mse;
		c->loo_means = loo_means(in, &m->pm);
		if (c->loo_model > CHOOSE_LOO_WORSE * c->loo_means)
			return xasprintf("the model predicts left-out runs worse than the raw "
					 "means do (mean squared error %.3g against %.3g)",
					 c->loo_model, c->loo_means);
	}
	return NULL;
}

/* Paired evidence beside the model: the best moves when it is plain. */
static void paired_move(const struct prop_input *in, long prev, struct choice *c)
{
	struct paired e;

	if (paired_best(in, prev, 0, &e) < 0 || e.padj < 1 - CHOOSE_PAIRED_ALPHA)
		return;
	c->best = c->pick = e.cfg;
	c->p = e.padj;
	c->lead = e.lead;
	c->sd = e.se;
	c->paired = 1;
	c->pairs = (long)e.k;
}

/* Choose at CHOOSE_P. */
int choose_best(const struct prop_input *in, long prev, long last_pick, struct choice *c)
{
	return choose_best_at(in, prev, last_pick, CHOOSE_P, c);
}

/* Choose, moving at threshold to a pick that is not new. */
int choose_best_at(const struct prop_input *in, long prev, long last_pick, double threshold,
		   struct choice *c)
{
	double floor_sd = 0;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->pick = c->best = c->prev = -1;
	c->p = NAN;
	c->weight = 1;
	c->m = xcalloc(1, sizeof(*c->m));
	if (!eligible(in, prev))
		prev = eligible(in, in->baseline) ? in->baseline : -1;
	for (i = 0; i < in->n && prev < 0; i++)
		if (eligible(in, (long)i))
			prev = (long)i;
	if (prev < 0)
		return -1;
	c->prev = prev;
	c->why = try_model(in, prev, c);
	if (c->why == NULL) {
		c->source = CHOOSE_MODEL;
		c->pick = c->m->pm.top;
		c->weight = signal_weight(&c->m->pm.g, c->m->lpd, c->apart);
	} else {
		if (c->m->have_pm) {
			/* the noise the model fitted over every run bounds the replicates' from below */
			const struct gp *g = &c->m->pm.g;

			floor_sd = g->yscale * sqrt(exp(2 * g->theta[g->d + 1]) +
						    exp(2 * g->theta[g->d + 2]));
			prop_model_release(&c->m->pm);
			c->m->have_pm = 0;
		}
		c->source = in->noise.df > 0 ? CHOOSE_MEANS : CHOOSE_PLAIN;
		c->m->mean = xcalloc(in->n + 1, sizeof(*c->m->mean));
		c->m->var = xcalloc(in->n + 1, sizeof(*c->m->var));
		c->m->has = xcalloc(in->n + 1, sizeof(*c->m->has));
		if (c->source == CHOOSE_MEANS) {
			shrink(in, floor_sd, c->m);
		} else {
			for (i = 0; i < in->n; i++)
				if (eligible(in, (long)i)) {
					c->m->has[i] = 1;
					c->m->mean[i] = (in->p.goal_max ? 1 : -1) * in->v[i].st.mean;
				}
		}
		for (i = 0; i < in->n; i++)
			if (c->m->has[i] && (c->pick < 0 || c->m->mean[i] > c->m->mean[c->pick]))
				c->pick = (long)i;
	}
	c->best = prev;
	if (c->pick < 0 || c->pick == prev) {
		paired_move(in, prev, c);
		return 0;
	}
	c->p = choose_compare(c, in, c->pick, prev, &c->lead, &c->sd);
	if (isnan(c->p)) {
		/* plain means: a lead beyond a tie */
		double md = in->p.min_delta > 0 ? in->p.min_delta : 0;

		if (c->lead > md && c->lead > 1e-9 * (fabs(in->v[prev].st.mean) + 1))
			c->best = c->pick;
	} else if (c->p >= threshold) {
		c->short_runs = prop_seed_varies(in) && in->v[c->pick].st.n < PROP_PICK_RUNS;
		c->new_pick = !c->short_runs && c->pick != last_pick;
		if (!c->short_runs && !c->new_pick)
			c->best = c->pick;
	}
	if (c->best == prev)
		paired_move(in, prev, c);
	return 0;
}

/*
 * The degrees of freedom of the model's t: its noise is fitted on every run
 * it saw, less one per hyperparameter (the lengthscales, signal, noise and
 * seed), not only on the replicates the paired test counts; at least the
 * replicates' (with 48 runs and one replicated pair, a t on 1 df asked a
 * lead of 6.3 sd where the model knew its noise from all 48).
 */
static double model_df(const struct prop_input *in, const struct gp *g)
{
	double df = (double)(in->noise.df > 0 ? in->noise.df : 1);

	if (g->n > g->d + 3 && (double)(g->n - g->d - 3) > df)
		df = (double)(g->n - g->d - 3);
	return df;
}

/* The variance of every succeeded run's score about their mean (all configurations alike). */
static double spread_var(const struct prop_input *in)
{
	struct noise_cfg all = { 0 };
	size_t i;

	for (i = 0; i < in->nruns; i++)
		if (in->runs[i].proven && isfinite(in->runs[i].score))
			noise_add(&all, in->runs[i].score);
	return all.n > 1 ? all.ss / (double)(all.n - 1) : 0;
}

/* P(a better than b). */
double choose_compare(const struct choice *c, const struct prop_input *in, long a, long b,
		      double *lead, double *sd)
{
	const struct choose_model *m = c->m;
	double md = in->p.min_delta > 0 ? in->p.min_delta : 0, mu, var, df;

	*lead = *sd = 0;
	if (m == NULL || a < 0 || b < 0)
		return NAN;
	if (c->source == CHOOSE_MODEL) {
		const struct prop_model *pm = &m->pm;

		if (!pm->on[a] || !pm->on[b])
			return NAN;
		if (a == b)
			return 0;
		gp_predict_diff(&pm->g, pm->u + (size_t)a * pm->d, pm->u + (size_t)b * pm->d, &mu,
				&var);
		*lead = mu;
		*sd = sqrt(var > 0 ? var : 0);
		/*
		 * the t's degrees of freedom: with configurations apart the
		 * noise is known from the replicates alone
		 */
		df = c->apart ? (double)(in->noise.df > 0 ? in->noise.df : 1) : model_df(in, &pm->g);
		if (c->apart && in->noise.df > 0 && in->v[a].st.n > 0 && in->v[b].st.n > 0) {
			/*
			 * the lead's sd at least the moderated noise's: the
			 * replicates' variance pooled with CHOOSE_PRIOR_DF degrees
			 * of freedom of the spread of every run (as if all
			 * configurations scored the same), so one or two pairs
			 * that agreed by chance do not make the noise nil
			 */
			double s2 = (CHOOSE_PRIOR_DF * spread_var(in) +
				     (double)in->noise.df * in->noise.sd * in->noise.sd) /
				    (CHOOSE_PRIOR_DF + (double)in->noise.df);
			double f = sqrt(s2 * (1.0 / (double)in->v[a].st.n +
					      1.0 / (double)in->v[b].st.n));

			if (f > *sd) {
				*sd = f;
				if (df < (double)in->noise.df + CHOOSE_PRIOR_DF)
					df = (double)in->noise.df + CHOOSE_PRIOR_DF;
			}
		}
		/* the model's probability, weighed against no signal at all */
		return c->weight * (*sd == 0 ? mu > md : noise_t_cdf((mu - md) / *sd, df));
	} else {
		if (!m->has[a] || !m->has[b])
			return NAN;
		mu = m->mean[a] - m->mean[b];
		var = m->var[a] + m->var[b];
		if (c->source == CHOOSE_PLAIN) {
			*lead = mu;
			return NAN;
		}
	}
	*lead = mu;
	*sd = sqrt(var > 0 ? var : 0);
	if (*sd == 0)
		return mu > md && mu > 1e-9 * (fabs(in->v[b].st.mean) + 1) ? 1 : 0;
	/* the noise and the model's scale are estimates: Student's t on the noise's df */
	return noise_t_cdf((mu - md) / *sd, (double)(in->noise.df > 0 ? in->noise.df : 1));
}

/* A configuration's estimate. */
int choose_estimate(const struct choice *c, const struct prop_input *in, long i, double *mean,
		    double *sd)
{
	const struct choose_model *m = c->m;
	int sign = in->p.goal_max ? 1 : -1;
	double v;

	*mean = *sd = 0;
	if (m == NULL || i < 0 || (size_t)i >= in->n)
		return -1;
	if (c->source == CHOOSE_MODEL) {
		if (!m->pm.on[i])
			return -1;
		gp_predict(&m->pm.g, m->pm.u + (size_t)i * m->pm.d, mean, &v);
		*mean *= sign;
		*sd = sqrt(v);
		return 0;
	}
	if (!m->has[i])
		return -1;
	*mean = sign * m->mean[i];
	*sd = sqrt(m->var[i]);
	return 0;
}

void choice_release(struct choice *c)
{
	if (c->m) {
		if (c->m->have_pm)
			prop_model_release(&c->m->pm);
		free(c->m->mean);
		free(c->m->var);
		free(c->m->has);
		free(c->m);
	}
	free(c->why);
	memset(c, 0, sizeof(*c));
	c->pick = c->best = c->prev = -1;
}
