/*
 * The loop's operations that touch files, the DB and git together, in the
 * order that keeps them consistent after a crash at any point: files are
 * written first (atomically), then the DB (the source of truth), then git.
 */
#ifndef XLOOP_LOOP_H
#define XLOOP_LOOP_H

#include "ctx.h"
#include "runs.h"
#include "slurm/slurm.h"
#include "tags.h"

/*
 * Commit paths (relative to the study root) with libgit2, touching nothing
 * else the user staged. Without a repository: 0 and *oid = "" (a warning is
 * printed once). -1 with *cause on failure.
 */
/* The path of root inside its git work tree ("" at the top, malloc'd), NULL: none. */
char *loop_worktree_prefix(const char *root);
int loop_commit(struct xl_ctx *ctx, const char *const *paths, size_t n,
		const char *msg, char oid[41], char **cause);

/*
 * 1 when committing a new version of rel (relative to the study root) takes
 * no edit of the user's along: HEAD holds it with exactly text, or there is
 * no repository (gitops_file_at_head answered 1). 0 when it does not (it
 * differs, is untracked, or the branch is unborn); -1 with *cause.
 */
int loop_matches_head(struct xl_ctx *ctx, const char *rel, const char *text,
		      size_t len, char **cause);

/*
 * Create run r (study, tag, parent and change filled in) with job script
 * text: runs/<study>/<tag>/job.sh (mode 0755) and its slurm/ directory,
 * the DB row, then a commit of job.sh. With cv_src, the run is proven by a
 * hand-run result: cv_src is copied to the run's cv.json and an attempt 0
 * records its score. Returns an exit code; *cause says why on failure.
 * Nothing is left behind when it fails before the DB commit.
 */
int loop_create_run(struct xl_ctx *ctx, struct run *r, const char *text,
		    size_t len, const char *cv_src, double cv_score, char **cause);

/* Refuse a tag that is invalid or taken: XL_USAGE, XL_DATAERR or 0. */
int loop_check_new_tag(struct xl_ctx *ctx, const char *tag, char **cause);

/*
 * Every tag xloop makes: the first candidate of tag_compose (tags.h) that
 * is free in the study (loop_check_new_tag), malloc'd. var is written as
 * the study writes it: whole, or its abbreviation when the study's tags
 * abbreviate (decided once per study: tag_study_abbreviates).
 */
char *loop_make_tag(struct xl_ctx *ctx, enum tag_kind kind, const char *base_or_prefix,
		    const char *var, const char *value);
/*
 * When the code attempt_id runs differs from its parent's (both pinned at
 * submission: commit and uncommitted changes, xloop's own files aside),
 * "the comparison is not one change: code changed since the parent (...)"
 * (malloc'd); NULL when it is the same or either is not pinned.
 */
char *loop_code_note(struct xl_ctx *ctx, long long attempt_id);
/* The same for a configuration's tag (tag_config_as, the study's names): NULL when it has none. */
char *loop_make_config_tag(struct xl_ctx *ctx, const struct tag_part *v, size_t n);

/*
 * Find the run called tag, or the best proven run for "best". Returns 0,
 * XL_NOINPUT (unknown tag, no proven run) or XL_ERR.
 */
int loop_find_run(struct xl_ctx *ctx, const char *tag, struct run *r, char **cause);

/* The parent of new runs (tag or "best"), proven unless force: 0 or an exit code. */
int loop_find_parent(struct xl_ctx *ctx, const char *from, int force, struct run *r,
		     char **cause);

/* 1 when the run's latest attempt is a success. */
int loop_run_proven(struct xl_ctx *ctx, const struct run *r);


/*
 * Append an entry (markdown, starting with "## ") to ops/decisions.md and
 * commit that file with msg, together with evidence (a path relative to
 * the study root, e.g. the run's cv.json; NULL: none) when it exists. The
 * file is created when missing. Returns 0, or -1 with *cause (the entry is
 * then not written).
 */
int loop_decide(struct xl_ctx *ctx, const char *entry, const char *evidence,
		const char *msg, char **cause);
/*
 * Append entries[i] to ops/decisions.md, each unless a heading holds
 * onces[i] already (onces or onces[i] NULL: always), in one atomic write,
 * without a commit (the caller commits the file). 0 or -1 with *cause.
 */
