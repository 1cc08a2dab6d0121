/* Autopilot's proposals: replicates the rule needs, then untried neighbours. */
#include <stdlib.h>
#include <string.h>

#include "confkey.h"
#include "propose.h"
#include "util.h"

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

/* Whether more runs of c (up to the cap) could prove it better than the best. */
static int could_prove(const struct prop_input *in, long c, struct noise_cmp *cmp)
{
	struct noise_cfg at_cap = in->v[c].st;
	struct noise_est nz = in->noise;
	struct noise_cmp capped;

	noise_compare(&in->v[c].st, &in->v[in->best].st, &in->noise, &in->p, in->m, cmp);
	if (!cmp->wants_replicate)
		return 0;
	/* the runs that would confirm it also sharpen the noise estimate */
	at_cap.n = in->confirm_max;
	nz.df += in->confirm_max - in->v[c].st.n;
	noise_compare(&at_cap, &in->v[in->best].st, &nz, &in->p, in->m, &capped);
	return capped.beats;
}

static int pick_replicate(const struct prop_input *in, long c, const char *why,
			  struct prop_out *out)
{
	char *d = describe(in, c);

	out->kind = PROP_REPLICATE;
	out->cfg = c;
	out->var = in->seed;
	out->reason = xasprintf("replicate of %s (%s): %s", in->v[c].rep_tag, d, why);
	free(d);
	return 1;
}

/* Step 1: the replicates the noise rule needs. */
static int want_replicate(const struct prop_input *in, struct prop_out *out)
{
	long i, pick = -1;
	double lead = 0;
	struct noise_cmp cmp;

	if (!*in->seed || in->baseline < 0)
		return 0;
	if (in->v[in->baseline].st.n + in->v[in->baseline].open < in->replicates)
		return pick_replicate(in, in->baseline, "the noise is measured on the baseline "
				      "first", out);
	if (in->noise.df > 0 && in->noise.sd == 0)
		return 0;	/* deterministic: comparisons are exact */
	if (in->best >= 0 && in->v[in->best].st.n + in->v[in->best].open < in->replicates)
		return pick_replicate(in, in->best, "the best is compared on its mean", out);
	if (in->best < 0 || in->noise.df == 0)
		return 0;
	for (i = 0; i < (long)in->n; i++) {
		if (i == in->best || in->v[i].st.n == 0 || in->v[i].open > 0 ||
		    in->v[i].st.n >= in->confirm_max)
			continue;
		if (could_prove(in, i, &cmp) && (pick < 0 || cmp.diff > lead)) {
			pick = i;
			lead = cmp.diff;
		}
	}
	if (pick >= 0) {
		char *why;

		noise_compare(&in->v[pick].st, &in->v[in->best].st, &in->noise, &in->p, in->m,
			      &cmp);
		why = xasprintf("ahead of the best %s by %+g (%.2f noise units), not proven "
				"(needs > %.3g); confirming, at most %ld runs",
				in->v[in->best].rep_tag, cmp.diff, cmp.sigmas, cmp.need,
				in->confirm_max);
		pick_replicate(in, pick, why, out);
		free(why);
		return 1;
	}
	return 0;
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

/* Choose the next run. */
void propose_next(const struct prop_input *in, struct prop_out *out)
{
	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	/* the best few first; when their neighbours are all tried, a few more */
	if (want_replicate(in, out) || want_change(in, in->branch, out) ||
	    want_change(in, 3 * in->branch, out))
		return;
	out->kind = PROP_NONE;
	out->reason = xstrdup(in->space->n == 0 ? "the search space is empty "
			      "(`xloop space set VAR=...`)" :
			      "converged: no untried neighbour of the best few "
			      "configurations is left in the space");
}
