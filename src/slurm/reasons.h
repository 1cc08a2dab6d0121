/*
 * Slurm's pending Reason in plain words: what the code means for the job
 * and the one thing to do about it, for a person or an agent reading the
 * briefing. A pure table: nothing here does I/O or allocates.
 *
 * The codes are Slurm's (src/common/job_state_reason.c), plus the few
 * free-text reasons slurmctld shows instead of a code ("launch failed
 * requeued held", "Nodes required for job are DOWN, ...").
 */
#ifndef XLOOP_REASONS_H
#define XLOOP_REASONS_H

#include <stddef.h>

enum reason_kind {
	REASON_WAIT,	/* normal: it will start by itself */
	REASON_BLOCKED,	/* will never start without action */
	REASON_HELD,	/* held: someone has to release it */
	REASON_LIMIT,	/* a QOS/association limit: starts when other jobs finish
			   (a spent CPU/GPU-minute budget needs usage to decay) */
	REASON_NODE,	/* node down/drained/unavailable */
	REASON_UNKNOWN,	/* a reason xloop does not know */
};

struct reason_info {
	const char *code;	/* Slurm's code; "" for the generic entry */
	enum reason_kind kind;
	const char *meaning;	/* one sentence, never empty */
	/*
	 * One thing to do, or "" when nothing is needed. TAG, JOBID, TIME
	 * and MEM stand for the run's tag, its Slurm job id, a duration and
	 * a memory size.
	 */
	const char *action;
};

/*
 * Explain squeue's %r / scontrol's Reason= text. Never NULL. Surrounding
 * whitespace and parentheses and anything after the first comma are
 * dropped ("(ReqNodeNotAvail, UnavailableNodes:vm)" is ReqNodeNotAvail),
 * scontrol's '_' for a space is undone, and the rest must equal a code
 * exactly (case matters). NULL or empty is "None". Anything else gets the
 * generic REASON_UNKNOWN entry: the caller should print the raw text too.
 */
const struct reason_info *reason_explain(const char *reason);

/* The whole table (without the generic entry), *nr set to its length. */
const struct reason_info *reason_table(size_t *nr);

/*
 * True for the hold Slurm puts on a job itself when it could not launch
 * it ("launch failed requeued held": a node or the controller failed at
 * the start), which nobody asked for; false for a person's hold.
 */
int reason_slurm_held(const char *reason);

/* "wait", "blocked", "held", "limit", "node" or "unknown". */
const char *reason_kind_name(enum reason_kind kind);

#endif
