/* Unit tests for xloop.json parsing, names and Slurm resource syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "jobs/jobenv.h"
#include "runs.h"
#include "lib/util.h"

static void test_valid_name(void **state)
{
	static const char *good[] = { "a", "base", "lr-0.1", "A_b.c-9", "0x", NULL };
	static const char *bad[] = { "", ".", "..", "-x", "_x", ".hidden", "a/b", "a b",
				     "a\tb", "tag\n", "é", "a:b", "$(x)", NULL };
	char long_ok[65], long_bad[66];
	int i;

	(void)state;
	for (i = 0; good[i]; i++)
		assert_true(valid_name(good[i]));
	for (i = 0; bad[i]; i++)
		if (valid_name(bad[i]))
			fail_msg("'%s' was accepted", bad[i]);
	memset(long_ok, 'a', 64);
	long_ok[64] = '\0';
	memset(long_bad, 'a', 65);
	long_bad[65] = '\0';
	assert_true(valid_name(long_ok));
	assert_false(valid_name(long_bad));
}

static void test_mem_and_time(void **state)
{
	(void)state;
	assert_true(config_valid_mem("16G"));
	assert_true(config_valid_mem("4000M"));
	assert_true(config_valid_mem("1024"));
	assert_false(config_valid_mem("0"));
	assert_false(config_valid_mem("0G"));
	assert_false(config_valid_mem("-4G"));
	assert_false(config_valid_mem("16GB"));
	assert_false(config_valid_mem("lots"));
	assert_false(config_valid_mem(""));
	assert_int_equal(config_mem_mb("16G"), 16384);
	assert_int_equal(config_mem_mb("1T"), 1048576);
	assert_int_equal(config_mem_mb("1500K"), 2);
	assert_int_equal(config_mem_mb("300"), 300);

	assert_true(config_valid_time("04:00:00"));
	assert_true(config_valid_time("1-00:00:00"));
	assert_true(config_valid_time("30"));
	assert_false(config_valid_time("0"));
	assert_false(config_valid_time("00:00:00"));
	assert_false(config_valid_time("1:2:3:4"));
	assert_false(config_valid_time("1h"));
	assert_false(config_valid_time("-1"));
	assert_false(config_valid_time(""));
	assert_int_equal(config_time_secs("30"), 30 * 60);		/* minutes */
	assert_int_equal(config_time_secs("30:15"), 30 * 60 + 15);	/* M:S */
	assert_int_equal(config_time_secs("2:00:00"), 7200);
	assert_int_equal(config_time_secs("1-2"), 86400 + 7200);	/* D-H */
	assert_int_equal(config_time_secs("1-2:30"), 86400 + 7200 + 1800);
	assert_int_equal(config_time_secs("1-00:00:10"), 86410);
}

static int parse(const char *json, struct config *c, char **cause)
{
	*cause = NULL;
	return config_parse(c, json, strlen(json), cause);
}

static void test_parse_defaults_and_overrides(void **state)
{
	struct config c;
	char *cause;

	(void)state;
	assert_int_equal(parse("{}", &c, &cause), 0);
	assert_string_equal(c.study, "main");
	assert_string_equal(c.partition, "gpu");
	assert_string_equal(c.res.gres, "gpu:1");
	assert_int_equal(c.depth, 1);
	assert_int_equal(c.lanes, 1);
	assert_true(c.goal_max);
	config_release(&c);

	assert_int_equal(parse("{\"queue\": {\"lanes\": 4}}", &c, &cause), 0);
	assert_int_equal(c.lanes, 4);
	config_release(&c);
	assert_int_equal(parse("{\"queue\": {\"lanes\": \"auto\"}}", &c, &cause), 0);
	assert_int_equal(c.lanes, 0);	/* auto */
	cause = config_to_json(&c);
	assert_non_null(strstr(cause, "\"lanes\": \"auto\""));
	free(cause);
	config_release(&c);

	assert_int_equal(parse("{\"study\": \"dino\", \"slurm\": {\"partition\": \"short\"},"
			       " \"resources\": {\"gres\": \"\", \"mem\": \"2G\"},"
			       " \"metric\": {\"goal\": \"min\"}, \"queue\": {\"depth\": 3}}",
			       &c, &cause), 0);
	assert_string_equal(c.study, "dino");
	assert_string_equal(c.partition, "short");
	assert_string_equal(c.res.gres, "");
	assert_string_equal(c.res.mem, "2G");
	assert_false(c.goal_max);
	assert_int_equal(c.depth, 3);
	config_release(&c);
}

