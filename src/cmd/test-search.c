/*
 * xloop test-search --objective peak|flat [--budget N] [--stream S]
 * [--noise SD]: autopilot's real proposer (propose.c) and promotion rule
 * (noise.c) against a synthetic objective, in process, one run at a time,
 * for the search benchmark (bench/search.py). Prints after every run the
 * true (noise-free) score of what xloop calls best, and its promotions.
 *
 * xloop test-search --external --space VAR=SPEC... --baseline TEXT
 * [--budget N]: the same loop against an objective the caller computes
 * (the benchmark's real studies): for each run it prints one line
 * {"ask": {VAR: value, ..., "SEED": s}} and reads the score from a line
 * of stdin, then prints {"best": {VAR: value, ...}, "runs": n, "p": P(it beats
 * the one before) or null, "n": its runs, "source": "model" or the fallback}.
 *
 * The objective has four integer variables X1..X4 in 1..9 and a ridge:
 * X1 and X2 must move together (0.02 (X1-X2)^2 is lost off the ridge),
 * so one change at a time from the single best gets stuck. A run's score
 * is f(x) + sqrt(rho) SD o(stream, seed) + sqrt(1 - rho) SD e(stream,
 * seed, X1..X4): o is the seed's offset, shared by every configuration run
 * with that seed (on real studies same-seed runs correlate 0.3 to 0.7;
 * rho = --seed-corr, default 0.5), e the run's own noise; both are normal
 * deviates drawn from splitmix64 (e as in bench/search.py; o of (stream,
 * seed) with the tag SEED_TAG in the low bits).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "lib/buf.h"
#include "search/choose.h"
#include "search/confkey.h"
#include "search/noise.h"
#include "search/propose.h"
#include "search/space.h"

static const struct opt test_search_opts[] = {
	{ "objective", OPT_STRING, "peak|flat|lead", "the synthetic objective (default peak)" },
	{ "vars", OPT_STRING, "D", "variables of flat and lead (1 to 8, default 4)" },
	{ "lead-at", OPT_STRING, "K", "lead: the better configuration is the first new one "
	  "from run K on (2 to 1000, default 4)" },
	{ "budget", OPT_STRING, "N", "runs (1 to 10000, default 60)" },
	{ "stream", OPT_STRING, "S", "the random stream (default 1)" },
	{ "noise", OPT_STRING, "SD", "the noise's standard deviation (default 0.01)" },
	{ "branch", OPT_STRING, "B", "search.branch (1 to 20, default 3)" },
	{ "seed-corr", OPT_STRING, "RHO", "the correlation of same-seed runs (0 to 1, default 0.5)" },
	{ "external", OPT_FLAG, NULL, "the caller scores each run (needs --space, --baseline)" },
	{ "space", OPT_LIST, "VAR=SPEC", "one variable of the space (repeatable)" },
	{ "baseline", OPT_STRING, "TEXT", "the baseline's job.sh assignments" },
	{ "goal", OPT_STRING, "max|min", "metric.goal of the external study (default max)" },
	{ "threshold", OPT_STRING, "P", "the probability the best moves at (default: xloop's, "
	  "calibrated; for the calibration)" },
	OPT_END,
};

/* Variables of the peak objective; flat and lead take 1 to MAXVARS. */
#define NVARS 4
#define MAXVARS 8

