/*
 * Over 900 lines: one loop for the benchmarks' three modes (synthetic, --external,
 * --curves), kept in one file so the three meet the same proposer the same way.
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
 * --lanes L: L runs in flight (autopilot's queue.lanes). Runs finish in
 * the order they were proposed; after each, the best is chosen again and
 * runs are proposed until L are in flight, the pending ones passed to the
 * proposer as open runs (fantasized at the model's mean, their keys taken).
 * The baseline runs alone first, as autopilot proposes nothing before a
 * run is proven. --external then asks ahead: each ask line goes out when
 * the run is proposed, its score is read when it finishes.
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
#include "jobs/stop-replay.h"

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
	{ "lanes", OPT_STRING, "L", "runs in flight at once (1 to 16, default 1): when the oldest "
	  "finishes, one is proposed while the others are pending" },
	{ "external", OPT_FLAG, NULL, "the caller scores each run (needs --space, --baseline)" },
	{ "space", OPT_LIST, "VAR=SPEC", "one variable of the space (repeatable)" },
	{ "baseline", OPT_STRING, "TEXT", "the baseline's job.sh assignments" },
	{ "goal", OPT_STRING, "max|min", "metric.goal of the external study (default max)" },
	{ "threshold", OPT_STRING, "P", "the probability the best moves at (default: xloop's, "
	  "calibrated; for the calibration)" },
	{ "curves", OPT_STRING, "FILE", "replay the learning curves of FILE (bench/curves.py) with "
	  "the stop rule (issue 46)" },
	{ "hours", OPT_STRING, "H", "--curves: the budget in GPU-hours of the curves' seconds" },
	{ "no-stop", OPT_FLAG, NULL, "--curves: every run to its end" },
	{ "placebo", OPT_FLAG, NULL, "--curves: a stopped run costs its whole curve (the path "
	  "changes as with the rule, no hours are saved)" },
	{ "stopped", OPT_STRING, "censored|proposer|model|all", "--curves: a stopped run is no "
	  "observation, one at its last value for the proposer alone, for the proposer and the "
	  "choice's model (autopilot.c and best.c: never the best; the default), or for the "
	  "choice's means too (a partial run may be the best)" },
	{ "stop", OPT_STRING, "W,R,Z", "--curves: stop.warmup, stop.behind, stop.noise_z "
	  "(default xloop's)" },
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
	/* --curves: its curve, the bar it had at submit, what became of it */
	const struct replay_run *cv;
	int rule_on, proven, model;	/* model: a stopped run the model sees */
	const char *kind, *why;
	double *bar, cost;	/* cost: the seconds it ran */
	size_t nbar;
	long long stop_at;	/* the epoch it stopped at, -1: ran to its end */
	long long would_at;	/* --no-stop: where the rule would have stopped it (-1: nowhere) */
	double would_cost;	/* --no-stop: the seconds it would have cost */
	char *best_after;	/* the best's configuration once it finished */
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

/* Ask the caller for a configuration's score: the ask line now, the score when the run finishes. */
static void ask(const char *config)
{
	emit_line(json_pack("{s:o}", "ask", config_json(config, 0)));
}

/* The score of the oldest run asked and not answered yet (one line of stdin). */
static double answer(void)
{
	char line[256], *end;
	double score;

	if (fgets(line, sizeof(line), stdin) == NULL)
		die("test-search: no score on stdin");
	score = strtod(line, &end);
	if (end == line)
		die("test-search: bad score '%s'", line);
	return score;
}

