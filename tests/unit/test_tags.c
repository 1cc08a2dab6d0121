/* Unit tests for the run tag grammar (tags.c) and value_canon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "config.h"
#include "db.h"
#include "loop.h"
#include "runs.h"
#include "tags.h"

#include "fixture-db.h"

/* Compose candidate k and compare. */
static void expect_tag(enum tag_kind kind, const char *base, const char *var,
		       const char *value, int k, const char *want)
{
	char *got = tag_compose(kind, base, var, value, k);

	if (strcmp(got, want) != 0)
		fail_msg("tag_compose(%d, %s, %s, %s, %d) = '%s', want '%s'", kind,
			 base ? base : "NULL", var ? var : "NULL", value ? value : "NULL",
			 k, got, want);
	assert_true(valid_name(got));
	free(got);
}

/* A change is VAR-VALUE, sanitized and folded; again is --nK. */
static void test_change(void **state)
{
	(void)state;
	expect_tag(TAG_CHANGE, NULL, "LR", "0.05", 1, "LR-0.05");
	expect_tag(TAG_CHANGE, NULL, "MAX_DEPTH", "2", 1, "MAX_DEPTH-2");
	expect_tag(TAG_CHANGE, NULL, "MAX_DEPTH", "2", 3, "MAX_DEPTH-2--n3");
	expect_tag(TAG_CHANGE, NULL, "LR", "0.05", 2, "LR-0.05--n2");
	/* characters outside the set become '-', runs fold, ends trimmed */
	expect_tag(TAG_CHANGE, NULL, "OPT", "adam w / beta=0.9", 1, "OPT-adam-w-beta-0.9");
	expect_tag(TAG_CHANGE, NULL, "X", "a--b", 1, "X-a-b");
	expect_tag(TAG_CHANGE, NULL, "X", "a.", 1, "X-a");
	expect_tag(TAG_CHANGE, NULL, "LR", "-1", 1, "LR-neg1");
	expect_tag(TAG_CHANGE, NULL, "MAX_DEPTH", "-1", 1, "MAX_DEPTH-neg1");
	expect_tag(TAG_CHANGE, NULL, "LR", "-.5", 1, "LR-neg.5");
	expect_tag(TAG_CHANGE, NULL, "ARGS", "--fp16", 1, "ARGS-fp16");
	expect_tag(TAG_CHANGE, NULL, "X", "--", 1, "X");
	expect_tag(TAG_CHANGE, NULL, "X", "", 1, "X");
	expect_tag(TAG_CHANGE, NULL, "X", "\xe6\x97\xa5\xe6\x9c\xac", 1, "X");
	/* a tag starts with a letter or digit */
	expect_tag(TAG_CHANGE, NULL, "_SEED", "3", 1, "SEED-3");
	expect_tag(TAG_CHANGE, NULL, "_", "", 1, "run");
}

/* No candidate reads like a value: no bare -2 after the value. */
static void test_no_bare_number_suffix(void **state)
{
	int k;

	(void)state;
	for (k = 2; k < 12; k++) {
		char *t = tag_compose(TAG_CHANGE, NULL, "MAX_DEPTH", "2", k);
		char want[32];

		xsnprintf(want, sizeof(want), "MAX_DEPTH-2--n%d", k);
		assert_string_equal(t, want);
		free(t);
	}
}

/* Replicates: B--r2, B--r3; the base's own "--" are kept. */
static void test_replicate(void **state)
{
	(void)state;
	expect_tag(TAG_REPLICATE, "LR-0.05", NULL, NULL, 2, "LR-0.05--r2");
	expect_tag(TAG_REPLICATE, "LR-0.05", NULL, NULL, 3, "LR-0.05--r3");
	expect_tag(TAG_REPLICATE, "LR-0.05--n2", NULL, NULL, 2, "LR-0.05--n2--r2");
	expect_tag(TAG_REPLICATE, "base", NULL, NULL, 1, "base--r2");
}

