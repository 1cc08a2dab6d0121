/*
 * ops/decisions.md: entries appended (once each, a crash notwithstanding)
 * and committed; decisions that change xloop.json (space, auto): the file,
 * then its commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lib/fsutil.h"
#include "loop.h"

/* Append to the decision log and commit it. */
int loop_decide(struct xl_ctx *ctx, const char *entry, const char *evidence,
		const char *msg, char **cause)
{
	return loop_decide_once(ctx, entry, NULL, evidence, msg, cause);
}

/* Whether a heading line ("## ...") of text contains mark (which has no newline but last). */
static int heading_has(const char *text, const char *mark)
{
	const char *hit, *line;

	for (hit = strstr(text, mark); hit; hit = strstr(hit + 1, mark)) {
		for (line = hit; line > text && line[-1] != '\n'; line--)
			;
		if (strncmp(line, "## ", 3) == 0)
			return 1;
	}
	return 0;
}

/* Append entries to ops/decisions.md, each unless a heading holds its once, in one write. */
int loop_decisions_append(struct xl_ctx *ctx, const char *const *entries,
			    const char *const *onces, size_t n, char **cause)
{
	char *path = path_join(ctx->root, "ops/decisions.md"), *dir;
	struct buf b = BUF_INIT;
	size_t i, added = 0;
	int err, rc = -1;

	dir = path_join(ctx->root, "ops");
	if (make_dir(dir, 0755, cause) < 0)
		goto out;
	if (read_file(path, 64 << 20, &b, &err, cause) < 0) {
		if (err != ENOENT)
			goto out;
		FREE_AND_NULL(*cause);
		buf_adds(&b, "# Decisions\n");
	}
	for (i = 0; i < n; i++) {
		if (!entries[i] || (onces && onces[i] && heading_has(b.s, onces[i])))
			continue;	/* written before a crash: committing is what is left */
		if (b.len && b.s[b.len - 1] != '\n')
			buf_addc(&b, '\n');
		buf_addf(&b, "\n%s", entries[i]);
		if (b.s[b.len - 1] != '\n')
			buf_addc(&b, '\n');
		added++;
	}
	if (added && write_file_atomic(path, b.s, b.len, 0644, cause) < 0)
		goto out;
	if (added)
		crash_point("decide-after-write");
	rc = 0;
out:
	free(dir);
	free(path);
	buf_release(&b);
	return rc;
}

/* Several entries, each unless a heading holds its once already, in one write and one commit. */
int loop_decide_entries(struct xl_ctx *ctx, const char *const *entries, const char *const *onces,
			size_t n, const char *evidence, const char *msg, char **cause)
{
	const char *rel[2] = { "ops/decisions.md", evidence };
	size_t nrel = 1;
	char oid[41], *ev;

	if (loop_decisions_append(ctx, entries, onces, n, cause) < 0)
		return -1;
	ev = evidence ? path_join(ctx->root, evidence) : NULL;
	if (ev && path_exists(ev))
		nrel = 2;	/* a missing cv.json is left alone, not deleted from git */
	free(ev);
	/* a crash in the commit leaves the entry to loop_commit_repair */
	db_kv_set(&ctx->db, "git.uncommitted", 1);
	if (loop_commit(ctx, rel, nrel, msg, oid, cause) < 0) {
		/* the DB is the truth; the entry stays in the file for the next commit */
		warning("decision recorded in ops/decisions.md but not committed: %s", *cause);
		FREE_AND_NULL(*cause);
	}
	return 0;
}

/* loop_decide, unless a heading of the file holds once already (then only the commit). */
int loop_decide_once(struct xl_ctx *ctx, const char *entry, const char *once,
		     const char *evidence, const char *msg, char **cause)
{
	return loop_decide_entries(ctx, &entry, &once, 1, evidence, msg, cause);
}

/* Change xloop.json as a decision. */
int loop_decide_config(struct xl_ctx *ctx, const char *const *path, size_t depth,
		       json_t *v, const char *what)
{
	char *cause = NULL, *entry, *msg, when[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	if (config_edit(ctx->root, path, depth, v, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	config_release(&ctx->cfg);
	if (config_load(&ctx->cfg, ctx->root, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	entry = xasprintf("## %s · %s\n- xloop.json changed: %s\n", when, what, what);
	msg = xasprintf("xloop: %s\n", what);
	rc = loop_decide(ctx, entry, CONFIG_FILE, msg, &cause) < 0 ? XL_ERR : XL_OK;
	if (rc)
		error("xloop.json changed, but ops/decisions.md was not: %s", cause);
	else
		loop_event(ctx, "decision", 0, 0, what);
	free(entry);
	free(msg);
	free(cause);
	return rc;
}
