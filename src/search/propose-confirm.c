/*
 * Autopilot's replicates (pure): the runs the paired rule (noise.h) needs,
 * on common seeds. In this order: the baseline until it has 2 runs (the
 * noise is measured there first), the best likewise; then the challenger
 * with the largest lead over the best that is not confirmed better and could
 * be (its lead beats what the rule would ask after NOISE_LOOKS confirming
 * pairs), at most NOISE_CHALLENGERS of them alive at once: it runs on the
 * next seed the best has and it lacks, in the best's order; when it has
 * every seed of the best, the best gets a fresh one first.
 */
#include <stdlib.h>
#include <string.h>

#include "search/propose-impl.h"
#include "lib/util.h"

/* The rule over in's runs. */
static void rule_of(const struct prop_input *in, struct noise_rule *r, struct noise_obs **obs)
{
	struct noise_cfg *st = xcalloc(in->n + 1, sizeof(*st));
	const char **sv = xcalloc(in->nruns + 1, sizeof(*sv));
	long *ids = xcalloc(in->nruns + 1, sizeof(*ids));
	size_t i, k = 0;

	for (i = 0; i < in->n; i++)
		st[i] = in->v[i].st;
	for (i = 0; i < in->nruns; i++)
		sv[i] = in->runs[i].seed;
	noise_seed_ids(sv, in->nruns, ids);
	*obs = xcalloc(in->nruns + 1, sizeof(**obs));
	for (i = 0; i < in->nruns; i++) {
		if (!in->runs[i].proven)
			continue;
		(*obs)[k].cfg = in->runs[i].cfg;
		(*obs)[k].seed = ids[i];
		(*obs)[k].score = in->runs[i].score;
		k++;
	}
	noise_rule_init(r, *obs, k, st, in->n, &in->p);
	free(st);
	free(sv);
	free(ids);
}

/* A replicate of c on seed (NULL: a fresh one). */
static int pick(const struct prop_input *in, long c, const char *seed, char *why,
		struct prop_out *out)
{
	const struct prop_cfg *v = &in->v[c];

	out->kind = PROP_REPLICATE;
	out->cfg = c;
	out->var = in->seed;
	out->value = seed ? xstrdup(seed) : NULL;
	if (in->noise.df > 0)
		out->reason = xasprintf("replicate of %s (%g, n=%ld, noise sd %.3g) on %s: %s",
					v->rep_tag, v->st.mean, v->st.n, in->noise.sd,
					seed ? "a seed the best has" : "a fresh seed", why);
	else
		out->reason = xasprintf("replicate of %s (%g, n=%ld) on %s: %s", v->rep_tag,
					v->st.mean, v->st.n, seed ? "a seed the best has" :
					"a fresh seed", why);
	free(why);
	return 1;
}

/* The challengers the rule could confirm: the one with the largest lead, -1. */
static long choose_challenger(const struct prop_input *in, const struct noise_rule *r,
			      struct noise_cmp *best_cmp)
{
	long i, top = -1, alive = 0;
	double all = noise_need(r, NOISE_LOOKS);
	struct noise_cmp c;

	/* alive: confirming already (a pair or more), looks left */
	for (i = 0; i < (long)in->n; i++) {
		if (i == in->best || in->v[i].st.n == 0)
			continue;
		noise_compare(r, i, in->best, &c);
		alive += c.wants_replicate && c.pairs > 0;
	}
	for (i = 0; i < (long)in->n; i++) {
		if (i == in->best || in->v[i].st.n == 0 || in->v[i].open > 0 ||
		    in->v[i].rep_tag == NULL)
			continue;
		noise_compare(r, i, in->best, &c);
		if (!c.wants_replicate || c.diff <= all)
			continue;	/* no lead the rule could ever confirm */
		if (alive >= NOISE_CHALLENGERS && c.pairs == 0)
			continue;	/* a few at once */
		if (top < 0 || c.diff > best_cmp->diff) {
			top = i;
			*best_cmp = c;
		}
	}
	return top;
}

/* The baseline's runs up front. */
int propose_upfront(const struct prop_input *in, struct prop_out *out)
{
	long up_front = in->replicates < 2 ? in->replicates : 2;

	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	if (!*in->seed || in->baseline < 0)
		return 0;
	if (in->v[in->baseline].st.n + in->v[in->baseline].open < up_front)
		return pick(in, in->baseline, NULL,
			    xstrdup("the noise is measured on the baseline first"), out);
	return 0;
}

/* The replicates the rule needs; 1 when *out is one. */
int propose_confirm(const struct prop_input *in, struct prop_out *out)
{
	long up_front = in->replicates < 2 ? in->replicates : 2, c;
	struct noise_rule r;
	struct noise_obs *obs = NULL;
	struct noise_cmp cmp;
	const char *seed;
	int rc = propose_upfront(in, out);

	if (rc != 0 || !*in->seed || in->baseline < 0)
		return rc;
	if (in->noise.df > 0 && in->noise.sd == 0)
		return 0;	/* deterministic: comparisons are exact */
	if (in->best < 0)
		return 0;
	if (in->v[in->best].st.n + in->v[in->best].open < up_front)
		return pick(in, in->best, NULL, xstrdup("the best is compared on its mean"), out);
	if (in->noise.df == 0)
		return 0;
	rule_of(in, &r, &obs);
	memset(&cmp, 0, sizeof(cmp));
	c = choose_challenger(in, &r, &cmp);
	if (c >= 0) {
		char *lead = cmp.pairs ?
			     xasprintf("%+g on %ld common seed%s (its first run, which chose it, "
				       "is not counted)", cmp.diff, cmp.pairs,
				       cmp.pairs == 1 ? "" : "s") :
			     xasprintf("%+g on its first run", cmp.diff);

		seed = prop_seed_lacking(in, in->best, c);
		if (seed)
			rc = pick(in, c, seed, xasprintf(
				"confirming: ahead of the best %s by %s, not confirmed (the test "
				"asks more than %.3g, in the metric's units); "
				"confirming run %ld of at most %d on the best's seeds",
				in->v[in->best].rep_tag, lead, cmp.need, cmp.pairs + 1,
				NOISE_LOOKS), out);
		else if (in->v[in->best].open == 0)
			rc = pick(in, in->best, NULL, xasprintf(
				"%s is ahead of it by %s, not confirmed, and has every seed the best "
				"has: the best gets a fresh seed for the comparison",
				in->v[c].rep_tag, lead), out);
		free(lead);
	}
	noise_rule_release(&r);
	free(obs);
	return rc;
}