/* A sweep's runs: N--VAR-VALUE with --name, VAR-VALUE without. */
static void test_sweep(void **state)
{
	(void)state;
	expect_tag(TAG_SWEEP, "lrs", "LR", "0.1", 1, "lrs--LR-0.1");
	expect_tag(TAG_SWEEP, "lrs", "LR", "0.1", 2, "lrs--LR-0.1--n2");
	expect_tag(TAG_SWEEP, NULL, "LR", "0.1", 1, "LR-0.1");
	expect_tag(TAG_SWEEP, "", "LR", "0.1", 1, "LR-0.1");
}

/* Too long: the value is cut and hashed, the suffix never cut. */
static void test_too_long(void **state)
{
	char v1[200], v2[200];
	char *a, *b, *c, *d;

	(void)state;
	memset(v1, 'a', 150);
	v1[150] = '\0';
	memcpy(v2, v1, sizeof(v1));
	v2[149] = 'b';
	a = tag_compose(TAG_CHANGE, NULL, "MODEL", v1, 1);
	b = tag_compose(TAG_CHANGE, NULL, "MODEL", v2, 1);
	c = tag_compose(TAG_CHANGE, NULL, "MODEL", v1, 12);
	assert_int_equal(strlen(a), TAG_MAX);
	assert_true(valid_name(a) && valid_name(b) && valid_name(c));
	assert_string_not_equal(a, b);		/* the hash tells them apart */
	assert_memory_equal(a, "MODEL-aaaa", 10);
	assert_non_null(strstr(a, ".h"));
	assert_int_equal(strlen(a) - (size_t)(strstr(a, ".h") - a), 8);
	assert_int_equal(strlen(c), TAG_MAX);
	assert_string_equal(c + strlen(c) - 5, "--n12");
	free(a);
	free(b);
	free(c);
	/* a cut that ends in '-' drops it before the hash */
	d = tag_compose(TAG_CHANGE, NULL, "M", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbbbbbbb", 1);
	assert_true(valid_name(d));
	assert_null(strstr(d, "-.h"));
	free(d);
	/* a sweep prefix and a replicate base at the limit */
	memset(v1, 'n', 64);
	v1[64] = '\0';
	d = tag_compose(TAG_SWEEP, v1, "LR", "0.1", 1);
	assert_true(valid_name(d));
	free(d);
	d = tag_compose(TAG_REPLICATE, v1, NULL, NULL, 2);
	assert_true(valid_name(d));
	assert_string_equal(d + strlen(d) - 4, "--r2");
	free(d);
}

/* A test study: a DB in a temp dir, and the context loop_make_tag reads. */
struct fx {
	char dir[64];
	struct xl_ctx ctx;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "tags", &f->ctx.db) < 0)
		return -1;
	f->ctx.root = f->dir;
	f->ctx.cfg.study = xstrdup("s");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fixture_dir_remove(f->dir);

	db_close(&f->ctx.db);
	free(f->ctx.cfg.study);
	free(f);
	return rc;
}

/* Occupy a tag in the study. */
static void take(struct fx *f, const char *tag)
{
	struct run r;

	memset(&r, 0, sizeof(r));
	r.study = "s";
	r.tag = (char *)tag;
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
}

/* loop_make_tag gives the first free candidate of each kind. */
static void test_make_free(void **state)
{
	struct fx *f = *state;
	char *t;

	t = loop_make_tag(&f->ctx, TAG_CHANGE, NULL, "MAX_DEPTH", "2");
	assert_string_equal(t, "MAX_DEPTH-2");
	free(t);
	take(f, "MAX_DEPTH-2");
	take(f, "MAX_DEPTH-2--n2");
	t = loop_make_tag(&f->ctx, TAG_CHANGE, NULL, "MAX_DEPTH", "2");
	assert_string_equal(t, "MAX_DEPTH-2--n3");
	free(t);
	t = loop_make_tag(&f->ctx, TAG_REPLICATE, "MAX_DEPTH-2", NULL, NULL);
	assert_string_equal(t, "MAX_DEPTH-2--r2");
	free(t);
	take(f, "MAX_DEPTH-2--r2");
	t = loop_make_tag(&f->ctx, TAG_REPLICATE, "MAX_DEPTH-2", NULL, NULL);
	assert_string_equal(t, "MAX_DEPTH-2--r3");
	free(t);
	t = loop_make_tag(&f->ctx, TAG_SWEEP, "sw", "MAX_DEPTH", "2");
	assert_string_equal(t, "sw--MAX_DEPTH-2");
	free(t);
	/* a directory nobody recorded counts as taken too */
	{
		char *d = xasprintf("%s/runs/s/sw--MAX_DEPTH-2", f->dir), *p;

		p = xasprintf("%s/runs", f->dir);
		assert_int_equal(mkdir(p, 0755), 0);
		free(p);
		p = xasprintf("%s/runs/s", f->dir);
		assert_int_equal(mkdir(p, 0755), 0);
		free(p);
		assert_int_equal(mkdir(d, 0755), 0);
		free(d);
	}
	t = loop_make_tag(&f->ctx, TAG_SWEEP, "sw", "MAX_DEPTH", "2");
	assert_string_equal(t, "sw--MAX_DEPTH-2--n2");
	free(t);
}

