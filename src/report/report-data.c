/* The report's data: runs and their latest attempt, bars, the lineage layout. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report-impl.h"
#include "jobs/segments.h"
#include "jobs/steps-run.h"

/* Runs sorted by id: the one with this id, or NULL. */
struct rrun *report_find_run(struct rrun *v, size_t n, long long id)
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
int report_load(struct xl_ctx *ctx, struct rrun **out, size_t *n, struct bar **bars,
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
	{
		/* each later step of a run is a bar of its own */
		struct step_span *sp;
		size_t ns;

		if (steps_spans(ctx, &sp, &ns) == 0)
			timeline_add_steps(bars, nb, sp, ns);
		free(sp);
	}
	/* the lineage: children in id order under their parent */
	for (i = *n; i-- > 0;) {
		struct rrun *x = &(*out)[i], *p = x->r.parent_id ?
			report_find_run(*out, *n, x->r.parent_id) : NULL;

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

/* Lay out the lineage (each run's depth and row); returns the rows. */
int report_lay_out(struct rrun *v, size_t n)
{
	int rows = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!v[i].r.parent_id) {
			subtree(v, i);
			layout(v, i, 0, &rows);
		}
	return rows;
}

/* Free the runs of report_load. */
void report_runs_release(struct rrun *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		run_release(&v[i].r);
		if (v[i].last)
			attempt_release(&v[i].last_a);
	}
	free(v);
}
