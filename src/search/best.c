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

/* Free the configurations (the last holder of a shared load frees them). */
void best_release(struct best_state *bs)
{
	size_t i;

	if (bs->refs && --*bs->refs > 0) {
		memset(bs, 0, sizeof(*bs));
		bs->best = bs->baseline = bs->pick = bs->prev = -1;
		return;
	}
	free(bs->refs);
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

/*
 * A hash of a key. A key is 64 hex digits of SHA-256 (confkey_key): its
 * first 16 are random enough, mixed in two multiplications (FNV-1a over
 * all 64, a byte at a time, was 3 % of status --json on 10,000 runs);
 * FNV-1a over a shorter one.
 */
static size_t key_hash(const char *key)
{
	unsigned long long h = 1469598103934665603ULL, a, b;

	if (strnlen(key, 16) == 16) {
		memcpy(&a, key, sizeof(a));
		memcpy(&b, key + 8, sizeof(b));
		h = (a ^ b * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
		return (size_t)(h ^ h >> 32);
	}
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
		runs[i].score = bs->runs[i].stopped ? bs->runs[i].last : bs->runs[i].score;
		/* a stopped run informs the choice's model, never the best (BENCHMARKS.md 8) */
		runs[i].partial = bs->runs[i].stopped;
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

/*
 * The best by the choice (choose.h), starting from start, moving by the
 * model only to last_pick (-1: none); the label beside it.
 */
static void choose_into(struct best_state *bs, const struct space *space, const char *seed,
			long start, long last_pick)
{
	struct prop_input in;
	struct prop_cfg *v;
	struct prop_run *runs;
	struct choice ch;

	input_of(bs, space, seed, &in, &v, &runs);
	if (choose_best(&in, start, last_pick, &ch) == 0) {
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
		bs->pick_new = ch.new_pick;
		bs->paired = ch.paired;
		bs->pairs = ch.pairs;
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

static int best_load_db(struct xl_ctx *ctx, struct best_state *bs);

/* Group the runs and choose (the last load again while nothing changed). */
int best_load(struct xl_ctx *ctx, struct best_state *bs)
{
	long long changes, version;
	int marked = db_marks(&ctx->db, &changes, &version) == 0;

	/* the kept load's arrays, shared (a deep copy of 10,000 runs cost next
	 * more than its queries: issue 47) */
	if (marked && kept_fits(ctx, changes, version)) {
		*bs = kept.bs;
		++*bs->refs;
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
		bs->refs = xmalloc(sizeof(*bs->refs));
		*bs->refs = 2;
		kept.bs = *bs;
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
		br->stopped = strcmp(db_col_text(&q, 5), "stopped") == 0 && !db_col_is_null(&q, 6);
		br->last = br->stopped ? sqlite3_column_double(q.st, 6) : 0;
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
		long start = bs->baseline, last, pick;

		xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
		last = best_find_run(bs, db_kv_get(&ctx->db, kvkey));
		if (last >= 0 && bs->v[last].st.n > 0)
			start = last;
		/* the pick remembered at a verdict with fewer proven runs (choose.h) */
		xsnprintf(kvkey, sizeof(kvkey), "best_pick:%s", ctx->cfg.study);
		pick = best_find_run(bs, db_kv_get(&ctx->db, kvkey));
		xsnprintf(kvkey, sizeof(kvkey), "best_pick_at:%s", ctx->cfg.study);
		if (pick >= 0 && db_kv_get(&ctx->db, kvkey) >= (long long)bs->nobs)
			pick = -1;
		choose_into(bs, &ctx->cfg.search.space, seed, start, pick);
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

/*
 * Store the best's first run, and the pick's with the proven runs there
 * were when it became the pick (a pick that stays keeps its first count).
 */
int best_remember(struct xl_ctx *ctx)
{
	struct best_state bs;
	char kvkey[128], atkey[128];
	int rc = 0;

	if (best_load(ctx, &bs) < 0)
		return -1;
	xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
	if (bs.best >= 0 && db_kv_get(&ctx->db, kvkey) != bs.v[bs.best].first_id)
		rc = db_kv_set(&ctx->db, kvkey, bs.v[bs.best].first_id);
	xsnprintf(kvkey, sizeof(kvkey), "best_pick:%s", ctx->cfg.study);
	xsnprintf(atkey, sizeof(atkey), "best_pick_at:%s", ctx->cfg.study);
	if (rc == 0 && bs.pick >= 0 && db_kv_get(&ctx->db, kvkey) != bs.v[bs.pick].first_id &&
	    (db_kv_set(&ctx->db, atkey, (long long)bs.nobs) < 0 ||
	     db_kv_set(&ctx->db, kvkey, bs.v[bs.pick].first_id) < 0))
		rc = -1;
	best_release(&bs);
	return rc;
}

/* Start again from the baseline. */
int best_forget(struct xl_ctx *ctx)
{
	char kvkey[128];

	kept_drop();
	xsnprintf(kvkey, sizeof(kvkey), "best_pick:%s", ctx->cfg.study);
	if (db_kv_set(&ctx->db, kvkey, 0) < 0)
		return -1;
	xsnprintf(kvkey, sizeof(kvkey), "best_run:%s", ctx->cfg.study);
	return db_kv_set(&ctx->db, kvkey, 0);
}
