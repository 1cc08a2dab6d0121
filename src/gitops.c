/* Commits of a few paths with libgit2 that leave the user's index alone. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <git2.h>

#include "lib/buf.h"
#include "gitops.h"
#include "lib/sha256.h"
#include "lib/util.h"

/* One path of a commit: what the work tree has, what the index had. */
struct pathop {
	const char *path;
	int present;		/* exists in the work tree (else: deletion) */
	git_filemode_t mode;
	git_oid blob;
	int had_old;		/* the real index had a stage-0 entry */
	git_index_entry old;	/* that entry, without stat data */
};

/* Set *why to a formatted message; returns -1. */
static int XL_PRINTF(2, 3) fail(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(*why);
	*why = xvasprintf(fmt, ap);
	va_end(ap);
	return -1;
}

/* Like fail(), adding libgit2's message; call right after a call < 0. */
static int XL_PRINTF(2, 3) fail_git(char **why, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	va_list ap;
	char *what;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	free(*why);
	*why = xasprintf("%s: %s", what,
			 e && e->message ? e->message : "unknown libgit2 error");
	free(what);
	return -1;
}

/* Hand the message to the caller, or drop it when not wanted. */
static void give_cause(char **cause, char *why)
{
	if (cause)
		*cause = why;
	else
		free(why);
}

/* git_libgit2_init(), or -1 with *cause set; end_git() balances it. */
static int init_git(char **cause)
{
	char *why = NULL;

	if (git_libgit2_init() >= 0)
		return 0;
	fail_git(&why, "cannot initialise libgit2");
	give_cause(cause, why);
	return -1;
}

/* Free repo, shut libgit2 down, hand why over when ret < 0; returns ret. */
static int end_git(git_repository *repo, int ret, char **cause, char *why)
{
	git_repository_free(repo);
	git_libgit2_shutdown();
	if (ret < 0)
		give_cause(cause, why);
	else
		free(why);
	return ret;
}

/* Refuse a path that is not a plain relative path inside the work tree. */
static int check_path(const char *path, char **why)
{
	const char *p = path, *end;
	size_t len;

	if (path[0] == '\0')
		return fail(why, "empty path");
	if (path[0] == '/')
		return fail(why, "path '%s' is outside the work tree "
			    "(paths are relative to its root)", path);
	for (;;) {
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return fail(why, "path '%s' is outside the work tree",
				    path);
		if (len == 0 || (len == 1 && p[0] == '.'))
			return fail(why, "invalid path '%s'", path);
		if (len == 4 && strncasecmp(p, ".git", 4) == 0)
			return fail(why, "path '%s' is inside .git", path);
		if (end == NULL)
			return 0;
		p = end + 1;
	}
}

/*
 * lstat path below the work tree root: 1 (and *st) when it exists, 0 when it
 * does not, -1 when it leads through a symbolic link or cannot be examined.
 */
static int stat_in_workdir(const char *workdir, const char *path,
			   struct stat *st, char **why)
{
	char *full = xasprintf("%s%s", workdir, path);
	size_t i;
	int ret = -1;

	for (i = strlen(workdir); full[i]; i++) {
		if (full[i] != '/')
			continue;
		full[i] = '\0';
		if (lstat(full, st) < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				ret = 0;
			else
				fail(why, "cannot examine '%s': %s", full,
				     strerror(errno));
			goto out;
		}
		if (S_ISLNK(st->st_mode)) {
			fail(why, "path '%s' is beyond a symbolic link "
			     "(outside the work tree)", path);
			goto out;
		}
		if (!S_ISDIR(st->st_mode)) {
			ret = 0;	/* a file where a directory would be */
			goto out;
		}
		full[i] = '/';
	}
	if (lstat(full, st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			ret = 0;
		else
			fail(why, "cannot examine '%s': %s", full,
			     strerror(errno));
	} else if (S_ISDIR(st->st_mode)) {
		fail(why, "'%s' is a directory", path);
	} else if (!S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode)) {
		fail(why, "'%s' is not a regular file", path);
	} else {
		ret = 1;
	}
out:
	free(full);
	return ret;
}

/*
 * The git mode of a work tree file: link, executable or plain blob. With
 * core.fileMode=false the executable bit on disk means nothing (as for git):
 * keep the mode the index, else HEAD, has for the path.
 */
