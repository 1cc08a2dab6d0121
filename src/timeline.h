/*
 * The report's GPU timeline as data (pure): one bar per attempt that ran
 * on each GPU it was given (a job of 2 GPUs is a bar on each; a job across
 * nodes is bars on each node's), a segmented attempt's bar cut into
 * one bar per segment, so the idle seconds between two segments count as
 * idle, and the rows they are drawn on: one per GPU of a node.
 */
#ifndef XLOOP_TIMELINE_H
#define XLOOP_TIMELINE_H

#include <stddef.h>

struct attempt;
struct rrun;			/* the report's run; only pointed at here */

/* One attempt (or one of its segments) on the timeline, or a point of the score chart. */
struct bar {
	long long start, end;
	const struct rrun *run;
	long long n;
	const char *cls;	/* "success", "failure", "stopped", "live" */
	char label[24];		/* its state, or its phase ("continued": a segment that went on) */
	int lane;		/* its row */
	long long gpu;		/* the GPU index it is drawn for on its node, -1 unknown */
	int gpus;		/* the GPUs the job had on that node (a bar each), 0 unknown */
	long long attempt_id;
	long long seg;		/* its segment (segments.c), 0: the whole attempt */
	long long covered;	/* a whole attempt's bar: its ended segments end here */
	long long step;		/* a run with steps (steps.c): 1 the attempt's job, k a later step; 0 none */
	char step_name[33];	/* its step's name ("job" for job.sh) */
	long long restarts;	/* Slurm restarted the attempt's job this often (lost node, preemption) */
	char node[64];		/* the node it ran on, "" unknown */
	int nodes;		/* the nodes its job ran on (a bar on each), 0 unknown */
	int copy;		/* 0, or k: the same job's bar k + 1 (another GPU or node) */
};

/* A job across more nodes than this is drawn once, on a row named by its whole NodeList. */
#define TIMELINE_NODES 64
/* A node's GPUs past this many of one job get no bar of their own. */
#define TIMELINE_GPUS 16

/* One GPU row of the timeline: a node's GPU, and its seconds in the span. */
struct gpu_row {
	char node[64];		/* "" unknown */
	long long gpu;
	long long busy, idle;
};

/* One segment that ran and ended (segments_spans reads them). */
struct segment_span {
	long long attempt_id, k;
	long long start, end;
};

/* One later step of an attempt that ran (steps_spans reads them). */
struct step_span {
	long long attempt_id, k;
	long long start, end;	/* end: now while it runs */
	char name[33];
	char state[24];
};

/*
 * The bars (*bars, *nb) are an array that grows from NULL by these
 * functions, doubled at each power of two: one of any other capacity
 * must have room for the next power of two of its length.
 */

/*
 * Add attempt a of run x when it ran (or runs: until now): one bar on
 * each GPU it had on each node of its NodeList (a->gpus: one IDX list
 * for every node, or each node's: slurm_job_gpu_map), one bar on a node
 * whose GPUs are not known.
 */
void timeline_add(struct bar **bars, size_t *nb, const struct rrun *x, const struct attempt *a,
		  long long now);

/*
 * Cut the bars of the attempts in sp (sorted by attempt, then segment) into
 * one bar per segment, in their attempt's colour; a live attempt keeps the
 * part after its last ended segment (the one that runs now). Reorders bars.
 */
void timeline_split(struct bar **bars, size_t *nb, const struct segment_span *sp, size_t ns);

/*
 * Add a bar per later step in sp (each drawn beside its attempt's, in its
 * attempt's colour, named), and name the bars of their attempts' own jobs
 * step 1 "job". A step of an attempt with no bar is left out.
 */
void timeline_add_steps(struct bar **bars, size_t *nb, const struct step_span *sp, size_t ns);

/*
 * Put each bar (sorted by start) on its row, bar.lane: first one row per
 * GPU the jobs saw, a (node, index) pair, sorted by node (node2 before
 * node10) then index, at most max_rows of them, into rows and *nrows;
 * then rows packed for the other bars (no GPU known, a later step, past
 * max_rows), at most max_lanes in all. When the bars name one node at
 * most, every row is that node's (or an unknown one's) and *named is 0:
 * the rows need no node in their names. A row's busy seconds sum its
 * bars', its idle seconds are the rest of the span. Returns the lanes.
 */
int timeline_lanes(struct bar *bars, size_t nb, struct gpu_row *rows, size_t *nrows,
		   size_t max_rows, int max_lanes, int *named);

#endif
