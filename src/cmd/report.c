/*
 * xloop report [--out F.html]: the study as one self-contained HTML page
 * (inline CSS and SVG, no script, nothing fetched): a leaderboard, the
 * lineage tree, the GPU timeline with its idle gaps, the score over time
 * and each run's detail. Everything comes from the state DB and the logs;
 * Slurm is not asked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search/best.h"
#include "briefing.h"
#include "cmd/cmd.h"
#include "fsutil.h"
#include "runs.h"
#include "segments.h"
#include "timeline.h"

static const struct opt report_opts[] = {
	{ "out", OPT_STRING, "F.html", "write there (default: report.html at the study root)" },
	OPT_END,
};

#define TL_WIDTH 960		/* px of the time axis */
#define LANE_H 26

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
};

/* One GPU's row of the timeline: its busy and idle seconds in the span. */
struct gpu_row {
	long long gpu;
	long long busy, idle;
};

#define TL_MAX_ROWS 64

/* The page, written out to a temporary file each time a megabyte is ready. */
struct page {
	struct buf b;
	struct atomic_file f;
	char *cause;		/* set once a write failed (the file is dropped) */
};

static void page_flush(struct page *pg, size_t at_least)
{
	if (pg->b.len < at_least)
		return;
	if (!pg->cause)
		atomic_write(&pg->f, pg->b.s, pg->b.len, &pg->cause);
	buf_reset(&pg->b);
}

/* Append text with HTML's special characters escaped. */
static void esc(struct buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': buf_adds(b, "&amp;"); break;
		case '<': buf_adds(b, "&lt;"); break;
		case '>': buf_adds(b, "&gt;"); break;
		case '"': buf_adds(b, "&quot;"); break;
		case '\'': buf_adds(b, "&#39;"); break;
		default: buf_addc(b, *s);
		}
	}
}

/* "success", "failure", "live" or "new": the CSS class of a run. */
static const char *run_class(const struct rrun *x)
{
	if (!x->last)
		return "new";
	if (*x->last->verdict)
		return x->last->verdict;
	if (strcmp(x->last->phase, "submit_failed") == 0)
		return "failure";
	return "live";
}

/* "12 s", "3 min 20 s", "2 h 5 min". */
static void add_duration(struct buf *b, long long s)
{
	if (s < 0)
		buf_adds(b, "-");
	else if (s < 60)
		buf_addf(b, "%lld s", s);
	else if (s < 3600)
		buf_addf(b, "%lld min %lld s", s / 60, s % 60);
	else
		buf_addf(b, "%lld h %lld min", s / 3600, s % 3600 / 60);
}

/* "lr: 0.1 -> 0.01", or "(root)". */
static void add_change(struct buf *b, const struct run *r)
{
	if (!r->parent_id) {
		buf_adds(b, "(root)");
		return;
	}
	esc(b, r->var);
	buf_adds(b, ": ");
	esc(b, r->old_value);
	buf_adds(b, " &#8594; ");
	esc(b, r->new_value);
}

