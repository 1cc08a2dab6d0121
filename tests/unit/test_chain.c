/* Unit tests for the chain: dependency ids, the end of the line, durations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "jobs/chain.h"
#include "loop.h"
#include "jobs/submit.h"
#include "slurm/parse.h"

/* The ids of dep joined by spaces. */
static void expect_ids(const char *dep, const char *want)
{
	struct buf b = BUF_INIT;
	char **ids;
	size_t n, i;

	slurm_dependency_ids(dep, &ids, &n);
	for (i = 0; i < n; i++) {
		buf_addf(&b, "%s%s", i ? " " : "", ids[i]);
		free(ids[i]);
	}
	free(ids);
	if (strcmp(b.s, want) != 0)
		fail_msg("slurm_dependency_ids('%s') = '%s', want '%s'", dep ? dep : "NULL",
			 b.s, want);
	buf_release(&b);
}

/* What squeue %E and scontrol Dependency= print. */
static void test_dependency_ids(void **state)
{
	(void)state;
	expect_ids("afterany:12(unfulfilled)", "12");
	expect_ids("afterany:12", "12");
	expect_ids("afterany:12_3(unfulfilled)", "12_3");
	expect_ids("afterany:12(unfulfilled),afterok:13:14(unfulfilled)", "12 13 14");
	expect_ids("afterany:12?afterok:13", "12 13");
	expect_ids("after:12+5(unfulfilled)", "12");
	expect_ids("(null)", "");
	expect_ids("", "");
	expect_ids(NULL, "");
	expect_ids("singleton(unfulfilled)", "");
	expect_ids("afterany:(unfulfilled)", "");
}

/* Attempt i (1-based) with a job id and what it waits for. */
static void set_attempt(struct attempt *a, long long id, const char *job, const char *after)
{
	memset(a, 0, sizeof(*a));
	a->id = id;
	a->job_id = (char *)job;
	a->after_job = (char *)after;
}

/* The end of the line is the job nobody waits for, not the newest. */
static void test_line_tail(void **state)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt v[4];
	char *cause = NULL, *tail;
	const char *out =
		"10|A|RUNNING|None|2026-01-01T00:00:00|N/A|c|gpu|0:05|10:00|10\n"
		"11|B|PENDING|Dependency|N/A|N/A|c|gpu|0:00|10:00|11\n"
		"12|C|PENDING|Dependency|N/A|N/A|c|gpu|0:00|10:00|12\n";

	(void)state;
	assert_int_equal(slurm_parse_squeue(out, SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	/* as submitted: A <- B <- C, C is the end */
	set_attempt(&v[0], 1, "10", "");
	set_attempt(&v[1], 2, "11", "10");
	set_attempt(&v[2], 3, "12", "11");
	tail = submit_line_tail(&q, v, 3);
	assert_string_equal(tail, "12");
	free(tail);
	/* after prioritize C: A <- C <- B, B is the end although C is newer */
	set_attempt(&v[1], 2, "11", "12");
	set_attempt(&v[2], 3, "12", "10");
	tail = submit_line_tail(&q, v, 3);
	assert_string_equal(tail, "11");
	free(tail);
	/* a job that ended is no end; nothing live gives "" */
	set_attempt(&v[3], 4, "99", "11");
	tail = submit_line_tail(&q, v, 4);
	assert_string_equal(tail, "11");
	free(tail);
	tail = submit_line_tail(&q, &v[3], 1);
	assert_string_equal(tail, "");
	free(tail);
	slurm_jobs_release(&q);
}

/* Durations for people. */
static void test_duration(void **state)
{
	char *d;

	(void)state;
	d = chain_duration(20);
	assert_string_equal(d, "20 s");
	free(d);
	d = chain_duration(-3);
	assert_string_equal(d, "0 s");
	free(d);
	d = chain_duration(600);
	assert_string_equal(d, "10 min");
	free(d);
	d = chain_duration(3 * 3600 + 1800);
	assert_string_equal(d, "3.5 h");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dependency_ids),
		cmocka_unit_test(test_line_tail),
		cmocka_unit_test(test_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
