/* What the best says: its score, its verdict lines, its promotion entry, the outlook. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "search/best.h"
#include "search/choose.h"
#include "study.h"

/* The headline estimate ± its sd, the raw mean and n beside it. */
void best_format(const struct best_info *info, char *buf, size_t size)
{
	const char *kind = info->est_kind && *info->est_kind ? info->est_kind : "mean";

	if (strcmp(kind, "mean") != 0)
		xsnprintf(buf, size, "%s %.4g ± %.2g (raw mean %g, n=%ld%s)", kind, info->est,
			  info->est_sd, info->mean, info->n,
			  !info->checked ? ", noise not measured" : "");
	else if (!info->checked)
		xsnprintf(buf, size, "mean %g (n=%ld, unchecked)", info->mean, info->n);
	else if (info->sd == 0)
		xsnprintf(buf, size, "mean %g (n=%ld, noise 0)", info->mean, info->n);
	else
		xsnprintf(buf, size, "mean %g ± %.2g (n=%ld)", info->mean, info->est_sd, info->n);
}

/* The best as JSON. */
json_t *best_json(const char *tag, const struct best_info *info)
{
	const char *kind = info->est_kind && *info->est_kind ? info->est_kind : "mean";

	return json_pack("{s:s, s:f, s:I, s:o, s:b, s:o, s:f, s:o, s:s}", "tag", tag,
			 "score", info->mean, "n", (json_int_t)info->n,
			 "interval", info->checked && info->sd > 0 ? json_real(info->half) :
			 info->checked ? json_real(0) : json_null(),
			 "checked", info->checked,
			 "noise_sd", info->checked ? json_real(info->sd) : json_null(),
			 "estimate", info->est_kind ? info->est : info->mean,
			 "estimate_sd", info->est_sd > 0 || info->checked ? json_real(info->est_sd) :
			 json_null(),
			 "estimate_kind", kind);
}

/*
 * The paired test's numbers: "paired on 3 common seeds (its first run, which
 * chose it, is not counted; at most 4): better by 0.004 (se 0.0011, df 14;
 * the test asks more than 0.006 score)", in the metric's units.
 */
static void test_text(const struct noise_cmp *cmp, const char *metric, struct buf *e)
{
	if (!cmp->checked)
		buf_addf(e, "means: %s by %g %s, noise unknown (unchecked)",
			 cmp->diff >= 0 ? "better" : "worse", fabs(cmp->diff), metric);
	else if (!cmp->paired)
		buf_addf(e, "means: %s by %g %s, noise 0 (exact)",
			 cmp->diff >= 0 ? "better" : "worse", fabs(cmp->diff), metric);
	else if (cmp->pairs == 0)
		buf_addf(e, "%s by %.3g %s on the first run's seed (not tested: no confirming run "
			 "on a common seed yet; one would need more than %.3g %s)",
			 cmp->diff >= 0 ? "better" : "worse", fabs(cmp->diff), metric, cmp->need,
			 metric);
	else
		buf_addf(e, "paired on %ld common seed%s (its first run, which chose it, is not "
			 "counted; at most %d): %s by %.3g %s (se %.3g, df %ld; the test asks more "
			 "than %.3g %s)", cmp->pairs, cmp->pairs == 1 ? "" : "s", NOISE_LOOKS,
			 cmp->diff >= 0 ? "better" : "worse", fabs(cmp->diff), metric, cmp->se,
			 cmp->df, cmp->need, metric);
}

/* One comparison line: "- vs parent T (0.95, n=3): paired on ...: not better". */
static void compare_line(const struct best_state *bs, long c, long o, const char *what,
			 const char *metric, struct buf *e)
{
	struct noise_cmp cmp;

	noise_compare(&bs->rule, c, o, &cmp);
	buf_addf(e, "- vs %s %s (mean %g, n=%ld): ", what, bs->v[o].rep_tag, bs->v[o].st.mean,
		 bs->v[o].st.n);
	test_text(&cmp, metric, e);
	buf_addf(e, ": %s\n", cmp.beats && !cmp.checked ? "better, not confirmed (noise not measured)" :
		 cmp.beats ? "confirmed better" :
		 cmp.wants_replicate ? "ahead, not confirmed yet" :
		 cmp.paired && cmp.pairs >= NOISE_LOOKS && cmp.diff > 0 ?
		 "ahead, not confirmed after every look" : "not confirmed better");
}