/* The synthetic objective. */
struct sim_obj {
	enum { OBJ_PEAK, OBJ_FLAT, OBJ_LEAD } kind;
	int nvars;
	long lead_at;		/* lead: the better configuration's first run, 1-based */
	double lead;		/* lead: how much better (3 seed-sds) */
	char lead_key[65];	/* lead: its configuration key ("": not run yet) */
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * XLOOP_SEARCH_DEBUG=1 traces each proposal and promotion on stderr; read
 * only by the test build, so the product has no undocumented switch.
 */
static int search_debug(void)
{
#ifdef XLOOP_TEST_BUILD
	return getenv("XLOOP_SEARCH_DEBUG") != NULL;
#else
	return 0;
#endif
}

/* The noise-free score of configuration key at x. */
static double true_score(const struct sim_obj *o, const long *x, const char *key)
{
	double mid = (double)(x[0] + x[1]) / 2;

	if (o->kind == OBJ_LEAD)
		return 0.9 + (o->lead_key[0] && strcmp(key, o->lead_key) == 0 ? o->lead : 0);
	if (o->kind == OBJ_FLAT)
		return 0.9;
	return 0.9 - 0.02 * (double)((x[0] - x[1]) * (x[0] - x[1])) -
	       0.004 * (mid - 7) * (mid - 7) - 0.003 * (double)((x[2] - 2) * (x[2] - 2)) -
	       0.002 * (double)((x[3] - 5) * (x[3] - 5));
}

/* A normal deviate for (stream, seed, x); x has MAXVARS values, 0 past the study's. */
static double noise_of(long stream, long seed, const long *x)
{
	uint64_t h = splitmix64(((uint64_t)stream << 40) ^ ((uint64_t)seed << 32) ^
				((uint64_t)x[0] << 24) ^ ((uint64_t)x[1] << 16) ^
				((uint64_t)x[2] << 8) ^ (uint64_t)x[3]), h2;
	int i;

	/* variables past the fourth (none on the peak objective: its draws stay) */
	for (i = NVARS; i < MAXVARS; i++)
		if (x[i])
			h = splitmix64(h ^ ((uint64_t)x[i] << (8 * (i - NVARS))));
	h2 = splitmix64(h);
	double u1 = ((double)(h >> 11) + 1) / 9007199254740993.0;
	double u2 = (double)(h2 >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The low bits of the seed offset's hash: no configuration's (X1..X4 >= 1). */
#define SEED_TAG 0

/* The offset of a seed, shared by every configuration (a normal deviate). */
static double seed_offset(long stream, long seed)
{
	long zero[MAXVARS] = { SEED_TAG, SEED_TAG, SEED_TAG, SEED_TAG };

	return noise_of(stream, seed, zero);
}

struct sim_run {
	char *config;
	char key[65];
	long x[MAXVARS], seed;
	double score;
};

/* X1..Xn and SEED of a configuration text (x: MAXVARS values, 0 past n). */
static void values_of(const char *config, int n, long *x, long *seed)
{
	char name[8], *v;
	int i;

	memset(x, 0, MAXVARS * sizeof(*x));
	for (i = 0; i < n; i++) {
		xsnprintf(name, sizeof(name), "X%d", i + 1);
		v = confkey_value(config, name);
		x[i] = v ? strtol(v, NULL, 10) : 0;
		free(v);
	}
	v = confkey_value(config, "SEED");
	*seed = v ? strtol(v, NULL, 10) : 0;
	free(v);
}

/* A configuration text as a JSON object (the seed too unless drop_seed). */
static json_t *config_json(const char *config, int drop_seed)
{
	json_t *o = json_object();
	const char *line = config;

	while (*line) {
		const char *eq = strchr(line, '='), *nl = strchr(line, '\n');
		char *name, *val;

		if (nl == NULL)
			nl = line + strlen(line);
		if (eq && eq < nl) {
			name = xstrndup(line, (size_t)(eq - line));
			val = xstrndup(eq + 1, (size_t)(nl - eq - 1));
			if (!drop_seed || strcmp(name, "SEED") != 0)
				json_object_set_new(o, name, json_string(val));
			free(name);
			free(val);
		}
		line = *nl ? nl + 1 : nl;
	}
	return o;
}

/* One compact JSON line on stdout, flushed (the caller reads it before answering). */
static void emit_line(json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);

	printf("%s\n", text);
	fflush(stdout);
	free(text);
	json_decref(doc);
}

/* Ask the caller for a configuration's score (one line of stdin). */
static double ask(const char *config)
{
	char line[256], *end;
	double score;

	emit_line(json_pack("{s:o}", "ask", config_json(config, 0)));
	if (fgets(line, sizeof(line), stdin) == NULL)
		die("test-search: no score on stdin");
	score = strtod(line, &end);
	if (end == line)
		die("test-search: bad score '%s'", line);
	return score;
}

/* Run the search; prints one JSON document (external: a line per run). */
static int simulate(struct sim_obj *o, long budget, long stream, double sd, double rho, long branch,
		    const struct space *ext_space, const char *ext_base, double threshold,
		    int goal_max)
{
	int ext = ext_space != NULL;
	struct sim_run *runs = xcalloc((size_t)budget + 1, sizeof(*runs));
	struct prop_cfg *v = xcalloc((size_t)budget + 1, sizeof(*v));
	long *rep = xcalloc((size_t)budget + 1, sizeof(*rep));
	struct prop_run *pr = xcalloc((size_t)budget + 1, sizeof(*pr));
	char (*seeds)[24] = xcalloc((size_t)budget + 1, sizeof(*seeds));
	struct noise_cfg *st = xcalloc((size_t)budget + 1, sizeof(*st));
	struct noise_obs *obs = xcalloc((size_t)budget + 1, sizeof(*obs));
	char *tags = xcalloc((size_t)budget + 1, 16);
	struct space sp = { NULL, 0 };
	json_t *trace = json_array();
	long n = 0, i, best_prev = -1, promotions = 0, false_promotions = 0, nproven = 0;
	int ever_proven = 0, ever_any = 0;
	double pick_p = NAN;
	const char *source = "none";
	double best_true_prev = 0;
	unsigned long turn = 0;
	char *cause = NULL;

	sp.v = xcalloc(MAXVARS, sizeof(*sp.v));
	for (i = 0; i < o->nvars && !ext; i++) {
		char arg[32];

		xsnprintf(arg, sizeof(arg), "X%ld=1..9:int", i + 1);
		if (space_parse_arg(arg, &sp.v[sp.n++], &cause) < 0)
			die("%s", cause);
	}
	if (ext) {
		runs[0].config = xstrdup(ext_base);
	} else if (o->nvars == NVARS) {
		runs[0].config = xstrdup("SEED=1\nX1=3\nX2=3\nX3=7\nX4=2\n");
	} else {
		struct buf b = BUF_INIT;

		buf_adds(&b, "SEED=1\n");
		for (i = 0; i < o->nvars; i++)
			buf_addf(&b, "X%ld=5\n", i + 1);
		runs[0].config = buf_detach(&b, NULL);
	}
	for (;;) {
		struct prop_input in;
		struct noise_rule rule;
		struct prop_out out;
		size_t nc = 0;
		long best, j;

		if (n > 0) {
			/* group the runs into configurations */
			for (i = 0; i < n; i++) {
				for (j = 0; j < (long)nc; j++)
					if (strcmp(v[j].key, runs[i].key) == 0)
						break;
				if (j == (long)nc) {
					memset(&v[nc], 0, sizeof(v[nc]));
					v[nc].key = runs[i].key;
					v[nc].config = runs[i].config;
					xsnprintf(tags + 16 * nc, 16, "r%ld", i);
					v[nc].rep_tag = tags + 16 * nc;
					rep[nc] = i;
					nc++;
				}
				noise_add(&v[j].st, runs[i].score);
				xsnprintf(seeds[i], sizeof(seeds[i]), "%ld", runs[i].seed);
				pr[i].cfg = j;
				pr[i].seed = seeds[i];
				pr[i].proven = 1;
				pr[i].score = runs[i].score;
			}
			for (j = 0; j < (long)nc; j++)
				st[j] = v[j].st;
			{
				const char **sv = xcalloc((size_t)n + 1, sizeof(*sv));
				long *ids = xcalloc((size_t)n + 1, sizeof(*ids));

				for (i = 0; i < n; i++)
					sv[i] = seeds[i];
				noise_seed_ids(sv, (size_t)n, ids);
				for (i = 0; i < n; i++) {
					obs[i].cfg = pr[i].cfg;
					obs[i].seed = ids[i];
					obs[i].score = runs[i].score;
				}
				free(sv);
				free(ids);
			}
			memset(&in, 0, sizeof(in));
			in.v = v;
			in.n = nc;
			in.runs = pr;
			in.nruns = (size_t)n;
			in.p.goal_max = goal_max;
			in.p.alpha = 0.05;
			noise_rule_init(&rule, obs, (size_t)n, st, nc, &in.p);
			in.noise = rule.within;
			in.baseline = 0;
			in.space = ext ? ext_space : &sp;
			in.seed = "SEED";
			/* sticky, as best.c: start from the last best */
			for (j = 0; j < (long)nc && best_prev >= 0; j++)
				if (strcmp(v[j].key, runs[best_prev].key) == 0)
					break;
			{
				struct choice ch;

				choose_best_at(&in, best_prev >= 0 ? j : 0, threshold, &ch);
				best = ch.best;
				pick_p = ch.p;
				source = choose_source_name(ch.source);
				choice_release(&ch);
			}
			in.best = best;
			/* proven: the paired test's "confirmed" label of the best against the baseline
			 * (what status shows); any_proven: configurations it would label */
			nproven = 0;
			for (j = 1; j < (long)nc; j++) {
				struct noise_cmp pc;

				noise_compare(&rule, j, 0, &pc);
				nproven += pc.beats;
				if (j == best)
					ever_proven |= pc.beats;
			}
			ever_any |= nproven > 0;
			if (ext) {
				emit_line(json_pack("{s:o, s:I, s:o, s:I, s:s}", "best",
						    config_json(v[best].config, 1), "runs",
						    (json_int_t)n, "p",
						    isnan(pick_p) ? json_null() : json_real(pick_p),
						    "n", (json_int_t)v[best].st.n, "source", source));
				best_prev = rep[best];
			} else {
				double t = true_score(o, runs[rep[best]].x, v[best].key);
				long lead_cfg = -1, lead_common = 0;

				if (best_prev >= 0 && strcmp(v[best].key, runs[best_prev].key) != 0) {
					promotions++;
					false_promotions += t < best_true_prev;
					if (search_debug())
						fprintf(stderr, "run %ld: best %s (true %g, mean %g n %ld) "
							"replaces true %g; sd %g df %ld, resid sd %g df %ld\n",
							n, v[best].config, t, v[best].st.mean, v[best].st.n,
							best_true_prev, in.noise.sd, in.noise.df,
							rule.resid.sd, rule.resid.df);
				}
				best_prev = rep[best];
				best_true_prev = t;
				long lead = 0;

				/* the highest mean (what a method without the rule would pick) */
				for (j = 1; j < (long)nc; j++)
					if (v[j].st.mean > v[lead].st.mean)
						lead = j;
				/* lead: the better configuration's runs on seeds the baseline has */
				for (j = 0; j < (long)nc && o->lead_key[0]; j++)
					if (strcmp(v[j].key, o->lead_key) == 0)
						lead_cfg = j;
				for (i = 0; i < n && lead_cfg > 0; i++) {
					long k;

					if (pr[i].cfg != lead_cfg)
						continue;
					for (k = 0; k < n; k++)
						if (pr[k].cfg == 0 && runs[k].seed == runs[i].seed)
							break;
					lead_common += k < n;
				}
				json_array_append_new(trace, json_pack("{s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:b, s:I}",
					"runs", (json_int_t)n, "best_true", t,
					"leader_true", true_score(o, runs[rep[lead]].x, v[lead].key),
					"best_n", (json_int_t)v[best].st.n,
					"promotions", (json_int_t)promotions,
					"false_promotions", (json_int_t)false_promotions,
					"proven", (json_int_t)nproven, "ever_proven", ever_proven, "ever_any_proven", ever_any,
					"p", isnan(pick_p) ? json_null() : json_real(pick_p),
					"best_is_lead", lead_cfg >= 0 && best == lead_cfg,
					"lead_common", (json_int_t)lead_common));
			}
			noise_rule_release(&rule);
			if (n >= budget)
				break;
			in.replicates = 3;
			in.confirm_max = 6;
			in.budget_runs = budget;
			in.branch = branch;
			in.turn = turn++;
			propose_next(&in, &out);
			if (search_debug())
				fprintf(stderr, "run %ld: %s\n", n + 1, out.reason);
			if (out.kind == PROP_NONE) {
				prop_out_release(&out);
				break;
			}
			if (out.kind == PROP_REPLICATE) {
				long top = 0;
				char sv[24];

				/* the seed chosen (one the best has), else a fresh one
				 * for the configuration, as autopilot.c */
				for (i = 0; i < n; i++)
					if (strcmp(runs[i].key, v[out.cfg].key) == 0 && runs[i].seed > top)
						top = runs[i].seed;
				xsnprintf(sv, sizeof(sv), "%ld", top + 1);
				runs[n].config = confkey_with(v[out.cfg].config, "SEED",
							      out.value ? out.value : sv);
			} else {
				runs[n].config = xstrdup(out.config);
			}
			prop_out_release(&out);
		}
		confkey_key(runs[n].config, "SEED", runs[n].key);
		values_of(runs[n].config, ext ? 0 : o->nvars, runs[n].x, &runs[n].seed);
		if (!ext && o->kind == OBJ_LEAD && !o->lead_key[0] && n + 1 >= o->lead_at) {
			/* the first new configuration from run lead_at on is the better one */
			for (i = 0; i < n && strcmp(runs[i].key, runs[n].key) != 0; i++)
				;
			if (i == n)
				memcpy(o->lead_key, runs[n].key, sizeof(o->lead_key));
		}
		if (ext)
			runs[n].score = ask(runs[n].config);
		else
			runs[n].score = true_score(o, runs[n].x, runs[n].key) +
					sd * sqrt(rho) * seed_offset(stream, runs[n].seed) +
					sd * sqrt(1 - rho) * noise_of(stream, runs[n].seed, runs[n].x);
		n++;
	}
	if (ext)
		json_decref(trace);
	else
		cmd_emit_json(json_pack("{s:s, s:i, s:I, s:I, s:o}", "objective",
					o->kind == OBJ_FLAT ? "flat" : o->kind == OBJ_LEAD ? "lead" :
					"peak", "vars", o->nvars, "stream", (json_int_t)stream, "runs",
					(json_int_t)n, "trace", trace));
	for (i = 0; i < n; i++)
		free(runs[i].config);
	free(runs);
	free(v);
	free(rep);
	free(pr);
	free(seeds);
	free(st);
	free(obs);
	free(tags);
	space_release(&sp);
	return XL_OK;
}

/* The benchmark's in-process search. */
static int cmd_test_search(struct xl_ctx *ctx, const struct cmd_entry *self,
			   struct cmd_args *args)
{
	const char *obj = "peak", *bud = "60", *str = "1", *noise = "0.01", *br = "3", *err;
	const char *vars = args_get(args, "vars"), *lead_at = args_get(args, "lead-at");
	long long nvars = NVARS, at = 4;
	struct sim_obj o;
	const char *base = args_get(args, "baseline");
	const struct opt_list spaces = *args_list(args, "space");
	int external = args_flag(args, "external");
	long long budget, stream, branch;
	double rho, threshold = CHOOSE_P;
	char *cause = NULL;
	int npos = args->npos, rc, i;

	(void)ctx;
	if (args_get(args, "threshold")) {
		threshold = strtod(args_get(args, "threshold"), NULL);
		if (!(threshold > 0 && threshold <= 1)) {
			cmd_usage_error(self, "--threshold: a probability above 0");
			return XL_USAGE;
		}
	}
	obj = args_get(args, "objective") ? args_get(args, "objective") : obj;
	bud = args_get(args, "budget") ? args_get(args, "budget") : bud;
	str = args_get(args, "stream") ? args_get(args, "stream") : str;
	noise = args_get(args, "noise") ? args_get(args, "noise") : noise;
	br = args_get(args, "branch") ? args_get(args, "branch") : br;
	if (external) {
		struct space sp = { NULL, 0 };
		char *config = NULL;

		const char *goal = args_get(args, "goal");

		if (npos || base == NULL || spaces.n == 0 ||
		    (goal && strcmp(goal, "max") != 0 && strcmp(goal, "min") != 0) ||
		    parse_ll(bud, 1, 10000, &budget, &err) < 0 ||
		    parse_ll(br, 1, 20, &branch, &err) < 0) {
			cmd_usage_error(self, "--external needs --space and --baseline");
			return XL_USAGE;
		}
		sp.v = xcalloc((size_t)spaces.n, sizeof(*sp.v));
		for (i = 0; i < spaces.n; i++)
			if (space_parse_arg(spaces.v[i], &sp.v[sp.n++], &cause) < 0)
				die("%s", cause);
		if (confkey_config(base, strlen(base), &config, &cause) < 0)
			die("%s", cause);
		memset(&o, 0, sizeof(o));
		rc = simulate(&o, (long)budget, 0, 0, 0, (long)branch, &sp, config, threshold,
			      !args_get(args, "goal") || strcmp(args_get(args, "goal"), "min") != 0);
		free(config);
		space_release(&sp);
		return rc;
	}
	memset(&o, 0, sizeof(o));
	o.kind = strcmp(obj, "flat") == 0 ? OBJ_FLAT : strcmp(obj, "lead") == 0 ? OBJ_LEAD : OBJ_PEAK;
	if (npos || (o.kind == OBJ_PEAK && strcmp(obj, "peak") != 0) ||
	    (vars && (o.kind == OBJ_PEAK || parse_ll(vars, 1, MAXVARS, &nvars, &err) < 0)) ||
	    (lead_at && (o.kind != OBJ_LEAD || parse_ll(lead_at, 2, 1000, &at, &err) < 0)) ||
	    parse_ll(bud, 1, 10000, &budget, &err) < 0 ||
	    parse_ll(str, 0, 1 << 20, &stream, &err) < 0 ||
	    parse_ll(br, 1, 20, &branch, &err) < 0) {
		cmd_usage_error(self, "bad arguments");
		return XL_USAGE;
	}
	rho = args_get(args, "seed-corr") ? strtod(args_get(args, "seed-corr"), NULL) : 0.5;
	if (!(rho >= 0 && rho <= 1)) {
		cmd_usage_error(self, "--seed-corr: a number from 0 to 1");
		return XL_USAGE;
	}
	o.nvars = (int)nvars;
	o.lead_at = (long)at;
	o.lead = 3 * strtod(noise, NULL);
	return simulate(&o, (long)budget, (long)stream,
			strtod(noise, NULL), rho, (long)branch, NULL, NULL, threshold, 1);
}

const struct cmd_entry cmd_test_search_entry = {
	.name = "test-search", .opts = test_search_opts, .args = "", .min = 0, .max = -1,
	.target = CMD_TARGET_NONE,
	.summary = "autopilot's proposer and promotion rule on a synthetic objective (benchmark)",
	.help = "Prints {objective, vars, stream, runs, trace: [{runs, best_true, leader_true, best_n,\n"
	"promotions, false_promotions, proven, ever_proven, ever_any_proven, p, best_is_lead,\n"
	"lead_common}]}: after each\n"
	"number of runs, the noise-free score of what xloop calls best (and of the highest\n"
	"mean), how often the best moved, how many configurations the paired test\n"
	"labels confirmed better than the baseline (the keys keep their old name,\n"
	"proven; ever_proven: the best was labelled; ever_any_proven: any was) and p, the probability that the model's pick beats\n"
	"the best (the calibration reads it). bench/search.py compares it with Optuna's TPE and random\n"
	"search on the same objective and noise. --objective lead: every configuration\n"
	"scores 0.9 but one, 3 noise sds better, the first new one from run --lead-at\n"
	"on (best_is_lead: it is the best; lead_common: its runs on seeds the baseline\n"
	"has); flat and lead take --vars D (X1..XD). With --external, the caller scores\n"
	"each run: a line {\"ask\": {VAR: value, ...}} out, the score back on stdin,\n"
	"then {\"best\": {...}, \"runs\": n} (the seed variable is SEED; --goal min: lower\n"
	"scores are better).\n",
	.flags = CMD_HIDDEN, .exec = cmd_test_search,
};
