/*
 * Unit tests for the job.sh module. Rewritten scripts are checked by bash
 * itself: `bash -n` on the result, then a run of the result (whose other
 * commands are harmless) that prints the variable into a file.
 */
#include <errno.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "jobsh/jobsh.h"
#include "lib/util.h"

/* The group's scratch directory. */
struct fixture {
	char dir[64];
};

static int group_setup(void **state)
{
	struct fixture *fx = xcalloc(1, sizeof(*fx));

	xsnprintf(fx->dir, sizeof(fx->dir), "/tmp/test_jobsh.XXXXXX");
	if (mkdtemp(fx->dir) == NULL) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static void unlink_in(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);

	unlink(path);
	free(path);
}

static int group_teardown(void **state)
{
	struct fixture *fx = *state;

	unlink_in(fx->dir, "syntax.sh");
	unlink_in(fx->dir, "run.sh");
	unlink_in(fx->dir, "out");
	rmdir(fx->dir);
	free(fx);
	return 0;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Read path into b; -1 when it does not exist. */
static int read_into(const char *path, struct buf *b)
{
	FILE *f = fopen(path, "rb");
	char chunk[4096];
	size_t n;

	buf_reset(b);
	if (f == NULL)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(b, chunk, n);
	assert_int_equal(ferror(f), 0);
	fclose(f);
	return 0;
}

/* Run bash with args in a small fixed environment; its exit status. */
static int run_bash(const struct fixture *fx, const char *arg1,
		    const char *arg2, const char *locale)
{
	char *out = xasprintf("XL_OUT=%s/out", fx->dir);
	char *lc = xasprintf("LC_ALL=%s", locale);
	char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/nonexistent-home", lc, out,
			 NULL };
	char *argv[] = { "bash", (char *)arg1, (char *)arg2, NULL };
	pid_t pid;
	int st, rc;

	rc = posix_spawnp(&pid, "bash", NULL, NULL, argv, envp);
	assert_int_equal(rc, 0);
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	free(out);
	free(lc);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `bash -n` on text; its exit status. */
static int bash_syntax(const struct fixture *fx, const char *text, size_t len)
{
	char *path = xasprintf("%s/syntax.sh", fx->dir);
	int rc;

	write_file(path, text, len);
	rc = run_bash(fx, "-n", path, "C.UTF-8");
	free(path);
	return rc;
}

/* Run text with bash; what it wrote to $XL_OUT goes to out. */
static int bash_run(const struct fixture *fx, const char *text, size_t len,
		    const char *locale, struct buf *out)
{
	char *path = xasprintf("%s/run.sh", fx->dir);
	char *outpath = xasprintf("%s/out", fx->dir);
	int rc;

	write_file(path, text, len);
	unlink(outpath);
	rc = run_bash(fx, path, NULL, locale);
	if (read_into(outpath, out) < 0)
		rc = rc ? rc : -1;
	free(path);
	free(outpath);
	return rc;
}

/* Deterministic bytes for the random tests (xorshift32). */
static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* A value of about 10 KB with every awkward kind of byte. */
static char *big_value(void)
{
	static const char chunk[] = "ab'c\"$(rm -rf /)`id`\\ \t\n\r*~#=日本語;&|<>()";
	struct buf b = BUF_INIT;

	while (b.len < 10240)
		buf_adds(&b, chunk);
	buf_setlen(&b, 10240);
	return buf_detach(&b, NULL);
}

/* The values every shape is rewritten to ("" and the big one included). */
static const char *const values[] = {
	"0.01", "", "with  spaces ", "it's", "say \"hi\"", "$(rm -rf /)",
	"`rm -rf /`", "back\\slash\\", "*.py", "~user", "-5", "#hash", "a=b",
	"line1\nline2", "cr\rlf", "tab\there", "日本語", "\x01" "ctl", "\x7f",
	"$HOME", "'", "\\", "!bang", "${x}", "semi;colon&|<>()", "{a,b}",
	"x\n", "2e-4", "/data/path:with,odd+chars@v1%",
	NULL,	/* the 10 KB value */
};

struct shape {
	const char *what;
	const char *var;
	const char *text;
	const char *suffix;	/* what bash adds to the value (CR of CRLF) */
};

static const struct shape shapes[] = {
	{ "plain", "VAR", "VAR=OLD\n", "" },
	{ "shebang", "VAR", "#!/bin/bash\nVAR=OLD\n", "" },
	{ "export", "VAR", "export VAR=OLD\n", "" },
	{ "readonly", "VAR", "readonly VAR=OLD\n", "" },
	{ "declare", "VAR", "declare VAR=OLD\n", "" },
	{ "declare -x", "VAR", "declare -x VAR=OLD\n", "" },
	{ "declare -rx", "VAR", "declare -rx VAR=OLD\n", "" },
	{ "typeset", "VAR", "typeset VAR=OLD\n", "" },
	{ "trailing comment", "VAR", "VAR=OLD  # learning rate\n", "" },
	{ "comment with syntax", "VAR",
	  "VAR=OLD # it's $(not) `code` VAR=x \"\n", "" },
	{ "CRLF", "VAR", "#!/bin/bash\r\nA=1\r\nVAR=OLD\r\n: done\r\n", "\r" },
	{ "CRLF comment", "VAR", "A=1\r\nVAR=OLD # c\r\n: done\r\n", "" },
	{ "no final newline", "VAR", ": start\nVAR=OLD", "" },
	{ "no final newline, comment", "VAR", "VAR=OLD # c", "" },
	{ "single quoted", "VAR", "VAR='OLD value'\n", "" },
	{ "double quoted expansion", "VAR", "VAR=\"OLD $HOME\"\n", "" },
	{ "ansi-c", "VAR", "VAR=$'OLD\\'s\\tx'\n", "" },
	{ "concatenation", "VAR", "VAR=O\"L\"'D'\\ x\n", "" },
	{ "backslash in quotes", "VAR", "VAR='OLD\\'\n", "" },
	{ "empty", "VAR", "VAR=\n: after\n", "" },
	{ "semicolon", "VAR", "VAR=OLD;\n", "" },
	{ "semicolon comment", "VAR", "VAR=OLD; # c\n", "" },
	{ "sbatch job", "VAR",
	  "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --gres=gpu:1\n"
	  "#SBATCH --time=01:00:00\nset -euo pipefail\n\nVAR=OLD\nEPOCHS=3\n"
	  "export CUDA_VISIBLE_DEVICES=0\n"
	  ": python train.py --var \"$VAR\" --epochs \"$EPOCHS\" \\\n"
	  "  --out \"${XLOOP_RUN_DIR:-.}/cv.json\"\necho done >/dev/null\n", "" },
	{ "function", "VAR", "f() {\n  VAR=fn\n}\nVAR=OLD\n", "" },
	{ "function keyword", "VAR", "function g {\nVAR=fn\n}\nVAR=OLD\n", "" },
	{ "function keyword ()", "VAR",
	  "function g()\n{\nVAR=fn\n}\ng\nVAR=OLD\n", "" },
	{ "function with heredoc", "VAR",
	  "h() {\ncat <<EOF\n}\nVAR=in\nEOF\n}\nh >/dev/null\nVAR=OLD\n", "" },
	{ "local", "VAR", "f() { local VAR=l; }\nf\nVAR=OLD\n", "" },
	{ "if block", "VAR", "if true; then\nVAR=inif\nfi\nVAR=OLD\n", "" },
	{ "if one line", "VAR", "if true; then VAR=x; fi\nVAR=OLD\n", "" },
	{ "if elif else", "VAR",
	  "if [ -n \"x\" ]\nthen\n  :\nelif true; then\nVAR=e\nelse\n :\nfi\n"
	  "VAR=OLD\n", "" },
	{ "for", "VAR", "for i in 1 2; do\nVAR=$i\ndone\nVAR=OLD\n", "" },
	{ "for arith", "VAR",
	  "for ((i = 0; i < 2; i++)); do\nVAR=$i\ndone\nVAR=OLD\n", "" },
	{ "while", "VAR", "while false; do\nVAR=w\ndone\nVAR=OLD\n", "" },
	{ "until", "VAR", "until true; do\nVAR=u\ndone\nVAR=OLD\n", "" },
	{ "while read heredoc", "VAR",
	  "while read -r line; do\n:\ndone <<EOF\nVAR=x\nEOF\nVAR=OLD\n", "" },
	{ "case", "VAR",
	  "case x in\nx) VAR=c ;;\n*)\nVAR=d\n;;\nesac\nVAR=OLD\n", "" },
	{ "case (pattern)", "VAR",
	  "case y in (y|z) VAR=c;; esac\nVAR=OLD\n", "" },
	{ "nested blocks", "VAR",
	  "g() {\n if true; then\n  for i in 1; do\n   case $i in 1) VAR=n;; esac\n"
	  "  done\n fi\n}\ng\nVAR=OLD\n", "" },
	{ "heredoc", "VAR", "cat >/dev/null <<EOF\nVAR=hd\nEOF\nVAR=OLD\n", "" },
	{ "heredoc <<-", "VAR",
	  "cat >/dev/null <<-'END'\n\tVAR=hd\n\tEND\nVAR=OLD\n", "" },
	{ "heredoc quoted, odd body", "VAR",
	  "cat >/dev/null <<\"EOF\"\nVAR=$(hd\n'\nEOF\nVAR=OLD\n", "" },
	{ "two heredocs", "VAR",
	  "cat <<A >/dev/null; cat <<B >/dev/null\nVAR=a\nA\nVAR=b\nB\nVAR=OLD\n",
	  "" },
	{ "heredoc in $(...)", "VAR",
	  "MSG=$(cat <<EOF\nit's (odd \"\nVAR=x\nEOF\n)\nVAR=OLD\n", "" },
	{ "heredoc <<- in $(...), arithmetic", "VAR",
	  "N=$(( 1 << 3 ))$(cat <<-E\n\t)VAR=x\n\tE\n)\nVAR=OLD\n", "" },
	{ "here-string", "VAR", "cat <<<\"VAR=x\" >/dev/null\nVAR=OLD\n", "" },
	{ "multi-line double quote", "VAR",
	  "MSG=\"first\nVAR=inside\n\"\nVAR=OLD\n", "" },
	{ "multi-line single quote", "VAR", ": 'x\nVAR=inside'\nVAR=OLD\n", "" },
	{ "multi-line backquote", "VAR", "X=`echo a\necho b`\nVAR=OLD\n", "" },
	{ "continued line", "VAR", ": a \\\nVAR=cont\nVAR=OLD\n", "" },
	{ "env prefix", "VAR", "VAR=prefix :\nVAR=OLD\n", "" },
	{ "subshell", "VAR", "(\nVAR=sub\n)\nVAR=OLD\n", "" },
	{ "subshell one line", "VAR", "(VAR=sub; echo $VAR) >/dev/null\nVAR=OLD\n",
	  "" },
	{ "brace group", "VAR", "{\nVAR=grp\n} >/dev/null\nVAR=OLD\n", "" },
	{ "brace group one line", "VAR", "{ VAR=grp; } 2>/dev/null\nVAR=OLD\n", "" },
	{ "command substitution", "VAR", "X=$(VAR=cs; echo $VAR)\nVAR=OLD\n", "" },
	{ "arithmetic with <<", "VAR", "n=0\n((n = 1 << 2))\nVAR=OLD\n", "" },
	{ "[[ ]]", "VAR", "[[ a < b && ( c == c ) ]] || :\nVAR=OLD\n", "" },
	{ "process substitution", "VAR", "cat < <(echo hi) >/dev/null\nVAR=OLD\n",
	  "" },
	{ "array elsewhere", "VAR", "ARR=(1 2\n3)\nVAR=OLD\n", "" },
	{ "comment with quote", "VAR", "# don't $(\nVAR=OLD\n", "" },
	{ "export two", "VAR", "export VAR=OLD OTHER=2\n", "" },
	{ "two assignments", "VAR", "VAR=OLD OTHER=2\n", "" },
	{ "two assignments, second", "VAR", "OTHER=2 VAR=OLD\n", "" },
	{ "dependent", "VAR", "A=1\nVAR=OLD\nB=\"$VAR$A\"\n", "" },
	{ "expansion default", "VAR", "VAR=${OLD:-x}\n", "" },
	{ "tilde", "VAR", "VAR=~/OLD\n", "" },
	{ "command substitution value", "VAR", "VAR=\"$(echo OLD)\"\n", "" },
	{ "backquote value", "VAR", "VAR=`echo OLD`\n", "" },
	{ "home path", "OUT", "OUT=$HOME/x\n: write \"$OUT\"\n", "" },
};

/* Offset where line `line` (1-based) of text starts. */
static size_t line_start(const char *text, size_t len, int line)
{
	size_t i = 0;

	while (--line > 0) {
		const char *nl = memchr(text + i, '\n', len - i);

		assert_non_null(nl);
		i = (size_t)(nl - text) + 1;
	}
	return i;
}

/*
 * Independently of jobsh_lines_differ(): out equals in before line `line`
 * and after it, and what replaced it is one line.
 */
static void assert_one_line_changed(const char *in, size_t inlen,
				    const char *out, size_t outlen, int line)
{
	size_t ls = line_start(in, inlen, line);
	const char *nl = memchr(in + ls, '\n', inlen - ls);
	size_t le = nl ? (size_t)(nl - in) : inlen;
	size_t tail = inlen - le;

	assert_true(outlen >= ls + tail);
	assert_memory_equal(out, in, ls);
	assert_memory_equal(out + outlen - tail, in + le, tail);
	assert_null(memchr(out + ls, '\n', outlen - tail - ls));
	assert_memory_not_equal(out, in, outlen < inlen ? outlen : inlen);
}

/*
 * Rewrite shape sh to value and check the result with bash: a run that
 * reads the value back; with syntax, `bash -n` on the rewrite alone first
 * (a run fails on a syntax error too: each shape's first value is enough,
 * and a bash start is 10-15 ms of the suite's CPU).
 */
static void check_shape(const struct fixture *fx, const struct shape *sh,
			const char *value, const char *old, int syntax)
{
	size_t len = strlen(sh->text);
	struct buf out = BUF_INIT, script = BUF_INIT, got = BUF_INIT;
	struct buf want = BUF_INIT;
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	char *cause = NULL;
	int rc;

	rc = jobsh_rewrite(sh->text, len, sh->var, value, &out, &ch, &cause);
	if (old && strcmp(old, value) == 0) {
		assert_int_equal(rc, -1);
		assert_non_null(strstr(cause, "already has the value"));
		free(cause);
		return;
	}
	if (rc != 0)
		fail_msg("shape '%s': %s", sh->what, cause);
	assert_string_equal(ch.name, sh->var);
	assert_string_equal(ch.new_value, value);
	assert_int_equal(jobsh_lines_differ(sh->text, len, out.s, out.len, NULL), 1);
	assert_one_line_changed(sh->text, len, out.s, out.len, ch.line);
	if (syntax && bash_syntax(fx, out.s, out.len) != 0)
		fail_msg("shape '%s': bash -n fails on:\n%s", sh->what, out.s);

	buf_add(&script, out.s, out.len);
	buf_addf(&script, "\nprintf '%%s' \"$%s\" >\"$XL_OUT\"\n", sh->var);
	rc = bash_run(fx, script.s, script.len, "C.UTF-8", &got);
	if (rc != 0)
		fail_msg("shape '%s': bash exits %d on:\n%s", sh->what, rc, script.s);
	buf_adds(&want, value);
	buf_adds(&want, sh->suffix);
	if (got.len != want.len || memcmp(got.s, want.s, got.len) != 0)
		fail_msg("shape '%s': bash reads %s back as '%s'", sh->what,
			 ch.new_text, got.s);
	jobsh_change_release(&ch);
	buf_release(&out);
	buf_release(&script);
	buf_release(&got);
	buf_release(&want);
}

static void test_rewrite_shapes_with_bash(void **state)
{
	const struct fixture *fx = *state;
	char *big = big_value();
	size_t i, j;

	assert_true(ARRAY_SIZE(shapes) >= 40);
	for (i = 0; i < ARRAY_SIZE(shapes); i++) {
		const struct shape *sh = &shapes[i];
		struct jobsh_vars vars = JOBSH_VARS_INIT;
		const struct jobsh_var *v;
		char *cause = NULL;

		if (jobsh_scan(sh->text, strlen(sh->text), &vars, &cause) < 0 ||
		    jobsh_find(&vars, sh->var, &v, &cause) < 0)
			fail_msg("shape '%s': %s", sh->what, cause);
		for (j = 0; j < ARRAY_SIZE(values); j++)
			check_shape(fx, sh, values[j] ? values[j] : big, v->value, j == 0);
		jobsh_vars_release(&vars);
	}
	free(big);
}

/* The record of name in vars (the first one). */
static const struct jobsh_var *var_named(const struct jobsh_vars *vars,
					 const char *name)
{
	size_t i;

	for (i = 0; i < vars->nr; i++)
		if (strcmp(vars->v[i].name, name) == 0)
			return &vars->v[i];
	fail_msg("no record of '%s'", name);
	return NULL;
}

/* A value whose $(...) opens a here-document takes its body from the lines below (fuzz find). */
static void test_heredoc_in_value(void **state)
{
	static const char text[] =
		"#!/bin/bash\n"
		"N=$(<<-fo cat)\n"
		"echo \"a\n"
		"fo\n"
		"M=$(cat <<<x)\n";
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	struct buf out = BUF_INIT;
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	char *cause = NULL;

	(void)state;
	assert_int_equal(jobsh_scan(text, strlen(text), &vars, &cause), 0);
	assert_string_equal(var_named(&vars, "N")->why, "its value opens a here-document");
	assert_null(var_named(&vars, "M")->why);	/* a here-string has no body */
	assert_true(jobsh_rewrite(text, strlen(text), "N", "a b", &out, &ch, &cause) < 0);
	assert_int_equal(out.len, 0);
	free(cause);
	jobsh_change_release(&ch);
	buf_release(&out);
	jobsh_vars_release(&vars);
}

static void test_scan_records(void **state)
{
	static const char text[] =
		"#!/bin/bash\n"				/* 1 */
		"# LR=commented\n"			/* 2 */
		"export LR=0.1  # lr\n"			/* 3 */
		"A='x y' B=\"z\\\"\"\\ w\n"		/* 4 */
		"f() {\n"				/* 5 */
		"  C=1\n"				/* 6 */
		"}\n"					/* 7 */
		"D=1 cmd\n"				/* 8 */
		"E=(1 2)\n"				/* 9 */
		"F+=x\n"				/* 10 */
		"G=1; H=2\n"				/* 11 */
		"  I=3\n"				/* 12 */
		"J=$HOME/x\n"				/* 13 */
		"K=$'a\\nb\\x41\\101'\n"		/* 14 */
		"declare -i L=1+1\n"			/* 15 */
		"M=1 && :\n"				/* 16 */
		": &&\n"				/* 17 */
		"N=1\n"					/* 18 */
		"O=1 >/dev/null\n"			/* 19 */
		"P=\"a\n"				/* 20 */
		"b\"\n"					/* 21 */
		"Q=1 \\\n"				/* 22 */
		"R=2\n"					/* 23 */
		"S=\n"					/* 24 */
		"T=*.py U=~x V=\"$(x)\" W=`x` X=a\\$b Y=\"a$\"\n";	/* 25 */
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *cause = NULL;

	(void)state;
	assert_int_equal(jobsh_scan(text, strlen(text), &vars, &cause), 0);

	v = var_named(&vars, "LR");
	assert_int_equal(v->line, 3);
	assert_int_equal(v->start, (size_t)(strstr(text, "0.1") - text));
	assert_int_equal(v->end, v->start + 3);
	assert_string_equal(v->raw, "0.1");
	assert_string_equal(v->value, "0.1");
	assert_int_equal(v->place, JOBSH_TOP);
	assert_null(v->why);

	v = var_named(&vars, "A");
	assert_string_equal(v->raw, "'x y'");
	assert_string_equal(v->value, "x y");
	assert_null(v->why);
	v = var_named(&vars, "B");
	assert_string_equal(v->raw, "\"z\\\"\"\\ w");
	assert_string_equal(v->value, "z\" w");
	assert_null(v->why);

	v = var_named(&vars, "C");
	assert_int_equal(v->place, JOBSH_BLOCK);
	assert_int_equal(v->line, 6);
	v = var_named(&vars, "D");
	assert_int_equal(v->place, JOBSH_PREFIX);
	v = var_named(&vars, "E");
	assert_int_equal(v->place, JOBSH_TOP);
	assert_string_equal(v->why, "it assigns an array");
	assert_string_equal(v->raw, "(1 2)");
	assert_null(v->value);
	assert_string_equal(var_named(&vars, "F")->why, "it appends (+=)");
	assert_string_equal(var_named(&vars, "G")->why,
			    "its line holds other commands too");
	assert_string_equal(var_named(&vars, "H")->why,
			    "its line holds other commands too");
	assert_string_equal(var_named(&vars, "I")->why, "its line is indented");

	v = var_named(&vars, "J");
	assert_string_equal(v->raw, "$HOME/x");
	assert_null(v->value);
	assert_null(v->why);
	v = var_named(&vars, "K");
	assert_string_equal(v->value, "a\nbAA");

	assert_non_null(strstr(var_named(&vars, "L")->why, "options"));
	assert_string_equal(var_named(&vars, "M")->why,
			    "its line holds other commands too");
	assert_string_equal(var_named(&vars, "N")->why,
			    "it continues a &&, || or | list from the line above");
	assert_string_equal(var_named(&vars, "O")->why,
			    "its command has a redirection");
	v = var_named(&vars, "P");
	assert_string_equal(v->why, "its value spans several lines");
	assert_string_equal(v->value, "a\nb");
	assert_null(var_named(&vars, "Q")->why);
	assert_int_equal(var_named(&vars, "R")->line, 23);
	assert_string_equal(var_named(&vars, "R")->why, "it is on a continued line");
	v = var_named(&vars, "S");
	assert_string_equal(v->raw, "");
	assert_string_equal(v->value, "");
	assert_int_equal(v->start, v->end);

	assert_null(var_named(&vars, "T")->value);
	assert_null(var_named(&vars, "U")->value);
	assert_null(var_named(&vars, "V")->value);
	assert_null(var_named(&vars, "W")->value);
	assert_string_equal(var_named(&vars, "X")->value, "a$b");
	assert_string_equal(var_named(&vars, "Y")->value, "a$");
	assert_int_equal(var_named(&vars, "Y")->line, 25);
	jobsh_vars_release(&vars);
}

/* jobsh_find()'s message for name in text, or NULL when it is found. */
static char *find_cause(const char *text, const char *name)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *cause = NULL;

	assert_int_equal(jobsh_scan(text, strlen(text), &vars, &cause), 0);
	if (jobsh_find(&vars, name, &v, &cause) == 0)
		assert_string_equal(v->name, name);
	jobsh_vars_release(&vars);
	return cause;
}

