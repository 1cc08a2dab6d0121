/*
 * The loop's operations that touch files, the DB and git together, in the
 * order that keeps them consistent after a crash at any point: files are
 * written first (atomically), then the DB (the source of truth), then git.
 */
#ifndef XLOOP_LOOP_H
#define XLOOP_LOOP_H

#include "cmd.h"
#include "runs.h"
#include "slurm.h"

/*
 * Commit paths (relative to the study root) with libgit2, touching nothing
 * else the user staged. Without a repository: 0 and *oid = "" (a warning is
 * printed once). -1 with *cause on failure.
 */
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
 * Find the run called tag, or the best proven run for "best". Returns 0,
 * XL_NOINPUT (unknown tag, no proven run) or XL_ERR.
 */
int loop_find_run(struct xl_ctx *ctx, const char *tag, struct run *r, char **cause);

/* The parent of new runs (tag or "best"), proven unless force: 0 or an exit code. */
int loop_find_parent(struct xl_ctx *ctx, const char *from, int force, struct run *r,
		     char **cause);

/* 1 when the run's latest attempt is a success. */
int loop_run_proven(struct xl_ctx *ctx, const struct run *r);


/* How to submit an attempt. NULL fields: from xloop.json / automatic. */
struct submit_opts {
	const char *after;	/* --after JOBID */
	int no_chain;		/* --no-chain */
	const char *mem;	/* --mem override */
	const char *time;	/* --time override */
	const char *auto_retry;	/* "infra", "resources": xloop retries on its own */
	const char *segments;	/* --segments N override (NULL: segments.max) */
	long long lane;		/* the chain it goes into (queue.lanes), from 0 */
};

struct submit_result {
	long long n;		/* the attempt number */
	char *job_id;		/* "" when sbatch gave none */
	char *log_path;
	char *after;		/* the job it waits for, "" if none */
	char *tail;		/* the job a next run chains onto (segment 2, or job_id) */
	int ambiguous;		/* sbatch may have submitted without saying so */
	const char *limit;	/* the Slurm limit that held it back (static), or NULL */
};

void submit_result_release(struct submit_result *res);

/*
 * Preflight and submit a new attempt of run r (SPEC rule 2): the attempt
 * is recorded as an intent before sbatch runs and completed after. Returns
 * an exit code; *cause says why on failure.
 */
int loop_submit(struct xl_ctx *ctx, struct slurm *s, const struct run *r,
		const struct submit_opts *o, struct submit_result *res, char **cause);

/* The partition's limits; -1 when unknown. */
struct part_limits {
	long long max_secs;	/* MaxTime */
	long long real_mb;	/* the largest RealMemory of its nodes */
};

/*
 * Check the request (xloop.json with o's overrides) against the partition's
 * MaxTime and its nodes' CPUs and RealMemory, and remember the limits for
 * loop_known_limits(). 0 or an exit code.
 */
int loop_preflight(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		   char **cause);
/* The limits the last preflight saw, without asking Slurm. */
void loop_known_limits(struct xl_ctx *ctx, struct part_limits *lim);
/* Refuse malformed --mem, --time, --after: 0 or XL_USAGE. */
int loop_check_overrides(const struct submit_opts *o, char **cause);
/* Read run tag's job.sh into text, check it (executable, bash -n), hash it. */
int loop_check_script(struct xl_ctx *ctx, const char *tag, struct buf *text,
		      char sha[65], char **cause);
/* The job to chain onto (*after malloc'd, "" for none; "12_3" becomes "12"). */
int loop_resolve_after(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		       char **after, char **cause);
/* The resource overrides as recorded on an attempt (malloc'd, maybe ""). */
char *loop_overrides_text(const struct submit_opts *o);
/* The next free attempt number of r (no DB row, no log file). 0 or -1. */
int loop_next_attempt(struct xl_ctx *ctx, const struct run *r, long long *n);
/* Fill req (zeroed first) with xloop.json's partition, account, resources. */
void loop_fill_request(struct xl_ctx *ctx, struct slurm_submit *req, const char *mem,
		       const char *time_, const char *dependency);

/*
 * The end of the chain among the study's unfinished attempts v: the live
 * job (as squeue q shows) of the newest attempt that no other live attempt
 * waits for (after_job), so that after `prioritize` a new job goes behind
 * the last of the line, not the newest; the newest live one when each is
 * waited for. An array task gives its array ("12"). Malloc'd, "" for none.
 */
char *loop_line_tail(const struct slurm_jobs *q, const struct attempt *v, size_t n);

/* The live job of q in partition with the highest id (malloc'd, "" when none). */
char *loop_newest_in_partition(const struct slurm_jobs *q, const char *partition);

/*
 * The end of the line of the study's live jobs (loop_line_tail, from one
 * squeue call), into *job_id ("" when none); with slurm.chain "any-user", the newest live job
 * of the user in the partition, from any project. 0 or an exit code.
 */
int loop_last_live_job(struct xl_ctx *ctx, struct slurm *s, char **job_id,
		       char **cause);


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
 * loop_decide for an entry that must be written once: when a heading line
 * of the file ("## ...") already contains mark (a crash came between
 * writing the entry and recording that it was written), nothing is
 * appended; the file is only committed if it differs from HEAD.
 */
int loop_decide_once(struct xl_ctx *ctx, const char *mark, const char *entry,
		     const char *evidence, const char *msg, char **cause);

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
 * Refuse a change of parent that `new` would refuse, compared canonically
 * (value_canon): var not assigned exactly once at top level of the parent's
 * job.sh, or already value there; or made from parent already (a run of
 * parent changing var to value exists). 0, or an exit code with *cause.
 */
int loop_check_change(struct xl_ctx *ctx, const struct run *parent, const char *var,
		      const char *value, char **cause);

#endif
