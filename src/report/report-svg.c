/* The report's SVG: the lineage tree, the GPU timeline, the score over time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-impl.h"

#define TL_WIDTH 960		/* px of the time axis */
#define LANE_H 26
#define PAGE_W 960		/* px: the page's content width */
#define ROW_H 26
#define BOX_H 20
#define CHAR_BOX 7.3		/* px per character, 12px monospace */
#define CHAR_LABEL 6.7		/* px per character, 11px monospace */

/* Characters of a UTF-8 string (continuation bytes do not count). */
static size_t nchars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Append at most max characters of s (escaped), "..." when cut. */
static void esc_cut(struct buf *b, const char *s, size_t max)
{
	size_t n = 0;
	const char *p = s;
	char *head;

	if (nchars(s) <= max) {
		report_esc(b, s);
		return;
	}
	while (*p && n < (max > 1 ? max - 1 : 1)) {
		p++;
		while (((unsigned char)*p & 0xc0) == 0x80)
			p++;
		n++;
	}
	head = xstrndup(s, (size_t)(p - s));
	report_esc(b, head);
	buf_adds(b, "&#8230;");
	free(head);
}

/* The box text of a run: its tag, and its score when it has one. */
static size_t box_chars(const struct rrun *x, char *score, size_t size)
{
	*score = '\0';
	if (x->has_score)
		xsnprintf(score, size, " %.4g", x->score);
	return nchars(x->r.tag) + strlen(score);
}

/* The change label's characters ("VAR=value"). */
static size_t label_chars(const struct rrun *x)
{
	return x->r.parent_id ? nchars(x->r.var) + 1 + nchars(x->r.new_value) : 6;
}

/*
 * The lineage as an indented tree that fits the page: one row per run
 * (depth first), its box sized to its text (monospace, so the width is
 * known), the change after the box, elbows from parent to child. The
 * indent shrinks with depth so nothing is wider than PAGE_W; a change too
 * long for its row is shortened, whole in its tooltip. The best run's
 * path from its root is drawn bold.
 */
void report_lineage(struct page *pg, struct rrun *v, size_t n, long long best_id)
{
	struct buf *b = &pg->b;
	int rows = 0, maxd = 0;
	double indent = 22, need;
	char score[32];
	size_t i;
	struct rrun *best;

	rows = report_lay_out(v, n);
	/* the indent that lets every row fit, with its change whole if it can */
	for (i = 0; i < n; i++) {
		if (v[i].depth > maxd)
			maxd = v[i].depth;
		need = 10 + (double)box_chars(&v[i], score, sizeof(score)) * CHAR_BOX + 12 + 8 +
		       (double)label_chars(&v[i]) * CHAR_LABEL + 10;
		if (v[i].depth && (PAGE_W - need) / v[i].depth < indent)
			indent = (PAGE_W - need) / v[i].depth;
	}
	if (indent < 4)
		indent = 4;	/* then the longest changes are shortened */
	/* the best path: the best run and its ancestors */
	for (i = 0; i < n; i++)
		v[i].on_best = 0;
	for (best = best_id ? report_find_run(v, n, best_id) : NULL; best;
	     best = best->r.parent_id ? report_find_run(v, n, best->r.parent_id) : NULL)
		best->on_best = 1;
	buf_addf(b, "<h2 id=\"lineage\">Lineage</h2>\n<p class=\"legend\">one row per run, "
		 "indented under its parent, with its one change; <span class=\"bp\">bold: "
		 "the path to the best run</span></p>\n<svg class=\"tree\" "
		 "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		 "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"lineage of the runs\">\n",
		 PAGE_W, rows * ROW_H + 8, PAGE_W, rows * ROW_H + 8);
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];
		const struct rrun *p = c->r.parent_id ? report_find_run(v, n, c->r.parent_id) : NULL;

		report_flush(pg, 1 << 20);
		if (p)
			buf_addf(b, "<path class=\"edge %s%s\" d=\"M%.1f %d V%d H%.1f\"/>\n",
				 report_run_class(c), c->on_best ? " bestpath" : "",
				 10 + p->depth * indent + 6, p->row * ROW_H + 4 + BOX_H,
				 c->row * ROW_H + 4 + BOX_H / 2, 10 + c->depth * indent);
	}
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];
		double x = 10 + c->depth * indent;
		double w = (double)box_chars(c, score, sizeof(score)) * CHAR_BOX + 12;
		double lx = x + w + 8;
		long long room = (long long)((PAGE_W - 10 - lx) / CHAR_LABEL);
		int y = c->row * ROW_H + 4;

		buf_addf(b, "<g class=\"node %s%s\" data-tag=\"", report_run_class(c),
			 c->on_best ? " bestpath" : "");
		report_esc(b, c->r.tag);
		buf_addf(b, "\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			 "rx=\"5\"/><text class=\"ntext\" x=\"%.1f\" y=\"%d\">", x, y, w, BOX_H,
			 x + 6, y + 14);
		report_esc(b, c->r.tag);
		buf_adds(b, score);
		buf_addf(b, "</text><text class=\"elabel\" x=\"%.1f\" y=\"%d\">", lx, y + 14);
		if (c->r.parent_id) {
			size_t vn = nchars(c->r.var) + 1;

			if (room < 8)
				room = 8;
			buf_adds(b, "<title>");
			report_esc(b, c->r.var);
			buf_adds(b, "=");
			report_esc(b, c->r.new_value);
			buf_adds(b, "</title>");
			esc_cut(b, c->r.var, (size_t)room);
			buf_adds(b, "=");
			esc_cut(b, c->r.new_value, (size_t)room > vn + 2 ? (size_t)room - vn : 2);
		} else {
			buf_adds(b, "(root)");
		}
		report_flush(pg, 1 << 20);
		buf_adds(b, "</text></g>\n");
	}
	buf_adds(b, "</svg>\n");
}

