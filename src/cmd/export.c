/*
 * xloop export: the study as a table for notebooks, one row per run (or per
 * attempt), CSV or JSON Lines; columns in schemas/export.schema.json.
 * Reads only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "runs.h"
#include "search/autopilot.h"
#include "search/best.h"
#include "search/confkey.h"
#include "slurm/parse.h"

static const struct opt export_opts[] = {
	{ "format", OPT_STRING, "csv|jsonl", "csv (the default: a header line, then one line a "
	  "row) or jsonl (one JSON object a line; --json is the same)" },
	{ "attempts", OPT_FLAG, NULL, "one row per attempt instead of one per run" },
	OPT_END,
};

/* The run table's columns; "space." columns go after new_value. */
static const char *const run_head[] = {
	"tag", "run_id", "parent", "var", "old_value", "new_value",
};
static const char *const run_tail[] = {
	"seed", "verdict", "reason", "failure_class", "score", "config_mean", "config_runs",
	"model_estimate", "model_sd", "proven", "best", "attempts", "gpu_hours", "created", "start", "end",
};
static const char *const attempt_cols[] = {
	"tag", "run_id", "attempt", "job_id", "state", "exit_code", "verdict", "reason",
	"failure_class", "score", "node", "partition", "gres", "gpus", "gpu_hours",
	"submitted", "start", "end", "log",
};

/* What the export writes, and how. */
struct export {
	struct xl_ctx *ctx;
	int csv;
	char **space;		/* the variables of the space. columns */
	size_t nspace;
	long long now;
};

/* GPU-hours of an attempt: from its start to its end (now while it runs). */
static double attempt_hours(const struct attempt *a, long long now)
{
	long long end = a->ended_at > 0 ? a->ended_at : now;

	if (a->started_at <= 0)
		return 0;
	return autopilot_gpu_hours(end - a->started_at, a->gres, a->node);
}

/* Unix seconds as ISO-8601 UTC, or JSON null when 0. */
static json_t *when(long long t)
{
	char s[32];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL ||
	    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return json_null();
	return json_string(s);
}

/* s, or null when empty. */
static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

/* The index of run_id in bs->runs (they are in id order), or -1. */
static long run_index(const struct best_state *bs, long long run_id)
{
	size_t lo = 0, hi = bs->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bs->runs[mid].id == run_id)
			return (long)mid;
		if (bs->runs[mid].id < run_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Whether a run is proven and whether its configuration is the best: the
 * one place export asks search/best.h (what those words mean is its call).
 */
static void judged(const struct best_state *bs, long long run_id, int *proven, int *best)
{
	long i = run_index(bs, run_id);

	*proven = i >= 0 && bs->runs[i].proven;
	*best = i >= 0 && bs->best >= 0 && bs->runs[i].cfg == bs->best;
}

/* The seed value of run_id in bs, or NULL. */
static const char *seed_of(const struct best_state *bs, long long run_id)
{
	long i = run_index(bs, run_id);

	return i >= 0 ? bs->runs[i].seed : NULL;
}

/* A CSV field: quoted when it holds a comma, a quote, a line break or edge spaces. */
static void csv_field(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	if (!strpbrk(s, ",\"\r\n") && !(n && (s[0] == ' ' || s[n - 1] == ' '))) {
		buf_adds(b, s);
		return;
	}
	buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			buf_addc(b, '"');
		buf_addc(b, *s);
	}
	buf_addc(b, '"');
}

/* The shortest of %.15g..%.17g that reads back as x (0.6, not 0.59999999999999998). */
static void real_value(struct buf *b, double x)
{
	char t[32];
	int prec;

	for (prec = 15; prec < 17; prec++) {
		xsnprintf(t, sizeof(t), "%.*g", prec, x);
		if (strtod(t, NULL) == x)
			break;
	}
	buf_addf(b, "%.*g", prec, x);
}

