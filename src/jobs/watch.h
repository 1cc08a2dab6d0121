/*
 * The stop watcher (issue 45): shell that every job of a run gets in its
 * batch script when stop.on (a wrapper of its own, or the segments'
 * wrapper), which reads the progress the job reports
 * ($XLOOP_RUN_DIR/progress, progress.h), applies the plainest rule (or
 * only the user's `xloop stop` when the rule is off), writes the stop
 * record ($XLOOP_RUN_DIR/stopped) before it tells the job, and ends the
 * job after stop.grace seconds. Files only: no DB, no Slurm call.
 */
#ifndef XLOOP_WATCH_H
#define XLOOP_WATCH_H

#include "config.h"
#include "ctx.h"
#include "lib/buf.h"

#define WATCH_POLL 2	/* seconds between two looks at the files */
#define WATCH_STOPPED_EXIT 86	/* a stopped job.sh of a run with later steps: none runs */

/*
 * The watcher's shell, before job.sh starts: its settings (rule on or
 * off), the stale files of an earlier attempt removed, its functions.
 * After `child=$!`, `xl_watch & xl_w=$!` starts it; after the wait,
 * `kill "$xl_w"` ends it.
 */
void watch_shell(const struct config *c, int rule_on, struct buf *b);

/*
 * After watch_shell: job.sh ($XLOOP_RUN_DIR/job.sh) as the batch shell's
 * child with USR1 and USR2 forwarded, the watcher beside it, and its exit
 * status (or the signal that killed it) passed on; with later_steps, a
 * stopped job that exited 0 exits WATCH_STOPPED_EXIT.
 */
void watch_run_child(struct buf *b, int later_steps);

/*
 * Write the batch script of a run that is not segmented: job.sh's #SBATCH
 * header, the watcher, job.sh as its child, its exit status (or its
 * signal) passed on (.xloop/watch/<token>.sh; *path malloc'd). With
 * later_steps, a stopped job that exited 0 exits WATCH_STOPPED_EXIT, so
 * no afterok step runs. 0 or -1.
 */
int watch_write_wrapper(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
			const char *jobtext, int rule_on, int later_steps, char **path,
			char **cause);

/*
 * The stop record of attempt n in run_dir, if there is one: 1 with *epoch,
 * *why (malloc'd) and *planned (the epochs the job said it planned in its
 * progress, 0: not said), 0 when none (or another attempt's).
 */
int watch_read_record(const char *run_dir, long long n, long long *epoch, long long *planned,
		      char **why);

/* Ask attempt n's watcher to stop it: run_dir/stop-request. 0 or -1. */
int watch_request(const char *run_dir, long long n, char **cause);

#endif
