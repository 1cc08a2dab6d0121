/* Unit tests for autopilot's proposer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "search/confkey.h"
#include "search/propose.h"

struct fixture {
	struct space sp;
	struct prop_cfg v[16];
	char key[16][65];
	char *config[16];
	size_t n;
	struct prop_input in;
};

static void add_cfg(struct fixture *f, const char *config, const char *tag,
		    const double *scores, size_t n)
{
	struct prop_cfg *c = &f->v[f->n];
	size_t i;

	f->config[f->n] = strdup(config);
	confkey_key(config, "SEED", f->key[f->n]);
	memset(c, 0, sizeof(*c));
	c->key = f->key[f->n];
	c->config = f->config[f->n];
	c->rep_tag = tag;
	for (i = 0; i < n; i++)
		noise_add(&c->st, scores[i]);
	f->n++;
}

static void setup_space(struct fixture *f)
{
	char *cause = NULL;

	memset(f, 0, sizeof(*f));
	f->sp.v = calloc(2, sizeof(*f->sp.v));
	assert_int_equal(space_parse_arg("X=1..5:int", &f->sp.v[0], &cause), 0);
	assert_int_equal(space_parse_arg("Y=1..5:int", &f->sp.v[1], &cause), 0);
	f->sp.n = 2;
}

static void fill_input(struct fixture *f, long best, long m)
{
	struct prop_input *in = &f->in;

	memset(in, 0, sizeof(*in));
	in->v = f->v;
	in->n = f->n;
	in->best = best;
	in->baseline = 0;
	{
		struct noise_cfg st[16];
		size_t i;

		for (i = 0; i < f->n; i++)
			st[i] = f->v[i].st;
		noise_pool(st, f->n, &in->noise);
	}
	in->p.goal_max = 1;
	in->p.alpha = 0.05;
	in->m = m;
	in->space = &f->sp;
	in->seed = "SEED";
	in->replicates = 3;
	in->confirm_max = 6;
	in->branch = 2;
}

static void teardown_fx(struct fixture *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->config[i]);
	space_release(&f->sp);
}

/* The noise is measured on the baseline first. */
static void test_baseline_replicates_first(void **state)
{
	struct fixture f;
	struct prop_out out;
	double one[] = { 0.5 };

	(void)state;
	setup_space(&f);
	add_cfg(&f, "SEED=1\nX=3\nY=3\n", "base", one, 1);
	fill_input(&f, 0, 0);
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_REPLICATE);
	assert_int_equal(out.cfg, 0);
	assert_string_equal(out.var, "SEED");
	prop_out_release(&out);
	/* two replicates in flight: enough asked; now a change, and with one
	 * configuration known the model is least sure at the ends: a far jump */
	f.v[0].open = 2;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_string_equal(out.var, "X");
	assert_string_equal(out.value, "1");
	assert_non_null(strstr(out.reason, "Gaussian process"));
	prop_out_release(&out);
	/* without a seed variable: no replicates at all */
	f.v[0].open = 0;
	f.in.seed = "";
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	prop_out_release(&out);
	teardown_fx(&f);
}

/* The keys of every one-variable change of config (X and Y in 1..5) into k. */
static size_t all_changes(const char *config, char (*k)[65], const char **taken)
{
	static const char *vars[] = { "X", "Y" }, *vals[] = { "1", "2", "3", "4", "5" };
	size_t n = 0, i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 5; j++) {
			char *cur = confkey_value(config, vars[i]), *cfg;

			if (strcmp(cur, vals[j]) != 0) {
				cfg = confkey_with(config, vars[i], vals[j]);
				confkey_key(cfg, "SEED", k[n]);
				taken[n] = k[n];
				n++;
				free(cfg);
			}
			free(cur);
		}
	return n;
}

/* Changes are one variable of the best few, never taken; then the next best; then none. */
static void test_changes_and_branching(void **state)
{
	struct fixture f;
	struct prop_out out;
	double base[] = { 0.5, 0.51, 0.49 }, lo[] = { 0.4 };
	static char k[32][65];
	static const char *taken[32];
	size_t n;

	(void)state;
	setup_space(&f);
	add_cfg(&f, "SEED=1\nX=3\nY=3\n", "base", base, 3);
	add_cfg(&f, "SEED=1\nX=1\nY=1\n", "other", lo, 1);
	fill_input(&f, 0, 1);
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_true(out.cfg == 0 || out.cfg == 1);
	prop_out_release(&out);
	/* every change of base taken (another seed is the same configuration):
	 * branch from the second best */
	n = all_changes("SEED=9\nX=3\nY=3\n", k, taken);
	f.in.taken = taken;
	f.in.ntaken = n;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_int_equal(out.cfg, 1);
	assert_non_null(strstr(out.reason, "from other"));
	prop_out_release(&out);
	/* every change of both taken: converged */
	n += all_changes("SEED=1\nX=1\nY=1\n", k + n, taken + n);
	f.in.ntaken = n;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_NONE);
	assert_non_null(strstr(out.reason, "converged"));
	prop_out_release(&out);
	teardown_fx(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline_replicates_first),
		cmocka_unit_test(test_changes_and_branching),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
