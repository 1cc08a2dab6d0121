/* Configurations taken already: runs, autopilot's proposals, the plan. */
#include <stdlib.h>
#include <string.h>

#include "search/confkey.h"
#include "plan.h"
#include "tags.h"
#include "search/taken.h"

/* The configuration var=value from the run tagged parent makes (malloc'd), or NULL. */
static char *config_from(struct xl_ctx *ctx, const struct best_state *bs, const char *parent,
			 const char *var, const char *value)
{
	struct run r;
	long c;

	if (!parent || runs_get(&ctx->db, ctx->cfg.study, parent, &r) != 0)
		return NULL;
	c = best_find_run(bs, r.id);
	run_release(&r);
	return c < 0 ? NULL : confkey_with(bs->v[c].config, var, value);
}

/* 1 when config has the seed value of a replicate (seed NULL: any). */
static int same_seed(const char *config, const char *seedvar, const char *seed)
{
	char *v;
	int same;

	if (!seed)
		return 1;
	v = confkey_value(config, seedvar);
	same = v && value_same(v, seed);
	free(v);
	return same;
}

/* A run of configuration c (with that seed, when seed): its tag (malloc'd) or NULL. */
static char *run_with(struct xl_ctx *ctx, const struct best_state *bs, long c, const char *seed)
{
	size_t i;

	if (c < 0)
		return NULL;
	if (!seed)
		return runs_tag(&ctx->db, bs->v[c].first_id);
	for (i = 0; i < bs->nruns; i++)
		if (bs->runs[i].cfg == c && bs->runs[i].seed && value_same(bs->runs[i].seed, seed))
			return runs_tag(&ctx->db, bs->runs[i].id);
	return NULL;
}

/* An unmade proposal with the configuration: its tag (malloc'd) or NULL. */
static char *proposal_with(struct xl_ctx *ctx, const char *key, const char *seed, int *err)
{
	struct stmt q;
	char *tag = NULL;
	int rc;

	if (db_prepare(&ctx->db, &q, "SELECT tag, kind, value FROM proposal"
		       " WHERE study = :study AND config_key = :key AND status = 'intent'"
		       " AND run_id IS NULL ORDER BY id") < 0) {
		*err = -1;
		return NULL;
	}
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_text(&q, ":key", key);
	while ((rc = db_step(&q)) == SQLITE_ROW && !tag)
		if (!seed || (strcmp(db_col_text(&q, 1), "replicate") == 0 &&
			      value_same(db_col_text(&q, 2), seed)))
			tag = db_col_dup(&q, 0);
	db_finalize(&q);
	if (!tag && rc != SQLITE_DONE)
		*err = -1;
	return tag;
}

/* The run "best" stands for in plan entries, or NULL. */
static const char *best_tag(const struct best_state *bs)
{
	return bs->best >= 0 ? bs->v[bs->best].rep_tag : NULL;
}

/*
 * The plan's queued entry with the configuration: 1 with *id and *what
 * ("V=X from P", malloc'd), 0 none, -1.
 */
static int plan_with(struct xl_ctx *ctx, const struct best_state *bs, const char *key,
		     const char *seed, long long skip, long long *id, char **what)
{
	const char *seedvar = ctx->cfg.search.seed;
	struct plan_entry *v;
	size_t n, i;
	int found = 0;

	if (plan_list(&ctx->db, ctx->cfg.study, 1, &v, &n) < 0)
		return -1;
	for (i = 0; i < n && !found; i++) {
		const char *p = strcmp(v[i].parent, "best") == 0 ? best_tag(bs) : v[i].parent;
		char *c, k[65];

		if (v[i].id == skip || (seed && strcmp(v[i].var, seedvar) != 0))
			continue;
		c = config_from(ctx, bs, p, v[i].var, v[i].value);
		if (c) {
			confkey_key(c, seedvar, k);
			found = strcmp(k, key) == 0 && same_seed(c, seedvar, seed);
		}
		free(c);
		if (found) {
			*id = v[i].id;
			*what = xasprintf("%s=%s from %s", v[i].var, v[i].value, v[i].parent);
		}
	}
	plan_entries_free(v, n);
	return found;
}

/* Is var=value from parent run, queued or proposed already. */
int taken_check(struct xl_ctx *ctx, const struct run *parent, const char *var,
		const char *value, int flags, long long skip_plan, char **cause)
{
	const char *seedvar = ctx->cfg.search.seed;
	const char *seed = *seedvar && strcmp(var, seedvar) == 0 ? value : NULL;
	struct best_state bs;
	char *config, key[65], *tag = NULL;
	long long id;
	long pc;
	int err = 0, rc = 0;

	/* read only (best_load reads a job.sh whose configuration is not stored) */
	if (best_load(ctx, &bs) < 0) {
		*cause = xstrdup("unable to read the configurations of the study");
		return XL_ERR;
	}
	pc = best_find_run(&bs, parent->id);
	if (pc < 0) {
		best_release(&bs);
		*cause = xasprintf("unable to read the configuration of '%s'", parent->tag);
		return XL_ERR;
	}
	config = confkey_with(bs.v[pc].config, var, value);
	confkey_key(config, seedvar, key);
	free(config);
	if ((tag = run_with(ctx, &bs, best_find_key(&bs, key), seed))) {
		*cause = seed ?
			xasprintf("%s=%s from %s was made already: run %s has that seed "
				  "(a replicate needs a fresh one: `xloop replicate %s`)",
				  var, value, parent->tag, tag, parent->tag) :
			xasprintf("%s=%s from %s was made already: run %s has that "
				  "configuration (`xloop retry %s` runs it again, `xloop "
				  "replicate %s` measures it again)", var, value, parent->tag,
				  tag, tag, tag);
		rc = XL_DATAERR;
	} else if ((tag = proposal_with(ctx, key, seed, &err))) {
		*cause = xasprintf("%s=%s from %s is queued already: autopilot proposed "
				   "that configuration as %s", var, value, parent->tag, tag);
		rc = XL_DATAERR;
	} else if (!err && (flags & TAKEN_PLAN)) {
		int r = plan_with(ctx, &bs, key, seed, skip_plan, &id, &tag);

		if (r > 0) {
			*cause = xasprintf("%s=%s from %s is in the plan already: entry %lld "
					   "(%s) makes that configuration (`xloop plan rm "
					   "%lld` drops it)", var, value, parent->tag, id, tag, id);
			rc = XL_DATAERR;
		}
		err = r < 0;
	}
	free(tag);
	best_release(&bs);
	if (err && !rc) {
		*cause = xstrdup("unable to read the proposals and the plan of the study");
		rc = XL_ERR;
	}
	return rc;
}

/* Keys of the queued plan entries. */
char **taken_plan_keys(struct xl_ctx *ctx, const struct best_state *bs, size_t *n)
{
	struct plan_entry *v;
	size_t nv, i;
	char **keys = NULL, k[65];

	*n = 0;
	if (plan_list(&ctx->db, ctx->cfg.study, 1, &v, &nv) < 0)
		return NULL;
	for (i = 0; i < nv; i++) {
		const char *p = strcmp(v[i].parent, "best") == 0 ? best_tag(bs) : v[i].parent;
		char *c = config_from(ctx, bs, p, v[i].var, v[i].value);

		if (!c)
			continue;
		confkey_key(c, ctx->cfg.search.seed, k);
		free(c);
		keys = xreallocarray(keys, *n + 1, sizeof(*keys));
		keys[(*n)++] = xstrdup(k);
	}
	plan_entries_free(v, nv);
	return keys;
}
