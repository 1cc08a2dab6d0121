/* Autopilot's changes: the one-variable move a Gaussian process over every run rates best. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/confkey.h"
#include "search/gp.h"
#include "search/propose-impl.h"
#include "lib/util.h"

/* Parents scored: the best this many by the model's mean, the best and branch's few too. */
#define PROP_PARENTS 10
/*
 * The acquisition: the upper confidence bound of the lead over the model's
 * best, mean + PROP_UCB_BETA sd (Vizier uses 1.8 on standardised scores).
 * Measured against expected improvement on test-search's peak (60 streams)
 * and the benchmark's studies (c) and (d): bench/search.py, BENCHMARKS.md.
 */
#define PROP_UCB_BETA 2.0
/* When none of theirs is left: the best this many. */
#define PROP_PARENTS_ALL 64
/* Beyond this many proven runs the model sees each configuration's mean (the best this many). */
#define PROP_RUNS_MAX 300
/* At most this many pending runs are fantasized. */
#define PROP_OPEN_MAX 64

/* Whether key is a configuration already run, queued or proposed. */
static int key_taken(const struct prop_input *in, const char *key)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		if (strcmp(in->v[i].key, key) == 0)
			return 1;
	for (i = 0; i < in->ntaken; i++)
		if (strcmp(in->taken[i], key) == 0)
			return 1;
	return 0;
}

/* 1 when a's mean is better than b's under the goal. */
static int better(const struct prop_input *in, long a, long b)
{
	double x = in->v[a].st.mean, y = in->v[b].st.mean;

	return in->p.goal_max ? x > y : x < y;
}

/* The position of value on sv's grid, 0 (first) to 1 (last); -1: off the grid. */
static double grid_pos(const struct space_var *sv, const char *value)
{
	long i = space_index(sv, value);
	double x, a, b;
	char *end;
	size_t k;

	if (sv->n < 2)
		return i == 0 ? 0 : -1;
	if (i >= 0)
		return (double)i / (double)(sv->n - 1);
	/* a number between two grid values: in between */
	x = strtod(value, &end);
	if (end == value || *end)
		return -1;
	for (k = 0; k + 1 < sv->n; k++) {
		a = strtod(sv->values[k], &end);
		if (*end)
			return -1;
		b = strtod(sv->values[k + 1], &end);
		if (*end)
			return -1;
		if ((a <= x && x <= b) || (b <= x && x <= a))
			return ((double)k + (x - a) / (b - a)) / (double)(sv->n - 1);
	}
	return -1;
}

/*
 * A configuration's grid positions into u (space->n; a log range's grid is
 * even in the log, so its positions are too); -1 when one is off the grid.
 */
static int positions(const struct prop_input *in, const char *config, double *u)
{
	size_t j;

	for (j = 0; j < in->space->n; j++) {
		char *cur = confkey_value(config, in->space->v[j].name);

		u[j] = cur ? grid_pos(&in->space->v[j], cur) : -1;
		free(cur);
		if (u[j] < 0)
			return -1;
	}
	return 0;
}

/* The index of seed among the distinct seed values so far (added), -1 for none. */
static long seed_id(const char **seen, size_t *nseen, const char *seed)
{
	size_t i;

	if (seed == NULL || !*seed)
		return -1;
	for (i = 0; i < *nseen; i++)
		if (strcmp(seen[i], seed) == 0)
			return (long)i;
	seen[*nseen] = seed;
	return (long)(*nseen)++;
}

/* qsort's order of configuration indexes, best mean (goal max) first. */
static const struct prop_input *order_in;
static int by_mean(const void *a, const void *b)
{
	double x = order_in->v[*(const long *)a].st.mean, y = order_in->v[*(const long *)b].st.mean;

	if (!order_in->p.goal_max) {
		x = -x;
		y = -y;
	}
	return (x < y) - (x > y);
}

/*
 * Beyond PROP_RUNS_MAX proven runs: one point per configuration (its mean,
 * standing for its runs, no seed), the best PROP_RUNS_MAX by mean; into x,
 * y, seed, w. Returns how many.
 */
