/* Unit tests for configurations: canonical values, keys without the seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "search/confkey.h"
#include "tags.h"

static void canon_is(const char *in, const char *want)
{
	char *got = value_canon(in);

	assert_string_equal(got, want);
	free(got);
}

/* 0.05, 5e-2 and 0.050 are one value; words stay as they are. */
static void test_canon(void **state)
{
	(void)state;
	canon_is("0.05", "0.05");
	canon_is("5e-2", "0.05");
	canon_is("0.050", "0.05");
	canon_is("+0.05", "0.05");
	canon_is("10.0", "10");
	canon_is("010", "10");
	canon_is("1e3", "1000");
	canon_is("0.1", "0.1");
	canon_is("-0", "0");
	canon_is("0.30000000000000004", "0.30000000000000004");
	canon_is("adam", "adam");
	canon_is("1e", "1e");
	canon_is("0x10", "0x10");
	canon_is("", "");
	canon_is("1.5.2", "1.5.2");
}

static char *config_of(const char *text)
{
	char *out = NULL, *cause = NULL;

	assert_int_equal(confkey_config(text, strlen(text), &out, &cause), 0);
	return out;
}

/* The key sees assignments (canonical, any order), not the seed or commands. */
static void test_key(void **state)
{
	char *a = config_of("#!/bin/bash\nLR=0.05\nSEED=1\nDEPTH=3\npython train.py\n");
	char *b = config_of("#!/bin/bash\nDEPTH=3\nSEED=7\nexport LR=5e-2  # lr\necho hi\n");
	char *c = config_of("#!/bin/bash\nLR=0.06\nSEED=1\nDEPTH=3\n");
	char ka[65], kb[65], kc[65], ka2[65], kb2[65];

	(void)state;
	assert_string_equal(a, "DEPTH=3\nLR=0.05\nSEED=1\n");
	confkey_key(a, "SEED", ka);
	confkey_key(b, "SEED", kb);
	confkey_key(c, "SEED", kc);
	assert_string_equal(ka, kb);
	assert_string_not_equal(ka, kc);
	/* without a seed variable the seed is part of the configuration */
	confkey_key(a, "", ka2);
	confkey_key(b, NULL, kb2);
	assert_string_not_equal(ka2, kb2);
	free(a);
	free(b);
	free(c);
}

/* Reading and replacing values. */
static void test_value_with(void **state)
{
	char *a = config_of("NAME='it'\\''s'\nLR=0.1\nOPT=\"a b\"\nX=$HOME\n");
	char *v, *w, key1[65], key2[65];

	(void)state;
	v = confkey_value(a, "NAME");
	assert_string_equal(v, "it's");
	free(v);
	v = confkey_value(a, "OPT");
	assert_string_equal(v, "a b");
	free(v);
	v = confkey_value(a, "LR");
	assert_string_equal(v, "0.1");
	free(v);
	assert_null(confkey_value(a, "L"));
	w = confkey_with(a, "LR", "1e-1");
	confkey_key(a, NULL, key1);
	confkey_key(w, NULL, key2);
	assert_string_equal(key1, key2);	/* 1e-1 is 0.1 */
	free(w);
	w = confkey_with(a, "LR", "0.2");
	v = confkey_value(w, "LR");
	assert_string_equal(v, "0.2");
	free(v);
	free(w);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canon),
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_value_with),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
