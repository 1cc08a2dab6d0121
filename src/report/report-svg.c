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

	/* the best path: the best run and its ancestors */
	for (i = 0; i < n; i++)
		v[i].on_best = 0;
	for (best = best_id ? report_find_run(v, n, best_id) : NULL; best;
	     best = best->r.parent_id ? report_find_run(v, n, best->r.parent_id) : NULL) {
		best->on_best = 1;
		rows++;
	}
	if (n > REPORT_FULL_RUNS) {
		/* a long study: the path alone, one generation a row */
		int r = rows;

		for (best = best_id ? report_find_run(v, n, best_id) : NULL; best;
		     best = best->r.parent_id ? report_find_run(v, n, best->r.parent_id) : NULL)
			best->row = best->depth = --r;
	} else {
		rows = report_lay_out(v, n);
	}
	/* the indent that lets every row fit, with its change whole if it can */
	for (i = 0; i < n; i++) {
		if (n > REPORT_FULL_RUNS && !v[i].on_best)
			continue;
		if (v[i].depth > maxd)
			maxd = v[i].depth;
		need = 10 + (double)box_chars(&v[i], score, sizeof(score)) * CHAR_BOX + 12 + 8 +
		       (double)label_chars(&v[i]) * CHAR_LABEL + 10;
		if (v[i].depth && (PAGE_W - need) / v[i].depth < indent)
			indent = (PAGE_W - need) / v[i].depth;
	}
	if (indent < 4)
		indent = 4;	/* then the longest changes are shortened */
	buf_adds(b, "<h2 id=\"lineage\">Lineage</h2>\n<p class=\"legend\">");
	if (n > REPORT_FULL_RUNS)
		buf_addf(b, "the path from the root to the best run, one generation a row "
			 "(the %zu runs are too many to draw)", n);
	else
		buf_adds(b, "one row per run, indented under its parent, with its one change");
	buf_addf(b, "; <span class=\"bp\">bold: the path to the best run</span></p>\n"
		 "<svg class=\"tree\" "
		 "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		 "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"lineage of the runs\">\n",
		 PAGE_W, rows * ROW_H + 8, PAGE_W, rows * ROW_H + 8);
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];
		const struct rrun *p = c->r.parent_id ? report_find_run(v, n, c->r.parent_id) : NULL;

		if (n > REPORT_FULL_RUNS && !c->on_best)
			continue;
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

		if (n > REPORT_FULL_RUNS && !c->on_best)
			continue;
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

#define PACK_BARS 2000	/* more bars than this: the narrow ones packed */
#define MIN_BAR_PX 2.0
#define MANY_PX 4.0		/* the widest rect of many bars */

/* Idle stretches drawn as one rect: from, to, their idle seconds, how many. */
struct gap {
	long long from, to, idle;
	size_t n;
};

/* Draw the gaps gathered in g, and start over. */
static void draw_gap(struct page *pg, struct gap *g, long long t0, double k, int lanes)
{
	buf_addf(&pg->b, "<rect class=\"gap\" x=\"%.1f\" y=\"0\" width=\"%.1f\" "
		 "height=\"%d\"><title>idle %lld s", 10 + (double)(g->from - t0) * k,
		 fmax(1.0, (double)g->idle * k), lanes * LANE_H + 6, g->idle);
	if (g->n > 1)
		buf_addf(&pg->b, " in %zu gaps", g->n);
	buf_adds(&pg->b, "</title></rect>\n");
	report_flush(pg, 1 << 20);
	memset(g, 0, sizeof(*g));
}

/*
 * What the timeline draws: a bar, or the bars of one job's GPUs on
 * consecutive rows of a node as one (rows of them), or the bars of a row
 * too narrow to see, closer than a pixel to each other, as one (n of them).
 */
struct drawn {
	size_t i;		/* its (first) bar */
	int lane, rows;		/* the first row and how many */
	long long last_gpu;	/* the GPU of its last row */
	long long start, end;
	size_t n, ok, failed;	/* bars, of them successes and failures */
	size_t last;		/* the last bar of n */
};

/* Bars by attempt, segment, step, node, then row: one job's GPUs side by side. */
static int by_job(const void *pa, const void *pb)
{
	const struct bar *a = *(const struct bar *const *)pa, *b = *(const struct bar *const *)pb;
	int c;

	if (a->attempt_id != b->attempt_id)
		return a->attempt_id < b->attempt_id ? -1 : 1;
	if (a->seg != b->seg)
		return a->seg < b->seg ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	c = strcmp(a->node, b->node);
	if (c)
		return c;
	return (a->lane > b->lane) - (a->lane < b->lane);
}

