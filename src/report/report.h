/*
 * xloop report's page: the study as one self-contained HTML file (inline
 * CSS and SVG, no script, nothing fetched): a leaderboard, the
 * configurations, the lineage tree, the GPU timeline with its idle gaps,
 * the score over time and each run's detail. Everything comes from the
 * state DB and the logs; Slurm is not asked.
 */
#ifndef XLOOP_REPORT_H
#define XLOOP_REPORT_H

#include <stddef.h>

#include "ctx.h"
#include "timeline.h"

#define REPORT_ROWS 64		/* rows of the GPU timeline (half for GPUs) */

/* What the page showed: runs, the study's span and idle seconds, per GPU of a node. */
struct report_sum {
	size_t runs;
	long long span, idle;
	struct gpu_row gpus[REPORT_ROWS];	/* timeline.h: node, index, busy, idle */
	size_t ngpus;
};

/*
 * Write the page to out (atomically: nothing is left on failure) and fill
 * sum. -1 with *cause (malloc'd) when the DB cannot be read or the file
 * not written.
 */
int report_write(struct xl_ctx *ctx, const char *out, struct report_sum *sum,
		 char **cause);

#endif
