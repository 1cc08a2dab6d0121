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

#include "briefing.h"
#include "cmd.h"
#include "fsutil.h"
#include "opts.h"
#include "runs.h"

#define TL_WIDTH 960		/* px of the time axis */
#define LANE_H 26

/* One run with what the page shows of it. */
struct rrun {
	struct run r;
	struct attempt *a;	/* all attempts, in order */
	size_t na;
	const struct attempt *last;	/* NULL: never submitted */
	int has_score;		/* the latest attempt succeeded with a score */
	double score;
	int depth, row;		/* lineage layout */
};

/* One attempt on the timeline. */
struct bar {
	long long start, end;
	const struct rrun *run;
	const struct attempt *a;
	int lane;
};

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

/* Load every run and its attempts. */
static int load(struct xl_ctx *ctx, struct rrun **out, size_t *n)
{
	struct run *runs;
	size_t i;

	if (runs_list(&ctx->db, ctx->cfg.study, &runs, n) < 0)
		return -1;
	*out = xcalloc(*n ? *n : 1, sizeof(**out));
	for (i = 0; i < *n; i++) {
		struct rrun *x = &(*out)[i];

		x->r = runs[i];
		if (attempts_list(&ctx->db, x->r.id, &x->a, &x->na) < 0)
			return -1;
		x->last = x->na ? &x->a[x->na - 1] : NULL;
		x->has_score = x->last && strcmp(x->last->verdict, "success") == 0 &&
			       x->last->has_score;
		x->score = x->has_score ? x->last->score : 0;
	}
	free(runs);
	return 0;
}

/* Place runs: depth by generation, rows in depth-first order. */
static void layout(struct rrun *v, size_t n, long long parent, int depth, int *row)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].r.parent_id != parent)
			continue;
		v[i].depth = depth;
		v[i].row = (*row)++;
		layout(v, n, v[i].r.id, depth + 1, row);
	}
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

static void leaderboard(struct xl_ctx *ctx, struct buf *b, struct rrun *v, size_t n,
			long long best_id)
{
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
		buf_addf(b, "\"><td>%zu</td><td><a href=\"#run-", i + 1);
		esc(b, x->r.tag);
		buf_adds(b, "\">");
		esc(b, x->r.tag);
		buf_adds(b, "</a>");
		if (x->r.id == best_id)
			buf_adds(b, " <span class=\"tagbest\">best</span>");
		buf_adds(b, "</td><td>");
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
	}
	buf_adds(b, "</table>\n");
	free(o);
}

static void lineage(struct buf *b, struct rrun *v, size_t n)
{
	int rows = 0, maxd = 0;
	size_t i, j;

	layout(v, n, 0, 0, &rows);
	for (i = 0; i < n; i++)
		if (v[i].depth > maxd)
			maxd = v[i].depth;
	buf_addf(b, "<h2 id=\"lineage\">Lineage</h2>\n<svg class=\"tree\" "
		 "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		 "role=\"img\" aria-label=\"lineage of the runs\">\n",
		 (maxd + 1) * 260 + 40, rows * 44 + 20);
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];

		for (j = 0; j < n && c->r.parent_id; j++) {
			const struct rrun *p = &v[j];

			if (p->r.id != c->r.parent_id)
				continue;
			buf_addf(b, "<path class=\"edge %s\" d=\"M%d %d C%d %d %d %d %d %d\"/>"
				 "<text class=\"elabel\" x=\"%d\" y=\"%d\">", run_class(c),
				 p->depth * 260 + 150, p->row * 44 + 30,
				 p->depth * 260 + 190, p->row * 44 + 30,
				 c->depth * 260 - 10, c->row * 44 + 30,
				 c->depth * 260 + 20, c->row * 44 + 30,
				 c->depth * 260 - 90, c->row * 44 + 24);
			esc(b, c->r.var);
			buf_adds(b, "=");
			esc(b, c->r.new_value);
			buf_adds(b, "</text>\n");
		}
	}
	for (i = 0; i < n; i++) {
		const struct rrun *c = &v[i];

		buf_addf(b, "<g class=\"node %s\" data-tag=\"", run_class(c));
		esc(b, c->r.tag);
		buf_addf(b, "\"><rect x=\"%d\" y=\"%d\" width=\"130\" height=\"30\" rx=\"6\"/>"
			 "<text x=\"%d\" y=\"%d\">", c->depth * 260 + 20, c->row * 44 + 15,
			 c->depth * 260 + 28, c->row * 44 + 35);
		esc(b, c->r.tag);
		if (c->has_score)
			buf_addf(b, " %.4g", c->score);
		buf_adds(b, "</text></g>\n");
	}
	buf_adds(b, "</svg>\n");
}