/* One JSON scalar as CSV text: null empty, true/false, numbers round-trip. */
static void csv_value(struct buf *b, const json_t *v)
{
	if (v == NULL || json_is_null(v))
		return;
	if (json_is_string(v))
		csv_field(b, json_string_value(v));
	else if (json_is_true(v))
		buf_adds(b, "true");
	else if (json_is_false(v))
		buf_adds(b, "false");
	else if (json_is_integer(v))
		buf_addf(b, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		real_value(b, json_real_value(v));
	else
		BUG("a nested value in an export row");
}

/* Print names as the CSV header. */
static void header(struct export *e, const char *const *names, size_t n, int with_space)
{
	struct buf b = BUF_INIT;
	size_t i, k;

	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, ',');
		csv_field(&b, names[i]);
		if (with_space && strcmp(names[i], "new_value") == 0)
			for (k = 0; k < e->nspace; k++) {
				char *col = xasprintf("space.%s", e->space[k]);

				buf_addc(&b, ',');
				csv_field(&b, col);
				free(col);
			}
	}
	printf("%s\n", b.s);
	buf_release(&b);
}

/* Print one row (and free it): a JSON line, or CSV in the columns' order. */
static void emit(struct export *e, json_t *row, const char *const *names, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i, k;

	if (!e->csv) {
		char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);

		if (s == NULL)
			BUG("unable to encode an export row");
		printf("%s\n", s);
		free(s);
		json_decref(row);
		return;
	}
	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, ',');
		csv_value(&b, json_object_get(row, names[i]));
		if (strcmp(names[i], "new_value") == 0)
			for (k = 0; k < e->nspace; k++) {
				char *col = xasprintf("space.%s", e->space[k]);

				buf_addc(&b, ',');
				csv_value(&b, json_object_get(row, col));
				free(col);
			}
	}
	printf("%s\n", b.s);
	buf_release(&b);
	json_decref(row);
}

/* The space's variables, else every variable a run changed (first seen first). */
static void pick_space(struct export *e, const struct run *runs, size_t n)
{
	const struct space *sp = &e->ctx->cfg.search.space;
	const char *seed = e->ctx->cfg.search.seed;
	size_t i, k;

	for (i = 0; i < sp->n; i++) {
		e->space = xreallocarray(e->space, e->nspace + 1, sizeof(char *));
		e->space[e->nspace++] = xstrdup(sp->v[i].name);
	}
	if (sp->n)
		return;
	for (i = 0; i < n; i++) {
		if (!*runs[i].var || strcmp(runs[i].var, seed) == 0)
			continue;
		for (k = 0; k < e->nspace && strcmp(e->space[k], runs[i].var) != 0; k++)
			;
		if (k < e->nspace)
			continue;
		e->space = xreallocarray(e->space, e->nspace + 1, sizeof(char *));
		e->space[e->nspace++] = xstrdup(runs[i].var);
	}
}

