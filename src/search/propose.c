/* Autopilot's proposals: replicates the rule needs, then a change (propose-change.c). */
#include <stdlib.h>
#include <string.h>

#include "search/confkey.h"
#include "search/propose.h"
#include "search/propose-impl.h"
#include "util.h"

/* Runs of the budget per confirming replicate a candidate may get. */
#define PROP_CAP_SHARE 6

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

/* Confirming runs per candidate: search.confirm_max, more with a large budget. */
static long confirm_cap(const struct prop_input *in)
{
	long share = in->budget_runs / PROP_CAP_SHARE;

	return share > in->confirm_max ? share : in->confirm_max;
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
	at_cap.n = confirm_cap(in);
	/* its confirming runs keep the lead they show now */
	at_cap.mean = at_cap.first = noise_confirming_mean(&in->v[c].st);
	nz.df += at_cap.n - in->v[c].st.n;
	noise_compare(&at_cap, &in->v[in->best].st, &nz, &in->p, in->m, &capped);
	return capped.beats;
}

/* Whether one more run of c, keeping its mean, would prove it against the best as it is. */
static int proven_next(const struct prop_input *in, long c)
{
	struct noise_cfg next = in->v[c].st;
	struct noise_est nz = in->noise;
	struct noise_cmp cmp;

	next.n++;	/* the new run scores the mean so far */
	nz.df++;
	noise_compare(&next, &in->v[in->best].st, &nz, &in->p, in->m, &cmp);
	return cmp.beats;
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
	long i, pick = -1, up_front = in->replicates < 2 ? in->replicates : 2;
	double lead = 0;
	struct noise_cmp cmp;

	if (!*in->seed || in->baseline < 0)
		return 0;
	/* two runs measure the noise; the rest of search.replicates come when a
	 * candidate is compared with the best (below) */
	if (in->v[in->baseline].st.n + in->v[in->baseline].open < up_front)
		return pick_replicate(in, in->baseline, "the noise is measured on the baseline "
				      "first", out);
	if (in->noise.df > 0 && in->noise.sd == 0)
		return 0;	/* deterministic: comparisons are exact */
	if (in->best >= 0 && in->v[in->best].st.n + in->v[in->best].open < up_front)
		return pick_replicate(in, in->best, "the best is compared on its mean", out);
	if (in->best < 0 || in->noise.df == 0)
		return 0;
	for (i = 0; i < (long)in->n; i++) {
		if (i == in->best || in->v[i].st.n == 0 || in->v[i].open > 0 ||
		    in->v[i].st.n >= confirm_cap(in))
			continue;
		if (could_prove(in, i, &cmp) && (pick < 0 || cmp.diff > lead)) {
			pick = i;
			lead = cmp.diff;
		}
	}
	if (pick >= 0) {
		char *why;

		if (in->v[in->best].st.n + in->v[in->best].open < in->replicates &&
		    !proven_next(in, pick)) {
			why = xasprintf("%s is ahead of it, not proven: the best is compared on "
					"its mean of %ld runs", in->v[pick].rep_tag, in->replicates);
			pick_replicate(in, in->best, why, out);
			free(why);
			return 1;
		}
		noise_compare(&in->v[pick].st, &in->v[in->best].st, &in->noise, &in->p, in->m,
			      &cmp);
		why = xasprintf("ahead of the best %s by %+g (%.2f noise units), not proven "
				"(needs > %.3g); confirming, at most %ld runs",
				in->v[in->best].rep_tag, cmp.diff, cmp.sigmas, cmp.need,
				confirm_cap(in));
		pick_replicate(in, pick, why, out);
		free(why);
		return 1;
	}
	return 0;
}

/* Choose the next run. */
void propose_next(const struct prop_input *in, struct prop_out *out)
{
	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	if (want_replicate(in, out))
		return;
	prop_change(in, out);
}