static size_t aggregate(const struct prop_input *in, const struct prop_model *m, double *x,
			double *y, long *seed, double *w)
{
	long *idx = xcalloc(in->n + 1, sizeof(*idx));
	size_t i, k = 0, d = m->d;

	for (i = 0; i < in->n; i++)
		if (m->on[i] && in->v[i].st.n > 0 && isfinite(in->v[i].st.mean))
			idx[k++] = (long)i;
	order_in = in;
	qsort(idx, k, sizeof(*idx), by_mean);
	if (k > PROP_RUNS_MAX)
		k = PROP_RUNS_MAX;
	for (i = 0; i < k; i++) {
		const struct prop_cfg *c = &in->v[idx[i]];

		memcpy(x + i * d, m->u + (size_t)idx[i] * d, d * sizeof(*x));
		y[i] = in->p.goal_max ? c->st.mean : -c->st.mean;
		seed[i] = -1;
		w[i] = (double)c->st.n;
	}
	free(idx);
	return k;
}

/* Free a model. */
void prop_model_release(struct prop_model *m)
{
	gp_release(&m->g);
	free(m->u);
	free(m->on);
	free(m->mean);
	free(m->seeds);
	memset(m, 0, sizeof(*m));
}

/* The seed-adjusted noise of in's proven runs (noise_resid). */
static void seed_adjusted(const struct prop_input *in, struct noise_est *out)
{
	struct noise_obs *o = xcalloc(in->nruns + 1, sizeof(*o));
	const char **sv = xcalloc(in->nruns + 1, sizeof(*sv));
	long *ids = xcalloc(in->nruns + 1, sizeof(*ids));
	size_t i, k = 0;

	for (i = 0; i < in->nruns; i++)
		sv[i] = in->runs[i].seed;
	noise_seed_ids(sv, in->nruns, ids);
	for (i = 0; i < in->nruns; i++)
		if (in->runs[i].proven && isfinite(in->runs[i].score)) {
			o[k].cfg = in->runs[i].cfg;
			o[k].seed = ids[i];
			o[k].score = in->runs[i].score;
			k++;
		}
	noise_resid(o, k, in->n, out);
	free(o);
	free(sv);
	free(ids);
}

/*
 * Fit the model to every proven run on the grid (scores turned round for
 * goal min: the model maximises) and, with fantasize, condition on the
 * pending runs at their posterior mean (kriging believer: the proposals
 * made while they run spread out); -1 when nothing can be fitted.
 */