static git_filemode_t mode_of(const struct stat *st, int trust_mode,
			      const git_index_entry *in_index,
			      const git_index_entry *in_head)
{
	const git_index_entry *known = in_index ? in_index : in_head;

	if (S_ISLNK(st->st_mode))
		return GIT_FILEMODE_LINK;
	if (!trust_mode)
		return known && known->mode == GIT_FILEMODE_BLOB_EXECUTABLE ?
		       GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	if (st->st_mode & S_IXUSR)
		return GIT_FILEMODE_BLOB_EXECUTABLE;
	return GIT_FILEMODE_BLOB;
}

/* Whether the repository trusts the executable bit (core.fileMode). */
static int trust_filemode(git_repository *repo, int *trust, char **why)
{
	git_config *cfg = NULL;
	int r;

	*trust = 1;
	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return fail_git(why, "cannot read the git configuration");
	r = git_config_get_bool(trust, cfg, "core.filemode");
	git_config_free(cfg);
	if (r == GIT_ENOTFOUND) {
		*trust = 1;
		return 0;
	}
	if (r < 0)
		return fail_git(why, "cannot read core.fileMode");
	return 0;
}

/* What git is in the middle of, for a refusal message. */
static const char *state_name(int state)
{
	switch (state) {
	case GIT_REPOSITORY_STATE_MERGE:
		return "a merge";
	case GIT_REPOSITORY_STATE_REVERT:
	case GIT_REPOSITORY_STATE_REVERT_SEQUENCE:
		return "a revert";
	case GIT_REPOSITORY_STATE_CHERRYPICK:
	case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE:
		return "a cherry-pick";
	case GIT_REPOSITORY_STATE_BISECT:
		return "a bisect";
	case GIT_REPOSITORY_STATE_REBASE:
	case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE:
	case GIT_REPOSITORY_STATE_REBASE_MERGE:
		return "a rebase";
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
	case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE:
		return "a 'git am'";
	default:
		return "another git operation";
	}
}

/* Open the repository around dir: 0, 1 when there is none, -1 on error. */
static int open_repo(const char *dir, git_repository **repo, char **why)
{
	struct stat st;
	int r;

	*repo = NULL;
	if (stat(dir, &st) < 0)
		return fail(why, "cannot open '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(why, "'%s' is not a directory", dir);
	r = git_repository_open_ext(repo, dir, 0, NULL);
	if (r == GIT_ENOTFOUND) {
		*repo = NULL;
		return 1;
	}
	if (r < 0) {
		*repo = NULL;
		return fail_git(why, "cannot open the git repository of '%s'",
				dir);
	}
	return 0;
}

/* The commit HEAD points to, or NULL when the branch is unborn. */
static int head_commit(git_repository *repo, git_commit **out, char **why)
{
	git_reference *ref = NULL;
	git_object *obj = NULL;
	int r;

	*out = NULL;
	r = git_repository_head(&ref, repo);
	if (r == GIT_EUNBORNBRANCH)
		return 0;
	if (r < 0)
		return fail_git(why, "cannot read HEAD");
	r = git_reference_peel(&obj, ref, GIT_OBJECT_COMMIT);
	git_reference_free(ref);
	if (r < 0)
		return fail_git(why, "cannot read the commit of HEAD");
	*out = (git_commit *)obj;
	return 0;
}

/* open_repo() and head_commit(): 0, 1 when there is no repository, or -1. */
static int open_head(const char *dir, git_repository **repo, git_commit **commit,
		     char **why)
{
	int r = open_repo(dir, repo, why);

	*commit = NULL;
	if (r != 0)
		return r;
	return head_commit(*repo, commit, why);
}

/* Put the index entries of the paths back as they were; 0 or -1. */
static int restore_index(git_index *idx, const struct pathop *ops, size_t n)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		if (ops[i].had_old)
			r = git_index_add(idx, &ops[i].old);
		else
			r = git_index_remove(idx, ops[i].path, 0);
		if (r < 0 && r != GIT_ENOTFOUND)
			return -1;
	}
	return git_index_write(idx) < 0 ? -1 : 0;
}

/* Refuse to work in a repository xloop must not commit to. */
static int check_repo(git_repository *repo, char **why)
{
	int state, r;

	if (git_repository_is_bare(repo))
		return fail(why, "'%s' is a bare repository: there is no work "
			    "tree to commit from", git_repository_path(repo));
	state = git_repository_state(repo);
	if (state < 0)
		return fail_git(why, "cannot read the repository state");
	if (state != GIT_REPOSITORY_STATE_NONE)
		return fail(why, "%s is in progress; finish or abort it first",
			    state_name(state));
	r = git_repository_head_detached(repo);
	if (r < 0)
		return fail_git(why, "cannot read HEAD");
	if (r == 1)
		return fail(why, "HEAD is detached; check out a branch first");
	return 0;
}

