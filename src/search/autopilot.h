/*
 * Autopilot (help auto): when it is on and the plan is empty, feeding asks
 * here for the next run. Each proposal (propose.h chooses it) is recorded
 * in the DB as an intent before its run is created, then the run is made,
 * then its ops/decisions.md entry is written, then it is submitted; after
 * a crash at any point the proposal is finished, never made twice.
 */
#ifndef XLOOP_AUTOPILOT_H
#define XLOOP_AUTOPILOT_H

#include "ctx.h"

/* What has been spent since `auto on`, and whether it stopped. */
struct auto_status {
	int on;
	long long runs;		/* runs autopilot created (proposals) */
	double hours;		/* their GPU-hours (elapsed x GPUs; CPU jobs count 1) */
	long long live;		/* of those runs, attempts not known to have ended */
	double live_hours;	/* their share of hours: counted up to now (a job that
				 * ended since the last reconcile counts until it runs) */
	char *stopped;		/* why it stops (budget, until, converged), or NULL */
};

/* The budget and what is spent; 0 or -1. */
int autopilot_status(struct xl_ctx *ctx, struct auto_status *st);
void auto_status_release(struct auto_status *st);

/* One run to feed. */
struct auto_pick {
	long long id;		/* the proposal */
	char *tag, *parent, *var, *value, *reason;
	int created;		/* its run is linked (a crash came after that) */
	int decided;		/* its decision entry is written too */
};
void auto_pick_release(struct auto_pick *p);

/*
 * The next run autopilot feeds: 1 with *pick, 0 when there is none now (off,
 * budget spent, converged: said once as an event and a notification; or
 * waiting for verdicts or for a person), -1 on error with *cause. With 0,
 * *idle says why for people (malloc'd; NULL when autopilot is off). While
 * no configuration is proven, the first proposal is the baseline itself
 * when it never ran (var ""; it counts in the budget).
 */
int autopilot_next(struct xl_ctx *ctx, struct auto_pick *pick, char **idle, char **cause);

/*
 * What feeding will submit first now, in words (malloc'd), without a
 * change: a proposal made already, else the plan's first entry, else
 * nothing when autopilot stops, else the baseline when nothing is proven
 * and it never ran, else autopilot's first proposal (chosen when fed).
 */
char *autopilot_first(struct xl_ctx *ctx);

/*
 * The decision entry of a proposal of a change (markdown), the mark that
 * finds it written (loop.h's once) and its commit message; malloc'd.
 */
void autopilot_entry(struct xl_ctx *ctx, const struct auto_pick *pick, char **entry,
		     char **once, char **msg);

/* The proposal's run was created: link it and write its decision entry. */
int autopilot_created(struct xl_ctx *ctx, const struct auto_pick *pick, long long run_id);

/* The proposal could not become a run (why): it is marked failed, not retried. */
int autopilot_failed(struct xl_ctx *ctx, const struct auto_pick *pick, const char *why);

/*
 * GPU-hours of secs on the nodes of NodeList nodes: gres is per node and
 * counts slurm_gres_charged_gpus (a job that asks no GPU 1); nodes ""
 * counts one node.
 */
double autopilot_gpu_hours(long long secs, const char *gres, const char *nodes);

#endif