/* Runs sorted by id: the one with this id, or NULL. */
static struct rrun *find_run(struct rrun *v, size_t n, long long id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].r.id == id)
			return &v[mid];
		if (v[mid].r.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A segmented attempt's bar becomes one bar per segment (timeline_split). */
static void split_segments(struct xl_ctx *ctx, struct bar **bars, size_t *nb)
{
	struct segment_span *sp;
	size_t ns;

	if (segments_spans(ctx, &sp, &ns) == 0)
		timeline_split(bars, nb, sp, ns);
	free(sp);
}

/* The runs (sorted by id) with their latest attempt, and the timeline's bars. */
static int load(struct xl_ctx *ctx, struct rrun **out, size_t *n, struct bar **bars,
		size_t *nb)
{
	struct attempt_walk w;
	struct run *runs;
	long long now = time(NULL);
	size_t i, j;

	*bars = NULL;
	*nb = 0;
	if (runs_list(&ctx->db, ctx->cfg.study, &runs, n) < 0)
		return -1;
	*out = xcalloc(*n ? *n : 1, sizeof(**out));
	for (i = 0; i < *n; i++)
		(*out)[i].r = runs[i];
	free(runs);
	if (attempt_walk_open(&ctx->db, ctx->cfg.study, 0, &w) < 0)
		return -1;
	for (i = 0; i < *n; i++) {
		struct rrun *x = &(*out)[i];
		struct attempt *a;

		if (attempt_walk_run(&w, x->r.id, &a, &x->na) < 0) {
			attempt_walk_close(&w);
			return -1;
		}
		for (j = 0; j < x->na; j++)
			timeline_add(bars, nb, x, &a[j], now);
		if (x->na) {
			x->last_a = a[x->na - 1];
			x->last = &x->last_a;
		}
		for (j = 0; j + 1 < x->na; j++)
			attempt_release(&a[j]);
		free(a);
		x->has_score = x->last && strcmp(x->last->verdict, "success") == 0 &&
			       x->last->has_score;
		x->score = x->has_score ? x->last->score : 0;
	}
	attempt_walk_close(&w);
	split_segments(ctx, bars, nb);
	/* the lineage: children in id order under their parent */
	for (i = *n; i-- > 0;) {
		struct rrun *x = &(*out)[i], *p = x->r.parent_id ?
			find_run(*out, *n, x->r.parent_id) : NULL;

		if (p) {
			x->sibling = p->child;
			p->child = i + 1;
		}
	}
	return 0;
}

/* How many runs the subtree of run i holds (itself included), into size. */
static size_t subtree(struct rrun *v, size_t i)
{
	size_t c, total = 1;

	for (c = v[i].child; c; c = v[c - 1].sibling)
		total += subtree(v, c - 1);
	v[i].size = total;
	return total;
}

/*
 * Place run i and its descendants: depth by generation, rows depth-first,
 * the smaller subtrees first, so that a side branch sits right under its
 * parent and the long line of descent goes on below it.
 */
static void layout(struct rrun *v, size_t i, int depth, int *row)
{
	size_t c, *kids = NULL, nk = 0, j, k;

	v[i].depth = depth;
	v[i].row = (*row)++;
	for (c = v[i].child; c; c = v[c - 1].sibling) {
		kids = xreallocarray(kids, nk + 1, sizeof(*kids));
		for (j = nk++; j > 0 && v[kids[j - 1]].size > v[c - 1].size; j--)
			kids[j] = kids[j - 1];	/* stable: equal sizes keep id order */
		kids[j] = c - 1;
	}
	for (k = 0; k < nk; k++)
		layout(v, kids[k], depth + 1, row);
	free(kids);
}

/* Order for the leaderboard: scored runs best first, then the rest. */
static int goal_max_for_sort;
static int by_score(const void *pa, const void *pb)
{
	const struct rrun *a = *(const struct rrun *const *)pa;
	const struct rrun *b = *(const struct rrun *const *)pb;

	if (a->has_score != b->has_score)
		return b->has_score - a->has_score;
	if (a->has_score && a->score != b->score)
		return (a->score < b->score) == goal_max_for_sort ? 1 : -1;
	return a->r.id < b->r.id ? -1 : 1;
}

static void leaderboard(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n,
			long long best_id)
{
	struct buf *b = &pg->b;
	struct rrun **o = xcalloc(n ? n : 1, sizeof(*o));
	size_t i;

	for (i = 0; i < n; i++)
		o[i] = &v[i];
	goal_max_for_sort = ctx->cfg.goal_max;
	qsort(o, n, sizeof(*o), by_score);
	buf_adds(b, "<h2 id=\"leaderboard\">Leaderboard</h2>\n<table class=\"board\">\n"
		 "<tr><th>#</th><th>tag</th><th>change</th><th>");
	esc(b, ctx->cfg.metric);
	buf_adds(b, "</th><th>verdict</th><th>attempts</th><th>duration</th></tr>\n");
	for (i = 0; i < n; i++) {
		const struct rrun *x = o[i];
		const struct attempt *l = x->last;

		buf_addf(b, "<tr class=\"run %s%s\" data-tag=\"", run_class(x),
			 x->r.id == best_id ? " best" : "");
		esc(b, x->r.tag);
		buf_addf(b, "\"><td class=\"num\">%zu</td><td class=\"wrap\"><a href=\"#run-", i + 1);
		esc(b, x->r.tag);
		buf_adds(b, "\">");
		esc(b, x->r.tag);
		buf_adds(b, "</a>");
		if (x->r.id == best_id)
			buf_adds(b, " <span class=\"tagbest\">best</span>");
		buf_adds(b, "</td><td class=\"wrap\">");
		add_change(b, &x->r);
		buf_adds(b, "</td><td class=\"num\">");
		if (x->has_score)
			buf_addf(b, "%.6g", x->score);
		else
			buf_adds(b, "-");
		buf_addf(b, "</td><td>%s", run_class(x));
		if (l && *l->verdict && strcmp(l->verdict, "failure") == 0 && *l->state) {
			buf_adds(b, " (");
			esc(b, l->state);
			buf_adds(b, ")");
		}
		buf_addf(b, "</td><td class=\"num\">%zu</td><td class=\"num\">", x->na);
		add_duration(b, l && l->started_at && l->ended_at ?
			     l->ended_at - l->started_at : -1);
		buf_adds(b, "</td></tr>\n");
		page_flush(pg, 1 << 20);
	}
	buf_adds(b, "</table>\n");
	free(o);
}

struct keyed {
	double key;
	long i;
};

static int by_key(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->i > b->i) - (a->i < b->i);
}

