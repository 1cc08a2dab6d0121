/* The noise-aware best: configurations, their means, the promotion rule. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search/best.h"
#include "lib/buf.h"
#include "search/choose.h"
#include "search/confkey.h"
#include "search/propose.h"
#include "study.h"

/* A small stable number for the seed variable's name (kv holds integers). */
static long long seed_sig(const char *seed)
{
	unsigned long long h = 1469598103934665603ULL;

	for (; *seed; seed++)
		h = (h ^ (unsigned char)*seed) * 1099511628211ULL;
	return (long long)(h >> 2) + 1;
}

/* A run's configuration text from its job.sh (malloc'd; a line of its own when unreadable). */
static char *config_from_file(struct xl_ctx *ctx, const char *tag)
{
	char *path = run_job_path(ctx->root, ctx->cfg.study, tag);
	struct buf text = BUF_INIT;
	char *config = NULL, *cause = NULL;
	int err;

	if (study_read_script(path, &text, &err, &cause) < 0 ||
	    confkey_config(text.s, text.len, &config, &cause) < 0) {
		/* a configuration of its own: never the same as another run's */
		free(config);
		config = xasprintf("# %s: %s\n", tag, cause ? cause : "unreadable");
	}
	free(cause);
	free(path);
	buf_release(&text);
	return config;
}

/*
 * The last load, kept for the rest of the process: next and tick ask for
 * the best five times (reconcile, feed, the briefing), each a pass over
 * every run of the study. It stands while the connection has changed no
 * row (sqlite3_total_changes64), no other connection has committed (PRAGMA
 * data_version), no transaction is open (a rollback would not show) and
 * the settings it chose with are the same.
 */
static struct {
	int valid;
	unsigned long serial;	/* the connection (db_open's count) */
	long long changes, version;
	char *study, *seed;
	int goal_max;
	double min_delta, alpha;
	const void *space_v;
	size_t space_n;
	struct best_state bs;
} kept;

/* Forget the kept load (best_persist, best_forget, a new setting). */
static void kept_drop(void)
{
	if (kept.valid)
		best_release(&kept.bs);
	free(kept.study);
	free(kept.seed);
	memset(&kept, 0, sizeof(kept));
}

