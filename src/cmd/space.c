/*
 * xloop space set VAR=SPEC | ls | rm VAR | seed VAR [--replicates K]: the
 * search space autopilot explores and the seed variable that makes
 * replicates; stored in xloop.json (search.*) and committed as decisions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search/best.h"
#include "cmd/cmd.h"
#include "jobsh/jobsh.h"
#include "loop.h"
#include "search/space.h"
#include "study.h"

static const struct opt space_seed_opts[] = {
	{ "replicates", OPT_STRING, "K", "runs of the baseline that measure the noise (default 3)" },
	OPT_END,
};

/*
 * Refuse a VAR that the baseline's job.sh does not assign once at top level;
 * *base (when not NULL): its value there (malloc'd; NULL when not literal).
 */
static int check_baseline_var(struct xl_ctx *ctx, const char *var, char **cause, char **base)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *jv;
	struct buf text = BUF_INIT;
	struct run r;
	char *path, *why = NULL;
	int rc, err;

	rc = runs_first_root(&ctx->db, ctx->cfg.study, &r);
	if (rc < 0)
		return XL_ERR;
	if (rc == 1) {
		*cause = xasprintf("study '%s' has no baseline yet: `xloop adopt PATH --tag T` "
				   "first", ctx->cfg.study);
		return XL_DATAERR;
	}
	path = run_job_path(ctx->root, ctx->cfg.study, r.tag);
	rc = XL_DATAERR;
	if (study_read_script(path, &text, &err, &why) == 0 &&
	    jobsh_scan(text.s, text.len, &vars, &why) == 0 &&
	    jobsh_find(&vars, var, &jv, &why) == 0) {
		rc = 0;
		if (base)
			*base = jv->value ? xstrdup(jv->value) : NULL;
	}
	if (rc)
		*cause = xasprintf("%s is not a top-level assignment of the baseline %s's "
				   "job.sh: %s", var, r.tag, why ? why : "not found");
	free(why);
	jobsh_vars_release(&vars);
	buf_release(&text);
	free(path);
	run_release(&r);
	return rc;
}

/* The values of a variable, one line. */
static void print_var(const struct space_var *v)
{
	size_t i;

	printf("%s = ", v->name);
	if (v->range)
		printf("%s: ", v->range);
	for (i = 0; i < v->n && i < 12; i++)
		printf("%s%s", i ? "," : "", v->values[i]);
	if (v->n > 12)
		printf(",... (%zu values)", v->n);
	putchar('\n');
}

/*
 * The grid does not hold the baseline's value: a range that can (not :int,
 * no at= given, the value inside) is anchored at it (at=BASE); otherwise a
 * warning says how to have it. 0 or an exit code.
 */
static int hold_baseline(struct space_var *v, const char *base, int json)
{
	struct space_var anchored;
	char *end = NULL, *range, *cause = NULL;

	strtod(base, &end);
	if (v->range && *base && !*end && !strstr(v->range, ":int") &&
	    !strstr(v->range, ":at=")) {
		range = xasprintf("%s:at=%s", v->range, base);
		if (space_from_range(v->name, range, &anchored, &cause) == 0) {
			if (!json)
				printf("the grid holds the baseline's %s=%s (%s): it is anchored there, "
				       "its other values rounded\n", v->name, base, range);
			space_var_release(v);
			*v = anchored;
			free(range);
			return 0;
		}
		FREE_AND_NULL(cause);
		free(range);
	}
	warning("the grid of %s does not hold the baseline's value %s, so no run of the "
		"baseline's configuration is on it: %s", v->name, base, v->range ?
		"widen the range to include it (a range holds it then: LO..HI:at=V), or "
		"list the values (V1,V2,...)" : "add it to the values");
	return 0;
}

