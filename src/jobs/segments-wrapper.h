/*
 * The batch script of a segmented attempt (segments.h): a wrapper
 * (.xloop/segments/<token>.sh) that keeps job.sh's #SBATCH header, writes
 * a header line per segment into the attempt's log, guards the checkpoint
 * (no progress, no next segment), forwards segments.signal to job.sh and
 * records each event in slurm/attemptN.seg; and what sbatch is given for
 * it (--signal, append mode). Files only: no DB, no Slurm call.
 */
#ifndef XLOOP_SEGMENTS_WRAPPER_H
#define XLOOP_SEGMENTS_WRAPPER_H

#include "config.h"
#include "ctx.h"
#include "slurm/slurm.h"

#define XLOOP_CONTINUE 85	/* a segment's exit code: "continue me" */

/*
 * The segments an attempt gets: flag (--segments N, NULL when not given)
 * or segments.max. Refuses a lead not shorter than time_ (XL_DATAERR for
 * --time/--segments given here, XL_CONFIG for xloop.json). 0 or an exit code.
 */
int segments_wanted(const struct config *c, const char *flag, const char *time_,
		    int time_from_flag, long long *max, char **cause);

/* What segments_prepare made for sbatch (free with segments_req_release). */
struct segments_req {
	char *script;		/* the wrapper */
	char *signal;		/* "B:USR2@300" */
};
void segments_req_release(struct segments_req *sr);

/*
 * Write the wrapper of attempt n of run tag (job.sh's #SBATCH header kept)
 * and point req at it, in append mode with the signal. 0 or -1 with *cause.
 */
int segments_prepare(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
		     const char *sha, const char *jobtext, long long max, int rule_on,
		     int later_steps, struct slurm_submit *req, struct segments_req *sr,
		     char **cause);

/*
 * Write the wrapper of attempt n of run tag (.xloop/segments/<token>.sh,
 * job.sh's #SBATCH header kept); *path malloc'd. 0 or -1 with *cause.
 * With stop.on it carries the stop watcher (watch.h), its rule on when
 * rule_on is 1, off when 0; -1: no watcher. With later_steps, a stopped
 * segment that exited 0 exits WATCH_STOPPED_EXIT, so no afterok step runs.
 * A sweep writes one per task: segment 1 is the array task exec'ing it,
 * each continuation a plain job running it.
 */
int segments_write_wrapper(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
			   const char *sha, const char *jobtext, long long max, int rule_on,
			   int later_steps, char **path, char **cause);

/* The wrapper's path for the attempt with token (.xloop/segments/<token>.sh, malloc'd). */
char *segments_wrapper_path(struct xl_ctx *ctx, const char *token);

/* sbatch --signal for segments: "B:<segments.signal>@<segments.lead>" (malloc'd). */
char *segments_signal(const struct config *c);

#endif
