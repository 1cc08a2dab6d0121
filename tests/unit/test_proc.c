/* Unit tests for the process module: real children, no mocks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "lib/proc.h"

static int run(struct proc *p, const char *const *argv)
{
	p->argv = argv;
	return proc_run(p);
}

static void test_exit_code_and_output(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.status, 3);
	assert_int_equal(p.signo, 0);
	assert_int_equal(p.timed_out, 0);
	assert_string_equal(p.out.s, "out\n");
	assert_string_equal(p.err.s, "err\n");
	proc_release(&p);
}

static void test_signal(void **state)
{
	const char *argv[] = { "sh", "-c", "kill -9 $$", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.signo, 9);
	assert_int_equal(p.status, 128 + 9);
	proc_release(&p);
}

static void test_timeout_term_then_kill(void **state)
{
	/* ignores TERM, so only the KILL after the grace period ends it */
	const char *argv[] = { "sh", "-c", "trap '' TERM; echo started; sleep 30", NULL };
	struct proc p = PROC_INIT;
	time_t t0 = time(NULL);

	(void)state;
	p.timeout_ms = 300;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.timed_out, 1);
	assert_int_equal(p.signo, 9);
	assert_string_equal(p.out.s, "started\n");
	assert_true(time(NULL) - t0 < 10);
	proc_release(&p);
}

static void test_timeout_term(void **state)
{
	const char *argv[] = { "sleep", "30", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	p.timeout_ms = 200;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.timed_out, 1);
	assert_int_equal(p.signo, 15);
	proc_release(&p);
}

static void test_missing_binary(void **state)
{
	const char *argv[] = { "xloop-no-such-program-here", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	assert_int_equal(run(&p, argv), -1);
	assert_int_equal(p.exec_errno, ENOENT);
	proc_release(&p);
}

static void test_large_output_both_pipes(void **state)
{
	/* 4 MiB on each pipe, interleaved: two blocking reads would deadlock */
	const char *argv[] = { "sh", "-c",
		"i=0; while [ $i -lt 64 ]; do head -c 32768 /dev/zero | tr '\\0' o;"
		" head -c 32768 /dev/zero | tr '\\0' e >&2; i=$((i+1)); done;"
		" head -c 2097152 /dev/zero | tr '\\0' o;"
		" head -c 2097152 /dev/zero | tr '\\0' e >&2", NULL };
	struct proc p = PROC_INIT;
	size_t i;

	(void)state;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.status, 0);
	assert_int_equal(p.out.len, 4u << 20);
	assert_int_equal(p.err.len, 4u << 20);
	for (i = 0; i < p.out.len; i++)
		if (p.out.s[i] != 'o' || p.err.s[i] != 'e')
			fail_msg("byte %zu differs", i);
	proc_release(&p);
}

static void test_output_cap(void **state)
{
	const char *argv[] = { "head", "-c", "100000", "/dev/zero", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	p.max_output = 1000;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.status, 0);
	assert_int_equal(p.out.len, 1000);
	assert_int_equal(p.truncated, 1);
	proc_release(&p);
}

static void test_stdin_env_dir(void **state)
{
	const char *argv[] = { "sh", "-c", "cat; printf '%s|%s|' \"$XL_A\" \"$HOME\"; pwd", NULL };
	const char *env[] = { "XL_A=a b,c", "HOME=/nowhere", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	p.in = "from stdin\n";
	p.env = env;
	p.dir = "/tmp";
	assert_int_equal(run(&p, argv), 0);
	assert_string_equal(p.out.s, "from stdin\na b,c|/nowhere|/tmp\n");
	proc_release(&p);
}

static void test_env_removal(void **state)
{
	const char *argv[] = { "sh", "-c", "env | grep '^XLT' | sort", NULL };
	const char *env[] = { "-XLT_GONE", "-XLT_P_*", "XLT_NEW=n", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	setenv("XLT_GONE", "1", 1);
	setenv("XLT_GONER", "keep: only the exact name goes", 1);
	setenv("XLT_P_A", "1", 1);
	setenv("XLT_P_", "1", 1);
	setenv("XLT_Q", "kept", 1);
	p.env = env;
	assert_int_equal(run(&p, argv), 0);
	assert_string_equal(p.out.s, "XLT_GONER=keep: only the exact name goes\n"
			    "XLT_NEW=n\nXLT_Q=kept\n");
	proc_release(&p);
}

static void test_no_fd_leak(void **state)
{
	/* only 0, 1, 2 (and ls's own) are open in the child */
	const char *argv[] = { "sh", "-c", "ls /proc/self/fd | wc -l", NULL };
	struct proc p = PROC_INIT;

	(void)state;
	assert_int_equal(run(&p, argv), 0);
	/* 0 1 2 and the fd ls uses to read the directory */
	assert_string_equal(p.out.s, "4\n");
	proc_release(&p);
}

static void test_child_exits_stdin_unread(void **state)
{
	const char *argv[] = { "true", NULL };
	struct proc p = PROC_INIT;
	static char big[1 << 20];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	p.in = big;
	assert_int_equal(run(&p, argv), 0);
	assert_int_equal(p.status, 0);
	proc_release(&p);
}

/* The child leads its own process group and gets SIGPIPE back (we ignore it). */
static void test_pgroup_and_sigpipe(void **state)
{
	/* field 5 of /proc/self/stat is the process group; $$ is sh's pid */
	const char *pg[] = { "sh", "-c", "read -r a b c d e r </proc/self/stat; "
			     "[ \"$e\" = \"$$\" ] && echo own", NULL };
	const char *pipe_[] = { "sh", "-c", "yes | head -n 1", NULL };
	struct proc p = PROC_INIT, q = PROC_INIT;

	(void)state;
	assert_int_equal(run(&p, pg), 0);
	assert_string_equal(p.out.s, "own\n");
	proc_release(&p);
	/* with SIGPIPE ignored, yes would see EPIPE and complain on stderr */
	assert_int_equal(run(&q, pipe_), 0);
	assert_string_equal(q.out.s, "y\n");
	assert_string_equal(q.err.s, "");
	proc_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code_and_output),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_timeout_term_then_kill),
		cmocka_unit_test(test_timeout_term),
		cmocka_unit_test(test_missing_binary),
		cmocka_unit_test(test_large_output_both_pipes),
		cmocka_unit_test(test_output_cap),
		cmocka_unit_test(test_stdin_env_dir),
		cmocka_unit_test(test_env_removal),
		cmocka_unit_test(test_no_fd_leak),
		cmocka_unit_test(test_child_exits_stdin_unread),
		cmocka_unit_test(test_pgroup_and_sigpipe),
	};

	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
