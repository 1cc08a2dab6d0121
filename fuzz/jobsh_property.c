/*
 * jobsh_property [-v] FILE|DIR...: the job.sh rewriter checked against bash.
 *
 * For each script (a file's bytes up to its first NUL, as fuzz_jobsh reads
 * them) every rewritable top-level assignment (at most MAX_PER_FILE) is
 * rewritten to one of a fixed set of awkward values, and then:
 *   (a) the result differs from the original in exactly one line, the
 *       assignment's (counted here, not with jobsh_lines_differ);
 *   (b) when bash -n accepts the original it accepts the result too;
 *   (c) bash, given only the rewritten line and a printf of the variable,
 *       prints exactly the value.
 * Fuzzed scripts are never run: (c) runs the one line only when it is an
 * assignment bash cannot turn into a command: an optional export,
 * readonly, declare or typeset with -x/-r/-g options, NAME=, the value
 * jobsh_quote() made from our fixed list, then only blanks, one ';' and a
 * comment. Other lines are counted as not run. bash runs with an empty
 * environment but PATH=/nonexistent and LC_ALL=C, no rc files, stderr
 * discarded and a CPU limit. Names bash treats specially (RANDOM, ...)
 * are skipped.
 *
 * Prints one summary line (-v: also each line not run); exits 1 when any check failed (each failure is
 * reported with its file), 2 on usage or system errors.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/fsutil.h"
#include "jobsh/jobsh.h"
#include "lib/util.h"

#define MAX_PER_FILE 8
#define MAX_SCRIPT (1 << 20)

/* Values written; bash must read each back exactly. */
static const char *const values[] = {
	"0.2", "", "a b", "it's", "x\ny", "$(id)", "`id`", "\\", "\t", "*",
	"~", "!x", "#", "a;b", "'\"'", "\x01\x7f", "\r", "\xc3\xa9", "\xff",
	"-n", "%s", "${X}", "a\\nb", "--", "=", "x=y",
};

/* Variables bash computes or guards: reading them back proves nothing. */
static const char *const special[] = {
	"_", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCHSECONDS",
	"EPOCHREALTIME", "HISTCMD", "FUNCNAME", "GROUPS", "DIRSTACK", "UID",
	"EUID", "PPID", "SHELLOPTS", "PIPESTATUS", "OPTIND", "OPTERR",
	"POSIXLY_CORRECT",
};

struct stats {
	size_t files, scanned, rewrites, syntax, run, not_run, failures;
	size_t next_value;
};

static char tmpdir[] = "/tmp/xloop-jobsh-prop.XXXXXX";
static const char *bash_path;
static int verbose;

/* Report a failed check for file; counts it. */
static void XL_PRINTF(3, 4) failed(struct stats *st, const char *file,
				   const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "jobsh_property: %s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	st->failures++;
}

/* Write len bytes to path, or die. */
static void write_file(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0)
		die("unable to create '%s': %s", path, strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, s + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("unable to write '%s': %s", path, strerror(errno));
		off += (size_t)n;
	}
	if (close(fd) < 0)
		die("unable to write '%s': %s", path, strerror(errno));
}

/*
 * Run bash with args (after --norc --noprofile) in the fixed environment;
 * its stdout into out when not NULL. Returns its exit status, 128+signal.
 */
static int run_bash(const char *a1, const char *a2, const char *a3,
		    struct buf *out)
{
	char *argv[] = { "bash", "--norc", "--noprofile", (char *)a1,
			 (char *)a2, (char *)a3, NULL };
	char *envp[] = { "PATH=/nonexistent", "LC_ALL=C", NULL };
	int fds[2], status, devnull;
	char chunk[4096];
	ssize_t n;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		struct rlimit cpu = { 5, 5 };

		devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fds[1], 1) < 0 ||
		    dup2(devnull, 2) < 0 || setrlimit(RLIMIT_CPU, &cpu) < 0 ||
		    chdir(tmpdir) < 0)
			_exit(126);
		execve(bash_path, argv, envp);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out)
			buf_add(out, chunk, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* `bash -n` on text: 0 when bash reads it. */
static int bash_syntax(const char *text, size_t len)
{
	char *path = xasprintf("%s/job.sh", tmpdir);
	int rc;

	write_file(path, text, len);
	rc = run_bash("-n", path, NULL, NULL);
	unlink(path);
	free(path);
	return rc;
}

/* Lines that differ between a and b, position by position; first one. */
static int count_changed_lines(const char *a, size_t alen, const char *b,
			       size_t blen, int *first)
{
	size_t ia = 0, ib = 0;
	int line = 1, n = 0;

	*first = 0;
	while (ia < alen || ib < blen) {
		const char *ea = memchr(a + ia, '\n', alen - ia);
		const char *eb = memchr(b + ib, '\n', blen - ib);
		size_t la = ia < alen ? (ea ? (size_t)(ea - a) + 1 : alen) - ia : 0;
		size_t lb = ib < blen ? (eb ? (size_t)(eb - b) + 1 : blen) - ib : 0;

		if (la != lb || memcmp(a + ia, b + ib, la) != 0) {
			if (n++ == 0)
				*first = line;
		}
		ia += la;
		ib += lb;
		line++;
	}
	return n;
}

/* True when s[0, n) is one of words[]. */
static int word_in(const char *s, size_t n, const char *const *words,
		   size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (strlen(words[i]) == n && memcmp(s, words[i], n) == 0)
			return 1;
	return 0;
}

/* The prefix of an assignment line: [builtin [-xrg...]...] NAME= only. */
static int safe_prefix(const char *s, size_t n, const char *name)
{
	static const char *const builtins[] = {
		"export", "readonly", "declare", "typeset",
	};
	size_t i = 0, w, nl = strlen(name);

	w = strspn(s, "abcdefghijklmnopqrstuvwxyz");
	if (w > 0 && w < n && (s[w] == ' ' || s[w] == '\t') &&
	    word_in(s, w, builtins, ARRAY_SIZE(builtins))) {
		i = w;
		for (;;) {
			i += strspn(s + i, " \t");
			if (i >= n || s[i] != '-')
				break;
			w = strspn(s + i + 1, "xrg");
			if (w == 0 || (s[i + 1 + w] != ' ' && s[i + 1 + w] != '\t'))
				return 0;
			i += 1 + w;
		}
	}
	return n - i == nl + 1 && memcmp(s + i, name, nl) == 0 && s[n - 1] == '=';
}

/* What follows the value: blanks, one ';', a comment (not glued on). */
static int safe_suffix(const char *s, size_t n)
{
	size_t i = strspn(s, " \t");

	if (i > n)
		i = n;
	if (i < n && s[i] == ';')
		i += 1 + strspn(s + i + 1, " \t");
	if (i > n)
		i = n;
	if (i == n)
		return 1;
	return s[i] == '#' && i > 0 && memchr(s + i, '\n', n - i) == NULL;
}

/* Check (c) for v rewritten in out; 1 when bash ran it. */
static int check_bash_value(struct stats *st, const char *file,
			    const struct jobsh_var *v, const struct buf *out,
			    const char *quoted, const char *value)
{
	const char *ls = out->s + v->start, *le, *vs = out->s + v->start;
	size_t qlen = strlen(quoted), llen;
	struct buf got = BUF_INIT;
	char *line, *prog;
	int rc;

	while (ls > out->s && ls[-1] != '\n')
		ls--;
	le = memchr(vs, '\n', out->len - v->start);
	if (le == NULL)
		le = out->s + out->len;
	if (le > vs + qlen && le[-1] == '\r')
		le--;		/* CRLF: the scanner leaves the CR out of values */
	if (strncmp(v->name, "BASH", 4) == 0 ||
	    word_in(v->name, strlen(v->name), special, ARRAY_SIZE(special)) ||
	    (size_t)(le - vs) < qlen || memcmp(vs, quoted, qlen) != 0 ||
	    !safe_prefix(ls, (size_t)(vs - ls), v->name) ||
	    !safe_suffix(vs + qlen, (size_t)(le - vs) - qlen)) {
		if (verbose)
			fprintf(stderr, "jobsh_property: %s: not run: line %d: %.*s\n",
				file, v->line, (int)(le - ls), ls);
		return 0;
	}
	llen = (size_t)(le - ls);
	line = xstrndup(ls, llen);
	if (strlen(line) != llen) {
		free(line);
		return 0;
	}
	prog = xasprintf("%s\nprintf %%s \"$%s\"", line, v->name);
	rc = run_bash("-c", prog, NULL, &got);
	if (rc != 0)
		failed(st, file, "bash exits %d on line %d: %s", rc, v->line, line);
	else if (got.len != strlen(value) || memcmp(got.s, value, got.len) != 0)
		failed(st, file, "bash reads line %d (%s) as '%s', not '%s'", v->line,
		       line, got.s, value);
	buf_release(&got);
	free(prog);
	free(line);
	return 1;
}

/* Rewrite v to the next value and check (a), (b), (c). */
static void check_var(struct stats *st, const char *file, const char *text,
		      size_t len, const struct jobsh_var *v, int syntax_ok)
{
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	struct buf out = BUF_INIT;
	const char *value;
	char *cause = NULL, *quoted;
	int first, n;

	do {
		value = values[st->next_value++ % ARRAY_SIZE(values)];
	} while (v->value && strcmp(v->value, value) == 0);
	quoted = jobsh_quote(value);
	if (!v->value && strcmp(v->raw, quoted) == 0) {
		free(quoted);
		return;
	}
	if (jobsh_rewrite(text, len, v->name, value, &out, &ch, &cause) < 0) {
		failed(st, file, "rewriting %s (line %d) failed: %s", v->name,
		       v->line, cause);
		goto out;
	}
	st->rewrites++;
	n = count_changed_lines(text, len, out.s, out.len, &first);
	if (n != 1 || first != v->line)
		failed(st, file, "rewriting %s (line %d) changed %d lines, first %d",
		       v->name, v->line, n, first);
	if (syntax_ok) {
		st->syntax++;
		if (bash_syntax(out.s, out.len) != 0)
			failed(st, file, "bash -n fails after rewriting %s (line %d)",
			       v->name, v->line);
	}
	if (check_bash_value(st, file, v, &out, quoted, value))
		st->run++;
	else
		st->not_run++;
out:
	jobsh_change_release(&ch);
	buf_release(&out);
	free(cause);
	free(quoted);
}

/* Check every rewritable assignment of one file. */
static void check_file(struct stats *st, const char *file)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	struct buf b = BUF_INIT;
	const struct jobsh_var *found;
	char *cause = NULL;
	size_t len, i, done = 0;
	int err, syntax_ok = -1;

	st->files++;
	if (read_file(file, MAX_SCRIPT, &b, &err, &cause) < 0) {
		failed(st, file, "%s", cause);
		free(cause);
		return;
	}
	len = strnlen(b.s, b.len);
	if (jobsh_scan(b.s, len, &vars, &cause) < 0) {
		free(cause);
		buf_release(&b);
		return;
	}
	st->scanned++;
	for (i = 0; i < vars.nr && done < MAX_PER_FILE; i++) {
		const struct jobsh_var *v = &vars.v[i];

		if (v->place != JOBSH_TOP || v->why != NULL)
			continue;
		if (jobsh_find(&vars, v->name, &found, &cause) < 0) {
			FREE_AND_NULL(cause);
			continue;
		}
		if (syntax_ok < 0)
			syntax_ok = bash_syntax(b.s, len) == 0;
		check_var(st, file, b.s, len, v, syntax_ok);
		done++;
	}
	jobsh_vars_release(&vars);
	buf_release(&b);
}

