/* The study's records: git commits of its files, what HEAD holds, the event journal. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gitops.h"
#include "lib/buf.h"
#include "lib/fsutil.h"
#include "loop.h"

/* The work tree root above root (the nearest directory holding .git), or NULL. */
char *loop_worktree_prefix(const char *root)
{
	char *cur = xstrdup(root);

	for (;;) {
		char *git = path_join(cur, ".git"), *slash;
		int found = path_exists(git);

		free(git);
		if (found) {
			size_t n = strlen(cur);
			char *prefix;

			if (strcmp(cur, "/") == 0)
				n = 0;
			prefix = xstrdup(root[n] == '/' ? root + n + 1 : root + n);
			free(cur);
			return prefix;
		}
		slash = strrchr(cur, '/');
		if (slash == NULL || slash == cur) {
			free(cur);
			return NULL;
		}
		*slash = '\0';
	}
}

/* Commit some study files. */
int loop_commit(struct xl_ctx *ctx, const char *const *paths, size_t n,
		const char *msg, char oid[41], char **cause)
{
	char *prefix = loop_worktree_prefix(ctx->root);
	const char **rel = xcalloc(n + 1, sizeof(*rel));
	struct gitops_result res;
	size_t i;
	int rc;

	oid[0] = '\0';
	if (prefix == NULL) {
		warning("'%s' is not in a git repository: nothing committed "
			"(the state DB still records everything)", ctx->root);
		free(rel);
		return 0;
	}
	for (i = 0; i < n; i++)
		rel[i] = *prefix ? xasprintf("%s/%s", prefix, paths[i]) : xstrdup(paths[i]);
	memset(&res, 0, sizeof(res));
	rc = gitops_commit_paths(ctx->root, rel, n, msg, &res, cause);
	if (rc == 0)
		memcpy(oid, res.oid, sizeof(res.oid));
	for (i = 0; i < n; i++)
		free((char *)rel[i]);
	free(rel);
	free(prefix);
	return rc;
}

/* Whether committing rel takes no edit of the user's along. */
int loop_matches_head(struct xl_ctx *ctx, const char *rel, const char *text,
		      size_t len, char **cause)
{
	char *prefix = loop_worktree_prefix(ctx->root), *path;
	struct buf b = BUF_INIT;
	int found = 0, rc;

	if (prefix == NULL)
		return 1;	/* no repository: no edit of the user's to keep */
	path = *prefix ? xasprintf("%s/%s", prefix, rel) : xstrdup(rel);
	rc = gitops_file_at_head(ctx->root, path, &b, &found, cause);
	if (rc == 0)
		rc = found && b.len == len && memcmp(b.s, text, len) == 0;
	buf_release(&b);
	free(path);
	free(prefix);
	return rc;
}

/* Append to the event journal. */
int loop_event(struct xl_ctx *ctx, const char *kind, long long run_id,
	       long long attempt_id, const char *detail)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "INSERT INTO event (at, kind, run_id, attempt_id,"
		       " detail) VALUES (:at, :kind, :run, :att, :detail)") < 0)
		return -1;
	db_bind_int64(&q, ":at", time(NULL));
	db_bind_text(&q, ":kind", kind);
	if (run_id)
		db_bind_int64(&q, ":run", run_id);
	else
		db_bind_null(&q, ":run");
	if (attempt_id)
		db_bind_int64(&q, ":att", attempt_id);
	else
		db_bind_null(&q, ":att");
	db_bind_text(&q, ":detail", detail);
	return db_run(&q);
}