/* Message for an index that another process has locked. */
static int fail_locked(char **why, const char *lock)
{
	return fail(why, "the git index is locked ('%s'): another git is "
		    "running, or remove the stale lock", lock);
}

/*
 * Build the new tree in an in-memory index: HEAD's tree with the paths
 * replaced by their work tree content (or removed). Fills ops.
 */
static int build_tree(git_repository *repo, git_index *idx,
		      git_tree *head_tree, struct pathop *ops, size_t n,
		      git_oid *tree_id, int *empty, char **why)
{
	const char *workdir = git_repository_workdir(repo);
	git_index *mem = NULL;
	git_index_entry e;
	struct stat st;
	size_t i;
	int r, trust, ret = -1;

	if (trust_filemode(repo, &trust, why) < 0)
		return -1;
	if (git_index_new(&mem) < 0)
		return fail_git(why, "cannot create an index");
	if (head_tree && git_index_read_tree(mem, head_tree) < 0) {
		fail_git(why, "cannot read the tree of HEAD");
		goto out;
	}
	for (i = 0; i < n; i++) {
		r = stat_in_workdir(workdir, ops[i].path, &st, why);
		if (r < 0)
			goto out;
		if (r == 0) {
			if (git_index_get_bypath(mem, ops[i].path, 0) == NULL) {
				fail(why, "'%s' exists neither in the work "
				     "tree nor in HEAD", ops[i].path);
				goto out;
			}
			if (git_index_remove(mem, ops[i].path, 0) < 0) {
				fail_git(why, "cannot remove '%s'",
					 ops[i].path);
				goto out;
			}
			continue;
		}
		ops[i].present = 1;
		ops[i].mode = mode_of(&st, trust,
				      git_index_get_bypath(idx, ops[i].path, 0),
				      git_index_get_bypath(mem, ops[i].path, 0));
		if (git_blob_create_from_workdir(&ops[i].blob, repo,
						 ops[i].path) < 0) {
			fail_git(why, "cannot read '%s'", ops[i].path);
			goto out;
		}
		memset(&e, 0, sizeof(e));
		e.path = ops[i].path;
		e.mode = ops[i].mode;
		git_oid_cpy(&e.id, &ops[i].blob);
		if (git_index_add(mem, &e) < 0) {
			fail_git(why, "cannot add '%s'", ops[i].path);
			goto out;
		}
	}
	if (git_index_write_tree_to(tree_id, mem, repo) < 0) {
		fail_git(why, "cannot write the tree");
		goto out;
	}
	*empty = git_index_entrycount(mem) == 0;
	ret = 0;
out:
	git_index_free(mem);
	return ret;
}

/*
 * Stage the paths in the real index, exactly as they go into the commit, and
 * write it. Remembers the previous entries in ops for restore_index().
 */
static int stage_paths(git_index *idx, struct pathop *ops, size_t n,
		       const char *lock, char **why)
{
	const git_index_entry *e, *anc, *ours, *theirs;
	git_index_entry copy;
	size_t i;
	int r;

	if (git_index_read(idx, 0) < 0)
		return fail_git(why, "cannot read the git index");
	for (i = 0; i < n; i++) {
		r = git_index_conflict_get(&anc, &ours, &theirs, idx,
					   ops[i].path);
		if (r == 0)
			return fail(why, "'%s' has unresolved conflicts in "
				    "the index", ops[i].path);
		if (r != GIT_ENOTFOUND)
			return fail_git(why, "cannot read the git index");
		e = git_index_get_bypath(idx, ops[i].path, 0);
		if (e == NULL)
			continue;
		/* only what git needs to put it back; no stat data: the file
		 * has changed since, maybe within the same second and to the
		 * same size, and old stat data would make it look clean */
		ops[i].had_old = 1;
		memset(&ops[i].old, 0, sizeof(ops[i].old));
		ops[i].old.mode = e->mode;
		ops[i].old.id = e->id;
		ops[i].old.flags = e->flags;
		ops[i].old.flags_extended = e->flags_extended;
		ops[i].old.path = ops[i].path;
	}
	for (i = 0; i < n; i++) {
		if (!ops[i].present) {
			r = git_index_remove_bypath(idx, ops[i].path);
			if (r < 0)
				return fail_git(why, "cannot unstage '%s'",
						ops[i].path);
			continue;
		}
		if (git_index_add_bypath(idx, ops[i].path) < 0)
			return fail_git(why, "cannot stage '%s'", ops[i].path);
		e = git_index_get_bypath(idx, ops[i].path, 0);
		if (e == NULL || !git_oid_equal(&e->id, &ops[i].blob))
			return fail(why, "'%s' changed while being committed; "
				    "try again", ops[i].path);
		if (e->mode != ops[i].mode) {
			/* add_bypath may keep the old mode: use ours */
			copy = *e;
			copy.path = ops[i].path;
			copy.mode = ops[i].mode;
			if (git_index_add(idx, &copy) < 0)
				return fail_git(why, "cannot stage '%s'",
						ops[i].path);
		}
	}
	r = git_index_write(idx);
	if (r == GIT_ELOCKED)
		return fail_locked(why, lock);
	if (r < 0)
		return fail_git(why, "cannot write the git index");
	return 0;
}