static void assert_find_cause(const char *text, const char *name,
			      const char *want)
{
	char *cause = find_cause(text, name);

	if (cause == NULL)
		fail_msg("'%s' was found in:\n%s", name, text);
	assert_string_equal(cause, want);
	free(cause);
}

static void test_find_refusals(void **state)
{
	char *twelve;

	(void)state;
	assert_find_cause("LR=1\n: x\n: y\nLR=2\n", "LR",
			  "'LR' is assigned 2 times at top level (lines 1, 4)");
	assert_find_cause("export LR=1\nreadonly LR=2\ndeclare LR=3\n", "LR",
			  "'LR' is assigned 3 times at top level (lines 1, 2, 3)");
	assert_find_cause("LR=1\nLR+=2\n", "LR",
			  "'LR' is assigned 2 times at top level (lines 1, 2)");
	twelve = xasprintf("%s", "#!/bin/bash\n\n\n\n\n\n\n\n\n\n"
			   "train() {\nLR=1\n}\n");
	assert_find_cause(twelve, "LR",
			  "'LR' is only assigned inside a function/block (line 12)");
	free(twelve);
	assert_find_cause("if x; then\n  LR=1\nelse\n  LR=2\nfi\n", "LR",
			  "'LR' is only assigned inside a function/block (lines 2, 4)");
	assert_find_cause("LR=1 python train.py\n", "LR",
			  "'LR' is only assigned as a command's environment prefix (line 1)");
	assert_find_cause("{ LR=1; }\nLR=2 x\n", "LR",
			  "'LR' is only assigned inside a function/block (line 1) and "
			  "as a command's environment prefix (line 2)");
	assert_find_cause("A=1\n# LR=1\necho LR=1\n", "LR",
			  "'LR' is not assigned at top level");
	assert_find_cause("cat <<EOF\nLR=1\nEOF\n", "LR",
			  "'LR' is not assigned at top level");
	assert_find_cause("A=(1 2)\n", "A",
			  "'A' at line 1 cannot be rewritten: it assigns an array");
	assert_find_cause("A+=x\n", "A",
			  "'A' at line 1 cannot be rewritten: it appends (+=)");
	assert_find_cause("LR=1; B=2\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("LR=1; B=2\n", "B",
			  "'B' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("LR=1 && x\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("x || LR=1\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("LR=1 &\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("LR=1 | cat\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line holds other "
			  "commands too");
	assert_find_cause("x &&\n  LR=1\n", "LR",
			  "'LR' at line 2 cannot be rewritten: it continues a &&, || "
			  "or | list from the line above");
	assert_find_cause("  LR=1\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its line is indented");
	assert_find_cause("declare -i LR=1\n", "LR",
			  "'LR' at line 1 cannot be rewritten: it is declared with "
			  "options other than -x, -r, -g");
	assert_find_cause("export -n LR=1\n", "LR",
			  "'LR' at line 1 cannot be rewritten: it is declared with "
			  "options other than -x, -r, -g");
	assert_find_cause("LR=\"1\n\"\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its value spans "
			  "several lines");
	assert_find_cause("A=1 \\\nLR=2\n", "LR",
			  "'LR' at line 2 cannot be rewritten: it is on a continued line");
	assert_find_cause("LR=1 2>/dev/null\n", "LR",
			  "'LR' at line 1 cannot be rewritten: its command has a "
			  "redirection");

	/* accepted forms */
	assert_null(find_cause("LR=1;\n", "LR"));
	assert_null(find_cause("LR=1 ; # c\n", "LR"));
	assert_null(find_cause("A=1 \\\nLR=2\n", "A"));
	assert_null(find_cause("f() { LR=1; }\nLR=2\nLR=3 cmd\n", "LR"));
}

/* Rewrite text; the output, or NULL with *cause set. */
static char *rewrite(const char *text, const char *name, const char *value,
		     struct jobsh_change *ch, char **cause)
{
	struct buf out = BUF_INIT;

	*cause = NULL;
	if (jobsh_rewrite(text, strlen(text), name, value, &out, ch, cause) < 0) {
		assert_int_equal(out.len, 0);
		assert_null(ch->name);
		buf_release(&out);
		return NULL;
	}
	return buf_detach(&out, NULL);
}

static void assert_rewrite(const char *text, const char *name,
			   const char *value, const char *want)
{
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	char *cause, *got = rewrite(text, name, value, &ch, &cause);

	if (got == NULL)
		fail_msg("rewrite of %s refused: %s", name, cause);
	assert_string_equal(got, want);
	free(got);
	jobsh_change_release(&ch);
}

static void assert_rewrite_refused(const char *text, const char *name,
				   const char *value, const char *want)
{
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	char *cause, *got = rewrite(text, name, value, &ch, &cause);

	if (got != NULL)
		fail_msg("rewrite of %s accepted:\n%s", name, got);
	assert_string_equal(cause, want);
	free(cause);
}

static void test_rewrite_bytes(void **state)
{
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	char *cause, *got;

	(void)state;
	assert_rewrite("A=1\r\nLR=0.1\r\nB=2\r\n", "LR", "0.2",
		       "A=1\r\nLR=0.2\r\nB=2\r\n");
	assert_rewrite("A=1\nLR=0.1", "LR", "0.2", "A=1\nLR=0.2");
	assert_rewrite("LR=0.1  # lr\n", "LR", "a b", "LR='a b'  # lr\n");
	assert_rewrite("export LR=\"0.1\";\n", "LR", "0.2", "export LR=0.2;\n");
	assert_rewrite("declare -x LR=1\n", "LR", "", "declare -x LR=''\n");
	assert_rewrite("LR=\n", "LR", "x\ny", "LR=$'x\\ny'\n");
	assert_rewrite("LR=1 B=2\n", "B", "it's", "LR=1 B='it'\\''s'\n");
	assert_rewrite("\xef\xbb\xbf# bom\nLR=1\n", "LR", "2",
		       "\xef\xbb\xbf# bom\nLR=2\n");

	got = rewrite("OUT=$HOME/x # out\n", "OUT", "/tmp/y", &ch, &cause);
	assert_string_equal(got, "OUT=/tmp/y # out\n");
	assert_string_equal(ch.name, "OUT");
	assert_int_equal(ch.line, 1);
	assert_string_equal(ch.old_raw, "$HOME/x");
	assert_null(ch.old_value);
	assert_string_equal(ch.new_value, "/tmp/y");
	assert_string_equal(ch.new_text, "/tmp/y");
	free(got);
	jobsh_change_release(&ch);

	got = rewrite("A=1\nLR='0.1'\n", "LR", "$(x)", &ch, &cause);
	assert_string_equal(got, "A=1\nLR='$(x)'\n");
	assert_int_equal(ch.line, 2);
	assert_string_equal(ch.old_raw, "'0.1'");
	assert_string_equal(ch.old_value, "0.1");
	assert_string_equal(ch.new_text, "'$(x)'");
	free(got);
	jobsh_change_release(&ch);

	/* an old value with expansions is replaced by the literal text */
	assert_rewrite("OUT=$HOME/x\n", "OUT", "$HOME/x", "OUT='$HOME/x'\n");
}

static void test_rewrite_refusals(void **state)
{
	(void)state;
	assert_rewrite_refused("LR=0.1\n", "LR", "0.1",
			       "'LR' already has the value 0.1 (line 1)");
	assert_rewrite_refused("A=1\nLR='0.1'\n", "LR", "0.1",
			       "'LR' already has the value 0.1 (line 2)");
	assert_rewrite_refused("LR=\"a b\"\n", "LR", "a b",
			       "'LR' already has the value 'a b' (line 1)");
	assert_rewrite_refused("LR=\n", "LR", "",
			       "'LR' already has the value '' (line 1)");
	assert_rewrite_refused("LR=1\nLR=2\n", "LR", "3",
			       "'LR' is assigned 2 times at top level (lines 1, 2)");
	assert_rewrite_refused("f() {\nLR=1\n}\n", "LR", "3",
			       "'LR' is only assigned inside a function/block (line 2)");
	assert_rewrite_refused("LR=1 cmd\n", "LR", "3",
			       "'LR' is only assigned as a command's environment "
			       "prefix (line 1)");
	assert_rewrite_refused("A=(1 2)\n", "A", "3",
			       "'A' at line 1 cannot be rewritten: it assigns an array");
	assert_rewrite_refused("LR=1\n", "1LR", "3",
			       "'1LR' is not a valid variable name");
	assert_rewrite_refused("X='open\nLR=1\n", "LR", "3",
			       "unterminated single quote at line 1");
}

static void test_scan_errors(void **state)
{
	static const struct {
		const char *text, *cause;
	} cases[] = {
		{ "X='open\n", "unterminated single quote at line 1" },
		{ "\nX=\"open\n", "unterminated double quote at line 2" },
		{ "X=$(echo\n", "unterminated '(' at line 1" },
		{ "X=${a\n", "unterminated '${' at line 1" },
		{ "X=`a\n", "unterminated backquote at line 1" },
		{ "X=$'a\n", "unterminated $'...' quote at line 1" },
		{ "if true; then\nLR=1\n", "'if' at line 1 is never closed" },
		{ "f() {\n", "'{' at line 1 is never closed" },
		{ "LR=1\nfi\n", "unexpected 'fi' at line 2" },
		{ "for i in 1; do :; fi\n", "unexpected 'fi' at line 1" },
		{ ")\n", "unexpected ')' at line 1" },
		{ "a;;\n", "unexpected ';;' at line 1" },
		{ "cat <<\n", "missing here-document delimiter at line 1" },
		{ "case x y\n", "expected 'in' after 'case' at line 1" },
		/* a case statement inside $(...) is refused, not guessed */
		{ "X=$(case a in a) echo 1;; esac)\n", "unexpected ';;' at line 1" },
		/* a here-string in $(...) has no body: what follows is script */
		{ "X=$(cut <<<\"$V\")\necho \"open\n", "unterminated double quote at line 2" },
	};
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	struct buf deep = BUF_INIT;
	char *cause;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		cause = NULL;
		assert_int_equal(jobsh_scan(cases[i].text, strlen(cases[i].text),
					    &vars, &cause), -1);
		assert_string_equal(cause, cases[i].cause);
		assert_int_equal(vars.nr, 0);
		free(cause);
	}
	assert_int_equal(jobsh_scan("A=1\nB\0=2\n", 9, &vars, &cause), -1);
	assert_string_equal(cause, "a NUL byte at line 2");
	free(cause);
	assert_int_equal(jobsh_scan("A=1\n", 4, &vars, NULL), 0);
	jobsh_vars_release(&vars);
	assert_int_equal(jobsh_scan("fi\n", 3, &vars, NULL), -1);

	/* nesting is bounded, not a stack overflow */
	buf_adds(&deep, "X=");
	for (i = 0; i < 100000; i++)
		buf_adds(&deep, "\"$(");
	assert_int_equal(jobsh_scan(deep.s, deep.len, &vars, &cause), -1);
	assert_non_null(strstr(cause, "nested too deeply"));
	free(cause);
	buf_release(&deep);

	/* balanced $(case ... (pattern) ...) is fine */
	assert_int_equal(jobsh_scan("X=$(case a in (a) echo 1;; esac)\nLR=1\n", 38,
				    &vars, &cause), 0);
	assert_int_equal(vars.nr, 2);
	jobsh_vars_release(&vars);
}

static void test_scan_large(void **state)
{
	struct buf b = BUF_INIT;
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *cause = NULL;
	size_t i;

	(void)state;
	/* 100 000 lines, then one 2 MB line, then the variable */
	for (i = 0; i < 100000; i++)
		buf_addf(&b, "A%zu=%zu\n", i, i);
	buf_adds(&b, ": ");
	for (i = 0; i < 200000; i++)
		buf_adds(&b, "word\"q\" ");
	buf_adds(&b, "\nexport LR=0.1\n");
	assert_int_equal(jobsh_scan(b.s, b.len, &vars, &cause), 0);
	assert_int_equal(vars.nr, 100001);
	assert_int_equal(jobsh_find(&vars, "LR", &v, &cause), 0);
	assert_int_equal(v->line, 100002);
	assert_int_equal(jobsh_find(&vars, "A99999", &v, &cause), 0);
	assert_string_equal(v->value, "99999");
	jobsh_vars_release(&vars);
	buf_release(&b);
}

static void test_quote_forms(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "0.01", "0.01" },
		{ "", "''" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "'", "''\\'''" },
		{ "$(rm -rf /)", "'$(rm -rf /)'" },
		{ "`x`", "'`x`'" },
		{ "a\\b", "'a\\b'" },
		{ "*", "'*'" },
		{ "~user", "'~user'" },
		{ "#x", "'#x'" },
		{ "-5", "-5" },
		{ "a=b", "'a=b'" },
		{ "/a/b.c:d,e+f@g%h-i_J9", "/a/b.c:d,e+f@g%h-i_J9" },
		{ "日本語", "'日本語'" },
		{ "a\nb", "$'a\\nb'" },
		{ "a\rb", "$'a\\rb'" },
		{ "a\tb", "$'a\\tb'" },
		{ "\x01", "$'\\x01'" },
		{ "\x7f" "1", "$'\\x7f1'" },
		{ "x'\\\n", "$'x\\'\\\\\\n'" },
		{ "é\n", "$'é\\n'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *q = jobsh_quote(cases[i].in);

		assert_string_equal(q, cases[i].out);
		free(q);
	}
}

