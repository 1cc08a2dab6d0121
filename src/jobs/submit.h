/*
 * Submitting an attempt of a run (SPEC rules 2, 3 and 6): the preflight
 * against the partition, the job it chains onto (the end of the line), the
 * intent recorded before sbatch and the result after. Creating runs and
 * recording decisions are loop.h's.
 */
#ifndef XLOOP_SUBMIT_H
#define XLOOP_SUBMIT_H

#include "ctx.h"
#include "runs.h"
#include "slurm/slurm.h"

/* How to submit an attempt. NULL fields: from xloop.json / automatic. */
struct submit_opts {
	const char *after;	/* --after JOBID */
	int no_chain;		/* --no-chain */
	const char *mem;	/* --mem override */
	const char *time;	/* --time override */
	const char *auto_retry;	/* "infra", "resources": xloop retries on its own */
	const char *segments;	/* --segments N override (NULL: segments.max) */
	long long lane;		/* the chain it goes into (queue.lanes), from 0 */
	const char *exclude;	/* nodes it must not run on (a retry after NODE_FAIL) */
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
int submit_attempt(struct xl_ctx *ctx, struct slurm *s, const struct run *r,
		   const struct submit_opts *o, struct submit_result *res, char **cause);

/*
 * Whether the stop rule applies to r's next attempt (issue 45): 0 for a
 * root run, a run whose one change is the seed, a retry of a stopped run.
 */
int submit_stop_rule_on(struct xl_ctx *ctx, const struct run *r);

/* The partition's limits; -1 when unknown. */
struct part_limits {
	long long max_secs;	/* MaxTime */
	long long real_mb;	/* the largest RealMemory of its nodes */
	long long nodes;	/* its TotalNodes (a retry excludes a node only when > 1) */
};

/*
 * Check the request (xloop.json with o's overrides) against the partition's
 * MaxTime and its nodes' CPUs and RealMemory, and remember the limits for
 * submit_known_limits(). 0 or an exit code.
 */
int submit_preflight(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
		     char **cause);
/* The partition's TotalNodes the last preflight saw (-1: unknown). */
long long submit_partition_nodes(struct xl_ctx *ctx);
/* The limits the last preflight saw, without asking Slurm. */
void submit_known_limits(struct xl_ctx *ctx, struct part_limits *lim);
/* Refuse malformed --mem, --time, --after: 0 or XL_USAGE. */
int submit_check_overrides(const struct submit_opts *o, char **cause);
/* Read run tag's job.sh into text, check it (executable, bash -n), hash it. */
int submit_check_script(struct xl_ctx *ctx, const char *tag, struct buf *text,
			char sha[65], char **cause);
/* The job to chain onto (*after malloc'd, "" for none; "12_3" becomes "12"). */
int submit_resolve_after(struct xl_ctx *ctx, struct slurm *s, const struct submit_opts *o,
			 char **after, char **cause);
/*
 * The value of "--NAME=V" in overrides as submit_overrides_text wrote them
 * ("--mem=2G --segments=4"), malloc'd, or NULL: how automatic retries
 * carry an attempt's --segments.
 */
char *submit_override_value(const char *overrides, const char *name);
/* The resource overrides as recorded on an attempt (malloc'd, maybe ""). */
char *submit_overrides_text(const struct submit_opts *o);
/* The next free attempt number of r (no DB row, no log file). 0 or -1. */
int submit_next_attempt(struct xl_ctx *ctx, const struct run *r, long long *n);

/*
 * The end of the chain among the study's unfinished attempts v: the live
 * job (as squeue q shows) of the newest attempt that no other live attempt
 * waits for (after_job), so that after `prioritize` a new job goes behind
 * the last of the line, not the newest; the newest live one when each is
 * waited for. An array task gives its array ("12"). Malloc'd, "" for none.
 */
char *submit_line_tail(const struct slurm_jobs *q, const struct attempt *v, size_t n);

/* The live job of q in partition with the highest id (malloc'd, "" when none). */
char *submit_newest_in_partition(const struct slurm_jobs *q, const char *partition);

/*
 * The end of the line of the study's live jobs (submit_line_tail, from one
 * squeue call), into *job_id ("" when none); with slurm.chain "any-user", the newest live job
 * of the user in the partition, from any project. 0 or an exit code.
 */
int submit_last_live_job(struct xl_ctx *ctx, struct slurm *s, char **job_id,
			 char **cause);

#endif
