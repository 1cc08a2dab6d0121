/* The report's HTML: the head, leaderboard, configurations, run details. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "search/best.h"
#include "briefing/briefing.h"
#include "report/report-impl.h"
#include "jobs/segments.h"

/* Write out what the page holds once it is at least at_least bytes. */
void report_flush(struct page *pg, size_t at_least)
{
	if (pg->b.len < at_least)
		return;
	if (!pg->cause)
		atomic_write(&pg->f, pg->b.s, pg->b.len, &pg->cause);
	buf_reset(&pg->b);
}

/* Append text with HTML's special characters escaped. */
void report_esc(struct buf *b, const char *s)
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

/* "success", "failure", "stopped", "live" or "new": the CSS class of a run. */
const char *report_run_class(const struct rrun *x)
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
void report_add_duration(struct buf *b, long long s)
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
	report_esc(b, r->var);
	buf_adds(b, ": ");
	report_esc(b, r->old_value);
	buf_adds(b, " &#8594; ");
	report_esc(b, r->new_value);
}

/* The leaderboard's goal, for by_score. */
static int goal_max_for_sort;

/* Order for the leaderboard: scored runs best first, then the rest. */
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

/* The runs, best first, with their change, verdict, attempts and duration. */
void report_leaderboard(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n,
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
	report_esc(b, ctx->cfg.metric);
	buf_adds(b, "</th><th>verdict</th><th>attempts</th><th>duration</th></tr>\n");
	for (i = 0; i < n; i++)
		o[i]->shown = n <= REPORT_FULL_RUNS || i < REPORT_TOP;
	for (i = 0; i < n && o[i]->shown; i++) {
		const struct rrun *x = o[i];
		const struct attempt *l = x->last;

		buf_addf(b, "<tr class=\"run %s%s\" data-tag=\"", report_run_class(x),
			 x->r.id == best_id ? " best" : "");
		report_esc(b, x->r.tag);
		buf_addf(b, "\"><td class=\"num\">%zu</td><td class=\"wrap\"><a href=\"#run-", i + 1);
		report_esc(b, x->r.tag);
		buf_adds(b, "\">");
		report_esc(b, x->r.tag);
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
		buf_addf(b, "</td><td>%s", report_run_class(x));
		if (l && *l->verdict && strcmp(l->verdict, "failure") == 0 && *l->state) {
			buf_adds(b, " (");
			report_esc(b, l->state);
			buf_adds(b, ")");
		}
		buf_addf(b, "</td><td class=\"num\">%zu</td><td class=\"num\">", x->na);
		report_add_duration(b, l && l->started_at && l->ended_at ?
			     l->ended_at - l->started_at : -1);
		buf_adds(b, "</td></tr>\n");
		report_flush(pg, 1 << 20);
	}
	buf_adds(b, "</table>\n");
	if (i < n)
		buf_addf(b, "<p class=\"sub\">The best %zu of %zu runs; <code>xloop status "
			 "--sort score</code> lists them all.</p>\n", i, n);
	free(o);
}

/* A configuration and its sort key. */
struct keyed {
	double key;
	long i;
};

/* Configurations by key, then index. */
static int by_key(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;

	return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->i > b->i) - (a->i < b->i);
}