/* Compare value_canon(in) with want. */
static void expect_canon(const char *in, const char *want)
{
	char *got = value_canon(in);

	if (strcmp(got, want) != 0)
		fail_msg("value_canon('%s') = '%s', want '%s'", in, got, want);
	free(got);
}

/* Numbers are written one way; everything else as it is. */
static void test_value_canon(void **state)
{
	(void)state;
	expect_canon("0.05", "0.05");
	expect_canon("5e-2", "0.05");
	expect_canon("0.050", "0.05");
	expect_canon("+.05", "0.05");
	expect_canon("5E-2", "0.05");
	expect_canon("10", "10");
	expect_canon("10.0", "10");
	expect_canon("1e1", "10");
	expect_canon("010", "10");
	expect_canon("-0", "0");
	expect_canon("0.0", "0");
	expect_canon("-2.50", "-2.5");
	expect_canon("1e-4", "0.0001");
	expect_canon("0.0001", "0.0001");
	expect_canon("3e-8", "3e-8");
	expect_canon("1e21", "1e21");
	expect_canon("1e20", "100000000000000000000");
	expect_canon("123456.789", "123456.789");
	expect_canon("0.1", "0.1");
	expect_canon("1.5e3", "1500");
	/* not numbers, or not plain decimal ones */
	expect_canon("adam", "adam");
	expect_canon("", "");
	expect_canon("0x10", "0x10");
	expect_canon("inf", "inf");
	expect_canon("nan", "nan");
	expect_canon("1e", "1e");
	expect_canon("1.2.3", "1.2.3");
	expect_canon(" 1", " 1");
	expect_canon("1 ", "1 ");
	expect_canon(".", ".");
	expect_canon("1e999", "1e999");
	/* more than 15 significant digits: as written */
	expect_canon("12345678901234567", "12345678901234567");
	expect_canon("0.12345678901234567", "0.12345678901234567");
	assert_true(value_same("0.05", "5e-2"));
	assert_true(value_same("0.050", "0.05"));
	assert_false(value_same("0.05", "0.5"));
	assert_false(value_same("adam", "Adam"));
	assert_true(value_same("adam", "adam"));
}

/* Compare tag_config's candidate k with want (NULL: none). */
static void expect_config(const struct tag_part *v, size_t n, int k, const char *want)
{
	char *got = tag_config(v, n, k);

	if (!want) {
		if (got)
			fail_msg("tag_config = '%s', want none", got);
		return;
	}
	if (!got || strcmp(got, want) != 0)
		fail_msg("tag_config = '%s', want '%s'", got ? got : "NULL", want);
	assert_true(valid_name(got));
	assert_true(strlen(got) + 4 <= TAG_MAX);
	free(got);
}

