/* Unit tests for the #SBATCH line reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jobsh/directives.h"

/* The i-th directive is option=value on line. */
static void expect(const struct sbatch_directives *d, size_t i, const char *option,
		   const char *value, int line)
{
	assert_true(i < d->nr);
	assert_string_equal(d->v[i].option, option);
	assert_string_equal(d->v[i].value, value);
	assert_int_equal(d->v[i].line, line);
}

static void test_forms(void **state)
{
	struct sbatch_directives d;

	(void)state;
	sbatch_directives_parse("#!/bin/bash\n"
				"#SBATCH --time=08:00:00\n"
				"#SBATCH -c 4 --mem 16G   # a comment -t 9\n"
				"\n"
				"# a plain comment\n"
				"#SBATCH -t1:00 -p=gpu --exclusive --job-name \"my job\"\n"
				"#SBATCH --requeue -x n1\n"
				"#SBATCHX --time=1\n"
				"#SBATCH --nodes\n", &d);
	assert_int_equal(d.nr, 10);
	expect(&d, 0, "time", "08:00:00", 2);
	expect(&d, 1, "cpus-per-task", "4", 3);
	assert_string_equal(d.v[1].text, "-c 4");
	expect(&d, 2, "mem", "16G", 3);
	expect(&d, 3, "time", "1:00", 6);
	expect(&d, 4, "partition", "gpu", 6);
	expect(&d, 5, "exclusive", "", 6);
	expect(&d, 6, "job-name", "my job", 6);
	expect(&d, 7, "requeue", "", 7);
	expect(&d, 8, "exclude", "n1", 7);
	expect(&d, 9, "nodes", "", 9);
	sbatch_directives_release(&d);
}

static void test_stops_at_first_command(void **state)
{
	struct sbatch_directives d;

	(void)state;
	sbatch_directives_parse("#!/bin/bash\n#SBATCH --mem=1G\nLR=0.1\n#SBATCH --time=1\n", &d);
	assert_int_equal(d.nr, 1);
	expect(&d, 0, "mem", "1G", 2);
	sbatch_directives_release(&d);
	sbatch_directives_parse("", &d);
	assert_int_equal(d.nr, 0);
	sbatch_directives_release(&d);
	sbatch_directives_parse("#SBATCH --=x -- --time=1\n", &d);	/* no name: skipped */
	assert_int_equal(d.nr, 1);
	expect(&d, 0, "time", "1", 1);
	sbatch_directives_release(&d);
	sbatch_directives_parse("  echo hi\n#SBATCH --mem=1G\n", &d);
	assert_int_equal(d.nr, 0);
	sbatch_directives_release(&d);
}

/* The nodes a job asks: the last --nodes or -N, its fewest; 1 without one. */
static void test_nodes(void **state)
{
	static const struct {
		const char *text;
		long long nodes;
	} cases[] = {
		{ "#SBATCH --nodes=2\n", 2 },
		{ "#SBATCH -N 3 --time=1\n", 3 },
		{ "#SBATCH -N2\n", 2 },
		{ "#SBATCH --nodes 2-4\n", 2 },
		{ "#SBATCH --nodes=4,2\n", 2 },
		{ "#SBATCH --nodes=1\n#SBATCH --nodes=2\n", 2 },	/* the last one counts */
		{ "#SBATCH --time=1\n", 1 },
		{ "#SBATCH --nodes\n", 1 },
		{ "#SBATCH --nodes=0\n", 1 },
		{ "#SBATCH --nodes=x\n", 1 },
		{ "echo\n#SBATCH --nodes=2\n", 1 },	/* after a command sbatch reads none */
	};
	struct sbatch_directives d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbatch_directives_parse(cases[i].text, &d);
		if (sbatch_directives_nodes(&d) != cases[i].nodes)
			fail_msg("%s: %lld, want %lld", cases[i].text, sbatch_directives_nodes(&d),
				 cases[i].nodes);
		sbatch_directives_release(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_stops_at_first_command),
		cmocka_unit_test(test_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