/* Configurations: replicates folded under their configuration, estimate ± sd, raw mean. */
void report_configurations(struct xl_ctx *ctx, struct page *pg)
{
	struct buf *b = &pg->b;
	struct best_state bs;
	struct keyed *sorted;
	struct best_info bi;
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
	buf_adds(b, "best: the model's pick, <code>xloop help best</code></p>\n");
	{
		/* the best (the model's pick), confirmed or not */
		json_t *ol = best_outlook(&bs, &ctx->cfg.search.space, ctx->cfg.search.seed);

		if (json_is_object(ol)) {
			buf_adds(b, "<p class=\"sub\">choice: ");
			report_esc(b, json_string_value(json_object_get(ol, "text")));
			buf_adds(b, "</p>\n");
		}
		json_decref(ol);
	}
	buf_adds(b, "<p class=\"sub\">estimate: what the choice uses (the model's, the shrunken "
		 "mean, or the mean); &#177; one posterior sd; raw mean: the plain mean of its "
		 "runs (<code>xloop help glossary</code>)</p>\n");
	buf_adds(b, "<table class=\"board\">\n<tr><th>run</th><th>estimate</th><th>&#177; sd</th>"
		 "<th>raw mean</th><th>n</th><th>runs</th></tr>\n");
	o = xcalloc(bs.n, sizeof(*o));
	sorted = xcalloc(bs.n, sizeof(*sorted));
	for (i = k = 0; i < (long)bs.n; i++)
		if (bs.v[i].st.n > 0) {
			/* best first: sort by the goal-signed estimate, ascending */
			best_info_of(&bs, i, &bi);
			sorted[k].key = ctx->cfg.goal_max ? -bi.est : bi.est;
			sorted[k++].i = i;
		}
	qsort(sorted, (size_t)k, sizeof(*sorted), by_key);
	for (i = 0; i < k; i++)
		o[i] = sorted[i].i;
	free(sorted);
	for (i = 0; i < k && i < 200; i++) {
		const struct best_cfg *c = &bs.v[o[i]];

		buf_addf(b, "<tr class=\"run%s\"><td>", o[i] == bs.best ? " best" : "");
		report_esc(b, c->rep_tag);
		if (o[i] == bs.best)
			buf_adds(b, " <span class=\"tagbest\">best</span>");
		best_info_of(&bs, o[i], &bi);
		buf_addf(b, "</td><td class=\"num\">%.6g%s</td><td class=\"num\">", bi.est,
			 strcmp(bi.est_kind, "mean") == 0 ? "" : strcmp(bi.est_kind, "model") == 0 ?
			 " (model)" : " (shrunken)");
		if (bi.checked)
			buf_addf(b, "%.2g", bi.est_sd);
		else
			buf_adds(b, "unchecked");
		buf_addf(b, "</td><td class=\"num\">%.6g</td><td class=\"num\">%ld</td>"
			 "<td class=\"num\">%ld</td></tr>\n", c->st.mean, c->st.n, c->runs);
	}
	buf_adds(b, "</table>\n");
	free(o);
	best_release(&bs);
}

/* "VAR=value", escaped. */
static void add_setting(struct buf *b, const char *var, const char *value)
{
	report_esc(b, var);
	buf_adds(b, "=");
	report_esc(b, value);
}