/* The search's state: the runs made (runs[0, nd) finished, runs[nd, np) in flight). */
struct sim {
	struct sim_obj *o;
	int ext;
	/* --curves: the data, the rule, the budget in seconds */
	const struct replay *rp;
	/*
	 * stopped_value: what a stopped run is to the model: 0 nothing (censored), 1 its
	 * value at the stop for the proposer and the choice's model (model, xloop's), 2 for
	 * the choice's means too (all), 3 for the proposer alone (proposer); placebo: a
	 * stopped run costs its whole curve
	 */
	int stop, stopped_value, placebo;
	struct stop_params sp;
	double budget_secs, spent;
	long next_parent, cur_best;	/* the proposal's parent and the best, for its bar */
	const char *next_kind;
	long budget, stream, lanes;
	/* the pick remembered (best.c's best_pick): its key, the runs done when it became it */
	char pick_key[72];
	long pick_since;
	double sd, rho;
	struct sim_run *runs;
	long np, nd;
	/* the proposer's view, rebuilt before each choice */
	struct prop_cfg *v;
	long *rep;		/* each configuration's first finished run, -1: none */
	struct prop_run *pr;
	char (*seeds)[24];
	struct noise_cfg *st;
	struct noise_obs *obs;
	char *tags;
	const char **taken;	/* the keys in flight */
	size_t nc;
};

/* Group runs[0, np) into configurations for the proposer (those in flight open) and set in. */
static void sim_view(struct sim *s, struct prop_input *in, struct noise_rule *rule, int goal_max,
		     const struct space *sp)
{
	const char **sv = xcalloc((size_t)s->np + 1, sizeof(*sv));
	long *ids = xcalloc((size_t)s->np + 1, sizeof(*ids));
	long i, j;
	size_t nt = 0, nobs;

	s->nc = 0;
	for (i = 0; i < s->np; i++) {
		int done = i < s->nd, proven = done && (!s->rp || s->runs[i].proven);

		for (j = 0; j < (long)s->nc; j++)
			if (strcmp(s->v[j].key, s->runs[i].key) == 0)
				break;
		if (j == (long)s->nc) {
			memset(&s->v[j], 0, sizeof(s->v[j]));
			s->v[j].key = s->runs[i].key;
			s->v[j].config = s->runs[i].config;
			s->rep[j] = -1;
			s->nc++;
		}
		if (proven) {
			if (s->rep[j] < 0) {
				xsnprintf(s->tags + 16 * j, 16, "r%ld", i);
				s->v[j].rep_tag = s->tags + 16 * j;
				s->rep[j] = i;
			}
			noise_add(&s->v[j].st, s->runs[i].score);
		} else if (!done) {
			s->v[j].open++;
			s->taken[nt++] = s->runs[i].key;
		}
		xsnprintf(s->seeds[i], sizeof(s->seeds[i]), "%ld", s->runs[i].seed);
		s->pr[i].cfg = j;
		s->pr[i].seed = s->seeds[i];
		s->pr[i].proven = proven || (done && s->runs[i].model);
		s->pr[i].open = !done;
		s->pr[i].score = s->pr[i].proven ? s->runs[i].score : 0;
		sv[i] = s->seeds[i];
	}
	for (j = 0; j < (long)s->nc; j++)
		s->st[j] = s->v[j].st;
	for (i = 0; i < s->nd; i++)	/* the proposer sees stopped runs too (autopilot.c) */
		if (s->runs[i].model)
			noise_add(&s->v[s->pr[i].cfg].st, s->runs[i].score);
	/* the runs finished are the first nd (FIFO); stopped and failed ones are no observation */
	noise_seed_ids(sv, (size_t)s->np, ids);
	for (i = 0, nobs = 0; i < s->nd; i++) {
		if (s->rp && !s->runs[i].proven)
			continue;
		s->obs[nobs].cfg = s->pr[i].cfg;
		s->obs[nobs].seed = ids[i];
		s->obs[nobs++].score = s->runs[i].score;
	}
	free(sv);
	free(ids);
	memset(in, 0, sizeof(*in));
	in->v = s->v;
	in->n = s->nc;
	in->runs = s->pr;
	in->nruns = (size_t)s->np;
	in->p.goal_max = goal_max;
	in->p.alpha = 0.05;
	noise_rule_init(rule, s->obs, nobs, s->st, s->nc, &in->p);
	in->noise = rule->within;
	in->baseline = 0;
	in->space = sp;
	in->seed = "SEED";
	in->taken = s->taken;
	in->ntaken = nt;
}

/*
 * --curves: the data's seed of a run's seed (1, 2, ...): the stream picks one of
 * the data's seeds! orders of its seeds (its digits in the factorial base; 0:
 * in order), so that each stream up to seeds! sees another order (bench/stop.py's
 * seed_order, the same for Optuna's trials).
 */
