/*
 * Who drives the loop when no agent does (xloop.json driver.mode). With
 * "slurm", whoever holds the study's lock (next, tick, a feeder) leaves
 * exactly one small CPU-only feeder job pending behind the running work
 * before it unlocks, while there is work: Slurm starts it when a run
 * ends, and it runs `xloop -C ROOT tick --feeder` (judge, feed, notify,
 * and the next feeder). A feeder is never a run: it has its own job name
 * and comment, its own table, and no chain, lane or timeline counts it.
 * On a network filesystem the feeder forwards its tick over ssh to
 * driver.host, so that only one host opens the state DB.
 */
#ifndef XLOOP_DRIVER_H
#define XLOOP_DRIVER_H

#include <stddef.h>

#include "ctx.h"
#include "driver/driver-host.h"	/* where a feeder runs; the feeder job's shape */
#include "stages/fed.h"
#include "slurm/slurm.h"

#define DRIVER_RETRY_SECS 60	/* --begin=now+N when work waits but nothing runs */
#define DRIVER_JUDGE_SECS 10	/* --begin=now+N when a run ended unjudged */
#define DRIVER_SAVED_SECS 2	/* slurmctld has saved a job this long after sbatch */
#define DRIVER_LOG_MAX (1L << 20)	/* feeder.log past 1 MiB becomes feeder.log.1 */
#define DRIVER_LOCK_WAIT_SECS 180	/* a feeder waits so long for the lock (--time 5 min) */
#define DRIVER_WATCH_SECS 600	/* a watchdog starts so long after its sbatch */

/* Seconds until slurmctld has saved a new job (XLOOP_DRIVER_SAVED_SECS). */
unsigned driver_saved_secs(void);

/* Seconds a feeder waits for the study's lock (XLOOP_DRIVER_LOCK_SECS). */
int driver_lock_wait_secs(void);

/*
 * With driver.mode slurm: make sure, under the lock, that exactly one
 * feeder of the study is pending when there is work (live runs, or plan
 * entries the breaker lets through), and none when there is not. One
 * squeue call, plus sbatch or scancel when something changes. self_job
 * is the feeder job this process runs in (NULL: none); *submitted (when
 * not NULL) is set to 1 when a feeder was submitted. 0 or an exit code.
 */
int driver_ensure(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
		  const char *self_job, int *submitted, char **cause);

/*
 * A feeder's survival check, run at the very end of its tick with the
 * study's lock released (another xloop need not wait for it): a slurmctld
 * that dies without saving its state forgets the jobs of its last second,
 * so after driver_saved_secs() squeue must still list a feeder of the
 * study waiting; when none is, the lock is taken again (waiting as a
 * feeder does) and driver_ensure queues another. At most
 * DRIVER_SURVIVAL_CHECKS rounds; failures are warnings.
 */
#define DRIVER_SURVIVAL_CHECKS 3
void driver_check_successor(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
			    const char *self_job);

/*
 * The watchdog (issue 27): while there is work, driver_ensure also keeps
 * one job named xloop-watch pending with --begin=now+DRIVER_WATCH_SECS
 * (XLOOP_DRIVER_WATCH_SECS), never two. It runs the feeder's script with
 * a token "watch-..."; its tick (driver_is_watch_token) asks
 * driver_watch_check first: a feeder alive (pending and not held, or
 * running) means it only queues the next watchdog; none, or one held,
 * and it ticks as the feeder would, which replaces the held one. So a
 * feeder cancelled, held, or failed at launch stops the loop for at most
 * that long. Start-up of a watchdog costs one squeue and one sbatch.
 */
int driver_is_watch_token(const char *token);
/* 1 when a feeder of the study other than self_job is alive; 0 with *why; or an exit code. */
int driver_watch_check(struct xl_ctx *ctx, struct slurm *s, const char *self_job, char **why,
		       char **cause);

/* driver_ensure that only warns on failure. */
void driver_keep_feeder(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
			const char *self_job);
/*
 * After a command's local edit that adds work (plan add, auto on), the
 * edit stored: with driver.mode slurm, driver_keep_feeder under the lock
 * (nothing to feed while the breaker is open); Slurm unreachable is a
 * warning. No Slurm call in the other modes.
 */
void driver_after_edit(struct xl_ctx *ctx);
/* The study's watchdog listed in q (a pending one first), or NULL. */
const struct slurm_job *driver_find_watch(struct xl_ctx *ctx, const struct slurm_jobs *q);

/* A feeder job started its tick: its row becomes running (job_id, token may be NULL). */
void driver_feeder_started(struct xl_ctx *ctx, const char *job_id, const char *token);
/* ... and ended with result ("3 changes (1 judged, 1 submitted)", or why it failed). */
void driver_feeder_ended(struct xl_ctx *ctx, const char *job_id, const char *token,
			 int ok, const char *result);

/* What `xloop driver status` (and status, doctor, feed_who) show. */
struct driver_status {
	const char *mode;	/* the config's */
	char *job_id;		/* the feeder waiting now, "" when none */
	char *waits;		/* what it waits for ("afterany:12?afterany:13") */
	char *last_job;		/* the last feeder that ran, "" when none */
	char *last_phase;	/* done, failed, running */
	char *last_result;
	long long last_at;	/* when it started (0: never) */
};
/* From the DB only (no Slurm call). 0 or -1. */
int driver_status_read(struct xl_ctx *ctx, struct driver_status *st);
void driver_status_release(struct driver_status *st);
/*
 * Who feeds next (feed_who) with driver.mode slurm: 1 with *text
 * ("a Slurm feeder job (id N) ...", malloc'd) and *last_at (the last
 * feeder's start, when one ran); 0 in the other modes.
 */
int driver_who(struct xl_ctx *ctx, char **text, long long *last_at);

#endif
