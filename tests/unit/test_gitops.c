/*
 * Unit tests for gitops: real repositories in temporary directories, made and
 * inspected with the git CLI (argv only, no shell).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "gitops.h"
#include "lib/util.h"

#define MAX_ARGS 32

/* Directories shared by all tests: the temporary root and the two HOMEs. */
static struct {
	char *base;
	char *home;		/* has a .gitconfig with user.name */
	char *emptyhome;	/* has no git configuration at all */
} g;

/* One test's playground: top/ holds repo/ (a fresh `git init -b main`). */
struct fix {
	char *top;
	char *repo;
};

/* Run argv in dir; stdout (and stderr when merge) into out; exit status. */
static int run(const char *dir, const char *const *argv, struct buf *out,
	       int merge)
{
	char tmp[4096];
	int fd[2], devnull, status;
	ssize_t k;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(fd[1], 1) < 0 ||
		    dup2(merge ? fd[1] : devnull, 2) < 0 || chdir(dir) < 0)
			_exit(126);
		close(fd[0]);
		close(fd[1]);
		close(devnull);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		k = read(fd[0], tmp, sizeof(tmp));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		buf_add(out, tmp, (size_t)k);
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run `git args...` (NULL-terminated) in dir; exit status. */
static int vgit(const char *dir, struct buf *out, int merge, va_list ap)
{
	const char *argv[MAX_ARGS];
	size_t n = 0;

	argv[n++] = "git";
	while ((argv[n] = va_arg(ap, const char *)) != NULL)
		if (++n == MAX_ARGS - 1)
			fail_msg("too many git arguments");
	return run(dir, argv, out, merge);
}

/* Exit status of `git args...` in dir; output dropped. */
static int git_rc(const char *dir, ...)
{
	struct buf out = BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = vgit(dir, &out, 1, ap);
	va_end(ap);
	buf_release(&out);
	return rc;
}

/* Stdout of `git args...` in dir, which must succeed; caller frees. */
static char *git_out(const char *dir, ...)
{
	struct buf out = BUF_INIT;
	va_list ap;
	int rc;

	va_start(ap, dir);
	rc = vgit(dir, &out, 0, ap);
	va_end(ap);
	if (rc != 0)
		fail_msg("git in '%s' exited with %d", dir, rc);
	return buf_detach(&out, NULL);
}

#define GIT_RC(dir, ...) git_rc(dir, __VA_ARGS__, (const char *)NULL)
#define GIT_OUT(dir, ...) git_out(dir, __VA_ARGS__, (const char *)NULL)
/* The git command's stdout must be exactly expect. */
#define ASSERT_GIT(expect, dir, ...) do { \
		char *out_ = GIT_OUT(dir, __VA_ARGS__); \
		assert_string_equal(out_, expect); \
		free(out_); \
	} while (0)

/* The commit HEAD points to, without the newline; caller frees. */
static char *head_of(const char *dir)
{
	struct buf b = BUF_INIT;
	char *s = GIT_OUT(dir, "rev-parse", "--verify", "HEAD");

	buf_adds(&b, s);
	free(s);
	buf_rtrim(&b);
	return buf_detach(&b, NULL);
}

/* The repository is consistent: `git fsck --strict` is silent and happy. */
static void assert_fsck(const char *dir)
{
	struct buf out = BUF_INIT;
	const char *argv[] = { "git", "fsck", "--strict", "--no-dangling", NULL };

	assert_int_equal(run(dir, argv, &out, 1), 0);
	assert_string_equal(out.s, "");
	buf_release(&out);
}

/* Write rel below dir (making directories) with the given mode. */
static void write_file(const char *dir, const char *rel, const char *content,
		       mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, rel);
	size_t i, len = strlen(content);
	FILE *f;

	for (i = strlen(dir) + 1; path[i]; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir '%s': %s", path, strerror(errno));
		path[i] = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(content, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	free(path);
}

/* True when path below dir exists (lstat). */
static int exists(const char *dir, const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel);
	struct stat st;
	int r = lstat(path, &st) == 0;

	free(path);
	return r;
}

