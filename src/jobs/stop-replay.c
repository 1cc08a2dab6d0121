/* Learning curves of real training replayed: see replay.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "search/confkey.h"
#include "jobs/progress.h"
#include "jobs/stop-replay.h"

/* A JSON number as the grid writes it (%g: "0.001", "64"). */
static void add_number(struct buf *b, json_t *v)
{
	buf_addf(b, "%g", json_number_value(v));
}

/* The job.sh text of a configuration object (SEED=seed first). */
static char *job_text(json_t *cfg, long seed)
{
	struct buf b = BUF_INIT;
	const char *name;
	json_t *v;

	buf_addf(&b, "SEED=%ld\n", seed);
	json_object_foreach(cfg, name, v) {
		buf_addf(&b, "%s=", name);
		add_number(&b, v);
		buf_addc(&b, '\n');
	}
	return buf_detach(&b, NULL);
}

/* An array of numbers (null: NAN) of n entries, malloc'd; -1 when it is not one. */
static int numbers(json_t *a, size_t n, double **out)
{
	size_t i;

	if (!json_is_array(a) || json_array_size(a) != n)
		return -1;
	*out = xcalloc(n + 1, sizeof(**out));
	for (i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);

		(*out)[i] = json_is_number(x) ? json_number_value(x) : NAN;
	}
	return 0;
}

/* The grid and the baseline of the document. */
static int read_grid(json_t *doc, struct replay *rp, char **cause)
{
	json_t *vars = json_object_get(doc, "vars"), *base = json_object_get(doc, "baseline"), *v;
	const char *name;
	char *text;

	if (!json_is_object(vars) || !json_is_object(base)) {
		*cause = xstrdup("no vars or baseline");
		return -1;
	}
	rp->space = xcalloc(json_object_size(vars) + 1, sizeof(*rp->space));
	json_object_foreach(vars, name, v) {
		struct buf b = BUF_INIT;
		size_t i;

		buf_addf(&b, "%s=", name);
		for (i = 0; i < json_array_size(v); i++) {
			if (i)
				buf_addc(&b, ',');
			add_number(&b, json_array_get(v, i));
		}
		rp->space[rp->nspace++] = buf_detach(&b, NULL);
	}
	text = job_text(base, 1);
	if (confkey_config(text, strlen(text), &rp->baseline, cause) < 0) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* Read a curves document. */
int replay_load(const char *path, struct replay *rp, char **cause)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err), *runs;
	size_t i;
	int rc = 0;

	memset(rp, 0, sizeof(*rp));
	if (!doc) {
		*cause = xasprintf("unable to read '%s': %s (line %d)", path, err.text, err.line);
		return -1;
	}
	runs = json_object_get(doc, "runs");
	rp->seeds = (long)json_integer_value(json_object_get(doc, "seeds"));
	rp->epochs = (size_t)json_integer_value(json_object_get(doc, "epochs"));
	rp->chance = json_number_value(json_object_get(doc, "chance"));
	if (!json_is_array(runs) || rp->seeds < 1 || rp->epochs < 1) {
		*cause = xasprintf("'%s' is not a curves document (bench/curves.py)", path);
		rc = -1;
	}
	if (rc == 0)
		rc = read_grid(doc, rp, cause);
	if (rc == 0)
		rp->runs = xcalloc(json_array_size(runs) + 1, sizeof(*rp->runs));
	for (i = 0; rc == 0 && i < json_array_size(runs); i++) {
		json_t *r = json_array_get(runs, i);
		struct replay_run *x = &rp->runs[rp->n];
		char *text = job_text(json_object_get(r, "cfg"), 0), *config = NULL;

		x->seed = (long)json_integer_value(json_object_get(r, "seed"));
		if (confkey_config(text, strlen(text), &config, cause) < 0 ||
		    numbers(json_object_get(r, "acc"), rp->epochs, &x->acc) < 0 ||
		    numbers(json_object_get(r, "sec"), rp->epochs, &x->sec) < 0) {
			if (!*cause)
				*cause = xasprintf("run %zu of '%s' is malformed", i, path);
			rc = -1;
		} else {
			confkey_key(config, "SEED", x->key);
		}
		rp->n++;
		free(config);
		free(text);
	}
	json_decref(doc);
	if (rc < 0)
		replay_release(rp);
	return rc;
}

/* The run of configuration key on seed s. */
const struct replay_run *replay_find(const struct replay *rp, const char *key, long s)
{
	size_t i;

	s = ((s % rp->seeds) + rp->seeds) % rp->seeds;
	for (i = 0; i < rp->n; i++)
		if (rp->runs[i].seed == s && strcmp(rp->runs[i].key, key) == 0)
			return &rp->runs[i];
	return NULL;
}

/* Free what replay_load read. */
void replay_release(struct replay *rp)
{
	size_t i;

	for (i = 0; i < rp->n; i++) {
		free(rp->runs[i].acc);
		free(rp->runs[i].sec);
	}
	for (i = 0; i < rp->nspace; i++)
		free(rp->space[i]);
	free(rp->runs);
	free(rp->space);
	free(rp->baseline);
	memset(rp, 0, sizeof(*rp));
}

/* The bar a run gets at submit, from the finished runs. */
size_t replay_bar(const struct replay *rp, const struct replay_run *const *done, const long *cfg,
		  size_t n, long best, long parent, const struct stop_params *p, double **bar)
{
	struct stop_curve *cv = xcalloc(n + 1, sizeof(*cv));
	size_t i, k, len = rp->epochs + 1, nbar;

	for (i = 0; i < n; i++) {
		cv[i].v = xcalloc(len, sizeof(*cv[i].v));
		cv[i].v[0] = NAN;
		for (k = 1; k < len; k++)
			cv[i].v[k] = done[i]->acc[k - 1];
		cv[i].len = len;
		cv[i].cfg = cfg[i];
	}
	*bar = xcalloc(len, sizeof(**bar));
	nbar = stop_bar(cv, n, best, parent, p, *bar, len);
	for (i = 0; i < n; i++)
		stop_curve_release(&cv[i]);
	free(cv);
	return nbar;
}

/* Run cv with the rules: where it stops and what it cost. */
void replay_finish(const struct replay *rp, const struct replay_run *cv, int rule_on,
		   const double *bar, size_t nbar, const struct stop_params *p,
		   struct replay_end *e)
{
	size_t len = rp->epochs, k, end = len;
	double *v = xcalloc(len + 1, sizeof(*v));
	struct buf t = BUF_INIT;
	struct progress pg;
	long long at;

	e->stop_at = -1;
	e->why = NULL;
	v[0] = NAN;
	/* no "chance C": two epochs at chance would stop the slow starters */
	buf_addf(&t, "epochs %zu\n", len);
	for (k = 1; k <= len; k++) {
		v[k] = cv->acc[k - 1];
		buf_addf(&t, "epoch %zu %.6g\n", k, v[k]);
	}
	if (rule_on) {
		progress_parse(t.s, 1, 2, &pg);	/* stop.chance_epochs' default */
		if (pg.stop) {
			e->stop_at = pg.stop_epoch;
			e->why = pg.why;
		}
		at = stop_first_behind(v, len + 1, bar, nbar, p);
		if (at >= 0 && (e->stop_at < 0 || at < e->stop_at)) {
			e->stop_at = at;
			e->why = STOP_BEHIND_WHY;
		}
	}
	if (e->stop_at >= 0)
		end = (size_t)e->stop_at;
	for (k = 0, e->cost = 0; k < end; k++)
		e->cost += cv->sec[k];
	buf_release(&t);
	free(v);
}
