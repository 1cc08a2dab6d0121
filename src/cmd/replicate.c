/*
 * xloop replicate T [-n K]: queue K replicates of T's configuration (runs
 * whose one change is the seed variable) in the plan: each on the next seed
 * the baseline has and T's configuration lacks, its own runs, plan entries
 * and proposals counted (common seeds: the paired test that labels a
 * configuration confirmed compares on them), else on a fresh seed (best.h's
 * best_next_seed: another configuration's seeds are no concern).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "search/best.h"
#include "cmd/cmd.h"
#include "driver/driver.h"
#include "loop.h"
#include "plan.h"
#include "search/space.h"

static const struct opt replicate_opts[] = {
	{ "n", OPT_STRING, "K", "how many replicates (1 to 100, default 1)" },
	OPT_END,
};

/* Queue replicates. */
static int cmd_replicate(struct xl_ctx *ctx, const struct cmd_entry *self,
			 struct cmd_args *args)
{
	const char *nopt = args_get(args, "n"), *errstr, *seed = ctx->cfg.search.seed;
	struct best_state bs;
	struct run r;
	char **pos = args->pos, *cause = NULL, **used = NULL;
	long long k = 1, i, id;
	size_t nused = 0;
	long c;
	json_t *added = json_array();
	int rc;

	if (nopt && parse_ll(nopt, 1, 100, &k, &errstr) < 0) {
		cmd_usage_error(self, "-n: '%s' is not a number from 1 to 100", nopt);
		json_decref(added);
		return XL_USAGE;
	}
	if (!*seed) {
		error("no seed variable: name it with `xloop space seed VAR` first");
		json_decref(added);
		return XL_DATAERR;
	}
	rc = loop_find_run(ctx, pos[0], &r, &cause);
	if (rc) {
		error("%s", cause);
		free(cause);
		json_decref(added);
		return rc;
	}
	if (best_load(ctx, &bs) < 0) {
		rc = XL_ERR;
		goto out;
	}
	c = best_find_run(&bs, r.id);
	if (c < 0 || bs.v[c].rep_id == 0) {
		error("run '%s' is not proven: a replicate copies the configuration of a proven run", r.tag);
		rc = XL_DATAERR;
		goto out_bs;
	}
	used = best_seeds_used(ctx, &bs, c, &nused);
	if (db_begin_write(&ctx->db) < 0) {
		rc = XL_TEMPFAIL;
		goto out_bs;
	}
	for (i = 0; i < k; i++) {
		char *common = best_next_seed(ctx, &bs, bs.baseline == c ? -1 : bs.baseline,
					      used, nused);
		char *val = common ? common : space_fresh_seed((const char *const *)used, nused);

		if (plan_add(&ctx->db, ctx->cfg.study, bs.v[c].rep_tag, seed, val, &id) < 0) {
			free(val);
			db_rollback(&ctx->db);
			rc = XL_ERR;
			goto out_bs;
		}
		json_array_append_new(added, json_pack("{s:I, s:s, s:s}", "plan_id", (json_int_t)id,
						       "seed", val, "seed_from",
						       common ? "baseline" : "fresh"));
		used = xreallocarray(used, nused + 1, sizeof(*used));
		used[nused++] = val;
	}
	if (db_commit(&ctx->db) < 0) {
		rc = XL_ERR;
		goto out_bs;
	}
	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:O}", "configuration_of", bs.v[c].rep_tag,
					"seed_var", seed, "queued", added));
	} else {
		size_t j;
		json_t *o;

		printf("queued %lld replicate%s of %s's configuration (%s, n=%ld now):\n", k,
		       k == 1 ? "" : "s", bs.v[c].rep_tag, seed, bs.v[c].st.n);
		json_array_foreach(added, j, o)
			printf("  plan %lld: %s=%s from %s (%s)\n",
			       (long long)json_integer_value(json_object_get(o, "plan_id")), seed,
			       json_string_value(json_object_get(o, "seed")), bs.v[c].rep_tag,
			       strcmp(json_string_value(json_object_get(o, "seed_from")), "baseline") == 0 ?
			       "a seed the baseline has: the paired test compares on common seeds" :
			       "a fresh seed");
	}
	{
		struct slurm s;	/* driver.mode slurm: a feeder submits them, now */

		slurm_init(&s);
		driver_keep_feeder(ctx, &s, NULL, NULL);
	}
	rc = XL_OK;
out_bs:
	strv_free(used, nused);
	best_release(&bs);
out:
	run_release(&r);
	json_decref(added);
	return rc;
}

const struct cmd_entry cmd_replicate_entry = {
	.name = "replicate", .opts = replicate_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "queue K replicates of T's configuration (the baseline's seeds first)",
	.help = "Adds K plan entries SEED=<s> from the run that stands for T's\n"
	"configuration (T itself unless T is a replicate): s is the next seed the\n"
	"baseline has and T's configuration lacks, in the baseline's order (common\n"
	"seeds: the paired test that labels confirmed compares on them, `help best`),\n"
	"else a fresh seed; the output says which. What the configuration lacks\n"
	"counts its own runs, plan entries and autopilot's proposals, never another\n"
	"configuration's: replicates of two configurations share seeds, which pairs\n"
	"them too. next and tick submit\n"
	"them as tags B--r2, B--r3, ... Each replicate's score joins its\n"
	"configuration's mean, and together they measure the noise (help best).\n"
	"Needs a seed variable: `xloop space seed VAR`. T may be \"best\".\n"
	"With driver.mode slurm a feeder job is left to submit them (at once when\n"
	"nothing runs, else behind the running runs): no other xloop call is needed.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_replicate,
};