static long curves_seed(const struct replay *rp, long stream, long seed)
{
	long n = rp->seeds, left[64], k = stream, i, pick, slot;

	if (n > 64)
		return seed - 1 + stream;	/* replay_find wraps it */
	for (i = 0; i < n; i++)
		left[i] = i;
	slot = ((seed - 1) % n + n) % n;
	for (i = 0; i < n; i++) {
		pick = k % (n - i);
		k /= n - i;
		if (i == slot)
			return left[pick];
		memmove(&left[pick], &left[pick + 1], (size_t)(n - i - pick - 1) * sizeof(*left));
	}
	return slot;
}

/* --curves: run np's curve (its seed through curves_seed), its bar as stop_bar_write's. */
static void curves_submit(struct sim *s, struct sim_run *r)
{
	const struct replay_run **done = xcalloc((size_t)s->nd + 1, sizeof(*done));
	long i, *cfg = xcalloc((size_t)s->nd + 1, sizeof(*cfg));
	size_t n = 0;

	r->cv = replay_find(s->rp, r->key, curves_seed(s->rp, s->stream, r->seed));
	if (!r->cv)
		die("test-search: '%s' is not in the curves", r->config);
	r->kind = s->next_kind;
	r->rule_on = s->stop && strcmp(r->kind, "change") == 0;
	/* --no-stop computes the bar too: where the rule would stop it on this path */
	for (i = 0; i < s->nd && strcmp(r->kind, "change") == 0; i++)
		if (s->runs[i].proven && s->runs[i].stop_at < 0) {
			done[n] = s->runs[i].cv;
			cfg[n++] = s->pr[i].cfg;
		}
	if (strcmp(r->kind, "change") == 0)
		r->nbar = replay_bar(s->rp, done, cfg, n, s->cur_best, s->next_parent, &s->sp,
				     &r->bar);
	free(done);
	free(cfg);
}

/* --curves: run r finishes: where the rules stop it, its cost, its score. */
static void curves_finish(struct sim *s, struct sim_run *r)
{
	struct replay_end e;

	replay_finish(s->rp, r->cv, strcmp(r->kind, "change") == 0, r->bar, r->nbar, &s->sp, &e);
	r->would_at = e.stop_at;
	r->would_cost = e.cost;
	if (!r->rule_on)
		replay_finish(s->rp, r->cv, 0, r->bar, r->nbar, &s->sp, &e);
	r->stop_at = e.stop_at;
	r->why = e.why;
	if (s->placebo)
		replay_finish(s->rp, r->cv, 0, r->bar, r->nbar, &s->sp, &e);
	s->spent += r->cost = e.cost;
	r->score = r->cv->acc[s->rp->epochs - 1];
	r->proven = r->stop_at < 0 && isfinite(r->score);
	if (s->stopped_value && r->stop_at > 0 && isfinite(r->cv->acc[r->stop_at - 1])) {
		/* a lower-fidelity observation: its value at the stop */
		r->score = r->cv->acc[r->stop_at - 1];
		r->model = s->stopped_value == 1 || s->stopped_value == 3;	/* the proposer's */
		r->proven = s->stopped_value == 2;
	}
}

/* Make run np from its configuration text (owned): its key and values; external: ask for it. */
static void sim_make(struct sim *s, char *config)
{
	struct sim_run *r = &s->runs[s->np];
	long i;

	r->config = config;
	confkey_key(r->config, "SEED", r->key);
	values_of(r->config, s->ext ? 0 : s->o->nvars, r->x, &r->seed);
	if (!s->ext && s->o->kind == OBJ_LEAD && !s->o->lead_key[0] && s->np + 1 >= s->o->lead_at) {
		/* the first new configuration from run lead_at on is the better one */
		for (i = 0; i < s->np && strcmp(s->runs[i].key, r->key) != 0; i++)
			;
		if (i == s->np)
			memcpy(s->o->lead_key, r->key, sizeof(s->o->lead_key));
	}
	if (s->ext)
		ask(r->config);
	if (s->rp)
		curves_submit(s, r);
	s->np++;
}