/* Commit exactly the given paths of the work tree around dir. */
int gitops_commit_paths(const char *dir, const char *const *paths, size_t n,
			const char *msg, struct gitops_result *res,
			char **cause)
{
	git_repository *repo = NULL;
	git_index *idx = NULL;
	git_commit *parent = NULL;
	git_tree *head_tree = NULL, *tree = NULL;
	git_signature *sig = NULL;
	const git_commit *parents[1];
	struct pathop *ops = NULL;
	struct stat st;
	git_oid tree_id, commit_id;
	char *why = NULL, *lock = NULL, *message = NULL, *orig;
	size_t i, len;
	int r, empty = 0, ret = -1;

	memset(res, 0, sizeof(*res));
	if (cause)
		*cause = NULL;
	if (n == 0) {
		give_cause(cause, xstrdup("no paths to commit"));
		return -1;
	}
	if (msg == NULL || msg[0] == '\0') {
		give_cause(cause, xstrdup("empty commit message"));
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (check_path(paths[i], &why) < 0) {
			give_cause(cause, why);
			return -1;
		}
	}
	if (init_git(cause) < 0)
		return -1;

	r = open_repo(dir, &repo, &why);
	if (r == 1) {
		res->no_repo = 1;
		ret = 0;
	}
	if (r != 0)
		goto out;
	if (check_repo(repo, &why) < 0)
		goto out;
	if (git_repository_index(&idx, repo) < 0) {
		fail_git(&why, "cannot read the git index");
		goto out;
	}
	lock = xasprintf("%s.lock", git_index_path(idx));
	if (lstat(lock, &st) == 0) {
		fail_locked(&why, lock);
		goto out;
	}
	if (head_commit(repo, &parent, &why) < 0)
		goto out;
	if (parent && git_commit_tree(&head_tree, parent) < 0) {
		fail_git(&why, "cannot read the tree of HEAD");
		goto out;
	}

	ops = xcalloc(n, sizeof(*ops));
	for (i = 0; i < n; i++)
		ops[i].path = paths[i];
	if (build_tree(repo, idx, head_tree, ops, n, &tree_id, &empty,
		       &why) < 0)
		goto out;
	if (head_tree ? git_oid_equal(&tree_id, git_tree_id(head_tree))
		      : empty) {
		res->unchanged = 1;
		if (parent)
			git_oid_tostr(res->oid, sizeof(res->oid),
				      git_commit_id(parent));
		ret = 0;
		goto out;
	}
	if (git_tree_lookup(&tree, repo, &tree_id) < 0) {
		fail_git(&why, "cannot read the new tree");
		goto out;
	}

	/* the index first: a commit the index does not know would be reverted
	 * by the user's next `git commit`; a failed commit is undone below */
	if (stage_paths(idx, ops, n, lock, &why) < 0)
		goto out;

	if (git_signature_default(&sig, repo) < 0 &&
	    git_signature_now(&sig, "xloop", "xloop@localhost") < 0) {
		fail_git(&why, "cannot make a signature");
		restore_index(idx, ops, n);
		goto out;
	}
	len = strlen(msg);
	message = msg[len - 1] == '\n' ? xstrdup(msg) : xasprintf("%s\n", msg);
	parents[0] = parent;
	if (git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL,
			      message, tree, parent ? 1 : 0, parents) < 0) {
		fail_git(&why, "cannot commit");
		if (restore_index(idx, ops, n) < 0) {
			orig = why;
			why = NULL;
			fail_git(&why, "%s; the paths stay staged, restoring "
				 "the index failed", orig);
			free(orig);
		}
		goto out;
	}
	git_oid_tostr(res->oid, sizeof(res->oid), &commit_id);
	ret = 0;