/* Each run's diff and attempts, read again from the DB run by run. */
int report_details(struct xl_ctx *ctx, struct page *pg, struct rrun *v, size_t n)
{
	struct buf *b = &pg->b;
	struct attempt_walk w;
	size_t i, j, k;

	if (attempt_walk_open(&ctx->db, ctx->cfg.study, 0, &w) < 0)
		return -1;
	buf_adds(b, "<h2 id=\"runs\">Runs</h2>\n");
	if (n > REPORT_FULL_RUNS)
		buf_addf(b, "<p class=\"sub\">The leaderboard's %d runs and the path to the "
			 "best; <code>xloop status T</code> shows any run.</p>\n", REPORT_TOP);
	for (i = 0; i < n; i++) {
		const struct rrun *x = &v[i];
		struct attempt *att;
		size_t na;

		if (!x->shown && !x->on_best)
			continue;	/* a long study's: the walk skips its attempts */
		if (attempt_walk_run(&w, x->r.id, &att, &na) < 0) {
			attempt_walk_close(&w);
			return -1;
		}

		buf_addf(b, "<section class=\"detail %s\" id=\"run-", report_run_class(x));
		report_esc(b, x->r.tag);
		buf_adds(b, "\"><h3>");
		report_esc(b, x->r.tag);
		buf_adds(b, "</h3>\n<p class=\"diff\">");
		if (x->r.parent_id) {
			buf_adds(b, "from <a href=\"#run-");
			report_esc(b, x->r.parent_tag);
			buf_adds(b, "\">");
			report_esc(b, x->r.parent_tag);
			buf_adds(b, "</a>: <code>- ");
			add_setting(b, x->r.var, x->r.old_value);
			buf_adds(b, "</code> <code>+ ");
			add_setting(b, x->r.var, x->r.new_value);
			buf_adds(b, "</code>");
		} else {
			buf_adds(b, "root run (adopted)");
		}
		buf_adds(b, "</p>\n<ul>\n");
		for (j = 0; j < na; j++) {
			const struct attempt *a = &att[j];

			buf_addf(b, "<li>attempt %lld: ", a->n);
			report_esc(b, *a->verdict ? a->verdict : *a->state ? a->state : a->phase);
			if (*a->verdict_reason) {
				buf_adds(b, " &#8212; ");
				report_esc(b, a->verdict_reason);
			}
			if (*a->job_id) {
				buf_adds(b, " (job ");
				report_esc(b, a->job_id);
				buf_adds(b, ")");
			}
			if (!*a->verdict && *a->job_id) {
				/* "segment 3 (at most 20), 2 h 40 min so far" */
				char *seg = segments_progress(ctx, a->id);

				if (seg) {
					buf_adds(b, ", ");
					report_esc(b, seg);
				}
				free(seg);
			}
			if (strcmp(a->verdict, "failure") == 0) {
				json_t *tail = briefing_log_tail(a->log_path, 8);

				buf_adds(b, "<pre class=\"tail\">");
				for (k = 0; k < json_array_size(tail); k++) {
					report_esc(b, json_string_value(json_array_get(tail, k)));
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
		report_flush(pg, 1 << 20);
	}
	attempt_walk_close(&w);
	return 0;
}

/* The page's style. */
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
	".bar.stopped{fill:#d9a520}.node.stopped rect{fill:#f3e2b3}.edge.stopped{stroke:#b80}"
	"figure.curve{display:inline-block;width:320px;vertical-align:top;margin:4px 8px}"
	".crun{fill:none;stroke:#d9a520;"
	"stroke-width:2}.cbest{fill:none;stroke:#393;stroke-width:1.5;stroke-dasharray:4 3}"
	".nan{fill:#c33}"
	".gap{fill:#f0a000;opacity:.35}.blabel{fill:#fff;font-size:11px}"
	".step{fill:none;stroke:#393;stroke-width:2}"
	".pt{fill:#36c}.idle{font-weight:bold}pre.tail{background:#f7f0f0;padding:6px;"
	"overflow-x:auto}section.detail{border-top:1px solid #eee}"
	".node.bestpath rect{stroke:#e8b400;stroke-width:3}.node.bestpath text.ntext"
	"{font-weight:bold}.edge.bestpath{stroke:#e8b400;stroke-width:3.5}"
	".timeline text.blabel{font:11px monospace;fill:#fff}";

/* The page's head: its title, style, and the study's line. */
void report_head(struct xl_ctx *ctx, struct page *pg, size_t n)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	buf_adds(&pg->b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		 "<meta name=\"viewport\" content=\"width=device-width\">\n<title>xloop: ");
	report_esc(&pg->b, ctx->cfg.study);
	buf_addf(&pg->b, "</title>\n<style>%s</style></head>\n<body>\n<h1>Study ", css);
	report_esc(&pg->b, ctx->cfg.study);
	buf_addf(&pg->b, "</h1>\n<p class=\"sub\">%zu runs &#183; metric ", n);
	report_esc(&pg->b, ctx->cfg.metric);
	buf_addf(&pg->b, " (%s is better) &#183; generated %s by xloop</p>\n",
		 ctx->cfg.goal_max ? "higher" : "lower", when);
}