/* The oldest run in flight finishes: its score becomes known. */
static void sim_finish(struct sim *s)
{
	struct sim_run *r = &s->runs[s->nd];

	if (s->rp)
		curves_finish(s, r);
	else if (s->ext)
		r->score = answer();
	else
		r->score = true_score(s->o, r->x, r->key) +
			   s->sd * sqrt(s->rho) * seed_offset(s->stream, r->seed) +
			   s->sd * sqrt(1 - s->rho) * noise_of(s->stream, r->seed, r->x);
	s->nd++;
}

/*
 * The configuration of a proposal (malloc'd); *repeat 1 when it repeats a
 * run in flight (a change to a configuration in flight, or a replicate on
 * a seed its configuration has in flight: the proposer must never).
 */
static char *sim_config(const struct sim *s, const struct prop_out *out, int *repeat)
{
	char *config, key[65];
	long i, top = 0, seed;

	if (out->kind == PROP_REPLICATE) {
		const char *key0 = s->v[out->cfg].key;
		char sv[24];
		int has = 0;

		/* the seed chosen (one the best has), else a fresh one for the
		 * configuration; one it has already (in flight): a fresh one, as autopilot.c */
		for (i = 0; i < s->np; i++)
			if (strcmp(s->runs[i].key, key0) == 0) {
				if (s->runs[i].seed > top)
					top = s->runs[i].seed;
				if (out->value && i >= s->nd &&
				    s->runs[i].seed == strtol(out->value, NULL, 10))
					has = 1;
			}
		xsnprintf(sv, sizeof(sv), "%ld", top + 1);
		config = confkey_with(s->v[out->cfg].config, "SEED",
				      out->value && !has ? out->value : sv);
	} else {
		config = xstrdup(out->config);
	}
	confkey_key(config, "SEED", key);
	{
		char *sv = confkey_value(config, "SEED");

		seed = sv ? strtol(sv, NULL, 10) : 0;
		free(sv);
	}
	*repeat = 0;
	for (i = s->nd; i < s->np; i++)
		if (strcmp(s->runs[i].key, key) == 0 &&
		    (out->kind != PROP_REPLICATE || s->runs[i].seed == seed))
			*repeat = 1;
	return config;
}

/* Swap in (on) or out the choice's view: without the stopped runs the proposer sees. */
static void choice_view(struct sim *s, int on)
{
	struct noise_cfg t;
	long i;

	for (i = 0; i < s->nd; i++) {
		/* the choice's model fits a stopped run (best.c), unless --stopped proposer */
		s->pr[i].partial = on && s->runs[i].model && s->stopped_value == 1;
		s->pr[i].proven = on ? s->pr[i].proven && !s->runs[i].model :
				  s->pr[i].proven || s->runs[i].model;
	}
	for (i = 0; i < (long)s->nc && s->stopped_value; i++) {
		t = s->v[i].st;
		s->v[i].st = s->st[i];
		s->st[i] = t;
	}
}

/* --curves: the document, a run a line of the trace (the bench computes the figures). */
static void curves_emit(struct sim *s, json_t *trace)
{
	long i;

	for (i = 0; i < s->nd; i++) {
		struct sim_run *r = &s->runs[i];

		json_array_append_new(trace, json_pack("{s:o, s:I, s:s, s:b, s:o, s:o, s:f, s:b, s:o, s:o, s:f}",
			"config", config_json(r->config, 1), "seed", (json_int_t)r->cv->seed,
			"kind", r->kind, "rule", r->rule_on,
			"stopped", r->stop_at >= 0 ? json_integer(r->stop_at) : json_null(),
			"why", r->stop_at >= 0 ? json_string(r->why) : json_null(),
			"secs", r->cost, "proven", r->proven,
			"best", r->best_after ? config_json(r->best_after, 1) : json_null(),
			"would_stop", r->would_at >= 0 ? json_integer(r->would_at) : json_null(),
			"would_secs", r->would_cost));
	}
	cmd_emit_json(json_pack("{s:b, s:I, s:I, s:f, s:o}", "stop", s->stop, "stream",
				(json_int_t)s->stream, "lanes", (json_int_t)s->lanes, "spent", s->spent,
				"trace", trace));
}