/* Commit paths with gitops, which must succeed and make a new commit. */
static void commit_ok(const char *dir, const char *const *paths, size_t n,
		      const char *msg, struct gitops_result *res)
{
	char *cause = NULL;
	int rc = gitops_commit_paths(dir, paths, n, msg, res, &cause);

	if (rc != 0)
		fail_msg("gitops_commit_paths: %s", cause ? cause : "(no cause)");
	assert_null(cause);
	assert_int_equal(res->no_repo, 0);
	assert_int_equal(res->unchanged, 0);
	assert_int_equal(strlen(res->oid), 40);
}

/* Commit paths with gitops, which must refuse; returns the cause. */
static char *commit_refused(const char *dir, const char *const *paths,
			    size_t n)
{
	struct gitops_result res;
	char *cause = NULL;

	assert_int_equal(gitops_commit_paths(dir, paths, n, "m", &res, &cause),
			 -1);
	assert_non_null(cause);
	assert_string_equal(res.oid, "");
	return cause;
}

/* The raw message of HEAD's commit is exactly msg. */
static void assert_message(const char *repo, const char *msg)
{
	char *s = GIT_OUT(repo, "cat-file", "commit", "HEAD");
	char *body = strstr(s, "\n\n");

	assert_non_null(body);
	assert_string_equal(body + 2, msg);
	free(s);
}

/* A first commit made with the CLI: job.sh v1 and keep.txt. */
static char *cli_initial_commit(const char *repo)
{
	write_file(repo, "job.sh", "v1\n", 0644);
	write_file(repo, "keep.txt", "keep\n", 0644);
	assert_int_equal(GIT_RC(repo, "add", "job.sh", "keep.txt"), 0);
	assert_int_equal(GIT_RC(repo, "commit", "-q", "-m", "init"), 0);
	return head_of(repo);
}