/* The row of one run. */
static json_t *run_row(struct export *e, const struct best_state *bs, const struct run *r,
		       const struct attempt *v, size_t n)
{
	json_t *row = json_object();
	const struct attempt *last = n ? &v[n - 1] : NULL;
	long cfg = best_find_run(bs, r->id);
	const char *config = cfg >= 0 ? bs->v[cfg].config : NULL;
	char id[RUN_IDENT_LEN + 1];
	long long start = 0;
	double hours = 0;
	int proven, best;
	size_t i;

	run_ident(r->study, r->tag, r->created_at, id);
	json_object_set_new(row, "tag", json_string(r->tag));
	json_object_set_new(row, "run_id", json_string(id));
	json_object_set_new(row, "parent", str_or_null(r->parent_tag));
	json_object_set_new(row, "var", str_or_null(r->var));
	json_object_set_new(row, "old_value", r->parent_id ? json_string(r->old_value) : json_null());
	json_object_set_new(row, "new_value", r->parent_id ? json_string(r->new_value) : json_null());
	/* flat, as CSV's columns: pd.read_json and pd.read_csv give the same frame */
	for (i = 0; i < e->nspace; i++) {
		char *val = config ? confkey_value(config, e->space[i]) : NULL;
		char *col = xasprintf("space.%s", e->space[i]);

		json_object_set_new(row, col, str_or_null(val));
		free(col);
		free(val);
	}
	json_object_set_new(row, "seed", str_or_null(seed_of(bs, r->id)));
	json_object_set_new(row, "verdict", str_or_null(last ? last->verdict : NULL));
	json_object_set_new(row, "reason", str_or_null(last ? last->verdict_reason : NULL));
	json_object_set_new(row, "failure_class", str_or_null(last ? last->failure_class : NULL));
	json_object_set_new(row, "score", last && last->has_score ? json_real(last->score) :
			    json_null());
	if (cfg >= 0 && bs->v[cfg].st.n > 0) {
		struct best_info info;

		best_info_of(bs, cfg, &info);
		json_object_set_new(row, "config_mean", json_real(info.mean));
		json_object_set_new(row, "config_runs", json_integer(info.n));
	} else {
		json_object_set_new(row, "config_mean", json_null());
		json_object_set_new(row, "config_runs", json_integer(0));
	}
	if (cfg >= 0 && bs->v[cfg].has_est) {
		json_object_set_new(row, "model_estimate", json_real(bs->v[cfg].est));
		json_object_set_new(row, "model_sd", json_real(bs->v[cfg].est_sd));
	} else {
		json_object_set_new(row, "model_estimate", json_null());
		json_object_set_new(row, "model_sd", json_null());
	}
	judged(bs, r->id, &proven, &best);
	json_object_set_new(row, "proven", json_boolean(proven));
	json_object_set_new(row, "best", json_boolean(best));
	for (i = 0; i < n; i++) {
		hours += attempt_hours(&v[i], e->now);
		if (v[i].started_at > 0 && (start == 0 || v[i].started_at < start))
			start = v[i].started_at;
	}
	json_object_set_new(row, "attempts", json_integer((json_int_t)n));
	json_object_set_new(row, "gpu_hours", json_real(hours));
	json_object_set_new(row, "created", when(r->created_at));
	json_object_set_new(row, "start", when(start));
	json_object_set_new(row, "end", when(last && *last->verdict ? last->ended_at : 0));
	return row;
}

/* The row of one attempt. */
static json_t *attempt_row(struct export *e, const struct run *r, const struct attempt *a)
{
	json_t *row = json_object();
	char id[RUN_IDENT_LEN + 1];

	run_ident(r->study, r->tag, r->created_at, id);
	json_object_set_new(row, "tag", json_string(r->tag));
	json_object_set_new(row, "run_id", json_string(id));
	json_object_set_new(row, "attempt", json_integer(a->n));
	json_object_set_new(row, "job_id", str_or_null(a->job_id));
	json_object_set_new(row, "state", str_or_null(a->state));
	json_object_set_new(row, "exit_code", str_or_null(a->exit_code));
	json_object_set_new(row, "verdict", str_or_null(a->verdict));
	json_object_set_new(row, "reason", str_or_null(a->verdict_reason));
	json_object_set_new(row, "failure_class", str_or_null(a->failure_class));
	json_object_set_new(row, "score", a->has_score ? json_real(a->score) : json_null());
	json_object_set_new(row, "node", str_or_null(a->node));
	json_object_set_new(row, "partition", str_or_null(a->partition));
	json_object_set_new(row, "gres", str_or_null(a->gres));
	json_object_set_new(row, "gpus", json_integer(slurm_gres_charged_gpus(a->gres)));
	json_object_set_new(row, "gpu_hours", json_real(attempt_hours(a, e->now)));
	json_object_set_new(row, "submitted", when(a->submitted_at));
	json_object_set_new(row, "start", when(a->started_at));
	json_object_set_new(row, "end", when(a->ended_at));
	json_object_set_new(row, "log", str_or_null(a->log_path));
	return row;
}