/* Bars (or points) by their start. */
static int by_start(const void *pa, const void *pb)
{
	const struct bar *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* A GPU row's name: "GPU 0", or "node1 GPU 0" when the rows are of several nodes. */
static void add_row_name(struct buf *b, const struct gpu_row *r, int named)
{
	if (named) {
		report_esc(b, *r->node ? r->node : "?");
		buf_adds(b, " ");
	}
	buf_addf(b, "GPU %lld", r->gpu);
}

/* The GPU timeline; returns the idle seconds, *span the study's seconds. */
long long report_timeline(struct page *pg, struct bar *bars, size_t nb, long long *span_out,
			  struct gpu_row *rows, size_t *nrows)
{
	struct buf *b = &pg->b;
	long long t0 = 0, t1 = 0, idle = 0, cover_end;
	size_t i, g, jobs = 0, name_w = 0;
	int lanes = 0, named = 0, svg_w = 0;
	double k;

	if (nb)
		qsort(bars, nb, sizeof(*bars), by_start);
	/* one row per GPU of a node a job saw, then rows packed for the rest */
	lanes = timeline_lanes(bars, nb, rows, nrows, REPORT_ROWS / 2, REPORT_ROWS, &named);
	for (i = 0; i < nb; i++) {
		if (!i || bars[i].start < t0)
			t0 = bars[i].start;
		if (bars[i].end > t1)
			t1 = bars[i].end;
		jobs += !bars[i].copy;
	}
	/* the rows' names right of the bars: "GPU 12", "node10 GPU 3" */
	for (g = 0; g < *nrows; g++) {
		char idx[32];
		size_t w;

		xsnprintf(idx, sizeof(idx), "GPU %lld", rows[g].gpu);
		w = strlen(idx) + (named ? nchars(*rows[g].node ? rows[g].node : "?") + 1 : 0);
		if (w > name_w)
			name_w = w;
	}
	if (*nrows)
		svg_w = (int)fmax(60.0, ceil((double)name_w * CHAR_BOX) + 4);
	*span_out = t1 - t0;
	buf_addf(b, "<h2 id=\"timeline\">GPU timeline</h2>\n");
	if (nb == 0) {
		buf_adds(b, "<p>No attempt has run yet.</p>\n");
		return 0;
	}
	k = t1 > t0 ? (double)TL_WIDTH / (double)(t1 - t0) : 1;
	buf_addf(b, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
		 "aria-label=\"GPU timeline\">\n", TL_WIDTH + 20 + svg_w, lanes * LANE_H + 40,
		 TL_WIDTH + 20 + svg_w, lanes * LANE_H + 40);
	/*
	 * idle gaps: stretches inside the span that no attempt covers (time,
	 * not rows: a job on two nodes is one bar here); a later step (a CPU
	 * evaluation) covers nothing
	 */
	for (i = 0; i < nb && (bars[i].step > 1 || bars[i].copy); i++)
		;
	cover_end = i < nb ? bars[i].end : 0;
	for (i = i + 1; i < nb; i++) {
		if (bars[i].step > 1 || bars[i].copy)
			continue;
		if (bars[i].start > cover_end) {
			idle += bars[i].start - cover_end;
			buf_addf(b, "<rect class=\"gap\" x=\"%.1f\" y=\"0\" width=\"%.1f\" "
				 "height=\"%d\"><title>idle %lld s</title></rect>\n",
				 10 + (double)(cover_end - t0) * k,
				 fmax(1.0, (double)(bars[i].start - cover_end) * k),
				 lanes * LANE_H + 6, bars[i].start - cover_end);
			report_flush(pg, 1 << 20);
		}
		if (bars[i].end > cover_end)
			cover_end = bars[i].end;
	}
	for (i = 0; i < nb; i++) {
		buf_addf(b, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			 "height=\"%d\"><title>", bars[i].cls, 10 + (double)(bars[i].start - t0) * k,
			 bars[i].lane * LANE_H + 3,
			 fmax(1.0, (double)(bars[i].end - bars[i].start) * k), LANE_H - 6);
		report_esc(b, bars[i].run->r.tag);
		buf_addf(b, " attempt %lld", bars[i].n);
		if (bars[i].seg)
			buf_addf(b, ", segment %lld", bars[i].seg);
		if (bars[i].step) {
			buf_addf(b, ", step %lld '", bars[i].step);
			report_esc(b, bars[i].step_name);
			buf_adds(b, "'");
		}
		buf_addf(b, ": %lld s, %s", bars[i].end - bars[i].start, bars[i].label);
		if (bars[i].restarts)
			buf_addf(b, ", restarted %lld time%s by Slurm", bars[i].restarts,
				 bars[i].restarts == 1 ? "" : "s");
		if (bars[i].gpus > 1)
			buf_addf(b, ", GPU %lld of its %d", bars[i].gpu, bars[i].gpus);
		if (*bars[i].node) {
			buf_adds(b, ", on ");
			report_esc(b, bars[i].node);
			if (bars[i].nodes > 1)
				buf_addf(b, " (one of %d nodes)", bars[i].nodes);
		}
		buf_adds(b, "</title></rect>\n");
		/* a label only where it fits inside its bar */
		if ((double)(bars[i].end - bars[i].start) * k >=
		    (double)(nchars(bars[i].run->r.tag) + (bars[i].step ?
		    1 + nchars(bars[i].step_name) : 0)) * CHAR_LABEL + 8) {
			buf_addf(b, "<text class=\"blabel\" x=\"%.1f\" y=\"%d\">",
				 14 + (double)(bars[i].start - t0) * k,
				 bars[i].lane * LANE_H + 18);
			report_esc(b, bars[i].run->r.tag);
			if (bars[i].step) {
				buf_adds(b, " ");
				report_esc(b, bars[i].step_name);
			}
			buf_adds(b, "</text>\n");
		}
		report_flush(pg, 1 << 20);
	}
	for (g = 0; g < *nrows; g++) {
		buf_addf(b, "<text class=\"gpu\" x=\"%d\" y=\"%d\">", TL_WIDTH + 12,
			 (int)g * LANE_H + 18);
		add_row_name(b, &rows[g], named);
		buf_adds(b, "</text>\n");
	}
	buf_addf(b, "<text x=\"10\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" "
		 "text-anchor=\"end\">", lanes * LANE_H + 28, TL_WIDTH + 10,
		 lanes * LANE_H + 28);
	report_add_duration(b, t1 - t0);
	buf_adds(b, "</text>\n</svg>\n");
	buf_addf(b, "<p class=\"idle\">GPU idle %.1f%% of the study: ",
		 t1 > t0 ? 100.0 * (double)idle / (double)(t1 - t0) : 0.0);
	report_add_duration(b, idle);
	buf_addf(b, " (%zu attempts over ", jobs);
	report_add_duration(b, t1 - t0);
	buf_adds(b, ").</p>\n");
	if (*nrows) {
		buf_adds(b, "<p class=\"gpuidle\">Idle per GPU:");
		for (g = 0; g < *nrows; g++) {
			buf_adds(b, g ? ", " : " ");
			add_row_name(b, &rows[g], named);
			buf_adds(b, " ");
			report_add_duration(b, rows[g].idle);
		}
		buf_adds(b, ".</p>\n");
	}
	return idle;
}

/* Proven runs' scores over time, and the best so far as steps. */
void report_score_chart(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n)
{
	struct buf *b = &pg->b;
	struct bar *pts = NULL;
	size_t np = 0, i;
	long long t0, t1;
	double lo = 0, hi = 0, best = 0, px, py = 0, kx, ky;

	for (i = 0; i < n; i++)
		if (v[i].has_score) {
			pts = xreallocarray(pts, np + 1, sizeof(*pts));
			pts[np].start = v[i].last->ended_at ? v[i].last->ended_at :
					v[i].last->intent_at;
			pts[np].run = &v[i];
			if (!np || v[i].score < lo)
				lo = v[i].score;
			if (!np || v[i].score > hi)
				hi = v[i].score;
			np++;
		}
	buf_adds(b, "<h2 id=\"scores\">Score over time</h2>\n");
	if (np == 0) {
		buf_adds(b, "<p>No proven run yet.</p>\n");
		return;
	}
	qsort(pts, np, sizeof(*pts), by_start);
	t0 = pts[0].start;
	t1 = pts[np - 1].start;
	if (hi == lo) {
		hi += 0.5;
		lo -= 0.5;
	}
	kx = t1 > t0 ? 900.0 / (double)(t1 - t0) : 0;
	ky = 200.0 / (hi - lo);
	buf_addf(b, "<svg class=\"scores\" xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" "
		 "height=\"250\" viewBox=\"0 0 960 250\" role=\"img\" aria-label=\"score over time\">\n"
		 "<text x=\"4\" y=\"20\">%.4g</text><text x=\"4\" y=\"225\">%.4g</text>\n"
		 "<path class=\"step\" d=\"", hi, lo);
	for (i = 0; i < np; i++) {
		double s = pts[i].run->score;

		px = 50 + (double)(pts[i].start - t0) * kx;
		if (!i || (ctx->cfg.goal_max ? s > best : s < best))
			best = s;
		py = 20 + (hi - best) * ky;
		/* the best so far as steps: along at the old level, then up or down */
		if (i == 0)
			buf_addf(b, "M%.1f %.1f", px, py);
		else
			buf_addf(b, " H%.1f V%.1f", px, py);
	}
	buf_adds(b, "\"/>\n");
	for (i = 0; i < np; i++) {
		px = 50 + (double)(pts[i].start - t0) * kx;
		py = 20 + (hi - pts[i].run->score) * ky;
		buf_addf(b, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>", px, py);
		report_esc(b, pts[i].run->r.tag);
		buf_addf(b, ": %.6g</title></circle>\n", pts[i].run->score);
		report_flush(pg, 1 << 20);
	}
	buf_adds(b, "</svg>\n");
	free(pts);
}