/* Configurations: replicates folded under their configuration, mean ± interval. */
static void configurations(struct xl_ctx *ctx, struct page *pg)
{
	struct buf *b = &pg->b;
	struct best_state bs;
	struct keyed *sorted;
	long *o, k, i;

	if (best_load(ctx, &bs) < 0 || bs.n == 0) {
		best_release(&bs);
		return;
	}
	buf_adds(b, "<h2 id=\"configurations\">Configurations</h2>\n<p class=\"sub\">");
	if (bs.noise.df > 0)
		buf_addf(b, "noise (pooled sd of replicates) %.3g, df %ld; ", bs.noise.sd,
			 bs.noise.df);
	else
		buf_adds(b, "no replicates yet: scores are unchecked against noise; ");
	buf_adds(b, "best by the rule of <code>xloop help space</code></p>\n"
		 "<table class=\"board\">\n<tr><th>run</th><th>mean</th><th>&#177; 95%</th>"
		 "<th>n</th><th>runs</th></tr>\n");
	o = xcalloc(bs.n, sizeof(*o));
	sorted = xcalloc(bs.n, sizeof(*sorted));
	for (i = k = 0; i < (long)bs.n; i++)
		if (bs.v[i].st.n > 0) {
			/* best first: sort by the goal-signed mean, ascending */
			sorted[k].key = ctx->cfg.goal_max ? -bs.v[i].st.mean : bs.v[i].st.mean;
			sorted[k++].i = i;
		}
	qsort(sorted, (size_t)k, sizeof(*sorted), by_key);
	for (i = 0; i < k; i++)
		o[i] = sorted[i].i;
	free(sorted);
	for (i = 0; i < k && i < 200; i++) {
		const struct best_cfg *c = &bs.v[o[i]];

		buf_addf(b, "<tr class=\"run%s\"><td>", o[i] == bs.best ? " best" : "");
		esc(b, c->rep_tag);
		if (o[i] == bs.best)
			buf_adds(b, " <span class=\"tagbest\">best</span>");
		buf_addf(b, "</td><td class=\"num\">%.6g</td><td class=\"num\">", c->st.mean);
		if (bs.noise.df > 0)
			buf_addf(b, "%.2g", noise_halfwidth(&bs.noise, c->st.n));
		else
			buf_adds(b, "unchecked");
		buf_addf(b, "</td><td class=\"num\">%ld</td><td class=\"num\">%ld</td></tr>\n",
			 c->st.n, c->runs);
	}
	buf_adds(b, "</table>\n");
	free(o);
	best_release(&bs);
}