/* export [--format csv|jsonl] [--attempts] */
static int cmd_export(struct xl_ctx *ctx, const struct cmd_entry *self, struct cmd_args *args)
{
	const char *fmt = args_get(args, "format");
	int per_attempt = args_flag(args, "attempts"), rc = XL_OK;
	struct export e = { ctx, 1, NULL, 0, (long long)time(NULL) };
	struct best_state bs;
	struct attempt_walk walk;
	struct run *runs = NULL;
	size_t nruns = 0, i, ncols;
	const char **cols;

	if (fmt && strcmp(fmt, "csv") != 0 && strcmp(fmt, "jsonl") != 0)
		return cmd_usage_error(self, "--format must be csv or jsonl, not '%s'", fmt), XL_USAGE;
	if (ctx->json && fmt && strcmp(fmt, "csv") == 0)
		return cmd_usage_error(self, "--json is --format jsonl: not with --format csv"),
		       XL_USAGE;
	e.csv = !ctx->json && !(fmt && strcmp(fmt, "jsonl") == 0);
	if (runs_list(&ctx->db, ctx->cfg.study, &runs, &nruns) < 0)
		die("unable to read the runs");
	if (best_load(ctx, &bs) < 0) {
		runs_free(runs, nruns);
		die("unable to read the configurations");
	}
	pick_space(&e, runs, nruns);
	ncols = per_attempt ? ARRAY_SIZE(attempt_cols) : ARRAY_SIZE(run_head) +
		ARRAY_SIZE(run_tail);
	cols = xcalloc(ncols, sizeof(*cols));
	for (i = 0; i < ncols; i++)
		cols[i] = per_attempt ? attempt_cols[i] : i < ARRAY_SIZE(run_head) ? run_head[i] :
			  run_tail[i - ARRAY_SIZE(run_head)];
	if (e.csv)
		header(&e, cols, ncols, !per_attempt);
	if (attempt_walk_open(&ctx->db, ctx->cfg.study, 0, &walk) < 0)
		die("unable to read the attempts");
	for (i = 0; i < nruns && rc == XL_OK; i++) {
		struct attempt *v;
		size_t n, k;

		if (attempt_walk_run(&walk, runs[i].id, &v, &n) < 0) {
			error("unable to read the attempts of '%s'", runs[i].tag);
			rc = XL_ERR;
			break;
		}
		if (per_attempt)
			for (k = 0; k < n; k++)
				emit(&e, attempt_row(&e, &runs[i], &v[k]), cols, ncols);
		else
			emit(&e, run_row(&e, &bs, &runs[i], v, n), cols, ncols);
		attempts_free(v, n);
	}
	attempt_walk_close(&walk);
	for (i = 0; i < e.nspace; i++)
		free(e.space[i]);
	free(e.space);
	free(cols);
	best_release(&bs);
	runs_free(runs, nruns);
	return rc;
}

const struct cmd_entry cmd_export_entry = {
	.name = "export", .opts = export_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_NONE,
	.summary = "the study as a table for notebooks: one row per run (or attempt), CSV or JSON Lines",
	.help = "One row per run, in the order the runs were made: tag, run_id (the\n"
	"XLOOP_RUN_ID its jobs saw), parent, var, old_value and new_value (its one\n"
	"change), one space.NAME column per variable of the search space (every\n"
	"variable a run changed when there is no space; values as the run's\n"
	"configuration holds them, text; a JSON line has the same flat keys), seed, verdict, reason and failure_class\n"
	"(of its latest attempt), score (its latest attempt's), config_mean and\n"
	"config_runs (its configuration's mean over proven runs), model_estimate\n"
	"and model_sd (the estimate of its configuration's true score that chooses\n"
	"the best, as status names it: the model's, or the shrunken means'; empty\n"
	"when there is none), `proven` (a proven run: its latest attempt succeeded\n"
	"with a score), best (its configuration is the best: help best),\n"
	"attempts, gpu_hours (elapsed x the GPUs of --gres's gpu entry x nodes, a job\n"
	"that asks no gpu 1, running ones up to now), created, start (its first\n"
	"attempt's) and end (its latest attempt's, once judged). --attempts: one row\n"
	"per attempt instead (tag, run_id, attempt, job_id, state, exit_code,\n"
	"verdict, reason, failure_class, score, node, partition, gres, gpus,\n"
	"gpu_hours, submitted, start, end, log). Column names are stable:\n"
	"schemas/export.schema.json documents each and its type. CSV: RFC 4180, a\n"
	"header line, null as an empty field, booleans true/false, times ISO-8601\n"
	"UTC. Reads only.\n"
	"In pandas: pd.read_csv(\"runs.csv\") and pd.read_json(\"runs.jsonl\", lines=True)\n"
	"give the same columns and dtypes; pd.read_csv(\"runs.csv\", parse_dates=[\"created\",\n"
	"\"start\", \"end\"], float_precision=\"round_trip\") reads times as times and\n"
	"numbers exactly as written.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_export,
};
