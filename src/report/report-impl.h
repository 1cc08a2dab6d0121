/*
 * Inside the report (the report*.c files only): the runs as the page
 * shows them, which report-data.c reads from the DB, and the page that
 * report-html.c (tables, details, the head), report-svg.c (lineage,
 * GPU timeline, score chart) and report-curves.c (runs stopped early)
 * write to; report.c puts it together.
 */
#ifndef XLOOP_REPORT_IMPL_H
#define XLOOP_REPORT_IMPL_H

#include <stddef.h>

#include "lib/buf.h"
#include "ctx.h"
#include "lib/fsutil.h"
#include "report/report.h"
#include "runs.h"
#include "timeline.h"

/*
 * One run with what the page shows of it. Only the latest attempt is kept:
 * the timeline keeps a small bar per attempt, and the details section reads
 * the attempts again, run by run, so that a study of 10,000 runs and 50,000
 * attempts is never all in memory.
 */
struct rrun {
	struct run r;
	size_t na;		/* attempts */
	struct attempt last_a;
	const struct attempt *last;	/* &last_a, or NULL: never submitted */
	int has_score;		/* the latest attempt succeeded with a score */
	double score;
	int depth, row;		/* lineage layout */
	int on_best;		/* on the path from a root to the best run */
	size_t size;		/* runs in its subtree, itself included */
	size_t child, sibling;	/* first child, next sibling: index + 1, 0 none */
	int shown;		/* on the leaderboard (a long study's shows its best only) */
};

/*
 * A study of more runs than this is too long to show whole: the
 * leaderboard and the run details show the best REPORT_TOP runs (and the
 * path to the best), the lineage only that path; the GPU timeline draws
 * them all, in as many rects as its pixels need (issue 47: a page of
 * 10,000 runs and 50,000 attempts was 35 MB, of 8 GPUs each 88 MB).
 */
#define REPORT_FULL_RUNS 1000
#define REPORT_TOP 200

/* The page, written out to a temporary file each time a megabyte is ready. */
struct page {
	struct buf b;
	struct atomic_file f;
	char *cause;		/* set once a write failed (the file is dropped) */
};

/* Runs sorted by id: the one with this id, or NULL. */
struct rrun *report_find_run(struct rrun *v, size_t n, long long id);
/* The runs (sorted by id) with their latest attempt, and the timeline's bars. */
int report_load(struct xl_ctx *ctx, struct rrun **out, size_t *n, struct bar **bars,
		size_t *nb);
/* Lay out the lineage (each run's depth and row); returns the rows. */
int report_lay_out(struct rrun *v, size_t n);
/* Free the runs of report_load. */
void report_runs_release(struct rrun *v, size_t n);

/* Write out what the page holds once it is at least at_least bytes. */
void report_flush(struct page *pg, size_t at_least);
/* Append text with HTML's special characters escaped. */
void report_esc(struct buf *b, const char *s);
/* "success", "failure", "live" or "new": the CSS class of a run. */
const char *report_run_class(const struct rrun *x);
/* "12 s", "3 min 20 s", "2 h 5 min". */
void report_add_duration(struct buf *b, long long s);

/* The sections, in the page's order (report-html.c, report-svg.c). */
void report_head(struct xl_ctx *ctx, struct page *pg, size_t n);
void report_leaderboard(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n,
			long long best_id);
void report_configurations(struct xl_ctx *ctx, struct page *pg);
void report_lineage(struct page *pg, struct rrun *v, size_t n, long long best_id);
long long report_timeline(struct page *pg, struct bar *bars, size_t nb, long long *span_out,
			  struct gpu_row *rows, size_t *nrows);
void report_score_chart(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n);
void report_stopped(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n,
		    long long best_id);
int report_details(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n);

#endif
