/* Autopilot's proposals: replicates the rule needs (propose-confirm.c), then the surface's choice of change. */
#include <stdlib.h>
#include <string.h>

#include "search/confkey.h"
#include "search/propose.h"
#include "search/surface.h"
#include "util.h"

/*
 * How optimistic the surface's choice is: predicted mean + PROP_KAPPA sd
 * (half an sd: a whole one sent the first runs to the corners of the space,
 * measured by bench/search.py).
 */
#define PROP_KAPPA 0.5

/* Free a proposal. */
void prop_out_release(struct prop_out *out)
{
	free(out->value);
	free(out->config);
	free(out->reason);
	memset(out, 0, sizeof(*out));
}

/* "0.953 ± sd 0.004, n=3" of a configuration. */
static char *describe(const struct prop_input *in, long i)
{
	const struct prop_cfg *c = &in->v[i];

	if (in->noise.df > 0)
		return xasprintf("%g, n=%ld, noise sd %.3g", c->st.mean, c->st.n, in->noise.sd);
	return xasprintf("%g, n=%ld", c->st.mean, c->st.n);
}

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

/* 1 when a is better than b under the goal. */
static int better(const struct prop_input *in, long a, long b)
{
	double x = in->v[a].st.mean, y = in->v[b].st.mean;

	return in->p.goal_max ? x > y : x < y;
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
		if ((long)k >= branch)
			k--;
		set[k++] = in->best;
	}
	return k;
}

/* Step 2: an untried neighbour of the best few (branch of them). */
static int want_change(const struct prop_input *in, long branch, struct prop_out *out)
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
				char *cfg = confkey_with(c->config, sv->name, nb[t]), key[65], *d;

				confkey_key(cfg, in->seed, key);
				if (key_taken(in, key)) {
					free(cfg);
					continue;
				}
				d = describe(in, set[b]);
				out->kind = PROP_CHANGE;
				out->cfg = set[b];
				out->var = sv->name;
				out->value = xstrdup(nb[t]);
				out->config = cfg;
				out->reason = xasprintf("%s %s -> %s from %s (%s): %s", sv->name, cur,
							nb[t], c->rep_tag, d, set[b] == in->best ?
							"an untried neighbour of the best" :
							"an untried neighbour of one of the best few "
							"(by mean)");
				free(d);
				found = 1;
			}
			free(cur);
		}
	}
	free(set);
	return found;
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

/* qsort's order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A configuration's grid positions into u (space->n); -1 when one is off the grid. */
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

/*
 * The surface through every proven configuration on the grid, each weighted
 * by its runs; -1: none. Scores below the median count as the median: a
 * run far below the best says only "bad here", and its depth would bend
 * the quadratic where the best are.
 */
static int fit_surface(const struct prop_input *in, struct surface *s, size_t *npts)
{
	size_t d = in->space->n, i, k = 0;
	double *u = xcalloc(in->n * d + 1, sizeof(*u)), *y = xcalloc(in->n + 1, sizeof(*y));
	double *w = xcalloc(in->n + 1, sizeof(*w));
	int rc;

	for (i = 0; i < in->n; i++) {
		if (in->v[i].st.n == 0 || positions(in, in->v[i].config, u + k * d) < 0)
			continue;
		/* the surface is maximised: goal min turns the scores round */
		y[k] = in->p.goal_max ? in->v[i].st.mean : -in->v[i].st.mean;
		w[k] = (double)in->v[i].st.n;
		k++;
	}
	if (k > 2) {
		double *sorted = xcalloc(k, sizeof(*sorted)), floor_y;

		memcpy(sorted, y, k * sizeof(*y));
		qsort(sorted, k, sizeof(*sorted), cmp_double);
		floor_y = sorted[(k - 1) / 2];
		for (i = 0; i < k; i++)
			if (y[i] < floor_y)
				y[i] = floor_y;
		free(sorted);
	}
	*npts = k;
	rc = d == 0 ? -1 : surface_fit(s, d, u, y, w, k, in->noise.df > 0 ? in->noise.sd : 0);
	free(u);
	free(y);
	free(w);
	return rc;
}