/* Check file, or each regular file of a directory (not recursing). */
static void check_path(struct stats *st, const char *path)
{
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (stat(path, &sb) < 0)
		die("unable to stat '%s': %s", path, strerror(errno));
	if (!S_ISDIR(sb.st_mode)) {
		check_file(st, path);
		return;
	}
	d = opendir(path);
	if (d == NULL)
		die("unable to open '%s': %s", path, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		char *p = xasprintf("%s/%s", path, de->d_name);

		if (de->d_name[0] != '.' && lstat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			check_file(st, p);
		free(p);
	}
	closedir(d);
}

/* Check every path on the command line and print the counts. */
int main(int argc, char **argv)
{
	struct stats st = { 0 };
	int i;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: jobsh_property [-v] FILE|DIR...\n");
		return 2;
	}
	bash_path = access("/usr/bin/bash", X_OK) == 0 ? "/usr/bin/bash" : "/bin/bash";
	if (mkdtemp(tmpdir) == NULL)
		die("mkdtemp: %s", strerror(errno));
	for (i = 1; i < argc; i++)
		check_path(&st, argv[i]);
	rmdir(tmpdir);
	printf("jobsh_property: %zu files, %zu scanned, %zu rewrites, %zu bash -n "
	       "checks, %zu values read back by bash, %zu lines not run, "
	       "%zu failures\n", st.files, st.scanned, st.rewrites, st.syntax,
	       st.run, st.not_run, st.failures);
	return st.failures ? 1 : 0;
}