static int space_set(struct xl_ctx *ctx, const char *arg)
{
	const char *path[3] = { "search", "space", NULL };
	struct space_var v;
	char *cause = NULL, *what, *base = NULL;
	json_t *spec;
	size_t i;
	int rc;

	if (space_parse_arg(arg, &v, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_DATAERR;
	}
	rc = check_baseline_var(ctx, v.name, &cause, &base);
	if (rc) {
		error("%s", cause);
		free(cause);
		space_var_release(&v);
		return rc;
	}
	if (rc == 0 && base && space_index(&v, base) < 0)
		rc = hold_baseline(&v, base, ctx->json);
	if (rc) {
		free(base);
		space_var_release(&v);
		return rc;
	}
	free(base);
	if (v.range) {
		spec = json_string(v.range);
	} else {
		spec = json_array();
		for (i = 0; i < v.n; i++)
			json_array_append_new(spec, json_string(v.values[i]));
	}
	path[2] = v.name;
	what = xasprintf("search space %s = %s (%zu values)", v.name,
			 v.range ? v.range : arg + strlen(v.name) + 1, v.n);
	rc = loop_decide_config(ctx, path, 3, spec, what);
	if (rc == 0 && !ctx->json)
		print_var(&v);
	else if (rc == 0)
		cmd_emit_json(json_pack("{s:s, s:I}", "set", v.name, "values", (json_int_t)v.n));
	free(what);
	space_var_release(&v);
	return rc;
}

static int space_ls(struct xl_ctx *ctx)
{
	const struct space *sp = &ctx->cfg.search.space;
	size_t i, k;

	if (ctx->json) {
		json_t *vars = json_array();

		for (i = 0; i < sp->n; i++) {
			json_t *vals = json_array();

			for (k = 0; k < sp->v[i].n; k++)
				json_array_append_new(vals, json_string(sp->v[i].values[k]));
			json_array_append_new(vars, json_pack("{s:s, s:o, s:o}", "var",
				sp->v[i].name, "range", sp->v[i].range ?
				json_string(sp->v[i].range) : json_null(), "values", vals));
		}
		cmd_emit_json(json_pack("{s:s, s:o, s:o, s:I}", "schema", "xloop.space/1",
			"space", vars, "seed", *ctx->cfg.search.seed ?
			json_string(ctx->cfg.search.seed) : json_null(),
			"replicates", (json_int_t)ctx->cfg.search.replicates));
		return XL_OK;
	}
	if (sp->n == 0)
		printf("the search space is empty: `xloop space set VAR=V1,V2,...`\n");
	for (i = 0; i < sp->n; i++)
		print_var(&sp->v[i]);
	if (*ctx->cfg.search.seed)
		printf("seed: %s (%lld replicates measure the noise)\n", ctx->cfg.search.seed,
		       ctx->cfg.search.replicates);
	else
		printf("seed: none (no replicates: gains are not checked against noise; "
		       "`xloop space seed VAR`)\n");
	return XL_OK;
}

static int space_rm(struct xl_ctx *ctx, const char *var)
{
	const char *path[3] = { "search", "space", var };
	char *what;
	int rc;

	if (space_find(&ctx->cfg.search.space, var) == NULL) {
		error("%s is not in the search space ('xloop space ls')", var);
		return XL_NOINPUT;
	}
	what = xasprintf("search space: %s removed", var);
	rc = loop_decide_config(ctx, path, 3, NULL, what);
	if (rc == 0 && !ctx->json)
		printf("removed %s from the search space\n", var);
	else if (rc == 0)
		cmd_emit_json(json_pack("{s:s}", "removed", var));
	free(what);
	return rc;
}

static int space_seed(struct xl_ctx *ctx, const struct cmd_entry *self, const char *var,
		      const char *reps)
{
	const char *seed_path[2] = { "search", "seed" }, *rep_path[2] = { "search", "replicates" };
	const char *errstr;
	char *cause = NULL, *what;
	long long k = 0;
	int rc;

	if (reps && parse_ll(reps, 2, 100, &k, &errstr) < 0) {
		cmd_usage_error(self, "--replicates: '%s' is %s (2 to 100)", reps, errstr);
		return XL_USAGE;
	}
	if (!jobsh_valid_name(var)) {
		error("'%s' is not a variable name", var);
		return XL_DATAERR;
	}
	rc = check_baseline_var(ctx, var, &cause, NULL);
	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	if (space_find(&ctx->cfg.search.space, var)) {
		error("%s is in the search space; the seed variable cannot be searched "
		      "(`xloop space rm %s` first)", var, var);
		return XL_DATAERR;
	}
	if (k && config_edit(ctx->root, rep_path, 2, json_integer(k), &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	what = xasprintf("seed variable %s (%lld replicates measure the noise)", var,
			 k ? k : ctx->cfg.search.replicates);
	rc = loop_decide_config(ctx, seed_path, 2, json_string(var), what);
	free(what);
	if (rc == 0 && (best_persist(ctx) < 0 || best_forget(ctx) < 0)) {
		error("unable to recompute the configurations of the runs");
		rc = XL_ERR;
	}
	if (rc == 0 && !ctx->json)
		printf("seed: %s (%lld replicates)\n", var, ctx->cfg.search.replicates);
	else if (rc == 0)
		cmd_emit_json(json_pack("{s:s, s:I}", "seed", var,
					"replicates", (json_int_t)ctx->cfg.search.replicates));
	return rc;
}

/* space set VAR=SPEC, ls (also bare `xloop space`), rm VAR, seed VAR [--replicates K] */
static int cmd_space(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	if (cmd_is(self, "set"))
		return space_set(ctx, args->pos[0]);
	if (cmd_is(self, "rm"))
		return space_rm(ctx, args->pos[0]);
	if (cmd_is(self, "seed"))
		return space_seed(ctx, self, args->pos[0], args_get(args, "replicates"));
	return space_ls(ctx);
}

static const struct cmd_entry space_subs[] = {
	{ .name = "space set", .args = "VAR=SPEC", .min = 1, .max = 1, .exec = cmd_space,
	  .summary = "put VAR in the space with its values" },
	{ .name = "space ls", .exec = cmd_space,
	  .summary = "the space and the seed variable" },
	{ .name = "space rm", .args = "VAR", .min = 1, .max = 1, .exec = cmd_space,
	  .summary = "take VAR out of the space" },
	{ .name = "space seed", .opts = space_seed_opts, .args = "VAR", .min = 1, .max = 1,
	  .exec = cmd_space,
	  .summary = "name the job.sh variable that only changes the random seed" },
	{ NULL },
};

const struct cmd_entry cmd_space_entry = {
	.name = "space", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "the search space autopilot explores, and the seed variable",
	.help = "set VAR=V1,V2,...             ordered choices (neighbours: adjacent values)\n"
	"set VAR=LO..HI:int            every integer from LO to HI\n"
	"set VAR=LO..HI[:log][:steps=N][:at=V]  N points (default 9), linear or\n"
	"                              log; at=V: the grid holds V (the point nearest\n"
	"                              it becomes V), the others rounded to the fewest\n"
	"                              digits that keep them apart. When the baseline's\n"
	"                              value lies in LO..HI, set adds at= for it (and\n"
	"                              says so); when it does not, set warns\n"
	"ls                            the space and the seed variable\n"
	"rm VAR                        take VAR out of the space\n"
	"seed VAR [--replicates K]     the job.sh variable that only changes the\n"
	"                              random seed (K, default 3: runs of the baseline\n"
	"                              that measure the noise)\n"
	"VAR must be a top-level assignment of the baseline's job.sh (exit 65\n"
	"otherwise). Stored in xloop.json as search.space / search.seed /\n"
	"search.replicates and committed with an ops/decisions.md entry.\n"
	"Values are canonical: 0.05, 5e-2 and 0.050 are one value. `help auto`:\n"
	"autopilot.\n"
	"\n"
	BEST_HELP,
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = space_subs, .dflt = &space_subs[1],
};