int loop_decisions_append(struct xl_ctx *ctx, const char *const *entries,
			  const char *const *onces, size_t n, char **cause);

/*
 * Entries appended in one write (each unless a heading holds its once;
 * onces may be NULL) and committed once with msg and evidence: a verdict
 * and the promotion it made are one commit.
 */
int loop_decide_entries(struct xl_ctx *ctx, const char *const *entries, const char *const *onces,
			size_t n, const char *evidence, const char *msg, char **cause);

/*
 * The same for an entry that a crash may have written already (after the
 * file, before the DB knew): when a heading line of the file contains once
 * (" · autopilot proposes T"), the entry is not appended again, only
 * committed.
 */
int loop_decide_once(struct xl_ctx *ctx, const char *entry, const char *once,
		     const char *evidence, const char *msg, char **cause);

/*
 * Commit the job.sh of every run that has no commit (its commit failed:
 * a locked git index, or a crash before it), with ops/decisions.md, in one
 * commit. Cheap when there is none (a kv flag). Reconcile calls it.
 */
void loop_commit_repair(struct xl_ctx *ctx);

/*
 * Remove the files a creation of tag left when a crash cut it off before
 * the DB knew the run (job.sh, its temporary, an empty slurm/ and the
 * directory, nothing else): for a tag recorded as an intent before.
 */
void loop_clear_leftover(struct xl_ctx *ctx, const char *tag);

/*
 * A decision that changes xloop.json: config_edit(path, v), reload ctx->cfg,
 * then an ops/decisions.md entry "what" committed with xloop.json. Returns
 * an exit code (the error is printed).
 */
struct json_t;
int loop_decide_config(struct xl_ctx *ctx, const char *const *path, size_t depth,
		       struct json_t *v, const char *what);

/* Record an event for the briefing ("verdict", "submitted", "repaired", ...). */
int loop_event(struct xl_ctx *ctx, const char *kind, long long run_id,
	       long long attempt_id, const char *detail);


/* What loop_new_run made. */
struct new_run {
	struct run run;		/* the new run (owned) */
	int line;		/* the line of job.sh that changed */
	char *new_text;		/* the value as written in job.sh */
	char *old_raw;		/* the old value as written */
};
void new_run_release(struct new_run *nr);

/*
 * Create run tag from parent from ("best" allowed) with var set to value
 * (SPEC rule 1). A parent that is not proven is refused unless force.
 * Returns an exit code; *cause says why on failure.
 */
int loop_new_run(struct xl_ctx *ctx, const char *tag, const char *from,
		 const char *var, const char *value, const char *note, int force,
		 struct new_run *out, char **cause);

/*
 * A decision a run's creation writes to ops/decisions.md and commits with
 * its job.sh, one commit (autopilot's proposal): entry (not appended when
 * a heading holds once already, after a crash), msg heads the commit's.
 */
struct loop_decision {
	const char *entry, *once, *msg;
};

/* loop_new_run (never forced) whose decision entry goes into the run's commit. */
int loop_new_run_decided(struct xl_ctx *ctx, const char *tag, const char *from,
			 const char *var, const char *value, const char *note,
			 const struct loop_decision *dec, struct new_run *out, char **cause);

/*
 * loop_new_run, the run recording its own segment count (`new --segments
 * N`, checked by the caller; NULL: segments.max), used by every
 * submission of it that gives no --segments.
 */
int loop_new_run_with(struct xl_ctx *ctx, const char *tag, const char *from,
		      const char *var, const char *value, const char *note, int force,
		      const char *segments, struct new_run *out, char **cause);

/*
 * Refuse a change of parent that `new` would refuse, compared canonically
 * (value_canon): var not assigned exactly once at top level of the parent's
 * job.sh, or already value there; or a configuration taken already (a run
 * or an unmade proposal has it; with TAKEN_PLAN a queued plan entry but
 * skip_plan too: taken.h). 0, or an exit code with *cause.
 */
int loop_check_change(struct xl_ctx *ctx, const struct run *parent, const char *var,
		      const char *value, int flags, long long skip_plan, char **cause);
/* The same from the parent from names ("best" allowed), which must be proven. */
int loop_check_from(struct xl_ctx *ctx, const char *from, const char *var,
		    const char *value, int flags, char **cause);

#endif