int prop_model_fit(const struct prop_input *in, int flags, struct prop_model *m)
{
	size_t d = in->space->n, i, k = 0, nr = in->nruns ? in->nruns : in->n, nseen = 0, nobs = 0;
	double *x, *y, *w, sum = 0;
	long *pcfg, *pcnt;
	struct gp_opts o;
	const char **seen;
	long *seed;
	int rc;

	memset(m, 0, sizeof(*m));
	m->top = -1;
	if (d == 0 || in->n == 0)
		return -1;
	m->d = d;
	m->u = xcalloc(in->n * d, sizeof(*m->u));
	m->on = xcalloc(in->n, sizeof(*m->on));
	m->mean = xcalloc(in->n, sizeof(*m->mean));
	for (i = 0; i < in->n; i++)
		m->on[i] = positions(in, in->v[i].config, m->u + i * d) == 0;
	x = xcalloc(nr * d + 1, sizeof(*x));
	y = xcalloc(nr + 1, sizeof(*y));
	seed = xcalloc(nr + 1, sizeof(*seed));
	seen = xcalloc(nr + 1, sizeof(*seen));
	w = xcalloc(nr + 1, sizeof(*w));
	pcfg = xcalloc(nr + 1, sizeof(*pcfg));
	pcnt = xcalloc(nr + 1, sizeof(*pcnt));
	memset(&o, 0, sizeof(o));
	for (i = 0; i < nr; i++) {
		/* without runs (an old caller): each configuration's mean, no seed */
		long c = in->nruns ? in->runs[i].cfg : (long)i;
		double score = in->nruns ? in->runs[i].score : in->v[i].st.mean;
		int proven = in->nruns ? in->runs[i].proven || in->runs[i].partial :
			     in->v[i].st.n > 0;

		long sid, j = (long)k;

		if (!proven || c < 0 || (size_t)c >= in->n || !m->on[c] || !isfinite(score))
			continue;
		nobs++;
		sid = in->nruns ? seed_id(seen, &nseen, in->runs[i].seed) : -1;
		/*
		 * a configuration run again on a seed it had is one point (their
		 * mean): the same seed gives the same run, not a replicate, and
		 * two such runs would tell the model there is no noise
		 */
		if (sid >= 0 && k <= PROP_RUNS_MAX)
			for (j = 0; j < (long)k && !(pcfg[j] == c && seed[j] == sid); j++)
				;
		if (j < (long)k) {
			sum -= y[j];
			y[j] = (y[j] * (double)pcnt[j] + (in->p.goal_max ? score : -score)) /
			       (double)(pcnt[j] + 1);
			pcnt[j]++;
			sum += y[j];
			continue;
		}
		memcpy(x + k * d, m->u + (size_t)c * d, d * sizeof(*x));
		seed[k] = sid;
		pcfg[k] = c;
		pcnt[k] = 1;
		y[k] = in->p.goal_max ? score : -score;
		sum += y[k];
		k++;
	}
	free(pcfg);
	free(pcnt);
	m->nobs = nobs;
	m->npts = k;
	if (k > PROP_RUNS_MAX) {
		sum = 0;
		k = m->npts = aggregate(in, m, x, y, seed, w);
		for (i = 0; i < k; i++)
			sum += y[i];
		o.w = w;
	}
	/* when the scores do not vary yet: the noise's scale, or a hundredth of the level */
	o.scale_hint = in->noise.df > 0 && in->noise.sd > 0 ? in->noise.sd :
		       k ? 0.01 * (fabs(sum / (double)k) > 0 ? fabs(sum / (double)k) : 1) : 1;
	o.noise_sd = in->noise.sd;
	o.apart = (flags & PROP_FIT_APART) != 0;
	o.noise_df = in->nruns ? in->noise.df : 0;
	{
		/* the noise a run has beside its seed's offset (the model has a
		 * term for that): the seed-adjusted estimate when seeds are shared */
		struct noise_est resid;

		seed_adjusted(in, &resid);
		if (resid.df > 0) {
			o.noise_sd = resid.sd;
			o.noise_df = resid.df;
		}
	}
	rc = k == 0 ? -1 : gp_fit(&m->g, d, k, x, seed, y, &o);
	if (rc == 0 && (flags & PROP_FIT_FANTASIZE) && in->nruns) {
		size_t p = 0;

		for (i = 0; i < in->nruns; i++) {
			long c = in->runs[i].cfg;
			double v;

			if (!in->runs[i].open || c < 0 || (size_t)c >= in->n || !m->on[c] ||
			    p >= PROP_OPEN_MAX)
				continue;
			memcpy(x + p * d, m->u + (size_t)c * d, d * sizeof(*x));
			gp_predict(&m->g, x + p * d, &y[p], &v);
			seed[p] = -1;
			p++;
		}
		m->nopen = p;
		rc = gp_extend(&m->g, p, x, seed, y);
	}
	if (rc == 0) {
		for (i = 0; i < in->n; i++) {
			if (!m->on[i])
				continue;
			m->mean[i] = gp_mean(&m->g, m->u + i * d);
			if (in->v[i].st.n > 0 && in->v[i].rep_tag &&
			    (m->top < 0 || m->mean[i] > m->mean[m->top]))
				m->top = (long)i;
		}
	}
	free(x);
	free(y);
	free(w);
	free(seed);
	m->seeds = seen;
	m->nseeds = nseen;
	if (rc < 0 || m->top < 0) {
		prop_model_release(m);
		return -1;
	}
	return 0;
}

/* A score in the goal's units (the model maximises). */
static double goal_units(const struct prop_input *in, double v)
{
	return in->p.goal_max ? v : -v;
}

/* The model's best among the configurations run, and its lead over one. */
int prop_model_best(const struct prop_input *in, long over, long *idx, double *lead, double *sd)
{
	struct prop_model m;
	double mu, var;

	*idx = -1;
	*lead = *sd = 0;
	if (prop_model_fit(in, 0, &m) < 0)
		return -1;
	*idx = m.top;
	if (over >= 0 && (size_t)over < in->n && m.on[over]) {
		gp_predict_diff(&m.g, m.u + (size_t)m.top * m.d, m.u + (size_t)over * m.d, &mu, &var);
		*lead = mu;
		*sd = sqrt(var);
	} else if (over >= 0) {
		prop_model_release(&m);
		*idx = -1;
		return -1;
	}
	prop_model_release(&m);
	return 0;
}