out:
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(head_tree);
	git_commit_free(parent);
	git_index_free(idx);
	free(message);
	free(lock);
	free(ops);
	return end_git(repo, ret, cause, why);
}

/* The commit HEAD points to, "" when unborn. */
int gitops_head(const char *dir, char oid[41], char **cause)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	char *why = NULL;
	int r, ret = -1;

	oid[0] = '\0';
	if (cause)
		*cause = NULL;
	if (init_git(cause) < 0)
		return -1;
	r = open_head(dir, &repo, &commit, &why);
	if (r != 0) {
		ret = r > 0 ? 1 : -1;
		goto out;
	}
	if (commit)
		git_oid_tostr(oid, 41, git_commit_id(commit));
	ret = 0;
out:
	git_commit_free(commit);
	return end_git(repo, ret, cause, why);
}

/* Append the content of path in HEAD's tree to out. */
int gitops_file_at_head(const char *dir, const char *path, struct buf *out,
			int *found, char **cause)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	char *why = NULL;
	int r, ret = -1;

	*found = 0;
	if (cause)
		*cause = NULL;
	if (check_path(path, &why) < 0) {
		give_cause(cause, why);
		return -1;
	}
	if (init_git(cause) < 0)
		return -1;
	r = open_head(dir, &repo, &commit, &why);
	if (r != 0) {
		ret = r > 0 ? 1 : -1;
		goto out;
	}
	if (commit == NULL) {
		ret = 0;
		goto out;
	}
	if (git_commit_tree(&tree, commit) < 0) {
		fail_git(&why, "cannot read the tree of HEAD");
		goto out;
	}
	r = git_tree_entry_bypath(&te, tree, path);
	if (r == GIT_ENOTFOUND) {
		ret = 0;
		goto out;
	}
	if (r < 0) {
		fail_git(&why, "cannot look up '%s' in HEAD", path);
		goto out;
	}
	switch (git_tree_entry_type(te)) {
	case GIT_OBJECT_BLOB:
		break;
	case GIT_OBJECT_TREE:
		fail(&why, "'%s' is a directory in HEAD", path);
		goto out;
	default:
		fail(&why, "'%s' is a submodule in HEAD", path);
		goto out;
	}
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(te)) < 0) {
		fail_git(&why, "cannot read '%s' in HEAD", path);
		goto out;
	}
	buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	*found = 1;
	ret = 0;
out:
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(commit);
	return end_git(repo, ret, cause, why);
}

/* The study's directory in the work tree: "" at its root, "sub/dir/" below it. */
static char *study_prefix(git_repository *repo, const char *dir)
{
	const char *wd = git_repository_workdir(repo);
	char *real = realpath(dir, NULL), *prefix;
	size_t n = wd ? strlen(wd) : 0;

	if (n && wd[n - 1] == '/')
		n--;
	if (!real || !wd || strncmp(real, wd, n) != 0 || (real[n] && real[n] != '/'))
		prefix = xstrdup("");
	else if (real[n] && real[n + 1])
		prefix = xasprintf("%s/", real + n + 1);
	else
		prefix = xstrdup("");
	free(real);
	return prefix;
}

/* 1 for what xloop writes in a study (runs/, ops/, xloop.json, ...): not code. */
static int xloop_own(const char *prefix, const char *path)
{
	static const char *const own[] = {
		"runs/", "ops/", ".xloop/", "xloop.json", "AGENTS.md", ".gitignore",
		"report.html",
	};
	size_t n = strlen(prefix), i;

	if (!path || strncmp(path, prefix, n) != 0)
		return 0;
	path += n;
	for (i = 0; i < ARRAY_SIZE(own); i++) {
		size_t len = strlen(own[i]);

		if (own[i][len - 1] == '/' ? strncmp(path, own[i], len) == 0 :
		    strcmp(path, own[i]) == 0)
			return 1;
	}
	return 0;
}

