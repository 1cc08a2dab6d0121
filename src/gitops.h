/*
 * The git side of xloop (SPEC rule 7): commit a few paths with libgit2 without
 * touching anything else the user has staged, and read HEAD.
 *
 * No function exits or prints. Errors return -1 with *cause set to a malloc'd
 * message (lowercase, no full stop) that the caller reports and frees; cause
 * may be NULL when the caller does not want the message. Paths are always
 * relative to the root of the work tree ("runs/s/t/job.sh"), whatever
 * directory inside the work tree `dir` names. A path that is absolute, has an
 * empty, "." or ".." component, goes into .git, or leads through a symbolic
 * link to a directory is refused as outside the work tree.
 */
#ifndef XLOOP_GITOPS_H
#define XLOOP_GITOPS_H

#include <stddef.h>

#include "lib/buf.h"

struct gitops_result {
	char oid[41];	/* the new commit; HEAD when unchanged; "" otherwise */
	int no_repo;	/* dir is not inside a git work tree: nothing was done */
	int unchanged;	/* the paths already match HEAD: no commit was made */
};

/*
 * Commit exactly paths[0..n-1] of the work tree containing dir, with message
 * msg (a final newline is added when missing), on the branch HEAD points to
 * (an unborn branch gets its first commit). The commit is HEAD's tree with
 * only those paths replaced by their work tree content (file mode 100755 when
 * the file is executable, else 100644; a symbolic link is committed as one;
 * with core.fileMode=false, as in git, the mode the index or HEAD already has
 * is kept and new files are 100644).
 * Author and committer are user.name/user.email, or "xloop
 * <xloop@localhost>" when they are not configured.
 *
 * The real index is then updated for those paths only, so `git status` shows
 * them clean; whatever else the user staged stays staged exactly as it was.
 * A path the user had staged with other content is committed with its work
 * tree content, and its index entry becomes the committed blob.
 *
 * A path missing from the work tree but present in HEAD is deleted (from the
 * commit and the index); a path missing from both is an error.
 *
 * Returns 0 on success, also with res->no_repo = 1 when there is no
 * repository (nothing is created) and with res->unchanged = 1 and res->oid =
 * HEAD when the paths already match HEAD (the index is left alone then).
 * Returns -1 and sets *cause for: a bare repository, a detached HEAD, a
 * merge/rebase/cherry-pick/revert/bisect in progress, a locked index (the lock
 * is never removed), an invalid path, a path with unresolved conflicts, or any
 * libgit2 failure. When the commit itself fails after the index was written,
 * the index entries of the paths are restored.
 */
int gitops_commit_paths(const char *dir, const char *const *paths, size_t n,
			const char *msg, struct gitops_result *res,
			char **cause);

/*
 * The commit HEAD points to, as 40 hex digits in oid. Returns 0 (oid is ""
 * when the branch is unborn), 1 when dir is not in a git repository (oid is
 * ""), -1 with *cause on error.
 */
int gitops_head(const char *dir, char oid[41], char **cause);

/*
 * Append the content of path (relative to the work tree root) in HEAD's tree
 * to out, as stored in git (no filters). *found is 1 when HEAD has a file at
 * path, 0 when it has none or HEAD is unborn. Returns 0, 1 when dir is not in
 * a git repository (*found = 0), or -1 with *cause (also when path is a
 * directory or a submodule in HEAD).
 */
int gitops_file_at_head(const char *dir, const char *path, struct buf *out,
			int *found, char **cause);

/*
 * The code a job runs, pinned: the commit HEAD points to (oid; "" when
 * unborn) and a sha256 of the patch of the tracked files' uncommitted
 * changes (changes; "" when there are none). The files xloop writes in the
 * study (runs/, ops/, xloop.json, AGENTS.md, .gitignore, report.html) are
 * not code and are left out. 0, 1 when dir is in no repository, -1 with
 * *cause.
 */
int gitops_code_state(const char *dir, char oid[41], char changes[65], char **cause);

/*
 * *differs = 1 when the code (the files gitops_code_state counts) of
 * commits a and b differs. 0, 1 when dir is in no repository, -1 with
 * *cause (also for a commit the repository does not have).
 */
int gitops_code_differs(const char *dir, const char *a, const char *b, int *differs,
			char **cause);

#endif