/* Autopilot's tags tell the configuration: grid values, short (issue 27). */
static void test_config(void **state)
{
	static const char *const lr[] = { "0.001", "0.00237137", "0.00562341", "0.0133352",
		"0.0316228", "0.0749894", "0.177828", "0.421697", "1" };
	static const char *const depth[] = { "1", "2", "3", "4", "5", "6" };
	static const char *const close[] = { "0.1", "0.1001", "0.2" };
	static const char *const opt[] = { "adam", "sgd" };
	struct tag_part v[6] = {
		{ "LEARNING_RATE", "0.177828", lr, 9 },
		{ "MAX_DEPTH", "1", depth, 6 },
	};
	struct tag_part many[6];
	size_t i;

	(void)state;
	memset(many, 0, sizeof(many));
	expect_config(v, 1, 1, "LEARNING_RATE-0.18");
	expect_config(v, 2, 1, "LEARNING_RATE-0.18_MAX_DEPTH-1");
	expect_config(v, 2, 2, "LEARNING_RATE-0.18_MAX_DEPTH-1--n2");
	v[0].value = "0.0133352";
	expect_config(v, 1, 1, "LEARNING_RATE-0.013");
	v[0].value = "1e-3";	/* canonical first */
	expect_config(v, 1, 1, "LEARNING_RATE-0.001");
	/* neighbours that need more digits keep them; values off the grid stay */
	v[0].grid = close;
	v[0].ngrid = 3;
	v[0].value = "0.1001";
	expect_config(v, 1, 1, "LEARNING_RATE-0.1001");
	v[0].value = "0.123456";
	expect_config(v, 1, 1, "LEARNING_RATE-0.123456");
	v[0].grid = opt;
	v[0].ngrid = 2;
	v[0].value = "adam";
	expect_config(v, 1, 1, "LEARNING_RATE-adam");
	/* too long with whole names: initials */
	for (i = 0; i < 6; i++) {
		many[i].var = (const char *[]){ "LEARNING_RATE", "MAX_DEPTH", "WEIGHT_DECAY",
						 "BATCH_SIZE", "DROPOUT_RATE", "NUM_LAYERS" }[i];
		many[i].value = "2";
		many[i].grid = depth;
		many[i].ngrid = 6;
	}
	expect_config(many, 6, 1, "LR-2_MD-2_WD-2_BS-2_DR-2_NL-2");
	expect_config(v, 0, 1, NULL);
}

/*
 * One name per variable in every tag of a study (issue 44): a study of
 * five variables had WEIGHT_DECAY-0.00001_HIDDEN-512_BATCH_SIZE-32_EPOCHS-100
 * beside WD-0.00001_HIDDEN-512_BS-256_..., because each tag chose whole
 * names or initials by its own length (tag_config). The study decides once
 * from its space (tag_study_abbreviates) and every tag follows.
 */
static void test_study_names(void **state)
{
	static const char *const wd[] = { "0.00001", "0.0001", "0.001" };
	static const char *const hidden[] = { "128", "256", "512" };
	static const char *const bs[] = { "32", "64", "128", "256" };
	static const char *const epochs[] = { "10", "50", "100" };
	static const char *const lr[] = { "0.0001", "0.0003", "0.001", "0.003" };
	struct tag_part space[5] = {
		{ "WEIGHT_DECAY", NULL, wd, 3, NULL },
		{ "HIDDEN", NULL, hidden, 3, NULL },
		{ "BATCH_SIZE", NULL, bs, 4, NULL },
		{ "EPOCHS", NULL, epochs, 3, NULL },
		{ "LEARNING_RATE", NULL, lr, 4, NULL },
	};
	struct tag_part small[2] = {
		{ "WEIGHT_DECAY", "0.00001", wd, 3, "WD" },
		{ "HIDDEN", "512", hidden, 3, "HIDDEN" },
	};
	struct tag_part big[4] = {
		{ "WEIGHT_DECAY", "0.00001", wd, 3, "WD" },
		{ "HIDDEN", "512", hidden, 3, "HIDDEN" },
		{ "BATCH_SIZE", "256", bs, 4, "BS" },
		{ "LEARNING_RATE", "0.0003", lr, 4, "LR" },
	};
	char *a, *b;

	(void)state;
	/* the old rule, tag by tag: two names for WEIGHT_DECAY in one study */
	a = tag_config(small, 2, 1);
	b = tag_config(big, 4, 1);
	assert_string_equal(a, "WEIGHT_DECAY-0.00001_HIDDEN-512");
	assert_string_equal(b, "WD-0.00001_HIDDEN-512_BS-256_LR-0.0003");
	free(a);
	free(b);
	/* the study's rule: its longest tag does not fit whole, so every tag abbreviates */
	assert_int_equal(tag_study_abbreviates(space, 5), 1);
	a = tag_config_as(small, 2, 1, 1);
	b = tag_config_as(big, 4, 1, 1);
	assert_string_equal(a, "WD-0.00001_HIDDEN-512");
	assert_string_equal(b, "WD-0.00001_HIDDEN-512_BS-256_LR-0.0003");
	free(a);
	free(b);
	a = tag_config_as(big, 4, 3, 1);
	assert_string_equal(a, "WD-0.00001_HIDDEN-512_BS-256_LR-0.0003--n3");
	free(a);
	/* a study whose longest tag fits keeps whole names, in every tag */
	assert_int_equal(tag_study_abbreviates(space + 1, 2), 0);
	a = tag_config_as(small + 1, 1, 1, 0);
	assert_string_equal(a, "HIDDEN-512");
	free(a);
	/* whole names that do not fit give no tag (the caller names it VAR-VALUE) */
	assert_null(tag_config_as(big, 4, 1, 0));
	assert_null(tag_config_as(big, 0, 1, 1));
}