static int by_start(const void *pa, const void *pb)
{
	const struct bar *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

/* The GPU timeline; returns the idle seconds, *span the study's seconds. */
static long long timeline(struct xl_ctx *ctx, struct buf *b, struct rrun *v, size_t n,
			  long long *span_out)
{
	struct bar *bars = NULL;
	long long lane_end[64], t0 = 0, t1 = 0, idle = 0, cover_end, now = time(NULL);
	size_t nb = 0, i, j;
	int lanes = 0;
	double k;

	for (i = 0; i < n; i++)
		for (j = 0; j < v[i].na; j++) {
			const struct attempt *a = &v[i].a[j];
			long long end = a->ended_at ? a->ended_at :
				strcmp(a->state, "RUNNING") == 0 ? now : 0;

			if (!a->started_at || !end || end < a->started_at)
				continue;
			bars = xreallocarray(bars, nb + 1, sizeof(*bars));
			bars[nb].start = a->started_at;
			bars[nb].end = end;
			bars[nb].run = &v[i];
			bars[nb].a = a;
			nb++;
		}
	qsort(bars, nb, sizeof(*bars), by_start);
	for (i = 0; i < nb; i++) {
		int l;

		for (l = 0; l < lanes && lane_end[l] > bars[i].start; l++)
			;
		if (l == lanes && lanes < (int)ARRAY_SIZE(lane_end))
			lanes++;
		if (l >= lanes)
			l = lanes - 1;
		bars[i].lane = l;
		lane_end[l] = bars[i].end;
		if (!i || bars[i].start < t0)
			t0 = bars[i].start;
		if (bars[i].end > t1)
			t1 = bars[i].end;
	}
	*span_out = t1 - t0;
	buf_addf(b, "<h2 id=\"timeline\">GPU timeline</h2>\n");
	if (nb == 0) {
		buf_adds(b, "<p>No attempt has run yet.</p>\n");
		free(bars);
		return 0;
	}
	k = t1 > t0 ? (double)TL_WIDTH / (double)(t1 - t0) : 1;
	buf_addf(b, "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" "
		 "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"GPU timeline\">\n",
		 TL_WIDTH + 20, lanes * LANE_H + 40);
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
		}
		if (bars[i].end > cover_end)
			cover_end = bars[i].end;
	}
	for (i = 0; i < nb; i++) {
		const struct attempt *a = bars[i].a;
		const char *cls = *a->verdict ? a->verdict : "live";

		buf_addf(b, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			 "height=\"%d\"><title>", cls, 10 + (double)(bars[i].start - t0) * k,
			 bars[i].lane * LANE_H + 3,
			 fmax(1.0, (double)(bars[i].end - bars[i].start) * k), LANE_H - 6);
		esc(b, bars[i].run->r.tag);
		buf_addf(b, " attempt %lld: %lld s, %s</title></rect>\n", a->n,
			 bars[i].end - bars[i].start, *a->state ? a->state : a->phase);
		if ((double)(bars[i].end - bars[i].start) * k >= 60) {
			buf_addf(b, "<text class=\"blabel\" x=\"%.1f\" y=\"%d\">",
				 14 + (double)(bars[i].start - t0) * k,
				 bars[i].lane * LANE_H + 18);
			esc(b, bars[i].run->r.tag);
			buf_adds(b, "</text>\n");
		}
	}
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
	(void)ctx;
	free(bars);
	return idle;
}

static void score_chart(struct xl_ctx *ctx, struct buf *b, struct rrun *v, size_t n)
{
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
			pts[np].a = v[i].last;
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
		 "height=\"250\" role=\"img\" aria-label=\"score over time\">\n"
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
	}
	buf_adds(b, "</svg>\n");
	free(pts);
}