/*
 * Step 2 with a surface: of every one-variable change of the best few (any
 * value of the variable, near or far), the one the surface rates highest
 * optimistically (predicted mean + PROP_KAPPA sd).
 */
static int want_surface_change(const struct prop_input *in, long branch, struct prop_out *out)
{
	long *set = xcalloc((size_t)branch + 2, sizeof(*set));
	size_t k = branch_set(in, branch, set), nv = in->space->n, b, j, t, npts;
	double *u = xcalloc(nv + 1, sizeof(*u)), top = 0, top_m = 0, top_sd = 0;
	long top_b = -1, top_j = -1, top_t = -1;
	struct surface s;

	if (fit_surface(in, &s, &npts) < 0) {
		free(set);
		free(u);
		return 0;
	}
	for (b = 0; b < k; b++) {
		const struct prop_cfg *c = &in->v[set[b]];

		if (positions(in, c->config, u) < 0)
			continue;
		for (j = 0; j < nv; j++) {
			const struct space_var *sv = &in->space->v[(in->turn + j) % nv];
			size_t jj = (in->turn + j) % nv;
			double keep = u[jj];

			for (t = 0; t < sv->n; t++) {
				double m, sd, score;
				char *cfg, key[65];

				u[jj] = sv->n > 1 ? (double)t / (double)(sv->n - 1) : 0;
				if (u[jj] == keep)
					continue;
				surface_predict(&s, u, &m, &sd);
				score = m + PROP_KAPPA * sd;
				if (top_b >= 0 && score <= top)
					continue;
				cfg = confkey_with(c->config, sv->name, sv->values[t]);
				confkey_key(cfg, in->seed, key);
				free(cfg);
				if (key_taken(in, key))
					continue;
				top = score;
				top_m = m;
				top_sd = sd;
				top_b = set[b];
				top_j = (long)jj;
				top_t = (long)t;
			}
			u[jj] = keep;
		}
	}
	if (top_b >= 0) {
		const struct prop_cfg *c = &in->v[top_b];
		const struct space_var *sv = &in->space->v[top_j];
		char *cur = confkey_value(c->config, sv->name), *d = describe(in, top_b);

		out->kind = PROP_CHANGE;
		out->cfg = top_b;
		out->var = sv->name;
		out->value = xstrdup(sv->values[top_t]);
		out->config = confkey_with(c->config, sv->name, sv->values[top_t]);
		out->reason = xasprintf("%s %s -> %s from %s (%s): the most promising one-variable "
					"change of the best few by a quadratic fit over %zu "
					"configurations (predicted %.4g ± %.2g)", sv->name,
					cur ? cur : "?", sv->values[top_t], c->rep_tag, d, npts,
					in->p.goal_max ? top_m : -top_m, top_sd);
		free(cur);
		free(d);
	}
	surface_release(&s);
	free(set);
	free(u);
	return top_b >= 0;
}

/* Choose the next run. */
void propose_next(const struct prop_input *in, struct prop_out *out)
{
	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	if (propose_confirm(in, out))
		return;
	/* while the best few have an untried neighbour, the surface chooses among
	 * all their changes; then the neighbours of a few more; then converged */
	if (want_change(in, in->branch, out)) {
		struct prop_out sf;

		memset(&sf, 0, sizeof(sf));
		if (want_surface_change(in, in->branch, &sf)) {
			prop_out_release(out);
			*out = sf;
		}
		return;
	}
	if (want_change(in, 3 * in->branch, out))
		return;
	out->kind = PROP_NONE;
	out->reason = xstrdup(in->space->n == 0 ? "the search space is empty "
			      "(`xloop space set VAR=...`)" :
			      "converged: no untried neighbour of the best few "
			      "configurations is left in the space");
}