/*
 * Run the search; prints one JSON document (external: a line per run).
 * Lanes: that many runs in flight; when the oldest finishes (first in,
 * first out), the best is chosen again and one run is proposed while the
 * others are still pending (the proposer fantasizes them, as autopilot's).
 * The baseline runs alone first: autopilot proposes nothing before a run is proven.
 */
static int simulate(struct sim_obj *o, long budget, long stream, double sd, double rho, long branch,
		    long lanes, const struct space *ext_space, const char *ext_base,
		    double threshold, int goal_max, const struct sim *cur)
{
	int ext = ext_space != NULL && cur == NULL;
	struct sim s;
	struct space sp = { NULL, 0 };
	json_t *trace = json_array();
	long i, best = 0, best_prev = -1, promotions = 0, false_promotions = 0, nproven = 0;
	long repeats = 0;
	int ever_proven = 0, ever_any = 0;
	double pick_p = NAN;
	const char *source = "none";
	double best_true_prev = 0;
	unsigned long turn = 0;
	char *cause = NULL;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.ext = ext;
	if (cur) {
		s.rp = cur->rp;
		s.stop = cur->stop;
		s.stopped_value = cur->stopped_value;
		s.placebo = cur->placebo;
		s.sp = cur->sp;
		s.budget_secs = cur->budget_secs;
	}
	s.next_kind = "baseline";
	s.next_parent = s.cur_best = -1;
	s.budget = budget;
	s.stream = stream;
	s.lanes = lanes;
	s.sd = sd;
	s.rho = rho;
	s.runs = xcalloc((size_t)budget + 1, sizeof(*s.runs));
	s.v = xcalloc((size_t)budget + 1, sizeof(*s.v));
	s.rep = xcalloc((size_t)budget + 1, sizeof(*s.rep));
	s.pr = xcalloc((size_t)budget + 1, sizeof(*s.pr));
	s.seeds = xcalloc((size_t)budget + 1, sizeof(*s.seeds));
	s.st = xcalloc((size_t)budget + 1, sizeof(*s.st));
	s.obs = xcalloc((size_t)budget + 1, sizeof(*s.obs));
	s.tags = xcalloc((size_t)budget + 1, 16);
	s.taken = xcalloc((size_t)budget + 1, sizeof(*s.taken));
	sp.v = xcalloc(MAXVARS, sizeof(*sp.v));
	for (i = 0; i < o->nvars && !ext; i++) {
		char arg[32];

		xsnprintf(arg, sizeof(arg), "X%ld=1..9:int", i + 1);
		if (space_parse_arg(arg, &sp.v[sp.n++], &cause) < 0)
			die("%s", cause);
	}
	if (ext_space) {
		sim_make(&s, xstrdup(ext_base));
	} else if (o->nvars == NVARS) {
		sim_make(&s, xstrdup("SEED=1\nX1=3\nX2=3\nX3=7\nX4=2\n"));
	} else {
		struct buf b = BUF_INIT;

		buf_adds(&b, "SEED=1\n");
		for (i = 0; i < o->nvars; i++)
			buf_addf(&b, "X%ld=5\n", i + 1);
		sim_make(&s, buf_detach(&b, NULL));
	}
	while (s.nd < s.np) {
		long k;

		sim_finish(&s);
		/* the best after each run finished; then the lanes filled, one proposal at a time */
		for (k = 0;; k++) {
			struct prop_input in;
			struct noise_rule rule;
			struct prop_out out;
			long j;
			int repeat;

			sim_view(&s, &in, &rule, goal_max, ext_space ? ext_space : &sp);
			if (k > 0) {
				in.best = best;	/* the configurations keep their places */
				goto propose;
			}
			/* sticky, as best.c: start from the last best */
			for (j = 0; j < (long)s.nc && best_prev >= 0; j++)
				if (strcmp(s.v[j].key, s.runs[best_prev].key) == 0)
					break;
			{
				struct choice ch;
				long lp;

				/* the pick remembered at an earlier verdict, as best.c's */
				for (lp = 0; lp < (long)s.nc && s.pick_key[0]; lp++)
					if (strcmp(s.v[lp].key, s.pick_key) == 0)
						break;
				if (!s.pick_key[0] || lp == (long)s.nc || s.pick_since >= s.nd)
					lp = -1;
				choice_view(&s, 1);	/* stopped runs partial (best.c) */
				choose_best_at(&in, best_prev >= 0 ? j : 0, lp, threshold, &ch);
				choice_view(&s, 0);
				if (search_debug() && ch.pick >= 0 && ch.pick != ch.best)
					fprintf(stderr, "run %ld: pick r%ld (n %ld) P %.4f over r%ld%s%s\n", s.nd,
						s.rep[ch.pick], in.v[ch.pick].st.n, ch.p, s.rep[ch.prev],
						ch.short_runs ? ", short" : "", ch.new_pick ? ", new" : "");
				if (search_debug() && ch.best != ch.prev)
					fprintf(stderr, "run %ld: the best moves r%ld -> r%ld (n %ld -> %ld): "
						"%s%s, P %.4f, lead %.4g ± %.4g, weight %.3g\n", s.nd,
						s.rep[ch.prev], s.rep[ch.best], in.v[ch.prev].st.n,
						in.v[ch.best].st.n, choose_source_name(ch.source),
						ch.paired ? " (paired)" : "", ch.p, ch.lead, ch.sd, ch.weight);
				if (ch.pick >= 0 && strcmp(s.v[ch.pick].key, s.pick_key) != 0) {
					xsnprintf(s.pick_key, sizeof(s.pick_key), "%s", s.v[ch.pick].key);
					s.pick_since = s.nd;
				}
				best = ch.best;
				pick_p = ch.p;
				source = choose_source_name(ch.source);
				choice_release(&ch);
			}
			in.best = best;
			/* proven: the paired test's "confirmed" label of the best against the baseline
			 * (what status shows); any_proven: configurations it would label */
			nproven = 0;
			for (j = 1; j < (long)s.nc; j++) {
				struct noise_cmp pc;

				if (s.v[j].st.n == 0)
					continue;
				noise_compare(&rule, j, 0, &pc);
				nproven += pc.beats;
				if (j == best)
					ever_proven |= pc.beats;
			}
			ever_any |= nproven > 0;
			if (s.rp) {
				free(s.runs[s.nd - 1].best_after);
				s.runs[s.nd - 1].best_after = xstrdup(s.v[best].config);
				best_prev = s.rep[best];
			} else if (ext) {
				emit_line(json_pack("{s:o, s:I, s:o, s:I, s:s}", "best",
						    config_json(s.v[best].config, 1), "runs",
						    (json_int_t)s.nd, "p",
						    isnan(pick_p) ? json_null() : json_real(pick_p),
						    "n", (json_int_t)s.v[best].st.n, "source", source));
				best_prev = s.rep[best];
			} else {
				struct sim_run *runs = s.runs;
				double t = true_score(o, runs[s.rep[best]].x, s.v[best].key);
				long lead_cfg = -1, lead_common = 0, lead = 0;

				if (best_prev >= 0 && strcmp(s.v[best].key, runs[best_prev].key) != 0) {
					promotions++;
					false_promotions += t < best_true_prev;
					if (search_debug())
						fprintf(stderr, "run %ld: best %s (true %g, mean %g n %ld) "
							"replaces true %g; sd %g df %ld, resid sd %g df %ld\n",
							s.nd, s.v[best].config, t, s.v[best].st.mean,
							s.v[best].st.n, best_true_prev, in.noise.sd,
							in.noise.df, rule.resid.sd, rule.resid.df);
				}
				best_prev = s.rep[best];
				best_true_prev = t;
				/* the highest mean (what a method without the rule would pick) */
				for (j = 1; j < (long)s.nc; j++)
					if (s.v[j].st.n > 0 && s.v[j].st.mean > s.v[lead].st.mean)
						lead = j;
				/* lead: the better configuration's runs on seeds the baseline has */
				for (j = 0; j < (long)s.nc && o->lead_key[0]; j++)
					if (strcmp(s.v[j].key, o->lead_key) == 0)
						lead_cfg = j;
				for (i = 0; i < s.nd && lead_cfg > 0; i++) {
					long m;

					if (s.pr[i].cfg != lead_cfg)
						continue;
					for (m = 0; m < s.nd; m++)
						if (s.pr[m].cfg == 0 && runs[m].seed == runs[i].seed)
							break;
					lead_common += m < s.nd;
				}
				json_array_append_new(trace, json_pack("{s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:b, s:o, s:b, s:I}",
					"runs", (json_int_t)s.nd, "best_true", t,
					"leader_true", true_score(o, runs[s.rep[lead]].x, s.v[lead].key),
					"best_n", (json_int_t)s.v[best].st.n,
					"promotions", (json_int_t)promotions,
					"false_promotions", (json_int_t)false_promotions,
					"proven", (json_int_t)nproven, "ever_proven", ever_proven, "ever_any_proven", ever_any,
					"p", isnan(pick_p) ? json_null() : json_real(pick_p),
					"best_is_lead", lead_cfg >= 0 && best == lead_cfg,
					"lead_common", (json_int_t)lead_common));
			}
propose:
			if (s.nd >= budget || s.np >= budget || s.np - s.nd >= lanes ||
			    (s.budget_secs > 0 && s.spent >= s.budget_secs)) {
				noise_rule_release(&rule);
				break;
			}
			in.replicates = 3;
			in.confirm_max = 6;
			in.budget_runs = budget;
			in.branch = branch;
			in.turn = turn++;
			propose_next(&in, &out);
			if (search_debug())
				fprintf(stderr, "run %ld: %s\n", s.np + 1, out.reason);
			noise_rule_release(&rule);
			if (out.kind == PROP_NONE) {
				/* converged, or waits for the runs in flight */
				prop_out_release(&out);
				break;
			}
			{
				char *config = sim_config(&s, &out, &repeat);

				repeats += repeat;
				s.next_kind = out.kind == PROP_REPLICATE ? "replicate" : "change";
				s.next_parent = out.cfg;
				s.cur_best = best;
				prop_out_release(&out);
				sim_make(&s, config);
			}
		}
		if (s.nd >= budget)
			break;
	}
	if (s.rp)
		curves_emit(&s, trace);
	else if (ext)
		json_decref(trace);
	else if (lanes == 1)
		cmd_emit_json(json_pack("{s:s, s:i, s:I, s:I, s:o}", "objective",
					o->kind == OBJ_FLAT ? "flat" : o->kind == OBJ_LEAD ? "lead" :
					"peak", "vars", o->nvars, "stream", (json_int_t)stream, "runs",
					(json_int_t)s.nd, "trace", trace));
	else
		cmd_emit_json(json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:o}", "objective",
					o->kind == OBJ_FLAT ? "flat" : o->kind == OBJ_LEAD ? "lead" :
					"peak", "vars", o->nvars, "stream", (json_int_t)stream, "runs",
					(json_int_t)s.nd, "lanes", (json_int_t)lanes,
					"in_flight_repeats", (json_int_t)repeats, "trace", trace));
	if (ext && repeats)
		BUG("test-search: %ld proposals repeated a run in flight", repeats);
	for (i = 0; i < s.np; i++) {
		free(s.runs[i].config);
		free(s.runs[i].bar);
		free(s.runs[i].best_after);
	}
	free(s.runs);
	free(s.v);
	free(s.rep);
	free(s.pr);
	free(s.seeds);
	free(s.st);
	free(s.obs);
	free(s.tags);
	free(s.taken);
	space_release(&sp);
	return XL_OK;
}

