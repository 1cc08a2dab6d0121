/*
 * The report's GPU timeline as data (pure): one bar per attempt that ran,
 * and a segmented attempt's bar cut into one bar per segment, so the idle
 * seconds between two segments count as idle.
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
	const char *cls;	/* "success", "failure", "live" */
	char label[24];		/* its state, or its phase ("continued": a segment that went on) */
	int lane;		/* its row */
	long long gpu;		/* the first GPU index the job saw, -1 unknown */
	long long attempt_id;
	long long seg;		/* its segment (segments.c), 0: the whole attempt */
	long long covered;	/* a whole attempt's bar: its ended segments end here */
	long long step;		/* a run with steps (steps.c): 1 the attempt's job, k a later step; 0 none */
	char step_name[33];	/* its step's name ("job" for job.sh) */
	long long restarts;	/* Slurm restarted the attempt's job this often (lost node, preemption) */
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

/* Add attempt a of run x when it ran (or runs: until now). */
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

#endif
