/* Unit tests for the option parser and getters (cmd/opts.c) and the table's lookup (cmd/cmd.c). */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"

static const struct opt table[] = {
	{ "mem", OPT_STRING, "M", "memory" },
	{ "no-chain", OPT_FLAG, NULL, "no chain" },
	{ "space", OPT_LIST, "VAR=SPEC", "one variable" },
	{ "n", OPT_STRING, "K", "how many" },
	OPT_END,
};

/* Parse the NULL-terminated words (the command's name first). */
static int parse(struct cmd_args *a, char **cause, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	va_start(ap, cause);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	*cause = NULL;
	return opts_parse(table, argc, argv, a, cause);
}

/* Options and positionals mixed; both value forms; the last value counts. */
static void test_values(void **state)
{
	struct cmd_args a;
	char *cause;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "T", "--mem", "8G", "--no-chain", "U",
			       "--mem=16G", "-n", "3", NULL), 0);
	assert_string_equal(args_get(&a, "mem"), "16G");
	assert_string_equal(args_get(&a, "n"), "3");
	assert_true(args_flag(&a, "no-chain"));
	assert_int_equal(a.npos, 2);
	assert_string_equal(a.pos[0], "T");
	assert_string_equal(a.pos[1], "U");
	assert_null(a.pos[2]);
	assert_int_equal(args_list(&a, "space")->n, 0);
	cmd_args_release(&a);

	assert_int_equal(parse(&a, &cause, "x", NULL), 0);
	assert_null(args_get(&a, "mem"));
	assert_false(args_flag(&a, "no-chain"));
	assert_int_equal(a.npos, 0);
	cmd_args_release(&a);

	/* an empty value is a value */
	assert_int_equal(parse(&a, &cause, "x", "--mem=", NULL), 0);
	assert_string_equal(args_get(&a, "mem"), "");
	cmd_args_release(&a);
}

/* A repeatable option keeps every value in order. */
static void test_lists(void **state)
{
	const struct opt_list *l;
	struct cmd_args a;
	char *cause;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "--space", "LR=1,2", "--space=B=3..4:int",
			       "--space", "C=x", NULL), 0);
	l = args_list(&a, "space");
	assert_int_equal(l->n, 3);
	assert_string_equal(l->v[0], "LR=1,2");
	assert_string_equal(l->v[1], "B=3..4:int");
	assert_string_equal(l->v[2], "C=x");
	cmd_args_release(&a);
}

/* "--" ends the options; a lone "-" is a positional. */
static void test_double_dash(void **state)
{
	struct cmd_args a;
	char *cause;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "--no-chain", "--", "--mem", "-x", "-", NULL), 0);
	assert_true(args_flag(&a, "no-chain"));
	assert_null(args_get(&a, "mem"));
	assert_int_equal(a.npos, 3);
	assert_string_equal(a.pos[0], "--mem");
	assert_string_equal(a.pos[1], "-x");
	assert_string_equal(a.pos[2], "-");
	cmd_args_release(&a);
}

/* The mistakes, each named. */
static void test_errors(void **state)
{
	struct cmd_args a;
	char *cause;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "--frob", NULL), -1);
	assert_string_equal(cause, "unknown option '--frob'");
	free(cause);
	cmd_args_release(&a);

	assert_int_equal(parse(&a, &cause, "x", "-mx", NULL), -1);	/* no bundling */
	assert_string_equal(cause, "unknown option '-mx'");
	free(cause);
	cmd_args_release(&a);

	assert_int_equal(parse(&a, &cause, "x", "T", "--mem", NULL), -1);
	assert_string_equal(cause, "option '--mem' needs a value");
	free(cause);
	cmd_args_release(&a);

	assert_int_equal(parse(&a, &cause, "x", "--no-chain=1", NULL), -1);
	assert_string_equal(cause, "option '--no-chain' takes no value");
	free(cause);
	cmd_args_release(&a);

	/* the global flags take no value either */
	assert_int_equal(parse(&a, &cause, "x", "--json=1", NULL), -1);
	assert_string_equal(cause, "unknown option '--json=1'");
	free(cause);
	cmd_args_release(&a);
}

/* The options every command takes are recorded, not positionals. */
static void test_globals(void **state)
{
	struct cmd_args a;
	char *cause;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "--json", "--allow-root", "--allow-secret",
			       "-h", NULL), 0);
	assert_true(a.json && a.allow_root && a.allow_secret && a.help);
	assert_int_equal(a.npos, 0);
	cmd_args_release(&a);
}

/* The positional bounds. */
static void test_bounds(void **state)
{
	struct cmd_args a;
	char *cause = NULL;

	(void)state;
	assert_int_equal(parse(&a, &cause, "x", "A", "B", NULL), 0);
	assert_int_equal(opts_check_npos(&a, 1, 2, &cause), 0);
	assert_int_equal(opts_check_npos(&a, 0, -1, &cause), 0);
	assert_int_equal(opts_check_npos(&a, 3, 3, &cause), -1);
	assert_string_equal(cause, "missing argument");
	FREE_AND_NULL(cause);
	assert_int_equal(opts_check_npos(&a, 0, 1, &cause), -1);
	assert_string_equal(cause, "unexpected argument 'B'");
	FREE_AND_NULL(cause);
	assert_int_equal(opts_check_npos(&a, 0, 0, &cause), -1);
	assert_string_equal(cause, "unexpected argument 'A'");
	free(cause);
	cmd_args_release(&a);
}