static void test_parse_refusals(void **state)
{
	static const struct {
		const char *json, *needle;
	} bad[] = {
		{ "[]", "must be an object" },
		{ "{\"study\": 1}", "'study'" },
		{ "{\"study\": \"a/b\"}", "'study'" },
		{ "{\"colour\": \"blue\"}", "unknown key 'colour'" },
		{ "{\"resources\": {\"ram\": \"1G\"}}", "unknown key 'resources.ram'" },
		{ "{\"resources\": {\"mem\": \"-4G\"}}", "'resources.mem'" },
		{ "{\"resources\": {\"cpus\": 0}}", "'resources.cpus'" },
		{ "{\"resources\": {\"cpus\": \"4\"}}", "'resources.cpus'" },
		{ "{\"resources\": \"big\"}", "'resources' must be an object" },
		{ "{\"queue\": {\"depth\": 99}}", "'queue.depth'" },
		{ "{\"queue\": {\"lanes\": 0}}", "'queue.lanes' must be an integer from 1 to 64 or \"auto\"" },
		{ "{\"queue\": {\"lanes\": 65}}", "'queue.lanes'" },
		{ "{\"queue\": {\"lanes\": \"all\"}}", "'queue.lanes'" },
		{ "{\"metric\": {\"goal\": \"up\"}}", "'metric.goal'" },
		{ "{\"retry\": {\"auto_resources\": 1}}", "'retry.auto_resources'" },
		{ "{\"notify\": {\"url_env\": \"https://hooks\"}}", "'notify.url_env'" },
		{ "{\"remote\": {\"host\": \"-oProxyCommand=x\"}}", "'remote.host'" },
		{ "{\"segments\": {\"max\": -1}}", "'segments.max'" },
		{ "{\"segments\": {\"signal\": \"KILL\"}}", "'segments.signal'" },
		{ "{\"segments\": {\"signal\": \"SIGUSR2\"}}", "'segments.signal'" },
		{ "{\"segments\": {\"lead\": 0}}", "'segments.lead'" },
		{ "{\"segments\": {\"checkpoint\": \"../up\"}}", "'segments.checkpoint'" },
		{ "{\"segments\": {\"checkpoint\": \"/abs\"}}", "'segments.checkpoint'" },
		{ "{\"segments\": {\"checkpoint\": \"a/./b\"}}", "'segments.checkpoint'" },
		{ "{\"segments\": {\"checkpoint\": \"ck/\"}}", "'segments.checkpoint'" },
		{ "{\"segments\": {\"checkpoint\": \"a b\"}}", "'segments.checkpoint'" },
		{ "{\"study\": \"a\", \"study\": \"b\"}", "invalid JSON" },
		{ "{\"study\": \"a\\u0000b\"}", "invalid JSON" },
		{ "{\"study\": ", "invalid JSON" },
		{ "{\"metric\": {\"min_delta\": -1}}", "'metric.min_delta'" },
		{ "{\"search\": {\"seed\": \"1X\"}}", "'search.seed'" },
		{ "{\"search\": {\"alpha\": 0.9}}", "'search.alpha'" },
		{ "{\"search\": {\"space\": {\"LR\": \"1..0\"}}}", "'search.space.LR'" },
		{ "{\"search\": {\"space\": {\"LR\": [1, 2]}}}", "'search.space.LR'" },
		{ "{\"search\": {\"space\": [\"LR\"]}}", "'search.space'" },
		{ "{\"autopilot\": {\"until\": \"tomorrow\"}}", "'autopilot.until'" },
		{ "{\"autopilot\": {\"budget_runs\": -1}}", "'autopilot.budget_runs'" },
	};
	struct config c;
	char *cause;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i].json, &c, &cause) != -1)
			fail_msg("accepted: %s", bad[i].json);
		if (!cause || !strstr(cause, bad[i].needle))
			fail_msg("for %s: cause '%s' lacks '%s'", bad[i].json,
				 cause ? cause : "(null)", bad[i].needle);
		free(cause);
	}
}

