/* Unit tests for autopilot's proposer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "confkey.h"
#include "propose.h"

struct fixture {
	struct space sp;
	struct prop_cfg v[8];
	char key[8][65];
	char *config[8];
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
		struct noise_cfg st[8];
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
	/* two replicates in flight: enough asked; now a change */
	f.v[0].open = 2;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_string_equal(out.var, "X");
	assert_string_equal(out.value, "2");
	prop_out_release(&out);
	/* without a seed variable: no replicates at all */
	f.v[0].open = 0;
	f.in.seed = "";
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	prop_out_release(&out);
	teardown_fx(&f);
}

/* Changes are untried neighbours; the variable turn rotates; then the next best. */
static void test_neighbours_and_branching(void **state)
{
	struct fixture f;
	struct prop_out out;
	double base[] = { 0.5, 0.51, 0.49 }, lo[] = { 0.4 };
	const char *taken[4];
	char k[4][65];

	(void)state;
	setup_space(&f);
	add_cfg(&f, "SEED=1\nX=3\nY=3\n", "base", base, 3);
	add_cfg(&f, "SEED=1\nX=1\nY=1\n", "other", lo, 1);
	fill_input(&f, 0, 1);
	f.in.turn = 1;	/* Y's turn */
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_int_equal(out.cfg, 0);
	assert_string_equal(out.var, "Y");
	assert_string_equal(out.value, "2");
	prop_out_release(&out);
	/* every neighbour of base taken: branch from the second best */
	confkey_key("SEED=1\nX=2\nY=3\n", "SEED", k[0]);
	confkey_key("SEED=1\nX=4\nY=3\n", "SEED", k[1]);
	confkey_key("SEED=1\nX=3\nY=2\n", "SEED", k[2]);
	confkey_key("SEED=9\nX=3\nY=4\n", "SEED", k[3]);	/* another seed: same config */
	taken[0] = k[0];
	taken[1] = k[1];
	taken[2] = k[2];
	taken[3] = k[3];
	f.in.taken = taken;
	f.in.ntaken = 4;
	f.in.turn = 0;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	assert_int_equal(out.cfg, 1);
	assert_string_equal(out.var, "X");
	assert_string_equal(out.value, "2");
	prop_out_release(&out);
	/* every neighbour of both taken: converged */
	{
		static const char *all[6];
		static char k2[2][65];

		confkey_key("SEED=1\nX=2\nY=1\n", "SEED", k2[0]);
		confkey_key("SEED=1\nX=1\nY=2\n", "SEED", k2[1]);
		memcpy(all, taken, sizeof(taken));
		all[4] = k2[0];
		all[5] = k2[1];
		f.in.taken = all;
		f.in.ntaken = 6;
	}
	f.in.branch = 1;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_NONE);
	assert_non_null(strstr(out.reason, "converged"));
	prop_out_release(&out);
	teardown_fx(&f);
}

/* A candidate ahead of the best but unproven gets confirming replicates, capped. */
static void test_confirming(void **state)
{
	struct fixture f;
	struct prop_out out;
	double base[] = { 0.50, 0.51, 0.49 }, ahead[] = { 0.56 }, behind[] = { 0.45 };

	(void)state;
	setup_space(&f);
	add_cfg(&f, "SEED=1\nX=3\nY=3\n", "base", base, 3);
	add_cfg(&f, "SEED=1\nX=4\nY=3\n", "ahead", ahead, 1);
	add_cfg(&f, "SEED=1\nX=2\nY=3\n", "behind", behind, 1);
	fill_input(&f, 0, 2);
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_REPLICATE);
	assert_int_equal(out.cfg, 1);
	assert_non_null(strstr(out.reason, "confirming"));
	prop_out_release(&out);
	/* at the cap: no more replicates, a change instead */
	f.v[1].st.n = 6;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	prop_out_release(&out);
	/* a lead too small to prove even at the cap is not chased */
	f.v[1].st.n = 1;
	f.v[1].st.mean = 0.5005;
	propose_next(&f.in, &out);
	assert_int_equal(out.kind, PROP_CHANGE);
	prop_out_release(&out);
	teardown_fx(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline_replicates_first),
		cmocka_unit_test(test_neighbours_and_branching),
		cmocka_unit_test(test_confirming),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