struct code_diff {
	const char *prefix;
	struct buf text;	/* the patch of the code's changes */
	int files;		/* code files that differ */
};

/* A delta of code (not xloop's own files): counted. */
static int count_file(const git_diff_delta *d, float progress, void *payload)
{
	struct code_diff *c = payload;

	(void)progress;
	if (!xloop_own(c->prefix, d->old_file.path) || !xloop_own(c->prefix, d->new_file.path))
		c->files++;
	return 0;
}

/* One line of the patch of a code file, appended to the text to hash. */
static int add_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		    void *payload)
{
	struct code_diff *c = payload;

	(void)h;
	if (xloop_own(c->prefix, d->old_file.path) && xloop_own(c->prefix, d->new_file.path))
		return 0;
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		buf_addc(&c->text, l->origin);
	buf_add(&c->text, l->content, l->content_len);
	return 0;
}

/* HEAD and a hash of the code's uncommitted changes: see gitops.h. */
int gitops_code_state(const char *dir, char oid[41], char changes[65], char **cause)
{
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	struct code_diff c = { NULL, BUF_INIT, 0 };
	char *why = NULL, *prefix = NULL;
	int r, ret = -1;

	oid[0] = changes[0] = '\0';
	if (cause)
		*cause = NULL;
	if (init_git(cause) < 0)
		return -1;
	r = open_head(dir, &repo, &commit, &why);
	if (r != 0) {
		ret = r > 0 ? 1 : -1;
		goto out;
	}
	if (!commit) {
		ret = 0;	/* unborn: no code to pin yet */
		goto out;
	}
	git_oid_tostr(oid, 41, git_commit_id(commit));
	prefix = study_prefix(repo, dir);
	c.prefix = prefix;
	/* tracked files only: what the user edited and did not commit */
	opts.flags = GIT_DIFF_NORMAL;
	if (git_commit_tree(&tree, commit) < 0) {
		fail_git(&why, "cannot read HEAD's tree");
		goto out;
	}
	if (git_diff_tree_to_workdir_with_index(&diff, repo, tree, &opts) < 0) {
		fail_git(&why, "cannot diff the work tree against HEAD");
		goto out;
	}
	if (git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, add_line, &c) < 0) {
		fail_git(&why, "cannot read the work tree's changes");
		goto out;
	}
	if (c.text.len)
		sha256_hex(c.text.s, c.text.len, changes);
	ret = 0;
out:
	buf_release(&c.text);
	free(prefix);
	git_diff_free(diff);
	git_tree_free(tree);
	git_commit_free(commit);
	return end_git(repo, ret, cause, why);
}

/* Whether the code of two commits differs: see gitops.h. */
int gitops_code_differs(const char *dir, const char *a, const char *b, int *differs,
			char **cause)
{
	git_repository *repo = NULL;
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	git_oid ia, ib;
	struct code_diff c = { NULL, BUF_INIT, 0 };
	char *why = NULL, *prefix = NULL;
	int r, ret = -1;

	*differs = 0;
	if (cause)
		*cause = NULL;
	if (strcmp(a, b) == 0)
		return 0;
	if (init_git(cause) < 0)
		return -1;
	r = open_repo(dir, &repo, &why);
	if (r != 0) {
		ret = r > 0 ? 1 : -1;
		goto out;
	}
	if (git_oid_fromstr(&ia, a) < 0 || git_oid_fromstr(&ib, b) < 0 ||
	    git_commit_lookup(&ca, repo, &ia) < 0 || git_commit_lookup(&cb, repo, &ib) < 0 ||
	    git_commit_tree(&ta, ca) < 0 || git_commit_tree(&tb, cb) < 0) {
		fail_git(&why, "cannot read commits %.12s and %.12s", a, b);
		goto out;
	}
	if (git_diff_tree_to_tree(&diff, repo, ta, tb, NULL) < 0) {
		fail_git(&why, "cannot diff %.12s and %.12s", a, b);
		goto out;
	}
	prefix = study_prefix(repo, dir);
	c.prefix = prefix;
	if (git_diff_foreach(diff, count_file, NULL, NULL, NULL, &c) < 0) {
		fail_git(&why, "cannot read the diff of %.12s and %.12s", a, b);
		goto out;
	}
	*differs = c.files > 0;
	ret = 0;
out:
	free(prefix);
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
	return end_git(repo, ret, cause, why);
}
