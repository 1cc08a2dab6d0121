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
};

/* One segment that ran and ended (segments_spans reads them). */
struct segment_span {
	long long attempt_id, k;
	long long start, end;
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

#endif