/* The upper confidence bound of a lead with mean mu and sd s. */
static double upper_bound(double mu, double s)
{
	return mu + PROP_UCB_BETA * s;
}

/* The parents scored: the best want by the model's mean, and in->best. */
static size_t parents(const struct prop_input *in, const struct prop_model *m, long want, long *set)
{
	size_t k = 0, i, j;

	while ((long)k < want) {
		long pick = -1;

		for (i = 0; i < in->n; i++) {
			int dup = 0;

			if (!m->on[i] || in->v[i].st.n == 0 || in->v[i].rep_tag == NULL)
				continue;
			for (j = 0; j < k; j++)
				dup |= set[j] == (long)i;
			if (!dup && (pick < 0 || m->mean[i] > m->mean[pick]))
				pick = (long)i;
		}
		if (pick < 0)
			break;
		set[k++] = pick;
	}
	if (in->best >= 0 && m->on[in->best] && in->v[in->best].rep_tag) {
		for (j = 0; j < k && set[j] != in->best; j++)
			;
		if (j == k)
			set[k++] = in->best;
	}
	return k;
}

/* The move with the highest acquisition so far. */
struct move {
	long b, j, t;		/* parent, variable, value (-1: none yet) */
	double acq, mean, sd;	/* the acquisition, f's mean and sd there */
};

/*
 * The changes in flight, as lines: (parent, variable) for each pending
 * configuration with no proven run and a proven one that differs from it
 * in that one variable. The proposals in flight are a batch chosen
 * together: a line in flight gets no second change (another value of the
 * same variable from the same parent) while the others have a move left,
 * so the lanes measure different directions (issue 43 item 2).
 */
struct lines {
	long *cfg, *var;
	size_t n;
};

/* The lines of the changes in flight (struct lines). */
static void lines_init(const struct prop_input *in, const struct prop_model *m, struct lines *l)
{
	size_t c, p, j, d = m->d;

	l->cfg = xcalloc(in->n * d + 1, sizeof(*l->cfg));
	l->var = xcalloc(in->n * d + 1, sizeof(*l->var));
	l->n = 0;
	for (c = 0; c < in->n; c++) {
		if (!m->on[c] || in->v[c].open == 0 || in->v[c].st.n > 0)
			continue;
		for (p = 0; p < in->n; p++) {
			size_t diff = 0, at = 0;

			if (!m->on[p] || in->v[p].st.n == 0 || in->v[p].rep_tag == NULL)
				continue;
			for (j = 0; j < d && diff < 2; j++)
				if (m->u[c * d + j] != m->u[p * d + j]) {
					diff++;
					at = j;
				}
			if (diff == 1 && l->n < in->n * d) {
				l->cfg[l->n] = (long)p;
				l->var[l->n++] = (long)at;
			}
		}
	}
}

/* Free the lines. */
static void lines_release(struct lines *l)
{
	free(l->cfg);
	free(l->var);
	memset(l, 0, sizeof(*l));
}

/* Whether variable j of parent b is a line in flight (l NULL: none is). */
static int line_in_flight(const struct lines *l, long b, long j)
{
	size_t i;

	for (i = 0; l && i < l->n; i++)
		if (l->cfg[i] == b && l->var[i] == j)
			return 1;
	return 0;
}

/* Score every one-variable move of the parents set[0, k) off the lines l into *top. */
static void score_moves(const struct prop_input *in, const struct prop_model *m,
			const struct gp_ref *ref, const long *set, size_t k, const struct lines *l,
			struct move *top)
{
	size_t nv = in->space->n, b, j, t;
	double *u = xcalloc(nv + 1, sizeof(*u));