/* segments: off by default; the four keys parse. */
static void test_segments(void **state)
{
	struct config c;
	char *cause;

	(void)state;
	config_defaults(&c, NULL, NULL);
	assert_int_equal(c.seg.max, 0);
	assert_string_equal(c.seg.signal, "USR2");
	assert_int_equal(c.seg.lead, 300);
	assert_string_equal(c.seg.checkpoint, "checkpoint");
	config_release(&c);
	assert_int_equal(parse("{\"segments\": {\"max\": 20, \"signal\": \"TERM\", \"lead\": "
			       "120, \"checkpoint\": \"state/resume.pt\"}}", &c, &cause), 0);
	assert_int_equal(c.seg.max, 20);
	assert_string_equal(c.seg.signal, "TERM");
	assert_int_equal(c.seg.lead, 120);
	assert_string_equal(c.seg.checkpoint, "state/resume.pt");
	config_release(&c);
}

/* search.* and autopilot.* are read; init's defaults do not write them. */
static void test_search_and_autopilot(void **state)
{
	struct config c;
	char *cause = NULL, *text;

	(void)state;
	assert_int_equal(parse("{\"search\": {\"seed\": \"SEED\", \"replicates\": 4,"
			       " \"space\": {\"LR\": \"0.01..1:log:steps=3\", \"OPT\": [\"adam\", \"sgd\"]}},"
			       " \"metric\": {\"min_delta\": 0.001},"
			       " \"autopilot\": {\"on\": true, \"budget_runs\": 30,"
			       " \"until\": \"2026-12-02T06:00:00Z\"}}", &c, &cause), 0);
	assert_string_equal(c.search.seed, "SEED");
	assert_int_equal(c.search.replicates, 4);
	assert_int_equal(c.search.space.n, 2);
	assert_string_equal(c.search.space.v[0].values[1], "0.1");
	assert_string_equal(c.search.space.v[1].values[1], "sgd");
	assert_true(c.min_delta == 0.001);
	assert_true(c.autopilot.on);
	assert_int_equal(c.autopilot.budget_runs, 30);
	text = config_to_json(&c);
	assert_null(strstr(text, "search"));
	assert_null(strstr(text, "autopilot"));
	free(text);
	config_release(&c);
	assert_int_equal(config_parse_iso("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(config_parse_iso("2026-12-02T06:00"), 1796191200);
	assert_int_equal(config_parse_iso("2026-12-02T06:00:30Z"), 1796191230);
	assert_int_equal(config_parse_iso("2026-13-02T06:00"), -1);
	assert_int_equal(config_parse_iso("2026-12-02 06:00"), -1);
	assert_int_equal(config_parse_iso("2026-12-02T06:00Zx"), -1);
}

static void test_roundtrip(void **state)
{
	struct config a, b;
	char *cause, *text, *text2;

	(void)state;
	config_defaults(&a, "dino", "short");
	text = config_to_json(&a);
	assert_int_equal(parse(text, &b, &cause), 0);
	text2 = config_to_json(&b);
	assert_string_equal(text, text2);
	assert_string_equal(b.study, "dino");
	assert_string_equal(b.partition, "short");
	free(text);
	free(text2);
	config_release(&a);
	config_release(&b);
}

/* tracker: parsed, checked, and carried into a job's environment. */
static void test_tracker(void **state)
{
	static const char *bad[] = {
		"{\"tracker\": {\"run_id_vars\": [\"XLOOP_TAG\"]}}",
		"{\"tracker\": {\"run_id_vars\": [\"SLURM_JOB_ID\"]}}",
		"{\"tracker\": {\"run_id_vars\": [\"A B\"]}}",
		"{\"tracker\": {\"run_id_vars\": [\"\"]}}",
		"{\"tracker\": {\"run_id_vars\": \"WANDB_RUN_ID\"}}",
		"{\"tracker\": {\"run_id_vars\": [\"X\", \"X\"]}}",
		"{\"tracker\": {\"run_id_vars\": [\"X\"], \"env\": {\"X\": \"1\"}}}",
		"{\"tracker\": {\"env\": {\"X\": 1}}}",
		"{\"tracker\": {\"env\": {\"XLOOP_RUN_ID\": \"1\"}}}",
		"{\"tracker\": {\"ids\": []}}",
		NULL,
	};
	const char *good = "{\"study\": \"s\", \"tracker\": {\"run_id_vars\": [\"WANDB_RUN_ID\","
			   " \"NEPTUNE_CUSTOM_RUN_ID\"], \"env\": {\"WANDB_RESUME\": \"allow\","
			   " \"NOTE\": \"a b'c\"}}}";
	struct jobenv_job j = { "t1", NULL, 2, "job", 3 };
	struct config c;
	struct jobenv e;
	struct buf b = BUF_INIT;
	char id[RUN_IDENT_LEN + 1], id2[RUN_IDENT_LEN + 1];
	char *cause = NULL;
	int i;

	(void)state;
	for (i = 0; bad[i]; i++) {
		if (config_parse(&c, bad[i], strlen(bad[i]), &cause) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(strstr(cause, "tracker"));
		free(cause);
		cause = NULL;
	}
	assert_int_equal(config_parse(&c, good, strlen(good), &cause), 0);
	assert_int_equal(c.tracker.nid, 2);
	assert_int_equal(c.tracker.nenv, 2);
	run_ident("s", "t1", 1700000000, id);
	run_ident("s", "t1", 1700000001, id2);
	assert_int_equal(strlen(id), 32);
	assert_string_not_equal(id, id2);
	j.run_id = id;
	jobenv_init(&e, &c, "/r", &j);
	assert_int_equal(e.n, 12);
	assert_string_equal(e.v[0], "XLOOP_RUN_DIR=/r/runs/s/t1");
	assert_string_equal(e.v[2], "XLOOP_ATTEMPT=2");
	assert_string_equal(e.v[6], "XLOOP_SEGMENT=3");
	assert_true(strncmp(e.v[7], "XLOOP_RUN_ID=", 13) == 0);
	assert_string_equal(e.v[7] + 13, id);
	assert_true(strncmp(e.v[8], "WANDB_RUN_ID=", 13) == 0);
	assert_string_equal(e.v[8] + 13, id);
	assert_string_equal(e.v[10], "WANDB_RESUME=allow");
	assert_null(jobenv_vec(&e)[12]);
	jobenv_release(&e);
	jobenv_shell(&c, &b);
	assert_string_equal(b.s, "export XLOOP_RUN_ID=\"$rid\"\n"
			    "export WANDB_RUN_ID=\"$rid\"\n"
			    "export NEPTUNE_CUSTOM_RUN_ID=\"$rid\"\n"
			    "export WANDB_RESUME=allow\n"
			    "export NOTE='a b'\\''c'\n");
	buf_release(&b);
	config_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_name),
		cmocka_unit_test(test_mem_and_time),
		cmocka_unit_test(test_parse_defaults_and_overrides),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_search_and_autopilot),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_tracker),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