/* The connection's change counters, or -1 inside a transaction or on error. */
static int db_marks(struct db *db, long long *changes, long long *version)
{
	struct stmt q;
	int rc;

	if (!sqlite3_get_autocommit(db->h) || db_prepare_cached(db, &q, "PRAGMA data_version") < 0)
		return -1;
	rc = db_step(&q);
	*version = rc == SQLITE_ROW ? db_col_int64(&q, 0) : -1;
	db_finalize(&q);
	*changes = sqlite3_total_changes64(db->h);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Whether the kept load is the one ctx would make now. */
static int kept_fits(const struct xl_ctx *ctx, long long changes, long long version)
{
	return kept.valid && kept.serial == ctx->db.serial && kept.changes == changes &&
	       kept.version == version && strcmp(kept.study, ctx->cfg.study) == 0 &&
	       strcmp(kept.seed, ctx->cfg.search.seed) == 0 &&
	       kept.goal_max == ctx->cfg.goal_max && kept.min_delta == ctx->cfg.min_delta &&
	       kept.alpha == ctx->cfg.search.alpha &&
	       kept.space_v == (const void *)ctx->cfg.search.space.v &&
	       kept.space_n == ctx->cfg.search.space.n;
}

/* Store old runs' configurations and keys that the seed changed. */
int best_persist(struct xl_ctx *ctx)
{
	char kvkey[128];
	long long sig = seed_sig(ctx->cfg.search.seed);
	int all, rc = 0;
	struct run *v;
	size_t n, i;

	xsnprintf(kvkey, sizeof(kvkey), "config_seed:%s", ctx->cfg.study);
	all = db_kv_get(&ctx->db, kvkey) != sig;
	if ((all ? runs_list_configs(&ctx->db, ctx->cfg.study, &v, &n) :
	     runs_without_config(&ctx->db, ctx->cfg.study, &v, &n)) < 0)
		return -1;
	if (n == 0 && !all)
		return 0;
	if (db_begin_write(&ctx->db) < 0) {
		runs_free(v, n);
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		char key[65], *config = *v[i].config ? xstrdup(v[i].config) :
					config_from_file(ctx, v[i].tag);

		confkey_key(config, ctx->cfg.search.seed, key);
		if (strcmp(config, v[i].config) != 0 || strcmp(key, v[i].config_key) != 0)
			rc = runs_set_config(&ctx->db, v[i].id, config, key);
		free(config);
	}
	if (rc == 0 && all)
		rc = db_kv_set(&ctx->db, kvkey, sig);
	if (rc == 0)
		rc = db_commit(&ctx->db);
	else
		db_rollback(&ctx->db);
	runs_free(v, n);
	return rc;
}

/* Free the configurations. */
void best_release(struct best_state *bs)
{
	size_t i;

	for (i = 0; i < bs->n; i++) {
		free(bs->v[i].key);
		free(bs->v[i].config);
		free(bs->v[i].rep_tag);
	}
	for (i = 0; i < bs->nruns; i++)
		free(bs->runs[i].seed);
	free(bs->runs);
	free(bs->obs);
	noise_rule_release(&bs->rule);
	free(bs->slots);
	free(bs->v);
	free(bs->why);
	memset(bs, 0, sizeof(*bs));
	bs->best = bs->baseline = bs->pick = bs->prev = -1;
}

/* A hash of a key (FNV-1a). */
static size_t key_hash(const char *key)
{
	unsigned long long h = 1469598103934665603ULL;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 1099511628211ULL;
	return (size_t)h;
}

/* The configuration with key. */
long best_find_key(const struct best_state *bs, const char *key)
{
	size_t i;

	if (bs->nslots == 0)
		return -1;
	i = key_hash(key) & (bs->nslots - 1);
	while (bs->slots[i]) {
		if (strcmp(bs->v[bs->slots[i] - 1].key, key) == 0)
			return bs->slots[i] - 1;
		i = (i + 1) & (bs->nslots - 1);
	}
	return -1;
}

/* Put configuration at into a free slot. */
static void key_place(struct best_state *bs, long at)
{
	size_t i = key_hash(bs->v[at].key) & (bs->nslots - 1);

	while (bs->slots[i])
		i = (i + 1) & (bs->nslots - 1);
	bs->slots[i] = at + 1;
}

/* Put configuration at (its key is new) into the table, growing it. */
static void key_insert(struct best_state *bs, long at)
{
	size_t k;

	if (bs->n * 2 > bs->nslots) {
		free(bs->slots);
		bs->nslots = bs->nslots ? bs->nslots * 2 : 64;
		bs->slots = xcalloc(bs->nslots, sizeof(*bs->slots));
		for (k = 0; k < bs->n; k++)
			if ((long)k != at)
				key_place(bs, (long)k);
	}
	key_place(bs, at);
}

/* A prop_input over bs (v and runs malloc'd into *v, *runs: free them). */
static void input_of(const struct best_state *bs, const struct space *space, const char *seed,
		     struct prop_input *in, struct prop_cfg **pv, struct prop_run **pr)
{
	struct prop_cfg *v = xcalloc(bs->n + 1, sizeof(*v));
	struct prop_run *runs = xcalloc(bs->nruns + 1, sizeof(*runs));
	size_t i;

	for (i = 0; i < bs->n; i++) {
		v[i].key = bs->v[i].key;
		v[i].config = bs->v[i].config;
		v[i].rep_tag = bs->v[i].rep_id ? bs->v[i].rep_tag : NULL;
		v[i].st = bs->v[i].st;
		v[i].open = bs->v[i].open;
	}
	for (i = 0; i < bs->nruns; i++) {
		runs[i].cfg = bs->runs[i].cfg;
		runs[i].seed = bs->runs[i].seed;
		runs[i].proven = bs->runs[i].proven;
		runs[i].open = bs->runs[i].open;
		runs[i].score = bs->runs[i].score;
	}
	memset(in, 0, sizeof(*in));
	in->v = v;
	in->n = bs->n;
	in->runs = runs;
	in->nruns = bs->nruns;
	in->best = bs->best;
	in->baseline = bs->baseline;
	in->noise = bs->noise;
	in->p = bs->p;
	in->space = space;
	in->seed = seed;
	*pv = v;
	*pr = runs;
}

/* The best by the choice (choose.h), starting from start; the label beside it. */
static void choose_into(struct best_state *bs, const struct space *space, const char *seed,
			long start)
{
	struct prop_input in;
	struct prop_cfg *v;
	struct prop_run *runs;
	struct choice ch;

	input_of(bs, space, seed, &in, &v, &runs);
	if (choose_best(&in, start, &ch) == 0) {
		size_t i;

		/* every configuration's estimate, as the outlook shows the best's */
		for (i = 0; ch.source != CHOOSE_PLAIN && i < bs->n; i++)
			bs->v[i].has_est = choose_estimate(&ch, &in, (long)i, &bs->v[i].est,
							   &bs->v[i].est_sd) == 0;
		bs->best = ch.best;
		bs->pick = ch.pick;
		bs->prev = ch.prev;
		bs->p_pick = ch.p;
		bs->pick_short = ch.short_runs;
		bs->lead = ch.lead;
		bs->lead_sd = ch.sd;
		bs->source = ch.source;
		bs->why = ch.why ? xstrdup(ch.why) : NULL;
		bs->promotions = ch.best != ch.prev;
		/* the best's own estimate and its lead over the baseline */
		if (bs->best >= 0 && bs->v[bs->best].has_est) {
			bs->est = bs->v[bs->best].est;
			bs->est_sd = bs->v[bs->best].est_sd;
		}
		bs->p_base = bs->best != bs->baseline && bs->baseline >= 0 ?
			     choose_compare(&ch, &in, bs->best, bs->baseline, &bs->base_lead,
					    &bs->base_sd) : NAN;
	}
	choice_release(&ch);
	free(v);
	free(runs);
}

/* Duplicate a string that may be NULL. */
static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* A deep copy of src into dst. */
static void best_copy(struct best_state *dst, const struct best_state *src)
{
	size_t i;

	*dst = *src;
	dst->v = xcalloc(src->n + 1, sizeof(*dst->v));
	for (i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		dst->v[i].key = dup_or_null(src->v[i].key);
		dst->v[i].config = dup_or_null(src->v[i].config);
		dst->v[i].rep_tag = dup_or_null(src->v[i].rep_tag);
	}
	dst->runs = xcalloc(src->nruns + 1, sizeof(*dst->runs));
	for (i = 0; i < src->nruns; i++) {
		dst->runs[i] = src->runs[i];
		dst->runs[i].seed = dup_or_null(src->runs[i].seed);
	}
	dst->slots = src->slots ? xcalloc(src->nslots + 1, sizeof(*dst->slots)) : NULL;
	if (src->slots)
		memcpy(dst->slots, src->slots, src->nslots * sizeof(*dst->slots));
	dst->obs = xcalloc(src->nruns + 1, sizeof(*dst->obs));
	if (src->nobs)
		memcpy(dst->obs, src->obs, src->nobs * sizeof(*dst->obs));
	dst->rule.o = dst->obs;
	dst->rule.head = dst->rule.next = NULL;
	if (src->rule.head) {
		dst->rule.head = xcalloc(src->rule.ncfg + 1, sizeof(*dst->rule.head));
		memcpy(dst->rule.head, src->rule.head, (src->rule.ncfg + 1) * sizeof(long));
	}
	if (src->rule.next) {
		dst->rule.next = xcalloc(src->rule.n + 1, sizeof(*dst->rule.next));
		memcpy(dst->rule.next, src->rule.next, (src->rule.n + 1) * sizeof(long));
	}
	dst->why = dup_or_null(src->why);
}

static int best_load_db(struct xl_ctx *ctx, struct best_state *bs);

/* Group the runs and choose (the last load again while nothing changed). */
int best_load(struct xl_ctx *ctx, struct best_state *bs)
{
	long long changes, version;
	int marked = db_marks(&ctx->db, &changes, &version) == 0;

	if (marked && kept_fits(ctx, changes, version)) {
		best_copy(bs, &kept.bs);
		return 0;
	}
	if (best_load_db(ctx, bs) < 0)
		return -1;
	kept_drop();
	if (marked) {
		kept.serial = ctx->db.serial;
		kept.changes = changes;
		kept.version = version;
		kept.study = xstrdup(ctx->cfg.study);
		kept.seed = xstrdup(ctx->cfg.search.seed);
		kept.goal_max = ctx->cfg.goal_max;
		kept.min_delta = ctx->cfg.min_delta;
		kept.alpha = ctx->cfg.search.alpha;
		kept.space_v = ctx->cfg.search.space.v;
		kept.space_n = ctx->cfg.search.space.n;
		best_copy(&kept.bs, bs);
		kept.valid = 1;
	}
	return 0;
}

/* Room for element n of an array that only grows: doubled at each power of two. */
static void *grow(void *v, size_t n, size_t size)
{
	return n & (n - 1) ? v : xreallocarray(v, n ? 2 * n : 1, size);
}

/* Group the runs and choose, from the DB. */
static int best_load_db(struct xl_ctx *ctx, struct best_state *bs)
{
	struct stmt q;
	const char *seed = ctx->cfg.search.seed;
	struct noise_cfg *st;
	char kvkey[128];
	size_t i;
	int rc, keys_current;

	memset(bs, 0, sizeof(*bs));
	bs->best = bs->baseline = bs->pick = bs->prev = -1;
	bs->p_pick = bs->p_base = NAN;
	xsnprintf(kvkey, sizeof(kvkey), "config_seed:%s", ctx->cfg.study);
	keys_current = db_kv_get(&ctx->db, kvkey) == seed_sig(seed);
	/* each run with its latest attempt's verdict and score */
	/* (both from the covering index attempt_latest of migration 6) */
	if (db_prepare(&ctx->db, &q, "SELECT r.id, r.tag, coalesce(c.config, ''),"
		       " r.parent_id IS NULL, coalesce(r.var, ''),"
		       " (SELECT verdict FROM attempt WHERE run_id = r.id ORDER BY n DESC LIMIT 1),"
		       " (SELECT score FROM attempt WHERE run_id = r.id ORDER BY n DESC LIMIT 1),"
		       " coalesce(c.config_key, '')"
		       " FROM run r LEFT JOIN run_config c ON c.run_id = r.id"
		       " WHERE +r.study = :study ORDER BY r.id") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		const char *tag = db_col_text(&q, 1);
		char *config = *db_col_text(&q, 2) ? xstrdup(db_col_text(&q, 2)) :
			       config_from_file(ctx, tag), key[65];
		const char *stored = db_col_text(&q, 7);
		struct best_cfg *c;
		struct best_run *br;
		int proven = strcmp(db_col_text(&q, 5), "success") == 0 &&
			     !db_col_is_null(&q, 6);
		int replicate = *seed && strcmp(db_col_text(&q, 4), seed) == 0;
		long at;

		/* the stored key is current while the seed variable is unchanged */
		if (keys_current && *db_col_text(&q, 2) && strlen(stored) == 64)
			memcpy(key, stored, 65);
		else
			confkey_key(config, seed, key);
		at = best_find_key(bs, key);
		if (at < 0) {
			bs->v = grow(bs->v, bs->n, sizeof(*bs->v));
			c = &bs->v[bs->n];
			memset(c, 0, sizeof(*c));
			c->key = xstrdup(key);
			c->config = xstrdup(config);
			c->first_id = db_col_int64(&q, 0);
			at = (long)bs->n++;
			key_insert(bs, at);
		}
		bs->runs = grow(bs->runs, bs->nruns, sizeof(*bs->runs));
		br = &bs->runs[bs->nruns++];
		br->id = db_col_int64(&q, 0);
		br->cfg = at;
		br->seed = *seed ? confkey_value(config, seed) : NULL;
		br->proven = proven;
		br->open = db_col_is_null(&q, 5);
		br->score = proven ? sqlite3_column_double(q.st, 6) : 0;
		free(config);
		c = &bs->v[at];
		c->runs++;
		if (db_col_is_null(&q, 5))
			c->open++;
		else if (!proven)
			c->failed++;
		if (!proven)
			continue;
		noise_add(&c->st, sqlite3_column_double(q.st, 6));
		if (c->rep_id == 0 || (!replicate && c->rep_is_replicate)) {
			free(c->rep_tag);
			c->rep_id = db_col_int64(&q, 0);
			c->rep_tag = xstrdup(tag);
			c->rep_is_replicate = replicate;
		}
		if (bs->baseline < 0 && db_col_int64(&q, 3))
			bs->baseline = at;
	}
	db_finalize(&q);
	if (rc != SQLITE_DONE) {
		best_release(bs);
		return -1;
	}
	st = xcalloc(bs->n + 1, sizeof(*st));
	for (i = 0; i < bs->n; i++)
		st[i] = bs->v[i].st;
	{
		/* the proven runs, each with its seed, for the paired rule */
		const char **sv = xcalloc(bs->nruns + 1, sizeof(*sv));
		long *ids = xcalloc(bs->nruns + 1, sizeof(*ids));

		for (i = 0; i < bs->nruns; i++)
			sv[i] = bs->runs[i].seed;
		noise_seed_ids(sv, bs->nruns, ids);
		bs->obs = xcalloc(bs->nruns + 1, sizeof(*bs->obs));
		for (i = 0; i < bs->nruns; i++) {
			if (!bs->runs[i].proven)
				continue;
			bs->obs[bs->nobs].cfg = bs->runs[i].cfg;
			bs->obs[bs->nobs].seed = ids[i];
			bs->obs[bs->nobs].score = bs->runs[i].score;
			bs->nobs++;
		}
		free(sv);
		free(ids);
	}
	bs->p.goal_max = ctx->cfg.goal_max;
	bs->p.min_delta = ctx->cfg.min_delta;
	bs->p.alpha = ctx->cfg.search.alpha;
	noise_rule_init(&bs->rule, bs->obs, bs->nobs, st, bs->n, &bs->p);
	if (!*seed) {
		/* no seed variable, no replicates: best is a plain comparison
		 * (runs that happen to share a configuration measure nothing) */
		memset(&bs->rule.within, 0, sizeof(bs->rule.within));
		memset(&bs->rule.resid, 0, sizeof(bs->rule.resid));
	}
	bs->noise = bs->rule.within;
	if (bs->baseline < 0)	/* no proven root: the first proven configuration */
		for (i = 0; i < bs->n && bs->baseline < 0; i++)
			if (bs->v[i].st.n > 0)
				bs->baseline = (long)i;
	if (bs->baseline >= 0) {
		/* sticky: start from the best remembered at the last verdict */
		long start = bs->baseline, last;

		xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
		last = best_find_run(bs, db_kv_get(&ctx->db, kvkey));
		if (last >= 0 && bs->v[last].st.n > 0)
			start = last;
		choose_into(bs, &ctx->cfg.search.space, seed, start);
	}
	free(st);
	return 0;
}

/* The configuration of a run. */
long best_find_run(const struct best_state *bs, long long run_id)
{
	size_t lo = 0, hi = bs->nruns;

	while (lo < hi) {	/* runs are in id order */
		size_t mid = lo + (hi - lo) / 2;

		if (bs->runs[mid].id == run_id)
			return bs->runs[mid].cfg;
		if (bs->runs[mid].id < run_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* What to show of configuration i. */
void best_info_of(const struct best_state *bs, long i, struct best_info *info)
{
	const struct best_cfg *c = &bs->v[i];

	info->mean = c->st.mean;
	info->n = c->st.n;
	info->sd = bs->noise.sd;
	info->df = bs->noise.df;
	info->checked = bs->noise.df > 0;
	info->half = noise_halfwidth(&bs->noise, c->st.n);
	if (c->has_est && (bs->source == CHOOSE_MODEL || bs->source == CHOOSE_MEANS)) {
		info->est_kind = bs->source == CHOOSE_MODEL ? "model" : "shrunken mean";
		info->est = c->est;
		info->est_sd = c->est_sd;
	} else {
		/* plain means: the mean, its sd the noise's over sqrt(n) */
		info->est_kind = "mean";
		info->est = c->st.mean;
		info->est_sd = info->checked && c->st.n > 0 ?
			       bs->noise.sd / sqrt((double)c->st.n) : 0;
	}
}

/* The best run. */
int best_get(struct xl_ctx *ctx, struct run *r, struct best_info *info)
{
	struct best_state bs;
	int rc;

	if (best_load(ctx, &bs) < 0)
		return -1;
	if (bs.best < 0) {
		best_release(&bs);
		return 1;
	}
	if (info)
		best_info_of(&bs, bs.best, info);
	rc = runs_get(&ctx->db, ctx->cfg.study, bs.v[bs.best].rep_tag, r);
	best_release(&bs);
	return rc;
}

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

static void push(char ***v, size_t *n, const char *s)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

/* Whether s is one of v's n strings. */
static int has(char **v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Configuration cfg's seeds: its runs' (every run when all, else those
 * that succeeded or have no verdict yet), in run order, then the seed
 * changes waiting for it: queued plan entries from one of its runs (or
 * from "best" when it is the best) and autopilot's proposals (every one
 * when all, else those not failed).
 */
static char **seeds_of(struct xl_ctx *ctx, const struct best_state *bs, long cfg, int all,
		       size_t *n)
{
	const char *seed = ctx->cfg.search.seed;
	struct stmt q;
	char **v = NULL;
	size_t i;

	*n = 0;
	if (cfg < 0)
		return NULL;
	for (i = 0; i < bs->nruns; i++)
		if (bs->runs[i].cfg == cfg && bs->runs[i].seed &&
		    (all || bs->runs[i].proven || bs->runs[i].open))
			push(&v, n, bs->runs[i].seed);
	if (db_prepare(&ctx->db, &q, "SELECT p.value, p.parent = 'best',"
		       " (SELECT r.id FROM run r WHERE r.study = p.study AND r.tag = p.parent)"
		       " FROM plan p WHERE p.study = :study AND p.status = 'queued'"
		       " AND p.var = :seed ORDER BY p.id") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		db_bind_text(&q, ":seed", seed);
		while (db_step(&q) == SQLITE_ROW) {
			long of = db_col_int64(&q, 1) ? bs->best :
				  best_find_run(bs, db_col_int64(&q, 2));

			if (of == cfg)
				push(&v, n, db_col_text(&q, 0));
		}
		db_finalize(&q);
	}
	if (db_prepare(&ctx->db, &q, "SELECT value FROM proposal WHERE study = :study"
		       " AND var = :seed AND config_key = :key"
		       " AND (:all OR status <> 'failed') ORDER BY id") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		db_bind_text(&q, ":seed", seed);
		db_bind_text(&q, ":key", bs->v[cfg].key);
		db_bind_int64(&q, ":all", all);
		while (db_step(&q) == SQLITE_ROW)
			push(&v, n, db_col_text(&q, 0));
		db_finalize(&q);
	}
	return v;
}

/* Seeds taken in a configuration. */
char **best_seeds_used(struct xl_ctx *ctx, const struct best_state *bs, long cfg,
			size_t *n)
{
	return seeds_of(ctx, bs, cfg, 1, n);
}

/* The first seed of ref's not in used. */
char *best_next_seed(struct xl_ctx *ctx, const struct best_state *bs, long ref,
		     char **used, size_t nused)
{
	size_t n, i;
	char **v = seeds_of(ctx, bs, ref, 0, &n), *s = NULL;

	for (i = 0; i < n && !s; i++)
		if (!has(used, nused, v[i]))
			s = xstrdup(v[i]);
	strv_free(v, n);
	return s;
}

/* Store the best's first run. */
int best_remember(struct xl_ctx *ctx)
{
	struct best_state bs;
	char kvkey[128];
	int rc = 0;

	if (best_load(ctx, &bs) < 0)
		return -1;
	xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
	if (bs.best >= 0 && db_kv_get(&ctx->db, kvkey) != bs.v[bs.best].first_id)
		rc = db_kv_set(&ctx->db, kvkey, bs.v[bs.best].first_id);
	best_release(&bs);
	return rc;
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
	buf_addf(&e, "- promotion by the %s: %s's configuration (mean %g, n=%ld) replaces %s's "
		 "(mean %g, n=%ld) as the best\n", choose_source_name(bs.source),
		 bs.v[bs.best].rep_tag, bs.v[bs.best].st.mean, bs.v[bs.best].st.n,
		 bs.v[last].rep_tag, bs.v[last].st.mean, bs.v[last].st.n);
	if (!isnan(bs.p_pick))
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
	*summary = xasprintf("best now %s (was %s) by the %s%s; %s", bs.v[bs.best].rep_tag,
			     bs.v[last].rep_tag, choose_source_name(bs.source),
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
	if (pick != b) {
		buf_addf(&t, "; the %s's pick %s is ", source, bs->v[pick].rep_tag);
		better_by(&t, bs->lead, bs->lead_sd);
		if (bs->pick_short)
			buf_addf(&t, " (P %.2f, but on %ld run: the best moves once it has %d)",
				 bs->p_pick, bs->v[pick].st.n, PROP_PICK_RUNS);
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

/* Start again from the baseline. */
int best_forget(struct xl_ctx *ctx)
{
	char kvkey[128];

	kept_drop();
	xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
	return db_kv_set(&ctx->db, kvkey, 0);
}
