/* The report's GPU timeline as data: bars of attempts and of their segments. */
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "timeline.h"
#include "lib/util.h"

/* An attempt that ran (or runs) becomes a bar of the timeline. */
void timeline_add(struct bar **bars, size_t *nb, const struct rrun *x, const struct attempt *a,
		  long long now)
{
	long long end = a->ended_at ? a->ended_at : strcmp(a->state, "RUNNING") == 0 ? now : 0;
	struct bar *r;

	if (!a->started_at || !end || end < a->started_at)
		return;
	*bars = xreallocarray(*bars, *nb + 1, sizeof(**bars));
	r = &(*bars)[(*nb)++];
	memset(r, 0, sizeof(*r));
	r->start = a->started_at;
	r->end = end;
	r->run = x;
	r->n = a->n;
	r->attempt_id = a->id;
	r->cls = strcmp(a->verdict, "success") == 0 ? "success" :
		 strcmp(a->verdict, "failure") == 0 ? "failure" : "live";
	xsnprintf(r->label, sizeof(r->label), "%s", *a->state ? a->state : a->phase);
	r->gpu = a->gpus[0] >= '0' && a->gpus[0] <= '9' ? strtoll(a->gpus, NULL, 10) : -1;
	r->restarts = a->restarts;
}

static int by_attempt(const void *pa, const void *pb)
{
	const struct bar *a = pa, *b = pb;

	return (a->attempt_id > b->attempt_id) - (a->attempt_id < b->attempt_id);
}

/* Cut segmented attempts' bars into their segments. */
void timeline_split(struct bar **bars, size_t *nb, const struct segment_span *sp, size_t ns)
{
	size_t i, j = 0, n0 = *nb, out = 0;

	if (ns == 0)
		return;
	qsort(*bars, n0, sizeof(**bars), by_attempt);
	for (i = 0; i < ns; i++) {
		struct bar *whole, *r;

		while (j < n0 && (*bars)[j].attempt_id < sp[i].attempt_id)
			j++;
		if (j == n0 || (*bars)[j].attempt_id != sp[i].attempt_id)
			continue;
		*bars = xreallocarray(*bars, *nb + 1, sizeof(**bars));
		whole = &(*bars)[j];
		r = &(*bars)[(*nb)++];
		*r = *whole;
		r->start = sp[i].start;
		r->end = sp[i].end;
		r->seg = sp[i].k;
		if (whole->covered < sp[i].end)
			whole->covered = sp[i].end;
		whole->seg = sp[i].k + 1;
		if (strcmp(whole->cls, "live") == 0 || (i + 1 < ns &&
		    sp[i + 1].attempt_id == sp[i].attempt_id))
			xsnprintf(r->label, sizeof(r->label), "continued");
	}
	for (i = 0; i < *nb; i++) {
		struct bar *b = &(*bars)[i];

		if (i < n0 && b->covered) {
			if (strcmp(b->cls, "live") != 0 || b->end <= b->covered)
				continue;	/* drawn as its segments */
			b->start = b->covered;
		}
		(*bars)[out++] = *b;
	}
	*nb = out;
}


/* A bar per later step, named; their attempts' bars become step 1. */
void timeline_add_steps(struct bar **bars, size_t *nb, const struct step_span *sp, size_t ns)
{
	size_t i, j, n0 = *nb;

	for (i = 0; i < ns; i++) {
		struct bar *r;

		for (j = 0; j < n0 && (*bars)[j].attempt_id != sp[i].attempt_id; j++)
			;
		if (j == n0)
			continue;
		if (!(*bars)[j].step) {
			(*bars)[j].step = 1;
			xsnprintf((*bars)[j].step_name, sizeof((*bars)[j].step_name), "job");
		}
		*bars = xreallocarray(*bars, *nb + 1, sizeof(**bars));
		r = &(*bars)[(*nb)++];
		*r = (*bars)[j];
		r->start = sp[i].start;
		r->end = sp[i].end;
		r->seg = 0;
		r->covered = 0;
		r->gpu = -1;		/* a later step's GPU is not recorded */
		r->step = sp[i].k;
		xsnprintf(r->step_name, sizeof(r->step_name), "%s", sp[i].name);
		xsnprintf(r->label, sizeof(r->label), "%s", sp[i].state);
	}
}