	for (b = 0; b < k; b++) {
		const struct prop_cfg *c = &in->v[set[b]];

		memcpy(u, m->u + (size_t)set[b] * nv, nv * sizeof(*u));
		for (j = 0; j < nv; j++) {
			const struct space_var *sv = &in->space->v[j];
			double keep = u[j];

			if (line_in_flight(l, set[b], (long)j))
				continue;
			for (t = 0; t < sv->n; t++) {
				double mu, var, acq, fm, fv;
				char *cfg, key[65];

				u[j] = sv->n > 1 ? (double)t / (double)(sv->n - 1) : 0;
				if (u[j] == keep)
					continue;
				cfg = confkey_with(c->config, sv->name, sv->values[t]);
				confkey_key(cfg, in->seed, key);
				free(cfg);
				if (key_taken(in, key))
					continue;
				gp_predict_vs(&m->g, u, ref, &fm, &fv, &mu, &var);
				acq = upper_bound(mu, sqrt(var));
				if (top->b >= 0 &&
				    (acq < top->acq || (acq == top->acq && fm <= top->mean)))
					continue;
				top->acq = acq;
				top->mean = fm;
				top->sd = sqrt(fv);
				top->b = set[b];
				top->j = (long)j;
				top->t = (long)t;
			}
			u[j] = keep;
		}
	}
	free(u);
}

/*
 * Of every one-variable move (any value on the grid) of the parents, the
 * one with the highest upper confidence bound of its lead in f over the
 * model's best among the configurations run (the difference's posterior,
 * so what they share does not count twice); never a configuration run, queued or
 * proposed, and first off the lines of the changes in flight (struct
 * lines). The parents: the best few by the model's mean and the best;
 * when none of their moves is left, the best PROP_PARENTS_ALL. 1 with
 * *out, 0 when the model cannot be fitted or no move is left.
 */
int prop_model_choice(const struct prop_input *in, struct prop_out *out)
{
	long *set = xcalloc(in->n + 2, sizeof(*set));
	long few = in->branch > PROP_PARENTS ? in->branch : PROP_PARENTS;
	struct move top = { -1, -1, -1, 0, 0, 0 };
	struct gp_ref ref;
	struct prop_model m;
	struct lines lines;
	int pass, kept_apart = 0;
	size_t k;

	if (prop_model_fit(in, PROP_FIT_FANTASIZE, &m) < 0) {
		free(set);
		return 0;
	}
	if (prop_value_pick(in, &m, out) || prop_value_paired(in, out)) {
		prop_model_release(&m);
		free(set);
		return 1;
	}
	gp_ref_init(&m.g, m.u + (size_t)m.top * m.d, &ref);
	lines_init(in, &m, &lines);
	/* off the lines in flight first; on them only when nothing else is left */
	for (pass = 0; pass < 2 && top.b < 0; pass++) {
		const struct lines *l = pass == 0 ? &lines : NULL;

		k = parents(in, &m, few, set);
		score_moves(in, &m, &ref, set, k, l, &top);
		if (top.b < 0 && (long)k >= few) {
			k = parents(in, &m, PROP_PARENTS_ALL, set);
			score_moves(in, &m, &ref, set, k, l, &top);
		}
		kept_apart = pass == 0 && lines.n > 0;
	}
	lines_release(&lines);
	{
		/* a confirming run only when it is worth more than the exploring one */
		double explore = 0;

		if (top.b >= 0) {
			double *u = xcalloc(m.d + 1, sizeof(*u));
			char *pseed = *in->seed ? confkey_value(in->v[top.b].config, in->seed) : NULL;
			const struct space_var *sv = &in->space->v[top.j];

			memcpy(u, m.u + (size_t)top.b * m.d, m.d * sizeof(*u));
			u[top.j] = sv->n > 1 ? (double)top.t / (double)(sv->n - 1) : 0;
			explore = prop_value_move(in, &m, u, pseed);
			free(u);
			free(pseed);
		}
		/* nothing left to explore: converged (replicates alone would never end) */
		if (top.b >= 0 && prop_value_replicate(in, &m, explore, out)) {
			gp_ref_release(&ref);
			prop_model_release(&m);
			free(set);
			return 1;
		}
	}
	if (top.b >= 0) {
		const struct prop_cfg *c = &in->v[top.b];
		const struct space_var *sv = &in->space->v[top.j];
		char *cur = confkey_value(c->config, sv->name), *pend;

		pend = !m.nopen ? xstrdup("") :
		       xasprintf(", %zu pending as the model expects%s", m.nopen, kept_apart ?
				 " (no second change of a variable from a parent while one "
				 "is in flight)" : "");
		out->kind = PROP_CHANGE;
		out->cfg = top.b;
		out->var = sv->name;
		out->value = xstrdup(sv->values[top.t]);
		out->config = confkey_with(c->config, sv->name, sv->values[top.t]);
		out->reason = xasprintf("%s %s -> %s from %s: model %.4g ± %.2g (best %s %.4g), "
					"UCB %+.2g; a Gaussian process over %zu runs%s%s", sv->name,
					cur ? cur : "?", sv->values[top.t], c->rep_tag,
					goal_units(in, top.mean), top.sd, in->v[m.top].rep_tag,
					goal_units(in, m.mean[m.top]), top.acq, m.nobs,
					m.g.w ? " (by configuration)" : "", pend);
		free(pend);
		free(cur);
	}
	gp_ref_release(&ref);
	prop_model_release(&m);
	free(set);
	return top.b >= 0;
}