static int setup_repo(void **state)
{
	struct fix *f = xcalloc(1, sizeof(*f));
	static int seq;

	f->top = xasprintf("%s/t%d", g.base, ++seq);
	f->repo = xasprintf("%s/repo", f->top);
	if (mkdir(f->top, 0755) < 0 || mkdir(f->repo, 0755) < 0)
		return -1;
	if (GIT_RC(f->repo, "init", "-q", "-b", "main") != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown_repo(void **state)
{
	struct fix *f = *state;
	const char *argv[] = { "rm", "-rf", f->top, NULL };
	struct buf out = BUF_INIT;
	int rc = run(g.base, argv, &out, 1);

	setenv("HOME", g.home, 1);
	buf_release(&out);
	free(f->top);
	free(f->repo);
	free(f);
	return rc == 0 ? 0 : -1;
}

/* First commit on an unborn main: only that path, message gets a newline. */
static void test_first_commit_unborn(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	char *s, *head;

	write_file(f->repo, "job.sh", "#!/bin/sh\necho hi\n", 0644);
	write_file(f->repo, "other.txt", "not mine\n", 0644);
	commit_ok(f->repo, paths, 1, "add job.sh", &res);

	head = head_of(f->repo);
	assert_string_equal(head, res.oid);
	ASSERT_GIT("1\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("refs/heads/main\n", f->repo, "symbolic-ref", "HEAD");
	ASSERT_GIT("job.sh\n", f->repo, "show", "--name-only", "--format=",
		   "HEAD");
	ASSERT_GIT("#!/bin/sh\necho hi\n", f->repo, "show", "HEAD:job.sh");
	ASSERT_GIT("100644\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "job.sh");
	ASSERT_GIT("Test User <test@example.com>\n", f->repo, "log", "-1",
		   "--format=%an <%ae>");
	assert_message(f->repo, "add job.sh\n");
	s = GIT_OUT(f->repo, "cat-file", "commit", "HEAD");
	assert_null(strstr(s, "\nparent "));
	free(s);
	ASSERT_GIT("?? other.txt\n", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(head);
}

/* The user's staged and unstaged changes of other files survive untouched. */
static void test_user_staging_kept(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	char *prev, *parent;

	write_file(f->repo, "A", "a1\n", 0644);
	write_file(f->repo, "B", "b1\n", 0644);
	write_file(f->repo, "job.sh", "v1\n", 0644);
	assert_int_equal(GIT_RC(f->repo, "add", "A", "B", "job.sh"), 0);
	assert_int_equal(GIT_RC(f->repo, "commit", "-q", "-m", "init"), 0);
	prev = head_of(f->repo);

	write_file(f->repo, "A", "a2\n", 0644);		/* staged ... */
	assert_int_equal(GIT_RC(f->repo, "add", "A"), 0);
	write_file(f->repo, "A", "a3\n", 0644);		/* ... and changed again */
	write_file(f->repo, "B", "b2\n", 0644);		/* unstaged */
	write_file(f->repo, "C", "c1\n", 0644);		/* a new staged file */
	assert_int_equal(GIT_RC(f->repo, "add", "C"), 0);
	write_file(f->repo, "job.sh", "v2\n", 0644);

	commit_ok(f->repo, paths, 1, "job v2\n", &res);

	parent = GIT_OUT(f->repo, "rev-parse", "HEAD^");
	assert_memory_equal(parent, prev, 40);
	free(parent);
	ASSERT_GIT("2\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("job.sh\n", f->repo, "show", "--name-only", "--format=",
		   "HEAD");
	ASSERT_GIT("v2\n", f->repo, "show", "HEAD:job.sh");
	ASSERT_GIT("a1\n", f->repo, "show", "HEAD:A");
	ASSERT_GIT("A\nC\n", f->repo, "diff", "--cached", "--name-only");
	ASSERT_GIT("A\nB\n", f->repo, "diff", "--name-only");
	ASSERT_GIT("a2\n", f->repo, "show", ":A");
	ASSERT_GIT("c1\n", f->repo, "show", ":C");
	ASSERT_GIT("MM A\n M B\nA  C\n", f->repo, "status", "--porcelain");
	/* the message already ended with a newline: no second one */
	assert_message(f->repo, "job v2\n");
	assert_fsck(f->repo);
	free(prev);
}

/* A path staged with other content: the work tree content wins everywhere. */
static void test_staged_path_other_content(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	char *prev = cli_initial_commit(f->repo);

	write_file(f->repo, "job.sh", "v2\n", 0644);
	assert_int_equal(GIT_RC(f->repo, "add", "job.sh"), 0);
	write_file(f->repo, "job.sh", "v3\n", 0644);
	commit_ok(f->repo, paths, 1, "v3", &res);

	ASSERT_GIT("v3\n", f->repo, "show", "HEAD:job.sh");
	ASSERT_GIT("v3\n", f->repo, "show", ":job.sh");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(prev);
}

/* The executable bit goes into the tree, also as the only change. */
static void test_executable_bit(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	const char *both[] = { "run.sh", "plain.txt" };
	char *path = xasprintf("%s/job.sh", f->repo);
	struct gitops_result res;

	write_file(f->repo, "run.sh", "#!/bin/sh\n", 0755);
	write_file(f->repo, "plain.txt", "text\n", 0644);
	commit_ok(f->repo, both, 2, "two", &res);
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "run.sh");
	ASSERT_GIT("100644\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "plain.txt");

	write_file(f->repo, "job.sh", "#!/bin/sh\n", 0644);
	commit_ok(f->repo, paths, 1, "plain", &res);
	ASSERT_GIT("100644\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "job.sh");
	assert_int_equal(chmod(path, 0755), 0);
	commit_ok(f->repo, paths, 1, "executable", &res);
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "job.sh");
	ASSERT_GIT("3\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(path);
}

/* core.fileMode=false: the bit on disk is ignored, the known mode kept. */
static void test_filemode_false(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	const char *fresh[] = { "new.sh" };
	const char *staged[] = { "staged.sh" };
	struct gitops_result res;

	write_file(f->repo, "job.sh", "v1\n", 0755);
	commit_ok(f->repo, paths, 1, "v1", &res);
	assert_int_equal(GIT_RC(f->repo, "config", "core.fileMode", "false"),
			 0);
	write_file(f->repo, "job.sh", "v2\n", 0644);
	commit_ok(f->repo, paths, 1, "v2", &res);
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "job.sh");
	ASSERT_GIT("v2\n", f->repo, "show", "HEAD:job.sh");

	write_file(f->repo, "new.sh", "new\n", 0755);
	commit_ok(f->repo, fresh, 1, "new", &res);
	ASSERT_GIT("100644\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "new.sh");
	ASSERT_GIT("", f->repo, "status", "--porcelain");

	/* the index's mode wins over HEAD's: update-index --chmod */
	write_file(f->repo, "staged.sh", "s\n", 0644);
	assert_int_equal(GIT_RC(f->repo, "add", "staged.sh"), 0);
	assert_int_equal(GIT_RC(f->repo, "update-index", "--chmod=+x",
				"staged.sh"), 0);
	commit_ok(f->repo, staged, 1, "staged", &res);
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "staged.sh");

	/* not in the index: HEAD's mode, in the commit and in the index */
	assert_int_equal(GIT_RC(f->repo, "rm", "-q", "--cached", "job.sh"), 0);
	write_file(f->repo, "job.sh", "v3\n", 0644);
	commit_ok(f->repo, paths, 1, "v3", &res);
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "job.sh");
	ASSERT_GIT("", f->repo, "status", "--porcelain");

	assert_int_equal(GIT_RC(f->repo, "config", "core.fileMode", "true"),
			 0);
	ASSERT_GIT(" M job.sh\n M new.sh\n M staged.sh\n", f->repo,
		   "status", "--porcelain");
	ASSERT_GIT("100755 job.sh\n100644 new.sh\n100755 staged.sh\n",
		   f->repo, "ls-files", "--format=%(objectmode) %(path)");
	assert_fsck(f->repo);
}

/* Two paths, new directories included, in one commit. */
static void test_two_paths(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "ops/decisions.md", "runs/s/a/job.sh" };
	struct gitops_result res;
	char *prev = cli_initial_commit(f->repo);

	write_file(f->repo, "ops/decisions.md", "# decisions\n", 0644);
	write_file(f->repo, "runs/s/a/job.sh", "python train.py\n", 0755);
	commit_ok(f->repo, paths, 2, "run a", &res);

	ASSERT_GIT("2\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("ops/decisions.md\nruns/s/a/job.sh\n", f->repo, "show",
		   "--name-only", "--format=", "HEAD");
	ASSERT_GIT("job.sh\nkeep.txt\nops/decisions.md\nruns/s/a/job.sh\n",
		   f->repo, "ls-tree", "-r", "--name-only", "HEAD");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(prev);
}

/* dir is a subdirectory; paths stay relative to the work tree root. */
static void test_nested_from_subdir(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "runs/s/t/job.sh" };
	char *sub = xasprintf("%s/runs/s", f->repo);
	struct gitops_result res;
	struct buf b = BUF_INIT;
	char *cause = NULL;
	int found = -1;

	write_file(f->repo, "runs/s/t/job.sh", "echo t\n", 0755);
	commit_ok(sub, paths, 1, "run t", &res);

	ASSERT_GIT("runs/s/t/job.sh\n", f->repo, "ls-tree", "-r",
		   "--name-only", "HEAD");
	ASSERT_GIT("100755\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "runs/s/t/job.sh");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_int_equal(gitops_file_at_head(sub, "runs/s/t/job.sh", &b,
					     &found, &cause), 0);
	assert_int_equal(found, 1);
	assert_string_equal(b.s, "echo t\n");
	assert_fsck(f->repo);
	buf_release(&b);
	free(sub);
}

/* Outside any repository: nothing done, nothing created. */
static void test_no_repo(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *plain = xasprintf("%s/plain", f->top);
	struct gitops_result res;
	struct buf b = BUF_INIT;
	char oid[41] = "x";
	char *cause = NULL;
	int found = -1;

	assert_int_equal(mkdir(plain, 0755), 0);
	write_file(plain, "job.sh", "v1\n", 0644);
	assert_int_not_equal(GIT_RC(plain, "rev-parse", "--git-dir"), 0);

	res.no_repo = 0;
	assert_int_equal(gitops_commit_paths(plain, paths, 1, "m", &res,
					     &cause), 0);
	assert_null(cause);
	assert_int_equal(res.no_repo, 1);
	assert_int_equal(res.unchanged, 0);
	assert_string_equal(res.oid, "");
	assert_false(exists(plain, ".git"));
	assert_false(exists(f->top, ".git"));
	assert_int_not_equal(GIT_RC(plain, "rev-parse", "--git-dir"), 0);

	assert_int_equal(gitops_head(plain, oid, &cause), 1);
	assert_string_equal(oid, "");
	assert_int_equal(gitops_file_at_head(plain, "job.sh", &b, &found,
					     &cause), 1);
	assert_int_equal(found, 0);
	assert_int_equal(b.len, 0);
	assert_null(cause);
	free(plain);
}

/* A missing directory is an error, not "no repository". */
static void test_missing_dir(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *gone = xasprintf("%s/nope", f->top);
	struct gitops_result res;
	char *cause = NULL;

	assert_int_equal(gitops_commit_paths(gone, paths, 1, "m", &res,
					     &cause), -1);
	assert_non_null(strstr(cause, "nope"));
	assert_int_equal(res.no_repo, 0);
	free(cause);
	free(gone);
}

/* A detached HEAD is refused; nothing moves, the index is untouched. */
static void test_detached_head(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *prev = cli_initial_commit(f->repo);
	char *cause, *now;

	assert_int_equal(GIT_RC(f->repo, "checkout", "-q", "--detach"), 0);
	write_file(f->repo, "job.sh", "v2\n", 0644);
	cause = commit_refused(f->repo, paths, 1);
	assert_string_equal(cause, "HEAD is detached; check out a branch first");

	now = head_of(f->repo);
	assert_string_equal(now, prev);
	free(now);
	ASSERT_GIT("1\n", f->repo, "rev-list", "--count", "main");
	ASSERT_GIT(" M job.sh\n", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(cause);
	free(prev);
}

/* A locked index is refused and the lock is left where it is. */
static void test_index_locked(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *prev = cli_initial_commit(f->repo);
	char *lock = xasprintf("%s/.git/index.lock", f->repo);
	char *cause, *now, *expect;

	write_file(f->repo, ".git/index.lock", "", 0644);
	write_file(f->repo, "job.sh", "v2\n", 0644);
	cause = commit_refused(f->repo, paths, 1);
	expect = xasprintf("the git index is locked ('%s'): another git is "
			   "running, or remove the stale lock", lock);
	assert_string_equal(cause, expect);
	assert_true(exists(f->repo, ".git/index.lock"));

	now = head_of(f->repo);
	assert_string_equal(now, prev);
	ASSERT_GIT("1\n", f->repo, "rev-list", "--count", "HEAD");
	assert_int_equal(unlink(lock), 0);
	ASSERT_GIT(" M job.sh\n", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(now);
	free(expect);
	free(cause);
	free(lock);
	free(prev);
}

/* Without user.name anywhere, the commit is signed by xloop. */
static void test_no_user_name(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	int rc;

	/* libgit2 reads the system config, which the CLI is told to skip */
	unsetenv("GIT_CONFIG_NOSYSTEM");
	rc = GIT_RC(f->repo, "config", "--system", "user.name");
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	if (rc == 0)
		skip();

	setenv("HOME", g.emptyhome, 1);
	assert_int_not_equal(GIT_RC(f->repo, "config", "user.name"), 0);
	write_file(f->repo, "job.sh", "v1\n", 0644);
	commit_ok(f->repo, paths, 1, "anonymous", &res);
	ASSERT_GIT("xloop <xloop@localhost>|xloop <xloop@localhost>\n",
		   f->repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>");
	ASSERT_GIT("1\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	setenv("HOME", g.home, 1);
}

/* Nothing changed: no commit, the oid is HEAD's. */
static void test_unchanged(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	char *cause = NULL, *head;

	write_file(f->repo, "job.sh", "v1\n", 0755);
	commit_ok(f->repo, paths, 1, "first", &res);
	head = head_of(f->repo);

	memset(&res, 0, sizeof(res));
	assert_int_equal(gitops_commit_paths(f->repo, paths, 1, "again", &res,
					     &cause), 0);
	assert_null(cause);
	assert_int_equal(res.unchanged, 1);
	assert_int_equal(res.no_repo, 0);
	assert_string_equal(res.oid, head);
	ASSERT_GIT("1\n", f->repo, "rev-list", "--count", "HEAD");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(head);
}

/* A merge in progress is refused. */
static void test_merge_in_progress(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *prev = cli_initial_commit(f->repo);
	char *line = xasprintf("%s\n", prev);
	char *cause, *now;

	write_file(f->repo, ".git/MERGE_HEAD", line, 0644);
	write_file(f->repo, "job.sh", "v2\n", 0644);
	cause = commit_refused(f->repo, paths, 1);
	assert_string_equal(cause,
			    "a merge is in progress; finish or abort it first");
	now = head_of(f->repo);
	assert_string_equal(now, prev);
	ASSERT_GIT(" M job.sh\n", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(now);
	free(cause);
	free(line);
	free(prev);
}

/* Paths outside the work tree, into .git or through a symlink: refused. */
static void test_bad_paths(void **state)
{
	struct fix *f = *state;
	static const struct {
		const char *path;
		const char *needle;
	} bad[] = {
		{ "../job.sh", "outside the work tree" },
		{ "/etc/passwd", "outside the work tree" },
		{ "runs/../../job.sh", "outside the work tree" },
		{ ".git/config", "inside .git" },
		{ "runs/.GIT/x", "inside .git" },
		{ "", "empty path" },
		{ "runs//job.sh", "invalid path" },
		{ "./job.sh", "invalid path" },
		{ "runs/", "invalid path" },
		{ "link/job.sh", "beyond a symbolic link" },
		{ "runs", "is a directory" },
		{ "keep.txt/x", "exists neither in the work tree nor in HEAD" },
	};
	char *prev = cli_initial_commit(f->repo);
	char *outside = xasprintf("%s/outside", f->top);
	char *link = xasprintf("%s/link", f->repo);
	char *cause, *now;
	size_t i;

	assert_int_equal(mkdir(outside, 0755), 0);
	write_file(outside, "job.sh", "secret\n", 0644);
	write_file(f->top, "job.sh", "above\n", 0644);
	write_file(f->repo, "runs/x", "x\n", 0644);
	assert_int_equal(symlink(outside, link), 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *paths[] = { "keep.txt", bad[i].path };

		write_file(f->repo, "keep.txt", "changed\n", 0644);
		cause = commit_refused(f->repo, paths, 2);
		if (strstr(cause, bad[i].needle) == NULL)
			fail_msg("'%s': cause '%s' lacks '%s'", bad[i].path,
				 cause, bad[i].needle);
		free(cause);
	}
	now = head_of(f->repo);
	assert_string_equal(now, prev);
	ASSERT_GIT(" M keep.txt\n?? link\n?? runs/\n", f->repo, "status",
		   "--porcelain");
	assert_fsck(f->repo);
	free(now);
	free(link);
	free(outside);
	free(prev);
}

/* A path gone from the work tree is deleted; one unknown anywhere refused. */
static void test_deleted_path(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	const char *unknown[] = { "nope.sh" };
	char *prev = cli_initial_commit(f->repo);
	char *path = xasprintf("%s/job.sh", f->repo);
	struct gitops_result res;
	char *cause;

	assert_int_equal(unlink(path), 0);
	commit_ok(f->repo, paths, 1, "drop job.sh", &res);
	ASSERT_GIT("keep.txt\n", f->repo, "ls-tree", "-r", "--name-only",
		   "HEAD");
	ASSERT_GIT("D\tjob.sh\n", f->repo, "show", "--name-status",
		   "--format=", "HEAD");
	ASSERT_GIT("", f->repo, "status", "--porcelain");

	cause = commit_refused(f->repo, unknown, 1);
	assert_string_equal(cause,
			    "'nope.sh' exists neither in the work tree nor in HEAD");
	ASSERT_GIT("2\n", f->repo, "rev-list", "--count", "HEAD");
	assert_fsck(f->repo);
	free(cause);
	free(path);
	free(prev);
}

/* A symbolic link is committed as a link, not as its target's content. */
static void test_symlink_path(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "latest" };
	char *link = xasprintf("%s/latest", f->repo);
	struct gitops_result res;

	assert_int_equal(symlink("runs/s/t", link), 0);
	commit_ok(f->repo, paths, 1, "link", &res);
	ASSERT_GIT("120000\n", f->repo, "ls-tree", "--format=%(objectmode)",
		   "HEAD", "latest");
	ASSERT_GIT("runs/s/t", f->repo, "cat-file", "-p", "HEAD:latest");
	ASSERT_GIT("", f->repo, "status", "--porcelain");
	assert_fsck(f->repo);
	free(link);
}

/* A bare repository has no work tree to commit from. */
static void test_bare_repo(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	char *bare = xasprintf("%s/bare.git", f->top);
	char *cause;

	assert_int_equal(GIT_RC(f->top, "init", "-q", "--bare", "bare.git"), 0);
	cause = commit_refused(bare, paths, 1);
	assert_non_null(strstr(cause, "bare repository"));
	ASSERT_GIT("", bare, "for-each-ref");
	free(cause);
	free(bare);
}

/* Sleep until 50 ms into a new second (file times use a coarse clock). */
static void wait_new_second(void)
{
	struct timespec now, nap;

	assert_int_equal(clock_gettime(CLOCK_REALTIME, &now), 0);
	nap.tv_sec = 0;
	nap.tv_nsec = 1000000000L - now.tv_nsec + 50000000L;
	if (nap.tv_nsec >= 1000000000L) {
		nap.tv_sec = 1;
		nap.tv_nsec -= 1000000000L;
	}
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
}

/*
 * When the branch cannot move, the index entries are put back. job.sh is
 * rewritten to the same size in the second it was staged, and the index is
 * restored a second later: restored stat data would make git trust it clean.
 */
static void test_commit_failure_restores_index(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh", "new.sh" };
	char *lock = xasprintf("%s/.git/refs/heads/main.lock", f->repo);
	char *cause, *now, *prev;

	wait_new_second();
	prev = cli_initial_commit(f->repo);
	write_file(f->repo, "keep.txt", "staged\n", 0644);
	assert_int_equal(GIT_RC(f->repo, "add", "keep.txt"), 0);
	write_file(f->repo, "job.sh", "v2\n", 0644);
	wait_new_second();
	write_file(f->repo, "new.sh", "new\n", 0755);
	write_file(f->repo, ".git/refs/heads/main.lock", "", 0644);

	cause = commit_refused(f->repo, paths, 2);
	assert_non_null(strstr(cause, "cannot commit"));
	assert_non_null(strstr(cause, "main.lock"));
	now = head_of(f->repo);
	assert_string_equal(now, prev);
	assert_true(exists(f->repo, ".git/refs/heads/main.lock"));
	ASSERT_GIT(" M job.sh\nM  keep.txt\n?? new.sh\n", f->repo, "status",
		   "--porcelain");
	ASSERT_GIT("staged\n", f->repo, "show", ":keep.txt");
	ASSERT_GIT("v1\n", f->repo, "show", ":job.sh");
	assert_int_equal(unlink(lock), 0);
	assert_fsck(f->repo);
	free(now);
	free(cause);
	free(lock);
	free(prev);
}

/* gitops_head and gitops_file_at_head, from unborn to a commit. */
static void test_head_and_file_at_head(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "runs/a/job.sh" };
	struct gitops_result res;
	struct buf b = BUF_INIT;
	char oid[41] = "junk";
	char *cause = NULL, *head;
	int found = -1;

	assert_int_equal(gitops_head(f->repo, oid, &cause), 0);
	assert_string_equal(oid, "");
	assert_int_equal(gitops_file_at_head(f->repo, "runs/a/job.sh", &b,
					     &found, &cause), 0);
	assert_int_equal(found, 0);

	write_file(f->repo, "runs/a/job.sh", "a=1\n", 0755);
	commit_ok(f->repo, paths, 1, "a", &res);
	write_file(f->repo, "runs/a/job.sh", "a=2\n", 0755);	/* not HEAD */
	head = head_of(f->repo);
	assert_int_equal(gitops_head(f->repo, oid, &cause), 0);
	assert_string_equal(oid, head);
	assert_string_equal(oid, res.oid);

	buf_adds(&b, "prefix:");
	assert_int_equal(gitops_file_at_head(f->repo, "runs/a/job.sh", &b,
					     &found, &cause), 0);
	assert_int_equal(found, 1);
	assert_string_equal(b.s, "prefix:a=1\n");
	assert_null(cause);

	buf_reset(&b);
	assert_int_equal(gitops_file_at_head(f->repo, "runs/a/other.sh", &b,
					     &found, &cause), 0);
	assert_int_equal(found, 0);
	assert_int_equal(b.len, 0);

	assert_int_equal(gitops_file_at_head(f->repo, "runs/a", &b, &found,
					     &cause), -1);
	assert_string_equal(cause, "'runs/a' is a directory in HEAD");
	FREE_AND_NULL(cause);
	assert_int_equal(gitops_file_at_head(f->repo, "../x", &b, &found,
					     &cause), -1);
	assert_non_null(strstr(cause, "outside the work tree"));
	FREE_AND_NULL(cause);
	assert_int_equal(found, 0);
	buf_release(&b);
	free(head);
}

/* Wrong arguments are refused before anything is opened. */
static void test_bad_arguments(void **state)
{
	struct fix *f = *state;
	const char *paths[] = { "job.sh" };
	struct gitops_result res;
	char *cause = NULL;

	write_file(f->repo, "job.sh", "v1\n", 0644);
	assert_int_equal(gitops_commit_paths(f->repo, paths, 1, "", &res,
					     &cause), -1);
	assert_string_equal(cause, "empty commit message");
	FREE_AND_NULL(cause);
	assert_int_equal(gitops_commit_paths(f->repo, paths, 0, "m", &res,
					     &cause), -1);
	assert_string_equal(cause, "no paths to commit");
	FREE_AND_NULL(cause);
	/* a NULL cause is allowed */
	assert_int_equal(gitops_commit_paths(f->repo, paths, 1, "", &res,
					     NULL), -1);
	assert_int_not_equal(GIT_RC(f->repo, "rev-parse", "--verify", "HEAD"),
			     0);
}

/* A temporary root, a HOME with user.name, an empty HOME, a clean env. */
static int group_setup(void **state)
{
	char tmpl[] = "/tmp/xloop-gitops-XXXXXX";
	static const char *const unset[] = {
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
		"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_CEILING_DIRECTORIES", "GIT_AUTHOR_NAME",
		"GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
		"GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
		"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL",
		"GIT_CONFIG_SYSTEM", "XDG_CONFIG_HOME", "EMAIL",
	};
	size_t i;

	(void)state;
	if (mkdtemp(tmpl) == NULL)
		return -1;
	g.base = xstrdup(tmpl);
	g.home = xasprintf("%s/home", g.base);
	g.emptyhome = xasprintf("%s/emptyhome", g.base);
	if (mkdir(g.home, 0755) < 0 || mkdir(g.emptyhome, 0755) < 0)
		return -1;
	write_file(g.home, ".gitconfig",
		   "[user]\n\tname = Test User\n\temail = test@example.com\n"
		   "[commit]\n\tgpgsign = false\n"
		   "[advice]\n\tdetachedHead = false\n", 0644);
	for (i = 0; i < ARRAY_SIZE(unset); i++)
		unsetenv(unset[i]);
	setenv("HOME", g.home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("LC_ALL", "C", 1);
	return 0;
}

static int group_teardown(void **state)
{
	const char *argv[] = { "rm", "-rf", g.base, NULL };
	struct buf out = BUF_INIT;
	int rc;

	(void)state;
	rc = run("/", argv, &out, 1);
	buf_release(&out);
	free(g.base);
	free(g.home);
	free(g.emptyhome);
	return rc == 0 ? 0 : -1;
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup_repo, teardown_repo)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_first_commit_unborn),
		T(test_user_staging_kept),
		T(test_staged_path_other_content),
		T(test_executable_bit),
		T(test_filemode_false),
		T(test_two_paths),
		T(test_nested_from_subdir),
		T(test_no_repo),
		T(test_missing_dir),
		T(test_detached_head),
		T(test_index_locked),
		T(test_no_user_name),
		T(test_unchanged),
		T(test_merge_in_progress),
		T(test_bad_paths),
		T(test_deleted_path),
		T(test_symlink_path),
		T(test_bare_repo),
		T(test_commit_failure_restores_index),
		T(test_head_and_file_at_head),
		T(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
