/*
 * The tags xloop makes for new runs (loop.h: loop_make_tag,
 * loop_make_config_tag), each variable named as its study names it: whole
 * or abbreviated, decided once per study (issue 44).
 */
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "runs.h"
#include "tags.h"

/*
 * Whether the study's tags abbreviate variable names (issue 44: one name
 * for a variable in every tag of a study): decided once and kept in kv
 * "tag_names:STUDY" (1 whole names, 2 abbreviated). A study that
 * abbreviated already keeps doing so; otherwise the space decides
 * (tag_study_abbreviates) at the first tag made with a space set.
 */
static int study_abbreviates(struct xl_ctx *ctx)
{
	const struct space *sp = &ctx->cfg.search.space;
	char *key = xasprintf("tag_names:%s", ctx->cfg.study), **rec_abbr, **rec_var;
	long long v = db_kv_get(&ctx->db, key);
	size_t nrec, i;

	if (v == 0) {
		nrec = runs_tag_abbrevs(&ctx->db, ctx->cfg.study, &rec_abbr, &rec_var);
		if (nrec) {
			v = 2;
		} else if (sp->n) {
			struct tag_part *all = xcalloc(sp->n, sizeof(*all));

			for (i = 0; i < sp->n; i++) {
				all[i].var = sp->v[i].name;
				all[i].grid = (const char *const *)sp->v[i].values;
				all[i].ngrid = sp->v[i].n;
			}
			v = tag_study_abbreviates(all, sp->n) ? 2 : 1;
			free(all);
		}
		for (i = 0; i < nrec; i++) {
			free(rec_abbr[i]);
			free(rec_var[i]);
		}
		free(rec_abbr);
		free(rec_var);
		if (v && db_kv_set(&ctx->db, key, v) < 0)
			warning("unable to remember how the study's tags name variables");
	}
	free(key);
	return v == 2;
}

/*
 * The study's abbreviation of each of v[0, n)'s variables into abbr[i]
 * (malloc'd): tag_abbrevs over the space's variables and v's, with the
 * abbreviations its tags used already.
 */
static void study_abbrevs(struct xl_ctx *ctx, const char *const *v, size_t n, char **abbr)
{
	const struct space *sp = &ctx->cfg.search.space;
	size_t nv = 0, nrec, i, j;
	const char **vars = xcalloc(sp->n + n + 1, sizeof(*vars));
	char **all = xcalloc(sp->n + n + 1, sizeof(*all)), **rec_abbr, **rec_var;

	/* the space's variables, and v's should one not be in it */
	for (i = 0; i < sp->n; i++)
		vars[nv++] = sp->v[i].name;
	for (i = 0; i < n; i++) {
		for (j = 0; j < nv && strcmp(vars[j], v[i]) != 0; j++)
			;
		if (j == nv)
			vars[nv++] = v[i];
	}
	nrec = runs_tag_abbrevs(&ctx->db, ctx->cfg.study, &rec_abbr, &rec_var);
	tag_abbrevs(vars, nv, (const char *const *)rec_abbr, (const char *const *)rec_var,
		    nrec, all);
	for (i = 0; i < n; i++) {
		abbr[i] = NULL;
		for (j = 0; j < nv && !abbr[i]; j++)
			if (strcmp(vars[j], v[i]) == 0)
				abbr[i] = xstrdup(all[j]);
	}
	for (i = 0; i < nv; i++)
		free(all[i]);
	for (i = 0; i < nrec; i++) {
		free(rec_abbr[i]);
		free(rec_var[i]);
	}
	free(rec_abbr);
	free(rec_var);
	free(all);
	free(vars);
}

/* The first free candidate of a tag (tag_compose), var named as the study names it. */
char *loop_make_tag(struct xl_ctx *ctx, enum tag_kind kind, const char *base_or_prefix,
		    const char *var, const char *value)
{
	char *abbr = NULL;
	int k;

	if (kind != TAG_REPLICATE && var && *var && study_abbreviates(ctx)) {
		study_abbrevs(ctx, &var, 1, &abbr);
		runs_tag_abbrev_record(&ctx->db, ctx->cfg.study, abbr, var);
	}
	for (k = kind == TAG_REPLICATE ? 2 : 1;; k++) {
		char *tag = tag_compose(kind, base_or_prefix, abbr ? abbr : var, value, k);
		char *cause = NULL;
		int rc = loop_check_new_tag(ctx, tag, &cause);

		free(cause);
		/* taken: try the next; free, or an error loop_new_run will report */
		if (rc != XL_DATAERR || k >= 1000000) {
			free(abbr);
			return tag;
		}
		free(tag);
	}
}

/*
 * The first free candidate of a configuration's tag (tag_config_as), or
 * NULL. Names are whole or the study's abbreviations (study_abbreviates,
 * decided once), which are recorded when used.
 */
char *loop_make_config_tag(struct xl_ctx *ctx, const struct tag_part *v, size_t n)
{
	const char **vars = xcalloc(n + 1, sizeof(*vars));
	char **abbr = xcalloc(n + 1, sizeof(*abbr));
	struct tag_part *parts = xcalloc(n + 1, sizeof(*parts));
	char *tag = NULL;
	int k, abbreviate = study_abbreviates(ctx);
	size_t i;

	for (i = 0; i < n; i++)
		vars[i] = v[i].var;
	study_abbrevs(ctx, vars, n, abbr);
	for (i = 0; i < n; i++) {
		parts[i] = v[i];
		parts[i].abbr = abbr[i];
	}
	for (k = 1; k < 1000 && !tag; k++) {
		char *cause = NULL;
		int rc;

		tag = tag_config_as(parts, n, k, abbreviate);
		if (!tag)
			break;
		rc = loop_check_new_tag(ctx, tag, &cause);
		free(cause);
		if (rc == XL_DATAERR)
			FREE_AND_NULL(tag);
	}
	for (i = 0; tag && abbreviate && i < n; i++)
		runs_tag_abbrev_record(&ctx->db, ctx->cfg.study, parts[i].abbr, parts[i].var);
	for (i = 0; i < n; i++)
		free(abbr[i]);
	free(abbr);
	free(vars);
	free(parts);
	return tag;
}
