/*
 * The report's runs stopped early (issue 45): each one's curve, the values
 * its job reported by epoch ($XLOOP_RUN_DIR/progress), beside the best's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/progress.h"
#include "report/report-impl.h"

#define CURVES_MAX 12		/* the newest stopped runs drawn */
#define CURVE_POINTS 5000	/* epochs read of one run */
#define CW 320			/* a curve's width and height */
#define CH 150

/* The epochs a run's job reported (the count; *pt malloc'd). */
static size_t load_curve(struct xl_ctx *ctx, const char *tag, struct progress_point **pt)
{
	char *dir = run_dir(ctx->root, ctx->cfg.study, tag), *p = path_join(dir, "progress");
	char *cause = NULL;
	struct buf t = BUF_INIT;
	size_t n = 0;
	int err;

	*pt = NULL;
	if (read_file(p, 1 << 20, &t, &err, &cause) == 0 && t.s)
		n = progress_series(t.s, CURVE_POINTS, pt);
	buf_release(&t);
	free(cause);
	free(p);
	free(dir);
	return n;
}

/* The scales of both curves. */
struct frame {
	long long e0, e1;	/* the epochs */
	double lo, hi;		/* the finite values */
};

/* Widen f to the points of one curve. */
static void frame_add(struct frame *f, const struct progress_point *pt, size_t n, int *any)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (pt[i].epoch < f->e0)
			f->e0 = pt[i].epoch;
		if (pt[i].epoch > f->e1)
			f->e1 = pt[i].epoch;
		if (!isfinite(pt[i].value))
			continue;
		if (!*any || pt[i].value < f->lo)
			f->lo = pt[i].value;
		if (!*any || pt[i].value > f->hi)
			f->hi = pt[i].value;
		*any = 1;
	}
}

/* One curve: its finite points joined, a NaN or infinite one a red mark at the top. */
static void draw_curve(struct buf *b, const struct frame *f, const struct progress_point *pt,
		       size_t n, const char *cls)
{
	double kx = f->e1 > f->e0 ? (CW - 50.0) / (double)(f->e1 - f->e0) : 0;
	double ky = (CH - 40.0) / (f->hi - f->lo);
	size_t i;
	int open = 0;

	buf_addf(b, "<path class=\"%s\" d=\"", cls);
	for (i = 0; i < n; i++) {
		double x = 40 + (double)(pt[i].epoch - f->e0) * kx;

		if (!isfinite(pt[i].value)) {
			open = 0;
			continue;
		}
		buf_addf(b, "%s%.1f %.1f", open ? " L" : i ? " M" : "M", x,
			 15 + (f->hi - pt[i].value) * ky);
		open = 1;
	}
	buf_adds(b, "\"/>\n");
	for (i = 0; i < n; i++)
		if (!isfinite(pt[i].value))
			buf_addf(b, "<circle class=\"nan\" cx=\"%.1f\" cy=\"10\" r=\"4\"><title>"
				 "epoch %lld: %s</title></circle>\n",
				 40 + (double)(pt[i].epoch - f->e0) * kx, pt[i].epoch,
				 isnan(pt[i].value) ? "NaN" : "infinite");
}

/* One stopped run's figure: its curve, the best's, the verdict's reason. */
static void draw_one(struct xl_ctx *ctx, struct buf *b, const struct rrun *x,
		     const struct progress_point *best, size_t nbest)
{
	struct progress_point *pt;
	size_t n = load_curve(ctx, x->r.tag, &pt);
	struct frame f = { n ? pt[0].epoch : nbest ? best[0].epoch : 0, 0, 0, 1 };
	int any = 0;

	f.e1 = f.e0;
	frame_add(&f, pt, n, &any);
	frame_add(&f, best, nbest, &any);
	if (!any) {
		f.lo = 0;
		f.hi = 1;
	} else if (f.hi == f.lo) {
		f.hi += 0.5;
		f.lo -= 0.5;
	}
	buf_addf(b, "<figure class=\"curve\"><svg xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\""
		 "reported values by epoch\">\n<text x=\"2\" y=\"20\">%.3g</text>"
		 "<text x=\"2\" y=\"%d\">%.3g</text><text x=\"40\" y=\"%d\">epoch %lld</text>"
		 "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%lld</text>\n", CW, CH, CW, CH,
		 f.hi, CH - 25, f.lo, CH - 5, f.e0, CW - 10, CH - 5, f.e1);
	if (nbest)
		draw_curve(b, &f, best, nbest, "cbest");
	draw_curve(b, &f, pt, n, "crun");
	buf_adds(b, "</svg><figcaption><b>");
	report_esc(b, x->r.tag);
	buf_adds(b, "</b>: ");
	report_esc(b, x->last->verdict_reason ? x->last->verdict_reason : "stopped early");
	if (!n)
		buf_adds(b, " (no epochs reported)");
	buf_adds(b, "</figcaption></figure>\n");
	free(pt);
}

/* The section: the newest stopped runs, each beside the best (none: no section). */
void report_stopped(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n,
		    long long best_id)
{
	struct buf *b = &pg->b;
	struct rrun *best = report_find_run(v, n, best_id);
	struct progress_point *bp = NULL;
	size_t i, nstopped = 0, drawn = 0, nb = 0;

	for (i = 0; i < n; i++)
		nstopped += v[i].last && strcmp(v[i].last->verdict, "stopped") == 0;
	if (!nstopped)
		return;
	if (best)
		nb = load_curve(ctx, best->r.tag, &bp);
	buf_addf(b, "<h2 id=\"stopped\">Stopped early</h2>\n<p>%zu run%s stopped early",
		 nstopped, nstopped == 1 ? "" : "s");
	if (nstopped > CURVES_MAX)
		buf_addf(b, " (the newest %d drawn)", CURVES_MAX);
	buf_adds(b, ": the values each one's job reported by epoch");
	if (best && nb) {
		buf_adds(b, ", in orange, beside the best's (");
		report_esc(b, best->r.tag);
		buf_adds(b, "), dashed");
	} else if (best) {
		buf_adds(b, " (the best, ");
		report_esc(b, best->r.tag);
		buf_adds(b, ", reported none)");
	}
	buf_adds(b, "; a red mark is a NaN or infinite value.</p>\n<div class=\"curves\">\n");
	for (i = n; i-- > 0 && drawn < CURVES_MAX;) {
		if (!v[i].last || strcmp(v[i].last->verdict, "stopped") != 0)
			continue;
		draw_one(ctx, b, &v[i], bp, nb);
		drawn++;
		report_flush(pg, 1 << 20);
	}
	buf_adds(b, "</div>\n");
	free(bp);
}