/* Compare a verdict's configuration with its parent and the best before. */
void best_verdict_lines(struct xl_ctx *ctx, long long attempt_id, const char *best_key,
			struct buf *e)
{
	struct best_state bs;
	struct stmt q;
	long long run_id = 0, parent_id = 0;
	long c, p = -1, b = -1;

	if (db_prepare(&ctx->db, &q, "SELECT t.run_id, coalesce(r.parent_id, 0)"
		       " FROM attempt t JOIN run r ON r.id = t.run_id WHERE t.id = :id") < 0)
		return;
	db_bind_int64(&q, ":id", attempt_id);
	if (db_step(&q) == SQLITE_ROW) {
		run_id = db_col_int64(&q, 0);
		parent_id = db_col_int64(&q, 1);
	}
	db_finalize(&q);
	if (run_id == 0 || best_load(ctx, &bs) < 0)
		return;
	c = best_find_run(&bs, run_id);
	if (parent_id)
		p = best_find_run(&bs, parent_id);
	if (best_key)
		b = best_find_key(&bs, best_key);
	if (c >= 0) {
		buf_addf(e, "- configuration: mean %g over n=%ld\n", bs.v[c].st.mean,
			 bs.v[c].st.n);
		if (p >= 0 && p != c && bs.v[p].st.n)
			compare_line(&bs, c, p, "parent", ctx->cfg.metric, e);
		else if (p == c)
			buf_adds(e, "- a replicate: its score joins its configuration's mean\n");
		if (b >= 0 && b != c && b != p)
			compare_line(&bs, c, b, "best", ctx->cfg.metric, e);
	}
	if (bs.best >= 0 && b >= 0 && b != bs.best)
		buf_addf(e, "- best now %s (was %s)%s\n", bs.v[bs.best].rep_tag, bs.v[b].rep_tag,
			 bs.best == c ? ": this configuration" : "");
	else if (bs.best >= 0 && b < 0)
		buf_addf(e, "- best now %s\n", bs.v[bs.best].rep_tag);
	else if (bs.best >= 0)
		buf_addf(e, "- best now %s (%s)\n", bs.v[bs.best].rep_tag,
			 bs.best == c ? "this configuration" : "unchanged");
	best_release(&bs);
}

/* The confirmation label of configuration c against the baseline (noise.h's paired test). */
static const char *confirm_text(const struct best_state *bs, long c, struct buf *t)
{
	struct noise_cmp cmp;

	if (c == bs->baseline) {
		buf_adds(t, "the baseline itself");
		return "the baseline";
	}
	noise_compare(&bs->rule, c, bs->baseline, &cmp);
	if (!cmp.checked) {
		buf_adds(t, "not confirmed yet: the noise is not measured (no replicates)");
		return "not confirmed yet";
	}
	if (cmp.beats && cmp.paired) {
		buf_addf(t, "confirmed better than %s on %ld common seed%s (its confirming runs: "
			 "the first run, which chose it, is not counted; paired test, help best)",
			 bs->v[bs->baseline].rep_tag, cmp.pairs, cmp.pairs == 1 ? "" : "s");
		return "confirmed";
	}
	if (cmp.beats) {
		buf_addf(t, "confirmed better than %s (noise 0: exact)", bs->v[bs->baseline].rep_tag);
		return "confirmed";
	}
	buf_addf(t, "not confirmed yet: %ld of %d confirming runs on %s's seeds (the first run, "
		 "which chose it, is not counted)", cmp.pairs, NOISE_LOOKS,
		 bs->v[bs->baseline].rep_tag);
	return cmp.pairs >= NOISE_LOOKS ? "not confirmed" : "not confirmed yet";
}