/*
 * The best few proven configurations, highest mean first (the most
 * promising first, proven or not); the best is always one of them.
 */
static size_t branch_set(const struct prop_input *in, long branch, long *set)
{
	size_t k = 0, i, j;
	int has_best = 0;

	while ((long)k < branch) {
		long pick = -1;

		for (i = 0; i < in->n; i++) {
			int in_set = 0;

			if (in->v[i].st.n == 0 || in->v[i].rep_tag == NULL)
				continue;
			for (j = 0; j < k; j++)
				in_set |= set[j] == (long)i;
			if (!in_set && (pick < 0 || better(in, (long)i, pick)))
				pick = (long)i;
		}
		if (pick < 0)
			break;
		has_best |= pick == in->best;
		set[k++] = pick;
	}
	if (in->best >= 0 && !has_best) {
		if ((long)k >= branch && k > 0)
			k--;	/* the best takes the last place (branch 0: the only one) */
		set[k++] = in->best;
	}
	return k;
}

/* Without a model: an untried neighbour of the best few (branch of them), each variable in turn. */
static int want_neighbour(const struct prop_input *in, long branch, struct prop_out *out)
{
	long *set = xcalloc((size_t)branch + 2, sizeof(*set));
	size_t k = branch_set(in, branch, set), b, j, t;
	size_t nv = in->space->n;
	int found = 0;

	for (b = 0; b < k && !found; b++) {
		const struct prop_cfg *c = &in->v[set[b]];

		for (j = 0; j < nv && !found; j++) {
			const struct space_var *sv = &in->space->v[(in->turn + j) % nv];
			char *cur = confkey_value(c->config, sv->name);
			const char *nb[2];
			size_t nn;

			if (cur == NULL)
				continue;
			nn = space_neighbours(sv, cur, nb);
			for (t = 0; t < nn && !found; t++) {
				char *cfg = confkey_with(c->config, sv->name, nb[t]), key[65];

				confkey_key(cfg, in->seed, key);
				if (key_taken(in, key)) {
					free(cfg);
					continue;
				}
				out->kind = PROP_CHANGE;
				out->cfg = set[b];
				out->var = sv->name;
				out->value = xstrdup(nb[t]);
				out->config = cfg;
				out->reason = xasprintf("%s %s -> %s from %s (%g, n=%ld): %s", sv->name,
							cur, nb[t], c->rep_tag, c->st.mean, c->st.n,
							set[b] == in->best ?
							"an untried neighbour of the best" :
							"an untried neighbour of one of the best few "
							"(by mean)");
				found = 1;
			}
			free(cur);
		}
	}
	free(set);
	return found;
}

/* The change: the model's, else the neighbour walk, else converged. */
void prop_change(const struct prop_input *in, struct prop_out *out)
{
	if (want_neighbour(in, in->branch, out) || want_neighbour(in, 3 * in->branch, out))
		return;
	out->kind = PROP_NONE;
	out->reason = xstrdup(in->space->n == 0 ? "the search space is empty "
			      "(`xloop space set VAR=...`)" :
			      "converged: no untried one-variable change of the configurations "
			      "run is left in the space");
}
