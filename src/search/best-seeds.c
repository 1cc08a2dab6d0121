/* The seeds a configuration has and the one it gets next (replicates pair on common seeds). */
#include <stdlib.h>
#include <string.h>

#include "search/best.h"

/* Append a copy of s to v. */
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