/*
 * The quoting round trip through bash: 200 random byte strings (fixed
 * seed, no NUL), in one script, under the C and the UTF-8 locale. Each
 * quoted form is also one line and decodes to the value in the scanner.
 */
static void test_quote_roundtrip_bash(void **state)
{
	static const char awkward[] = "'\"\\$`!*?[]{}~#= \t\n\r;&|<>()-%日";
	static const char *const locales[] = { "C", "C.UTF-8" };
	const struct fixture *fx = *state;
	char *vals[200];
	struct buf script = BUF_INIT, got = BUF_INIT;
	uint32_t seed = 20240611;
	size_t i, k, off;

	buf_adds(&script, "set -eu\n");
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		size_t n = next_rand(&seed) % 48, j;
		struct buf v = BUF_INIT;
		struct jobsh_vars vars = JOBSH_VARS_INIT;
		const struct jobsh_var *var;
		char *q, *line, *cause = NULL;

		for (j = 0; j < n; j++) {
			uint32_t r = next_rand(&seed);

			if (r & 1)
				buf_addc(&v, awkward[(r >> 1) % (sizeof(awkward) - 1)]);
			else
				buf_addc(&v, (char)(1 + (r >> 1) % 255));
		}
		vals[i] = buf_detach(&v, NULL);
		q = jobsh_quote(vals[i]);
		assert_null(strchr(q, '\n'));
		assert_null(strchr(q, '\r'));
		line = xasprintf("V=%s\n", q);
		assert_int_equal(jobsh_scan(line, strlen(line), &vars, &cause), 0);
		assert_int_equal(jobsh_find(&vars, "V", &var, &cause), 0);
		assert_string_equal(var->value, vals[i]);
		jobsh_vars_release(&vars);
		buf_addf(&script, "V=%s\nprintf '%%s\\0' \"$V\" >>\"$XL_OUT\"\n", q);
		free(line);
		free(q);
	}
	assert_int_equal(bash_syntax(fx, script.s, script.len), 0);
	for (k = 0; k < ARRAY_SIZE(locales); k++) {
		assert_int_equal(bash_run(fx, script.s, script.len, locales[k], &got), 0);
		for (i = 0, off = 0; i < ARRAY_SIZE(vals); i++) {
			size_t n = strlen(vals[i]);

			assert_true(off + n < got.len + 1);
			if (memcmp(got.s + off, vals[i], n) != 0 || got.s[off + n] != '\0')
				fail_msg("value %zu does not round-trip in %s", i,
					 locales[k]);
			off += n + 1;
		}
		assert_int_equal(off, got.len);
	}
	for (i = 0; i < ARRAY_SIZE(vals); i++)
		free(vals[i]);
	buf_release(&script);
	buf_release(&got);
}