/* A promotion since the best was remembered: its entry. */
int best_promotion(struct xl_ctx *ctx, char **entry, char **once, char **summary)
{
	struct best_state bs;
	struct noise_cmp cmp;
	struct buf e = BUF_INIT, t = BUF_INIT;
	char kvkey[128], when[32];
	time_t now = time(NULL);
	struct tm tm;
	long last;

	*entry = *once = *summary = NULL;
	if (best_load(ctx, &bs) < 0)
		return -1;
	xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
	last = best_find_run(&bs, db_kv_get(&ctx->db, kvkey));
	if (bs.best < 0 || last < 0 || last == bs.best || bs.v[last].st.n == 0) {
		best_release(&bs);
		return 0;
	}
	/* the kind: the model's (P) and the paired test's label against the baseline */
	noise_compare(&bs.rule, bs.best, last, &cmp);
	if (bs.best != bs.baseline)
		confirm_text(&bs, bs.best, &t);
	else
		buf_adds(&t, "the baseline again");
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	buf_addf(&e, "## %s · best now %s (was %s), after %zu proven runs\n", when,
		 bs.v[bs.best].rep_tag, bs.v[last].rep_tag, bs.nobs);
	buf_addf(&e, "- promotion by %s%s: %s's configuration (mean %g, n=%ld) replaces %s's "
		 "(mean %g, n=%ld) as the best\n", bs.paired ? "" : "the ",
		 bs.paired ? "paired evidence" : choose_source_name(bs.source),
		 bs.v[bs.best].rep_tag, bs.v[bs.best].st.mean, bs.v[bs.best].st.n,
		 bs.v[last].rep_tag, bs.v[last].st.mean, bs.v[last].st.n);
	if (bs.paired)
		buf_addf(&e, "- paired evidence: better by %.3g ± %.2g than %s on %ld common seeds, "
			 "P %.4f (charged for every configuration with 2 runs) >= %.4f (help best)\n",
			 bs.lead, bs.lead_sd, bs.v[last].rep_tag, bs.pairs, bs.p_pick,
			 1 - CHOOSE_PAIRED_ALPHA);
	else if (!isnan(bs.p_pick))
		buf_addf(&e, "- the %s: better by %.3g ± %.2g than %s, P %.2f >= %.2f (help best)\n",
			 choose_source_name(bs.source), bs.lead, bs.lead_sd, bs.v[last].rep_tag,
			 bs.p_pick, CHOOSE_P);
	else
		buf_addf(&e, "- plain means: better by %.3g than %s (the noise is not measured yet)\n",
			 bs.lead, bs.v[last].rep_tag);
	buf_addf(&e, "- paired test: %s%s\n", t.s, cmp.beats && cmp.checked ? "" :
		 " (a label; it does not hold the best back)");
	*entry = xstrdup(e.s);
	*once = xasprintf(" · best now %s (was %s), after %zu proven runs\n",
			  bs.v[bs.best].rep_tag, bs.v[last].rep_tag, bs.nobs);
	*summary = xasprintf("best now %s (was %s) by %s%s%s; %s", bs.v[bs.best].rep_tag,
			     bs.v[last].rep_tag, bs.paired ? "" : "the ",
			     bs.paired ? "paired evidence" : choose_source_name(bs.source),
			     isnan(bs.p_pick) ? "" : " (P above the threshold)", t.s);
	buf_release(&e);
	buf_release(&t);
	best_release(&bs);
	return 1;
}

/* The lines of config a that b lacks (the seed's left out): "LR=0.15, DEPTH=1". */
static char *config_change(const char *a, const char *b, const char *seed)
{
	struct buf out = BUF_INIT;
	const char *line = a;
	size_t sl = strlen(seed);

	while (*line) {
		const char *nl = strchr(line, '\n'), *at;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int found = 0;

		for (at = b; *at && !found;) {
			const char *bn = strchr(at, '\n');
			size_t bl = bn ? (size_t)(bn - at) : strlen(at);

			found = bl == len && memcmp(at, line, len) == 0;
			at += bl + (bn != NULL);
		}
		if (!found && !(sl && len > sl && memcmp(line, seed, sl) == 0 && line[sl] == '='))
			buf_addf(&out, "%s%.*s", out.len ? ", " : "", (int)len, line);
		line += len + (nl != NULL);
	}
	if (out.len == 0) {
		buf_release(&out);
		return xstrdup("(the same assignments)");
	}
	return out.s;
}

/* "better by 0.0058 ± 0.002" (worse when lead < 0): the goal's direction said in words. */
static void better_by(struct buf *t, double lead, double sd)
{
	buf_addf(t, "%s by %.3g", lead >= 0 ? "better" : "worse", fabs(lead));
	if (sd > 0)
		buf_addf(t, " ± %.2g", sd);
}