/*
 * The lineage as an indented tree that fits the page: one row per run
 * (depth first), its box sized to its text (monospace, so the width is
 * known), the change after the box, elbows from parent to child. The
 * indent shrinks with depth so nothing is wider than PAGE_W; a change too
 * long for its row is shortened, whole in its tooltip. The best run's
 * path from its root is drawn bold.
 */
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
		esc(b, s);
		return;
	}
	while (*p && n < (max > 1 ? max - 1 : 1)) {
		p++;
		while (((unsigned char)*p & 0xc0) == 0x80)
			p++;
		n++;
	}
	head = xstrndup(s, (size_t)(p - s));
	esc(b, head);
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

static void lineage(struct page *pg, struct rrun *v, size_t n, long long best_id)
{
	struct buf *b = &pg->b;
	int rows = 0, maxd = 0;
	double indent = 22, need;
	char score[32];
	size_t i;
	struct rrun *best;

	for (i = 0; i < n; i++)
		if (!v[i].r.parent_id) {
			subtree(v, i);
			layout(v, i, 0, &rows);
		}
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
	for (best = best_id ? find_run(v, n, best_id) : NULL; best;
	     best = best->r.parent_id ? find_run(v, n, best->r.parent_id) : NULL)
		best->on_best = 1;
	buf_addf(b, "<h2 id=\"lineage\">Lineage</h2>\n<p class=\"legend\">one row per run, "
		 "indented under its parent, with its one change; <span class=\"bp\">bold: "
		 "the path to the best run</span></p>\n<svg class=\"tree\" "
		 "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		 "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"lineage of the runs\">\n",
		 PAGE_W, rows * ROW_H + 8, PAGE_W, rows * ROW_H + 8);
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];
		const struct rrun *p = c->r.parent_id ? find_run(v, n, c->r.parent_id) : NULL;

		page_flush(pg, 1 << 20);
		if (p)
			buf_addf(b, "<path class=\"edge %s%s\" d=\"M%.1f %d V%d H%.1f\"/>\n",
				 run_class(c), c->on_best ? " bestpath" : "",
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

		buf_addf(b, "<g class=\"node %s%s\" data-tag=\"", run_class(c),
			 c->on_best ? " bestpath" : "");
		esc(b, c->r.tag);
		buf_addf(b, "\"><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			 "rx=\"5\"/><text class=\"ntext\" x=\"%.1f\" y=\"%d\">", x, y, w, BOX_H,
			 x + 6, y + 14);
		esc(b, c->r.tag);
		buf_adds(b, score);
		buf_addf(b, "</text><text class=\"elabel\" x=\"%.1f\" y=\"%d\">", lx, y + 14);
		if (c->r.parent_id) {
			size_t vn = nchars(c->r.var) + 1;

			if (room < 8)
				room = 8;
			buf_adds(b, "<title>");
			esc(b, c->r.var);
			buf_adds(b, "=");
			esc(b, c->r.new_value);
			buf_adds(b, "</title>");
			esc_cut(b, c->r.var, (size_t)room);
			buf_adds(b, "=");
			esc_cut(b, c->r.new_value, (size_t)room > vn + 2 ? (size_t)room - vn : 2);
		} else {
			buf_adds(b, "(root)");
		}
		page_flush(pg, 1 << 20);
		buf_adds(b, "</text></g>\n");
	}
	buf_adds(b, "</svg>\n");
}

