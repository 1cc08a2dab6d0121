/* Unit tests for the pure parts of segments: the segment count and its checks, carried overrides. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "loop.h"
#include "jobs/submit.h"
#include "jobs/segments.h"
#include "lib/util.h"

/* A config with segments.max, segments.lead and resources.time set. */
static void cfg(struct config *c, long long max, long long lead, const char *time_)
{
	config_defaults(c, "s", "p");
	c->seg.max = max;
	c->seg.lead = lead;
	free(c->res.time);
	c->res.time = xstrdup(time_);
}

/* --segments wins over segments.max; 0 is off; the lead must be shorter than the limit. */
static void test_wanted(void **state)
{
	static const struct {
		long long max, lead;
		const char *time_, *flag;
		int from_flag, rc;
		long long want;
	} cases[] = {
		{ 0, 300, "1:00:00", NULL, 0, 0, 0 },		/* off by default */
		{ 0, 300, "1:00:00", "4", 0, 0, 4 },		/* the flag turns it on */
		{ 5, 300, "1:00:00", NULL, 0, 0, 5 },
		{ 5, 300, "1:00:00", "0", 0, 0, 0 },		/* the flag turns it off */
		{ 5, 300, "1:00:00", "1000", 0, 0, 1000 },
		{ 5, 300, "1:00:00", "1001", 0, XL_USAGE, 0 },
		{ 5, 300, "1:00:00", "-1", 0, XL_USAGE, 0 },
		{ 5, 300, "1:00:00", "x", 0, XL_USAGE, 0 },
		{ 5, 300, "1:00:00", "", 0, XL_USAGE, 0 },
		{ 5, 300, "5:00", NULL, 0, XL_CONFIG, 5 },	/* xloop.json's own mistake */
		{ 5, 300, "5:00", NULL, 1, XL_DATAERR, 5 },	/* --time given */
		{ 0, 300, "5:00", "3", 0, XL_DATAERR, 3 },	/* --segments given */
		{ 0, 300, "5:00", "0", 0, 0, 0 },		/* off: no lead to check */
		{ 5, 299, "5:00", NULL, 0, 0, 5 },		/* shorter, with a warning */
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct config c;
		long long max = -1;
		char *cause = NULL;
		int rc;

		cfg(&c, cases[i].max, cases[i].lead, cases[i].time_);
		rc = segments_wanted(&c, cases[i].flag, c.res.time, cases[i].from_flag, &max,
				     &cause);
		assert_int_equal(rc, cases[i].rc);
		if (rc == 0)
			assert_int_equal(max, cases[i].want);
		else
			assert_non_null(cause);
		free(cause);
		config_release(&c);
	}
}

/* sbatch's --signal: B: so the batch shell (the wrapper) gets it. */
static void test_signal(void **state)
{
	struct config c;
	char *s;

	(void)state;
	cfg(&c, 3, 120, "1:00:00");
	s = segments_signal(&c);
	assert_string_equal(s, "B:USR2@120");
	free(s);
	config_release(&c);
}

/* What an attempt recorded is what its automatic retry gets back. */
static void test_override_value(void **state)
{
	struct submit_opts o;
	char *text, *v;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.mem = "2G";
	o.time = "1:00:00";
	o.segments = "12";
	text = submit_overrides_text(&o);
	v = submit_override_value(text, "segments");
	assert_string_equal(v, "12");
	free(v);
	v = submit_override_value(text, "mem");
	assert_string_equal(v, "2G");
	free(v);
	v = submit_override_value(text, "time");
	assert_string_equal(v, "1:00:00");
	free(v);
	free(text);
	assert_null(submit_override_value("", "segments"));
	assert_null(submit_override_value(NULL, "segments"));
	assert_null(submit_override_value("--mem=2G", "segments"));
	assert_null(submit_override_value("--segmentsx=3", "segments"));	/* a longer name */
	assert_null(submit_override_value("x--segments=3", "segments"));	/* not at a word's start */
	v = submit_override_value("--segments=0", "segments");
	assert_string_equal(v, "0");	/* turned off on purpose: carried too */
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_override_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