/* Drawn items by row, height, then start. */
static int by_row_start(const void *pa, const void *pb)
{
	const struct drawn *a = pa, *b = pb;

	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if (a->rows != b->rows)
		return a->rows < b->rows ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* One bar (or one job on several rows) with its title and, where it fits, its label. */
static void draw_one(struct buf *b, const struct bar *x, const struct drawn *d, long long t0,
		     double k)
{
	buf_addf(b, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		 "height=\"%d\"><title>", x->cls, 10 + (double)(x->start - t0) * k,
		 d->lane * LANE_H + 3, fmax(1.0, (double)(x->end - x->start) * k),
		 d->rows * LANE_H - 6);
	report_esc(b, x->run->r.tag);
	buf_addf(b, " attempt %lld", x->n);
	if (x->seg)
		buf_addf(b, ", segment %lld", x->seg);
	if (x->step) {
		buf_addf(b, ", step %lld '", x->step);
		report_esc(b, x->step_name);
		buf_adds(b, "'");
	}
	buf_addf(b, ": %lld s, %s", x->end - x->start, x->label);
	if (x->restarts)
		buf_addf(b, ", restarted %lld time%s by Slurm", x->restarts,
			 x->restarts == 1 ? "" : "s");
	if (d->rows > 1)
		buf_addf(b, ", GPUs %lld-%lld of its %d", x->gpu, d->last_gpu, x->gpus);
	else if (x->gpus > 1)
		buf_addf(b, ", GPU %lld of its %d", x->gpu, x->gpus);
	if (*x->node) {
		buf_adds(b, ", on ");
		report_esc(b, x->node);
		if (x->nodes > 1)
			buf_addf(b, " (one of %d nodes)", x->nodes);
	}
	buf_adds(b, "</title></rect>\n");
	/* a label only where it fits inside its bar */
	if ((double)(x->end - x->start) * k >=
	    (double)(nchars(x->run->r.tag) + (x->step ? 1 + nchars(x->step_name) : 0)) *
	    CHAR_LABEL + 8) {
		buf_addf(b, "<text class=\"blabel\" x=\"%.1f\" y=\"%d\">",
			 14 + (double)(x->start - t0) * k, d->lane * LANE_H + 18);
		report_esc(b, x->run->r.tag);
		if (x->step) {
			buf_adds(b, " ");
			report_esc(b, x->step_name);
		}
		buf_adds(b, "</text>\n");
	}
}

/* Bars too narrow to see, close together on a row, as one rect. */
static void draw_many(struct buf *b, const struct bar *bars, const struct drawn *d,
		      long long t0, double k)
{
	const char *cls = d->failed * 2 > d->n ? "failure" : d->ok * 2 >= d->n ? "success" :
			  "live";

	buf_addf(b, "<rect class=\"bar %s many\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		 "height=\"%d\"><title>%zu attempts, ", cls, 10 + (double)(d->start - t0) * k,
		 d->lane * LANE_H + 3, fmax(1.0, (double)(d->end - d->start) * k),
		 d->rows * LANE_H - 6, d->n);
	report_esc(b, bars[d->i].run->r.tag);
	buf_adds(b, " to ");
	report_esc(b, bars[d->last].run->r.tag);
	buf_addf(b, ": %zu succeeded, %zu failed, ", d->ok, d->failed);
	report_add_duration(b, d->end - d->start);
	buf_adds(b, "</title></rect>\n");
}

/*
 * The bars, as few rects as show them: a job's GPUs on consecutive rows of
 * a node are one rect over those rows (a job of 8 GPUs is one bar, not 8),
 * and, past PACK_BARS bars, on a row, bars narrower than MIN_BAR_PX that
 * lie within a pixel of each other are one rect of at most MANY_PX that
 * says how many, in the colour of most of them; so the page grows with
 * its width and rows, not with the attempts (a study of 50,000).
 */
static void draw_bars(struct page *pg, const struct bar *bars, size_t nb, long long t0,
		      double k, int nrows)
{
	const struct bar **o = xcalloc(nb ? nb : 1, sizeof(*o));
	struct drawn *d = xcalloc(nb ? nb : 1, sizeof(*d)), cur;
	size_t i, nd = 0, have = 0;

	for (i = 0; i < nb; i++)
		o[i] = &bars[i];
	qsort(o, nb, sizeof(*o), by_job);
	for (i = 0; i < nb; i++) {
		const struct bar *x = o[i];
		struct drawn *p = nd ? &d[nd - 1] : NULL;

		if (p && x->lane < nrows && p->lane + p->rows == x->lane &&
		    bars[p->i].attempt_id == x->attempt_id && bars[p->i].seg == x->seg &&
		    bars[p->i].step == x->step && bars[p->i].start == x->start &&
		    bars[p->i].end == x->end && strcmp(bars[p->i].node, x->node) == 0 &&
		    x->gpu >= 0 && p->last_gpu >= 0) {
			p->rows++;
			p->last_gpu = x->gpu;
			continue;
		}
		memset(&d[nd], 0, sizeof(d[nd]));
		d[nd].i = d[nd].last = (size_t)(x - bars);
		d[nd].lane = x->lane;
		d[nd].rows = 1;
		d[nd].last_gpu = x->gpu;
		d[nd].start = x->start;
		d[nd].end = x->end;
		d[nd].n = 1;
		d[nd].ok = strcmp(x->cls, "success") == 0;
		d[nd].failed = strcmp(x->cls, "failure") == 0;
		nd++;
	}
	free(o);
	qsort(d, nd, sizeof(*d), by_row_start);
	for (i = 0; i <= nd; i++) {
		const struct drawn *x = i < nd ? &d[i] : NULL;
		int narrow = x && nb > PACK_BARS && (double)(x->end - x->start) * k < MIN_BAR_PX;

		if (have && (!narrow || x->lane != cur.lane || x->rows != cur.rows ||
			     (double)(x->start - cur.end) * k > 1.0 ||
			     (double)(x->end - cur.start) * k > MANY_PX)) {
			if (cur.n == 1)
				draw_one(&pg->b, &bars[cur.i], &cur, t0, k);
			else
				draw_many(&pg->b, bars, &cur, t0, k);
			have = 0;
			report_flush(pg, 1 << 20);
		}
		if (!x)
			break;
		if (!narrow) {
			draw_one(&pg->b, &bars[x->i], x, t0, k);
			report_flush(pg, 1 << 20);
		} else if (!have) {
			cur = *x;
			have = 1;
		} else {
			cur.n += x->n;
			cur.ok += x->ok;
			cur.failed += x->failed;
			cur.last = x->i;
			if (x->end > cur.end)
				cur.end = x->end;
		}
	}
	free(d);
}

/* The GPU timeline; returns the idle seconds, *span the study's seconds. */
long long report_timeline(struct page *pg, struct bar *bars, size_t nb, long long *span_out,
			  struct gpu_row *rows, size_t *nrows)
{
	struct buf *b = &pg->b;
	long long t0 = 0, t1 = 0, idle = 0, cover_end;
	size_t i, g, jobs = 0, name_w = 0;
	int lanes = 0, named = 0, svg_w = 0;
	struct gap gap = { 0, 0, 0, 0 };
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
			/* packed: gaps within a few pixels are one rect, as wide as their idle time */
			if (gap.n && (nb <= PACK_BARS || (double)(cover_end - gap.to) * k >= 1.0 ||
				      (double)(bars[i].start - gap.from) * k > MANY_PX))
				draw_gap(pg, &gap, t0, k, lanes);
			if (!gap.n)
				gap.from = cover_end;
			gap.to = bars[i].start;
			gap.idle += bars[i].start - cover_end;
			gap.n++;
		}
		if (bars[i].end > cover_end)
			cover_end = bars[i].end;
	}
	if (gap.n)
		draw_gap(pg, &gap, t0, k, lanes);
	draw_bars(pg, bars, nb, t0, k, (int)*nrows);
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
	double lo = 0, hi = 0, best = 0, px, py = 0, kx, ky, last_py = 0;
	int long_study = n > REPORT_FULL_RUNS;

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
		/* the best so far as steps: along at the old level, then up or down
		 * (a long study's: only where it moves, and to its end) */
		if (i == 0)
			buf_addf(b, "M%.1f %.1f", px, py);
		else if (!long_study || py != last_py || i + 1 == np)
			buf_addf(b, " H%.1f V%.1f", px, py);
		last_py = py;
		report_flush(pg, 1 << 20);
	}
	buf_adds(b, "\"/>\n");
	for (i = 0; i < np; i++) {
		/* a long study's points: the leaderboard's runs and the best path */
		if (long_study && !pts[i].run->shown && !pts[i].run->on_best)
			continue;
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
