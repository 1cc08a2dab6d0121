/* Configurations taken already: runs, autopilot's proposals, the plan. */
#include <stdlib.h>
#include <string.h>

#include "best.h"
#include "confkey.h"
#include "plan.h"
#include "tags.h"
#include "taken.h"

/* The stored configuration of a run (malloc'd), or NULL. */
static char *config_of(struct xl_ctx *ctx, long long run_id)
{
	struct stmt q;
	char *c = NULL;

	if (db_prepare(&ctx->db, &q, "SELECT config FROM run_config WHERE run_id = :id") < 0)
		return NULL;
	db_bind_int64(&q, ":id", run_id);
	if (db_step(&q) == SQLITE_ROW)
		c = db_col_dup(&q, 0);
	db_finalize(&q);
	return c;
}

/* The configuration var=value from the run tagged parent makes (malloc'd), or NULL. */
static char *config_from(struct xl_ctx *ctx, const char *parent, const char *var,
			 const char *value)
{
	struct run r;
	char *pc, *c = NULL;

	if (runs_get(&ctx->db, ctx->cfg.study, parent, &r) != 0)
		return NULL;
	pc = config_of(ctx, r.id);
	if (pc)
		c = confkey_with(pc, var, value);
	free(pc);
	run_release(&r);
	return c;
}

/* 1 when a configuration with key has the seed value of a replicate (seed NULL: any). */
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

/* A run with the configuration: its tag (malloc'd) or NULL; -1 on error in *err. */
static char *run_with(struct xl_ctx *ctx, const char *key, const char *seed, int *err)
{
	struct stmt q;
	char *tag = NULL;
	int rc;

	if (db_prepare(&ctx->db, &q, "SELECT r.tag, c.config FROM run_config c"
		       " JOIN run r ON r.id = c.run_id WHERE c.config_key = :key"
		       " AND r.study = :study ORDER BY r.id") < 0) {
		*err = -1;
		return NULL;
	}
	db_bind_text(&q, ":key", key);
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((rc = db_step(&q)) == SQLITE_ROW && !tag)
		if (same_seed(db_col_text(&q, 1), ctx->cfg.search.seed, seed))
			tag = db_col_dup(&q, 0);
	db_finalize(&q);
	if (!tag && rc != SQLITE_DONE)
		*err = -1;
	return tag;
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

/* The tag of the run best stands for now (malloc'd), or NULL. */
static char *best_tag_now(struct xl_ctx *ctx)
{
	struct run b;
	char *tag;

	if (best_get(ctx, &b, NULL) != 0)
		return NULL;
	tag = b.tag;
	b.tag = NULL;
	run_release(&b);
	return tag;
}

/*
 * The plan's queued entry with the configuration: 1 with *id and *what
 * ("V=X from P", malloc'd), 0 none, -1.
 */
static int plan_with(struct xl_ctx *ctx, const char *key, const char *seed,
		     long long skip, long long *id, char **what)
{
	const char *seedvar = ctx->cfg.search.seed;
	struct plan_entry *v;
	size_t n, i;
	char *best_tag = NULL;
	int found = 0, best_read = 0;

	if (plan_list(&ctx->db, ctx->cfg.study, 1, &v, &n) < 0)
		return -1;
	for (i = 0; i < n && !found; i++) {
		const char *p = v[i].parent;
		char *c, k[65];

		if (strcmp(p, "best") == 0) {
			if (!best_read)
				best_tag = best_tag_now(ctx);
			best_read = 1;
			p = best_tag;
		}

		if (v[i].id == skip || !p || (seed && strcmp(v[i].var, seedvar) != 0))
			continue;
		c = config_from(ctx, p, v[i].var, v[i].value);
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
	free(best_tag);
	return found;
}

/* Is var=value from parent run, queued or proposed already. */
int taken_check(struct xl_ctx *ctx, const struct run *parent, const char *var,
		const char *value, int flags, long long skip_plan, char **cause)
{
	const char *seedvar = ctx->cfg.search.seed;
	const char *seed = *seedvar && strcmp(var, seedvar) == 0 ? value : NULL;
	char *pc, *config, key[65], *tag = NULL;
	long long id;
	int err = 0, rc = 0;

	if (best_persist(ctx) < 0 || !(pc = config_of(ctx, parent->id))) {
		*cause = xasprintf("unable to read the configuration of '%s'", parent->tag);
		return XL_ERR;
	}
	config = confkey_with(pc, var, value);
	free(pc);
	confkey_key(config, seedvar, key);
	free(config);
	if ((tag = run_with(ctx, key, seed, &err))) {
		*cause = seed ?
			xasprintf("%s=%s from %s was made already: run %s has that seed "
				  "(a replicate needs a fresh one: `xloop replicate %s`)",
				  var, value, parent->tag, tag, parent->tag) :
			xasprintf("%s=%s from %s was made already: run %s has that "
				  "configuration (`xloop retry %s` runs it again, `xloop "
				  "replicate %s` measures it again)", var, value, parent->tag,
				  tag, tag, tag);
		rc = XL_DATAERR;
	} else if (!err && (tag = proposal_with(ctx, key, seed, &err))) {
		*cause = xasprintf("%s=%s from %s is queued already: autopilot proposed "
				   "that configuration as %s", var, value, parent->tag, tag);
		rc = XL_DATAERR;
	} else if (!err && (flags & TAKEN_PLAN)) {
		int r = plan_with(ctx, key, seed, skip_plan, &id, &tag);

		if (r > 0) {
			*cause = xasprintf("%s=%s from %s is in the plan already: entry %lld "
					   "(%s) makes that configuration (`xloop plan rm "
					   "%lld` drops it)", var, value, parent->tag, id, tag, id);
			rc = XL_DATAERR;
		}
		err = r < 0;
	}
	free(tag);
	if (err && !rc) {
		*cause = xstrdup("unable to read the runs, proposals and plan of the study");
		rc = XL_ERR;
	}
	return rc;
}

/* Keys of the queued plan entries. */
char **taken_plan_keys(struct xl_ctx *ctx, size_t *n)
{
	struct plan_entry *v;
	size_t nv, i;
	char **keys = NULL, k[65], *best_tag;

	*n = 0;
	if (plan_list(&ctx->db, ctx->cfg.study, 1, &v, &nv) < 0)
		return NULL;
	best_tag = nv ? best_tag_now(ctx) : NULL;
	for (i = 0; i < nv; i++) {
		const char *p = strcmp(v[i].parent, "best") == 0 ? best_tag : v[i].parent;
		char *c = p ? config_from(ctx, p, v[i].var, v[i].value) : NULL;

		if (!c)
			continue;
		confkey_key(c, ctx->cfg.search.seed, k);
		free(c);
		keys = xreallocarray(keys, *n + 1, sizeof(*keys));
		keys[(*n)++] = xstrdup(k);
	}
	free(best_tag);
	plan_entries_free(v, nv);
	return keys;
}