static void details(struct buf *b, struct rrun *v, size_t n)
{
	size_t i, j, k;

	buf_adds(b, "<h2 id=\"runs\">Runs</h2>\n");
	for (i = 0; i < n; i++) {
		const struct rrun *x = &v[i];

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
		for (j = 0; j < x->na; j++) {
			const struct attempt *a = &x->a[j];

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
		if (!x->na)
			buf_adds(b, "<li>never submitted</li>\n");
		buf_adds(b, "</ul></section>\n");
	}
}

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1000px;"
	"color:#222}h1{margin-bottom:0}.sub{color:#666}"
	"table.board{border-collapse:collapse;width:100%}"
	".board td,.board th{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}"
	".board td.num{text-align:right}tr.best{background:#fff6cc;font-weight:bold}"
	".tagbest{background:#e8b400;color:#fff;border-radius:3px;padding:0 4px;"
	"font-size:11px}tr.failure td{color:#a00}"
	"svg text{font:12px sans-serif}.node rect{stroke:#333;fill:#eee}"
	".node.success rect{fill:#c8ecc8}.node.failure rect{fill:#f6c6c6}"
	".node.live rect{fill:#cce0ff}.edge{fill:none;stroke:#888;stroke-width:1.5}"
	".edge.failure{stroke:#c33}.edge.success{stroke:#393}.elabel{fill:#555;font-size:11px}"
	".bar.success{fill:#4a4}.bar.failure{fill:#c44}.bar.live{fill:#48f}"
	".gap{fill:#f0a000;opacity:.35}.blabel{fill:#fff;font-size:11px}"
	".step{fill:none;stroke:#393;stroke-width:2}"
	".pt{fill:#36c}.idle{font-weight:bold}pre.tail{background:#f7f0f0;padding:6px;"
	"overflow-x:auto}section.detail{border-top:1px solid #eee}";

/* Write the report. */
static int cmd_report(struct xl_ctx *ctx, const struct cmd_entry *self,
		      int argc, char **argv)
{
	const char *out_opt = NULL;
	const struct opt opts[] = {
		{ "out", OPT_STRING, &out_opt },
		OPT_END,
	};
	struct buf b = BUF_INIT;
	struct rrun *v = NULL;
	struct run best;
	size_t n = 0, i;
	long long best_id = 0, idle, span = 0;
	double best_score;
	char **pos, *out, *cause = NULL, when[32];
	time_t now = time(NULL);
	struct tm tm;
	int npos, rc;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	rc = opts_npos(self, pos, npos, 0, 0);
	free(pos);
	if (rc < 0)
		return XL_USAGE;
	if (load(ctx, &v, &n) < 0) {
		error("unable to read the state DB");
		rc = XL_ERR;
		goto out;
	}
	if (runs_best(&ctx->db, ctx->cfg.study, ctx->cfg.goal_max, &best, &best_score) == 0) {
		best_id = best.id;
		run_release(&best);
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	buf_adds(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		 "<meta name=\"viewport\" content=\"width=device-width\">\n<title>xloop: ");
	esc(&b, ctx->cfg.study);
	buf_addf(&b, "</title>\n<style>%s</style></head>\n<body>\n<h1>Study ", css);
	esc(&b, ctx->cfg.study);
	buf_addf(&b, "</h1>\n<p class=\"sub\">%zu runs &#183; metric ", n);
	esc(&b, ctx->cfg.metric);
	buf_addf(&b, " (%s is better) &#183; generated %s by xloop</p>\n",
		 ctx->cfg.goal_max ? "higher" : "lower", when);
	leaderboard(ctx, &b, v, n, best_id);
	lineage(&b, v, n);
	idle = timeline(ctx, &b, v, n, &span);
	score_chart(ctx, &b, v, n);
	details(&b, v, n);
	buf_adds(&b, "</body></html>\n");

	out = out_opt ? xstrdup(out_opt) : path_join(ctx->root, ".xloop/report.html");
	if (write_file_atomic(out, b.s, b.len, 0644, &cause) < 0) {
		error("%s", cause);
		rc = XL_ERR;
	} else if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:I, s:I, s:I, s:f}", "schema",
					"xloop.report/1", "out", out, "runs", (json_int_t)n,
					"span_s", (json_int_t)span, "idle_s", (json_int_t)idle,
					"idle_percent", span > 0 ? 100.0 * (double)idle /
					(double)span : 0.0));
		rc = 0;
	} else {
		printf("wrote %s (%zu runs; GPU idle %lld s of %lld s)\n", out, n, idle, span);
		rc = 0;
	}
	free(out);
out:
	for (i = 0; i < n; i++) {
		run_release(&v[i].r);
		attempts_free(v[i].a, v[i].na);
	}
	free(v);
	free(cause);
	buf_release(&b);
	return rc;
}

const struct cmd_entry cmd_report_entry = {
	"report", "[--out F.html]",
	"the study as one self-contained HTML page (leaderboard, lineage, GPU timeline)",
	"Writes .xloop/report.html (or F.html): inline CSS and SVG, no script,\n"
	"nothing fetched, readable offline. A leaderboard with the best run\n"
	"highlighted; the lineage tree (edges labelled with the change, coloured\n"
	"by verdict); the GPU timeline, one bar per attempt, with the idle gaps\n"
	"between jobs shaded and summed; the score of proven runs over time with\n"
	"the best so far; each run's one-line diff, attempts, and the log tail of\n"
	"failures. Reads the state DB and the logs only: Slurm is not asked.\n",
	CMD_DB | CMD_NOROOT, cmd_report,
};