/* --curves: autopilot and the stop rule on the learning curves of a file. */
static int run_curves(const struct cmd_entry *self, struct cmd_args *args, long long lanes)
{
	const char *hours = args_get(args, "hours"), *stop = args_get(args, "stop"), *err, *mode;
	const char *bud = args_get(args, "budget") ? args_get(args, "budget") : "2000";
	const char *str = args_get(args, "stream") ? args_get(args, "stream") : "0";
	struct replay rp;
	struct space sp = { NULL, 0 };
	struct sim cur;
	struct sim_obj o;
	long long budget, stream;
	char *cause = NULL;
	size_t i;
	int rc;

	memset(&cur, 0, sizeof(cur));
	cur.stop = !args_flag(args, "no-stop");
	cur.placebo = args_flag(args, "placebo");
	mode = args_get(args, "stopped") ? args_get(args, "stopped") : "model";
	cur.stopped_value = strcmp(mode, "all") == 0 ? 2 : strcmp(mode, "model") == 0 ? 1 :
			    strcmp(mode, "proposer") == 0 ? 3 : 0;
	if (!cur.stopped_value && strcmp(mode, "censored") != 0) {
		cmd_usage_error(self, "--stopped: censored, proposer, model or all");
		return XL_USAGE;
	}
	cur.sp = (struct stop_params){ STOP_WARMUP, STOP_BEHIND, STOP_NOISE_Z, 1 };
	if (stop && sscanf(stop, "%lld,%lld,%lf", &cur.sp.warmup, &cur.sp.behind,
			   &cur.sp.z) != 3) {
		cmd_usage_error(self, "--stop: W,R,Z");
		return XL_USAGE;
	}
	cur.budget_secs = hours ? strtod(hours, NULL) * 3600 : 0;
	if (parse_ll(bud, 1, 10000, &budget, &err) < 0 ||
	    parse_ll(str, 0, 1 << 20, &stream, &err) < 0 || (hours && !(cur.budget_secs > 0))) {
		cmd_usage_error(self, "bad arguments");
		return XL_USAGE;
	}
	if (replay_load(args_get(args, "curves"), &rp, &cause) < 0)
		die("%s", cause);
	cur.rp = &rp;
	sp.v = xcalloc(rp.nspace + 1, sizeof(*sp.v));
	for (i = 0; i < rp.nspace; i++)
		if (space_parse_arg(rp.space[i], &sp.v[sp.n++], &cause) < 0)
			die("%s", cause);
	memset(&o, 0, sizeof(o));
	rc = simulate(&o, (long)budget, (long)stream, 0, 0, 3, (long)lanes, &sp, rp.baseline,
		      CHOOSE_P, 1, &cur);
	space_release(&sp);
	replay_release(&rp);
	return rc;
}