/* The outlook. */
json_t *best_outlook(const struct best_state *bs, const struct space *space, const char *seed)
{
	long b = bs->best, pick = bs->pick;
	struct buf t = BUF_INIT;
	const char *state, *source = choose_source_name(bs->source);
	char *change, *interval;
	struct best_info bi;
	json_t *o;

	(void)space;
	if (b < 0 || pick < 0 || bs->baseline < 0)
		return json_null();
	best_info_of(bs, b, &bi);
	interval = !bi.checked ? xasprintf("n=%ld of its own runs, noise not measured", bi.n) :
		   xasprintf("from its own n=%ld runs and the noise sd %.3g (df %ld, pooled over "
			     "every configuration with replicates): it changes only when one of "
			     "these does", bi.n, bi.sd, bi.df);
	buf_addf(&t, "best: %s", bs->v[b].rep_tag);
	if (bs->source == CHOOSE_MODEL || bs->source == CHOOSE_MEANS)
		buf_addf(&t, ", %s %.4g ± %.2g", bs->source == CHOOSE_MODEL ? "model" :
			 "shrunken mean", bs->est, bs->est_sd);
	if (b != bs->baseline && !isnan(bs->p_base)) {
		buf_adds(&t, ", ");
		better_by(&t, bs->base_lead, bs->base_sd);
		buf_addf(&t, " than %s (P %.2f)", bs->v[bs->baseline].rep_tag, bs->p_base);
	} else if (b != bs->baseline) {
		buf_addf(&t, ", mean %g against %s's %g", bs->v[b].st.mean,
			 bs->v[bs->baseline].rep_tag, bs->v[bs->baseline].st.mean);
	}
	buf_adds(&t, "; ");
	state = confirm_text(bs, b, &t);
	if (bs->paired && b != bs->prev && bs->prev >= 0) {
		buf_addf(&t, "; moved on paired evidence: ");
		better_by(&t, bs->lead, bs->lead_sd);
		buf_addf(&t, " than %s on %ld common seeds (P %.4f, charged for every "
			 "configuration with 2 runs)", bs->v[bs->prev].rep_tag, bs->pairs, bs->p_pick);
	}
	if (pick != b) {
		buf_addf(&t, "; the %s's pick %s is ", source, bs->v[pick].rep_tag);
		better_by(&t, bs->lead, bs->lead_sd);
		if (bs->pick_short)
			buf_addf(&t, " (P %.2f, but on %ld run: the best moves once it has %d)",
				 bs->p_pick, bs->v[pick].st.n, PROP_PICK_RUNS);
		else if (bs->pick_new)
			buf_addf(&t, " (P %.2f, but the pick only since the last verdict: the best "
				 "moves to a pick that is still the pick at the next)", bs->p_pick);
		else if (!isnan(bs->p_pick))
			buf_addf(&t, " (P %.2f, under %.2f: the best stays)", bs->p_pick, CHOOSE_P);
		state = "pick not sure";
	}
	if (bs->why)
		buf_addf(&t, " [%s: %s]", source, bs->why);
	change = config_change(bs->v[pick].config, bs->v[b].config, seed);
	{
		struct noise_cmp cmp;

		int confirmed;

		noise_compare(&bs->rule, b, bs->baseline, &cmp);
		confirmed = b != bs->baseline && cmp.beats && cmp.checked;
		/* "proven": the old name of "confirmed", kept for scripts (the schema says so) */
		o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:I, s:i, s:b, s:b, s:s, s:s, s:s, s:o}",
			      "pick", bs->v[pick].rep_tag, "source", source, "change", change,
			      "lead", pick != b ? json_real(bs->lead) : json_real(0),
			      "se", pick != b && bs->lead_sd > 0 ? json_real(bs->lead_sd) : json_null(),
			      "p", isnan(bs->p_pick) || pick == b ? json_null() : json_real(bs->p_pick),
			      "pairs", (json_int_t)(b == bs->baseline ? 0 : cmp.pairs),
			      "looks", NOISE_LOOKS, "confirmed", confirmed, "proven", confirmed,
			      "state", state, "text", t.s, "interval", interval,
			      "why", bs->why ? json_string(bs->why) : json_null());
	}
	free(change);
	free(interval);
	buf_release(&t);
	return o;
}