/* GPU rows by index. */
static int by_gpu(const void *pa, const void *pb)
{
	const struct gpu_row *a = pa, *b = pb;

	return (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

static int by_start(const void *pa, const void *pb)
{
	const struct bar *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* The GPU timeline; returns the idle seconds, *span the study's seconds. */
static long long timeline(struct page *pg, struct bar *bars, size_t nb, long long *span_out,
			  struct gpu_row *rows, size_t *nrows)
{
	struct buf *b = &pg->b;
	long long lane_end[TL_MAX_ROWS], t0 = 0, t1 = 0, idle = 0, cover_end;
	size_t i, g;
	int lanes = 0;
	double k;

	qsort(bars, nb, sizeof(*bars), by_start);
	/* one row per GPU a job saw (sorted by index), then rows packed for the rest */
	*nrows = 0;
	for (i = 0; i < nb; i++) {
		for (g = 0; bars[i].gpu >= 0 && g < *nrows && rows[g].gpu != bars[i].gpu; g++)
			;
		if (bars[i].gpu >= 0 && g == *nrows && *nrows < TL_MAX_ROWS / 2) {
			rows[(*nrows)++] = (struct gpu_row){ bars[i].gpu, 0, 0 };
		}
	}
	qsort(rows, *nrows, sizeof(*rows), by_gpu);
	lanes = (int)*nrows;
	for (i = 0; i < nb; i++) {
		int l;

		for (g = 0; bars[i].gpu >= 0 && g < *nrows && rows[g].gpu != bars[i].gpu; g++)
			;
		if (bars[i].gpu >= 0 && g < *nrows) {
			l = (int)g;
		} else {
			for (l = (int)*nrows; l < lanes && lane_end[l] > bars[i].start; l++)
				;
			if (l == lanes && lanes < TL_MAX_ROWS)
				lanes++;
			if (l >= lanes)
				l = lanes - 1;
		}
		bars[i].lane = l;
		lane_end[l] = bars[i].end;
		if (l < (int)*nrows)
			rows[l].busy += bars[i].end - bars[i].start;
		if (!i || bars[i].start < t0)
			t0 = bars[i].start;
		if (bars[i].end > t1)
			t1 = bars[i].end;
	}
	for (g = 0; g < *nrows; g++)
		rows[g].idle = t1 - t0 > rows[g].busy ? t1 - t0 - rows[g].busy : 0;
	*span_out = t1 - t0;
	buf_addf(b, "<h2 id=\"timeline\">GPU timeline</h2>\n");
	if (nb == 0) {
		buf_adds(b, "<p>No attempt has run yet.</p>\n");
		return 0;
	}
	k = t1 > t0 ? (double)TL_WIDTH / (double)(t1 - t0) : 1;
	buf_addf(b, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
		 "aria-label=\"GPU timeline\">\n", TL_WIDTH + (*nrows ? 80 : 20), lanes * LANE_H + 40,
		 TL_WIDTH + (*nrows ? 80 : 20), lanes * LANE_H + 40);
	/* idle gaps: stretches inside the span that no attempt covers */
	cover_end = bars[0].end;
	for (i = 1; i < nb; i++) {
		if (bars[i].start > cover_end) {
			idle += bars[i].start - cover_end;
			buf_addf(b, "<rect class=\"gap\" x=\"%.1f\" y=\"0\" width=\"%.1f\" "
				 "height=\"%d\"><title>idle %lld s</title></rect>\n",
				 10 + (double)(cover_end - t0) * k,
				 fmax(1.0, (double)(bars[i].start - cover_end) * k),
				 lanes * LANE_H + 6, bars[i].start - cover_end);
			page_flush(pg, 1 << 20);
		}
		if (bars[i].end > cover_end)
			cover_end = bars[i].end;
	}
	for (i = 0; i < nb; i++) {
		buf_addf(b, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			 "height=\"%d\"><title>", bars[i].cls, 10 + (double)(bars[i].start - t0) * k,
			 bars[i].lane * LANE_H + 3,
			 fmax(1.0, (double)(bars[i].end - bars[i].start) * k), LANE_H - 6);
		esc(b, bars[i].run->r.tag);
		buf_addf(b, " attempt %lld", bars[i].n);
		if (bars[i].seg)
			buf_addf(b, ", segment %lld", bars[i].seg);
		buf_addf(b, ": %lld s, %s</title></rect>\n", bars[i].end - bars[i].start,
			 bars[i].label);
		/* a label only where it fits inside its bar */
		if ((double)(bars[i].end - bars[i].start) * k >=
		    (double)nchars(bars[i].run->r.tag) * CHAR_LABEL + 8) {
			buf_addf(b, "<text class=\"blabel\" x=\"%.1f\" y=\"%d\">",
				 14 + (double)(bars[i].start - t0) * k,
				 bars[i].lane * LANE_H + 18);
			esc(b, bars[i].run->r.tag);
			buf_adds(b, "</text>\n");
		}
		page_flush(pg, 1 << 20);
	}
	for (g = 0; g < *nrows; g++)
		buf_addf(b, "<text class=\"gpu\" x=\"%d\" y=\"%d\">GPU %lld</text>\n",
			 TL_WIDTH + 12, (int)g * LANE_H + 18, rows[g].gpu);
	buf_addf(b, "<text x=\"10\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" "
		 "text-anchor=\"end\">", lanes * LANE_H + 28, TL_WIDTH + 10,
		 lanes * LANE_H + 28);
	add_duration(b, t1 - t0);
	buf_adds(b, "</text>\n</svg>\n");
	buf_addf(b, "<p class=\"idle\">GPU idle %.1f%% of the study: ",
		 t1 > t0 ? 100.0 * (double)idle / (double)(t1 - t0) : 0.0);
	add_duration(b, idle);
	buf_addf(b, " (%zu attempts over ", nb);
	add_duration(b, t1 - t0);
	buf_adds(b, ").</p>\n");
	if (*nrows) {
		buf_adds(b, "<p class=\"gpuidle\">Idle per GPU:");
		for (g = 0; g < *nrows; g++) {
			buf_addf(b, "%s GPU %lld ", g ? "," : "", rows[g].gpu);
			add_duration(b, rows[g].idle);
		}
		buf_adds(b, ".</p>\n");
	}
	return idle;
}

static void score_chart(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n)
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
		esc(b, pts[i].run->r.tag);
		buf_addf(b, ": %.6g</title></circle>\n", pts[i].run->score);
		page_flush(pg, 1 << 20);
	}
	buf_adds(b, "</svg>\n");
	free(pts);
}

/* Each run's diff and attempts, read again from the DB run by run. */
static int details(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n)
{
	struct buf *b = &pg->b;
	struct attempt_walk w;
	size_t i, j, k;

	if (attempt_walk_open(&ctx->db, ctx->cfg.study, 0, &w) < 0)
		return -1;
	buf_adds(b, "<h2 id=\"runs\">Runs</h2>\n");
	for (i = 0; i < n; i++) {
		const struct rrun *x = &v[i];
		struct attempt *att;
		size_t na;

		if (attempt_walk_run(&w, x->r.id, &att, &na) < 0) {
			attempt_walk_close(&w);
			return -1;
		}

		buf_addf(b, "<section class=\"detail %s\" id=\"run-", run_class(x));
		esc(b, x->r.tag);
		buf_adds(b, "\"><h3>");
		esc(b, x->r.tag);
		buf_adds(b, "</h3>\n<p class=\"diff\">");
		if (x->r.parent_id) {
			buf_adds(b, "from <a href=\"#run-");
			esc(b, x->r.parent_tag);
			buf_adds(b, "\">");
			esc(b, x->r.parent_tag);
			buf_adds(b, "</a>: <code>- ");
			esc(b, x->r.var);
			buf_adds(b, "=");
			esc(b, x->r.old_value);
			buf_adds(b, "</code> <code>+ ");
			esc(b, x->r.var);
			buf_adds(b, "=");
			esc(b, x->r.new_value);
			buf_adds(b, "</code>");
		} else {
			buf_adds(b, "root run (adopted)");
		}
		buf_adds(b, "</p>\n<ul>\n");
		for (j = 0; j < na; j++) {
			const struct attempt *a = &att[j];

			buf_addf(b, "<li>attempt %lld: ", a->n);
			esc(b, *a->verdict ? a->verdict : *a->state ? a->state : a->phase);
			if (*a->verdict_reason) {
				buf_adds(b, " &#8212; ");
				esc(b, a->verdict_reason);
			}
			if (*a->job_id) {
				buf_adds(b, " (job ");
				esc(b, a->job_id);
				buf_adds(b, ")");
			}
			if (!*a->verdict && *a->job_id) {
				/* "segment 3 (at most 20), 2 h 40 min so far" */
				char *seg = segments_progress(ctx, a->id);

				if (seg) {
					buf_adds(b, ", ");
					esc(b, seg);
				}
				free(seg);
			}
			if (strcmp(a->verdict, "failure") == 0) {
				json_t *tail = briefing_log_tail(a->log_path, 8);

				buf_adds(b, "<pre class=\"tail\">");
				for (k = 0; k < json_array_size(tail); k++) {
					esc(b, json_string_value(json_array_get(tail, k)));
					buf_addc(b, '\n');
				}
				if (json_array_size(tail) == 0)
					buf_adds(b, "(no log)");
				buf_adds(b, "</pre>");
				json_decref(tail);
			}
			buf_adds(b, "</li>\n");
		}
		if (!na)
			buf_adds(b, "<li>never submitted</li>\n");
		buf_adds(b, "</ul></section>\n");
		attempts_free(att, na);
		page_flush(pg, 1 << 20);
	}
	attempt_walk_close(&w);
	return 0;
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1000px;"
	"color:#222}h1{margin-bottom:0}.sub{color:#666}"
	"table.board{border-collapse:collapse;width:100%}"
	".board td,.board th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}"
	".board td.num{text-align:right}tr.best{background:#fff6cc;font-weight:bold}"
	".tagbest{background:#e8b400;color:#fff;border-radius:3px;padding:0 4px;"
	"font-size:11px}tr.failure td{color:#a00}"
	"svg{max-width:100%;height:auto}svg text{font:12px sans-serif}"
	".node rect{stroke:#333;fill:#eee}.tree text.ntext{font:12px monospace}"
	".tree text.elabel{font:11px monospace;fill:#555}"
	".legend{color:#666;margin:0}.bp{font-weight:bold;color:#b08800}"
	".board td.wrap,.diff code,h3{overflow-wrap:anywhere}.board td.num{white-space:nowrap}"
	".node.success rect{fill:#c8ecc8}.node.failure rect{fill:#f6c6c6}"
	".node.live rect{fill:#cce0ff}.edge{fill:none;stroke:#888;stroke-width:1.5}"
	".edge.failure{stroke:#c33}.edge.success{stroke:#393}"
	".bar.success{fill:#4a4}.bar.failure{fill:#c44}.bar.live{fill:#48f}"
	".gap{fill:#f0a000;opacity:.35}.blabel{fill:#fff;font-size:11px}"
	".step{fill:none;stroke:#393;stroke-width:2}"
	".pt{fill:#36c}.idle{font-weight:bold}pre.tail{background:#f7f0f0;padding:6px;"
	"overflow-x:auto}section.detail{border-top:1px solid #eee}"
	".node.bestpath rect{stroke:#e8b400;stroke-width:3}.node.bestpath text.ntext"
	"{font-weight:bold}.edge.bestpath{stroke:#e8b400;stroke-width:3.5}"
	".timeline text.blabel{font:11px monospace;fill:#fff}";

/* Write the report. */
static int cmd_report(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	const char *out_opt = args_get(args, "out");
	struct page pg = { BUF_INIT, { NULL, NULL, -1 }, NULL };
	struct rrun *v = NULL;
	struct bar *bars = NULL;
	struct run best;
	size_t n = 0, nb = 0, i;
	long long best_id = 0, idle, span = 0;
	struct gpu_row gpus[TL_MAX_ROWS];
	size_t ngpus = 0;
	char *out = NULL, when[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	(void)self;
	if (load(ctx, &v, &n, &bars, &nb) < 0) {
		error("unable to read the state DB");
		rc = XL_ERR;
		goto out;
	}
	if (best_get(ctx, &best, NULL) == 0) {
		best_id = best.id;
		run_release(&best);
	}
	out = out_opt ? xstrdup(out_opt) : path_join(ctx->root, "report.html");
	if (atomic_begin(&pg.f, out, 0644, &pg.cause) < 0) {
		error("%s", pg.cause);
		rc = XL_ERR;
		goto out;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	buf_adds(&pg.b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		 "<meta name=\"viewport\" content=\"width=device-width\">\n<title>xloop: ");
	esc(&pg.b, ctx->cfg.study);
	buf_addf(&pg.b, "</title>\n<style>%s</style></head>\n<body>\n<h1>Study ", css);
	esc(&pg.b, ctx->cfg.study);
	buf_addf(&pg.b, "</h1>\n<p class=\"sub\">%zu runs &#183; metric ", n);
	esc(&pg.b, ctx->cfg.metric);
	buf_addf(&pg.b, " (%s is better) &#183; generated %s by xloop</p>\n",
		 ctx->cfg.goal_max ? "higher" : "lower", when);
	leaderboard(ctx, &pg, v, n, best_id);
	configurations(ctx, &pg);
	lineage(&pg, v, n, best_id);
	idle = timeline(&pg, bars, nb, &span, gpus, &ngpus);
	score_chart(ctx, &pg, v, n);
	if (details(ctx, &pg, v, n) < 0) {
		error("unable to read the state DB");
		rc = XL_ERR;
		goto out;
	}
	buf_adds(&pg.b, "</body></html>\n");
	page_flush(&pg, 0);
	if (pg.cause || atomic_commit(&pg.f, &pg.cause) < 0) {
		error("%s", pg.cause);
		rc = XL_ERR;
	} else if (ctx->json) {
		json_t *per = json_array();

		for (i = 0; i < ngpus; i++)
			json_array_append_new(per, json_pack("{s:I, s:I, s:I}", "gpu",
				(json_int_t)gpus[i].gpu, "busy_s", (json_int_t)gpus[i].busy,
				"idle_s", (json_int_t)gpus[i].idle));
		cmd_emit_json(json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:o}", "schema",
					"xloop.report/1", "out", out, "runs", (json_int_t)n,
					"span_s", (json_int_t)span, "idle_s", (json_int_t)idle,
					"idle_percent", span > 0 ? 100.0 * (double)idle /
					(double)span : 0.0, "gpus", per));
		rc = 0;
	} else {
		printf("wrote %s (%zu runs; GPU idle %lld s of %lld s)\n", out, n, idle, span);
		rc = 0;
	}
out:
	atomic_abort(&pg.f);	/* after a commit: nothing left to drop */
	for (i = 0; i < n; i++) {
		run_release(&v[i].r);
		if (v[i].last)
			attempt_release(&v[i].last_a);
	}
	free(v);
	free(bars);
	free(out);
	free(pg.cause);
	buf_release(&pg.b);
	return rc;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report", .opts = report_opts, .args = "", .min = 0, .max = 0,
	.target = CMD_TARGET_NONE,
	.summary = "the study as one self-contained HTML page (leaderboard, lineage, GPU timeline)",
	.help = "Writes report.html at the study root (or F.html; a relative F is taken\n"
	"from the current directory, or from -C DIR), which the .gitignore that\n"
	"init writes ignores. Inline CSS and SVG, no script, nothing fetched,\n"
	"readable offline, and it fits the page at any number of runs: a\n"
	"leaderboard with the best run highlighted; the lineage as an indented\n"
	"tree, one row per run with its change, boxes sized to their text, the\n"
	"path to the best run in bold; the GPU timeline, one bar per attempt,\n"
	"with the idle gaps between jobs shaded and summed (one row per GPU index\n"
	"the jobs saw, recorded while they ran, with each GPU's idle time; --json\n"
	"gpus); the score of proven\n"
	"runs over time with the best so far; each run's one-line diff,\n"
	"attempts, and the log tail of failures. Reads the state DB and the logs\n"
	"only: Slurm is not asked.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_report,
};