/* An OPT_REQUIRED option must be given. */
static void test_required(void **state)
{
	static const struct opt req[] = {
		{ "from", OPT_STRING, "P", "the parent", OPT_REQUIRED },
		{ "note", OPT_STRING, "T", "why", 0 },
		OPT_END,
	};
	char *argv1[] = { "x", "--note", "n", NULL }, *argv2[] = { "x", "--from=a", NULL };
	struct cmd_args a;
	char *cause = NULL;

	(void)state;
	assert_int_equal(opts_parse(req, 3, argv1, &a, &cause), 0);
	assert_int_equal(opts_check_required(&a, &cause), -1);
	assert_string_equal(cause, "option '--from' is required");
	FREE_AND_NULL(cause);
	cmd_args_release(&a);
	assert_int_equal(opts_parse(req, 2, argv2, &a, &cause), 0);
	assert_int_equal(opts_check_required(&a, &cause), 0);
	assert_null(cause);
	cmd_args_release(&a);
}

/* Whether calling f in a child ends it as BUG() does: abort (test build) or exit 70. */
static int aborts(void (*f)(void))
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, STDERR_FILENO);
		f();
		_exit(0);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
#ifdef XLOOP_TEST_BUILD
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
#else
	return WIFEXITED(st) && WEXITSTATUS(st) == XL_SOFTWARE;
#endif
}

static void ask_unknown(void)
{
	struct cmd_args a;
	char *cause;

	parse(&a, &cause, "x", NULL);
	args_get(&a, "memory");
}

static void ask_wrong_kind(void)
{
	struct cmd_args a;
	char *cause;

	parse(&a, &cause, "x", NULL);
	args_flag(&a, "mem");
}

static void ask_right(void)
{
	struct cmd_args a;
	char *cause;

	parse(&a, &cause, "x", NULL);
	args_get(&a, "mem");
	cmd_args_release(&a);
}

/* Asking for an option the table lacks, or as another kind, is a bug. */
static void test_bug(void **state)
{
	(void)state;
	assert_true(aborts(ask_unknown));
	assert_true(aborts(ask_wrong_kind));
	assert_false(aborts(ask_right));
}

/* A subcommand is the first positional, options (and their values) skipped. */
static void test_subcommand(void **state)
{
	const struct cmd_entry *plan = cmd_find("plan"), *sub;
	char *a1[] = { "plan", "--from", "add", "add", "X=1", NULL };
	char *a2[] = { "plan", "--all", NULL };
	char *a3[] = { "plan", "frob", NULL };
	char *a4[] = { "plan", "--", "rm", NULL };
	int at;

	(void)state;
	assert_non_null(plan);
	sub = cmd_sub(plan, 5, a1, &at);
	assert_non_null(sub);
	assert_string_equal(sub->name, "plan add");
	assert_int_equal(at, 3);
	sub = cmd_sub(plan, 2, a2, &at);
	assert_non_null(sub);
	assert_string_equal(sub->name, "plan ls");	/* the default */
	assert_int_equal(at, 0);
	assert_null(cmd_sub(plan, 2, a3, &at));
	assert_int_equal(at, 1);
	sub = cmd_sub(plan, 3, a4, &at);
	assert_non_null(sub);
	assert_string_equal(sub->name, "plan rm");
	/* a command without subcommands is its own */
	assert_ptr_equal(cmd_sub(cmd_find("init"), 2, a2, &at), cmd_find("init"));
}

/*
 * Every option of every command (and subcommand) has its help text and a
 * value name; every listed command has its group.
 */
static void test_table_complete(void **state)
{
	const struct cmd_entry *const *c, *s;
	const struct opt *o;

	(void)state;
	for (c = cmd_table; *c; c++) {
		/* help, the manual and the completion list a command under its group */
		if (!((*c)->flags & CMD_HIDDEN) &&
		    ((*c)->group <= CMD_GROUP_NONE || (*c)->group >= CMD_GROUP_COUNT))
			fail_msg("%s has no group in `xloop help`", (*c)->name);
		for (s = cmd_each(*c, NULL); s; s = cmd_each(*c, s)) {
			assert_non_null(s->exec);
			assert_non_null(s->summary);
			for (o = s->opts; o && o->name; o++) {
				if (!o->help || !*o->help)
					fail_msg("%s --%s has no help text", s->name, o->name);
				if ((o->kind == OPT_FLAG) != (o->arg == NULL))
					fail_msg("%s --%s: a value name for a flag, or none for a value",
						 s->name, o->name);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_double_dash),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_globals),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_bug),
		cmocka_unit_test(test_subcommand),
		cmocka_unit_test(test_table_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