/* The abbreviations of one variable, and of a study's (issue 35). */
static void test_abbrev(void **state)
{
	static const char *const grid[] = { "0.07", "4", "5", "10" };
	struct tag_part v[4] = {
		{ "LEARNING_RATE", "0.07", grid, 4, NULL },
		{ "MAX_LEAF_NODES", "4", grid, 4, NULL },
		{ "MIN_SAMPLES_LEAF", "5", grid, 4, NULL },
		{ "L2_REG", "10", grid, 4, NULL },
	};
	const char *vars[] = { "LEARNING_RATE", "L2_REG", "DEPTH", "LR" };
	const char *rec_abbr[] = { "LR" }, *rec_var[] = { "L2_REG" };
	char *out[4], *a;
	size_t i;

	(void)state;
	a = tag_abbrev("LEARNING_RATE", 1);
	assert_string_equal(a, "LR");
	free(a);
	a = tag_abbrev("LEARNING_RATE", 2);
	assert_string_equal(a, "LERA");
	free(a);
	a = tag_abbrev("DEPTH", 3);
	assert_string_equal(a, "DEPTH");
	free(a);
	/* the friction: two variables were "LR" in one tag */
	expect_config(v, 4, 1, "LERA-0.07_MLN-4_MSL-5_L2RE-10");
	/* a study: a plain name stays itself, the others keep clear of it */
	tag_abbrevs(vars, 3, NULL, NULL, 0, out);
	assert_string_equal(out[0], "LERA");
	assert_string_equal(out[1], "L2RE");
	assert_string_equal(out[2], "DEPTH");
	for (i = 0; i < 3; i++)
		free(out[i]);
	tag_abbrevs(vars, 4, NULL, NULL, 0, out);
	assert_string_equal(out[0], "LERA");
	assert_string_equal(out[3], "LR");
	for (i = 0; i < 4; i++)
		free(out[i]);
	/* LR was L2_REG's in this study's tags: it stays L2_REG's */
	tag_abbrevs(vars, 2, rec_abbr, rec_var, 1, out);
	assert_string_equal(out[0], "LERA");
	assert_string_equal(out[1], "LR");
	for (i = 0; i < 2; i++)
		free(out[i]);
	/* and alone in the space, LEARNING_RATE still does not take it */
	tag_abbrevs(vars, 1, rec_abbr, rec_var, 1, out);
	assert_string_equal(out[0], "LERA");
	free(out[0]);
	/* words that run out: the full name */
	vars[0] = "X_Y";
	vars[1] = "X__Y";
	tag_abbrevs(vars, 2, NULL, NULL, 0, out);
	assert_string_equal(out[0], "X_Y");
	assert_string_equal(out[1], "X__Y");
	for (i = 0; i < 2; i++)
		free(out[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_change),
		cmocka_unit_test(test_no_bare_number_suffix),
		cmocka_unit_test(test_replicate),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test_setup_teardown(test_make_free, setup, teardown),
		cmocka_unit_test(test_value_canon),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_abbrev),
		cmocka_unit_test(test_study_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