/* The benchmark's in-process search. */
static int cmd_test_search(struct xl_ctx *ctx, const struct cmd_entry *self,
			   struct cmd_args *args)
{
	const char *obj = "peak", *bud = "60", *str = "1", *noise = "0.01", *br = "3", *err;
	const char *vars = args_get(args, "vars"), *lead_at = args_get(args, "lead-at");
	const char *ln = args_get(args, "lanes") ? args_get(args, "lanes") : "1";
	long long lanes;
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
	if (parse_ll(ln, 1, 16, &lanes, &err) < 0) {
		cmd_usage_error(self, "--lanes: 1 to 16");
		return XL_USAGE;
	}
	if (args_get(args, "curves"))
		return run_curves(self, args, lanes);
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
		rc = simulate(&o, (long)budget, 0, 0, 0, (long)branch, (long)lanes, &sp, config,
			      threshold,
			      !args_get(args, "goal") || strcmp(args_get(args, "goal"), "min") != 0,
			      NULL);
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
			strtod(noise, NULL), rho, (long)branch, (long)lanes, NULL, NULL, threshold, 1,
			NULL);
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
	"scores are better). --lanes L: L runs in flight; when the oldest finishes, the best\n"
	"is chosen again and one run is proposed while the others are pending (the baseline\n"
	"runs alone first; --external asks ahead and reads each score when its run\n"
	"finishes); L above 1 adds lanes and in_flight_repeats (proposals that repeated a\n"
	"run in flight: 0) to the document. --curves FILE (bench/stop.py): runs replayed from\n"
	"learning curves with the stop rule; {stop, stream, lanes, spent, trace: [a run each]};\n"
	"--placebo: stopped runs cost their whole curve (the path changes, no hours saved).\n",
	.flags = CMD_HIDDEN, .exec = cmd_test_search,
};
