/* Putting the report together: the sections in order, written atomically. */
#include <stdlib.h>
#include <string.h>

#include "search/best.h"
#include "report/report-impl.h"

/* Write the report to out; sum says what it showed. */
int report_write(struct xl_ctx *ctx, const char *out, struct report_sum *sum,
		 char **cause)
{
	struct page pg = { BUF_INIT, { NULL, NULL, -1 }, NULL };
	struct rrun *v = NULL;
	struct bar *bars = NULL;
	struct run best;
	size_t n = 0, nb = 0;
	long long best_id = 0;
	int rc = -1;

	memset(sum, 0, sizeof(*sum));
	*cause = NULL;
	if (report_load(ctx, &v, &n, &bars, &nb) < 0) {
		*cause = xstrdup("unable to read the state DB");
		goto out;
	}
	if (best_get(ctx, &best, NULL) == 0) {
		best_id = best.id;
		run_release(&best);
	}
	if (atomic_begin(&pg.f, out, 0644, &pg.cause) < 0)
		goto out;
	report_head(ctx, &pg, n);
	report_leaderboard(ctx, &pg, v, n, best_id);
	report_configurations(ctx, &pg);
	report_lineage(&pg, v, n, best_id);
	sum->idle = report_timeline(&pg, bars, nb, &sum->span, sum->gpus, &sum->ngpus);
	report_score_chart(ctx, &pg, v, n);
	report_stopped(ctx, &pg, v, n, best_id);
	if (report_details(ctx, &pg, v, n) < 0) {
		*cause = xstrdup("unable to read the state DB");
		goto out;
	}
	buf_adds(&pg.b, "</body></html>\n");
	report_flush(&pg, 0);
	if (pg.cause || atomic_commit(&pg.f, &pg.cause) < 0)
		goto out;
	sum->runs = n;
	rc = 0;
out:
	if (rc < 0 && *cause == NULL) {
		*cause = pg.cause;
		pg.cause = NULL;
	}
	atomic_abort(&pg.f);	/* after a commit: nothing left to drop */
	report_runs_release(v, n);
	free(bars);
	free(pg.cause);
	buf_release(&pg.b);
	return rc;
}