static void test_valid_name(void **state)
{
	(void)state;
	assert_true(jobsh_valid_name("LR"));
	assert_true(jobsh_valid_name("_"));
	assert_true(jobsh_valid_name("a_1"));
	assert_true(jobsh_valid_name("_9"));
	assert_false(jobsh_valid_name(""));
	assert_false(jobsh_valid_name("1A"));
	assert_false(jobsh_valid_name("A B"));
	assert_false(jobsh_valid_name("A-B"));
	assert_false(jobsh_valid_name("A="));
	assert_false(jobsh_valid_name("é"));
	assert_false(jobsh_valid_name("A[1]"));
}

static void test_parse_setting(void **state)
{
	static const struct {
		const char *arg, *name, *value, *cause;
	} cases[] = {
		{ "LR=0.1", "LR", "0.1", NULL },
		{ "LR=", "LR", "", NULL },
		{ "A=b=c", "A", "b=c", NULL },
		{ "_x=a b\n", "_x", "a b\n", NULL },
		{ "A==", "A", "=", NULL },
		{ "=x", NULL, NULL, "'=x' has no variable name before '='" },
		{ "=", NULL, NULL, "'=' has no variable name before '='" },
		{ "1A=x", NULL, NULL, "'1A' is not a valid variable name (letters, "
		  "digits and '_', not starting with a digit)" },
		{ "A B=x", NULL, NULL, "'A B' is not a valid variable name (letters, "
		  "digits and '_', not starting with a digit)" },
		{ "A", NULL, NULL, "'A' is not VAR=VALUE" },
		{ "A=caf\xc3\xa9", "A", "caf\xc3\xa9", NULL },
		{ "A=\xff", NULL, NULL, "the value of A is not valid UTF-8 text" },
		{ "", NULL, NULL, "'' is not VAR=VALUE" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *name = NULL, *value = NULL, *cause = NULL;
		int rc = jobsh_parse_setting(cases[i].arg, &name, &value, &cause);

		if (cases[i].cause == NULL) {
			assert_int_equal(rc, 0);
			assert_string_equal(name, cases[i].name);
			assert_string_equal(value, cases[i].value);
			assert_null(cause);
		} else {
			assert_int_equal(rc, -1);
			assert_null(name);
			assert_null(value);
			assert_string_equal(cause, cases[i].cause);
		}
		free(name);
		free(value);
		free(cause);
	}
}

static void test_lines_differ(void **state)
{
	int first;

	(void)state;
	assert_int_equal(jobsh_lines_differ("a\nb\n", 4, "a\nb\n", 4, &first), 0);
	assert_int_equal(first, 0);
	assert_int_equal(jobsh_lines_differ("a\nb\nc\n", 6, "a\nX\nc\n", 6, &first), 1);
	assert_int_equal(first, 2);
	assert_int_equal(jobsh_lines_differ("a\nb\n", 4, "a\nb", 3, &first), 1);
	assert_int_equal(first, 2);
	assert_int_equal(jobsh_lines_differ("a\nb\n", 4, "a\nb\nc\n", 6, &first), 1);
	assert_int_equal(first, 3);
	assert_int_equal(jobsh_lines_differ("a\nb\n", 4, "a\nx\ny\nb\n", 8, NULL), 3);
	assert_int_equal(jobsh_lines_differ("", 0, "", 0, &first), 0);
	assert_int_equal(jobsh_lines_differ("", 0, "x", 1, &first), 1);
	assert_int_equal(first, 1);
	assert_int_equal(jobsh_lines_differ("a\r\n", 3, "a\n", 2, NULL), 1);
	assert_int_equal(jobsh_lines_differ("x\0y\n", 4, "x\0z\n", 4, NULL), 1);
}

static void test_mentions(void **state)
{
	int line = 0;

	(void)state;
	assert_int_equal(jobsh_mentions("a\nb exp42 c\nexp42\n", "exp42", &line), 1);
	assert_int_equal(line, 2);
	assert_int_equal(jobsh_mentions("exp42", "exp42", &line), 1);
	assert_int_equal(line, 1);
	assert_int_equal(jobsh_mentions("a\n\n\n/runs/s/t/x", "/runs/s/t", &line), 1);
	assert_int_equal(line, 4);
	line = 7;
	assert_int_equal(jobsh_mentions("abc\n", "abd", &line), 0);
	assert_int_equal(jobsh_mentions("abc\n", "", &line), 0);
	assert_int_equal(line, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_name),
		cmocka_unit_test(test_parse_setting),
		cmocka_unit_test(test_quote_forms),
		cmocka_unit_test(test_quote_roundtrip_bash),
		cmocka_unit_test(test_scan_records),
		cmocka_unit_test(test_heredoc_in_value),
		cmocka_unit_test(test_scan_errors),
		cmocka_unit_test(test_scan_large),
		cmocka_unit_test(test_find_refusals),
		cmocka_unit_test(test_rewrite_bytes),
		cmocka_unit_test(test_rewrite_refusals),
		cmocka_unit_test(test_rewrite_shapes_with_bash),
		cmocka_unit_test(test_lines_differ),
		cmocka_unit_test(test_mentions),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
