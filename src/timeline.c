/* The report's GPU timeline as data: bars of attempts and of their segments, their rows. */
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "slurm/parse.h"
#include "timeline.h"
#include "lib/util.h"

/* Copy s into node, cut to its size (a host name is at most 63 bytes). */
static void set_node(char node[64], const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n > 63)
		n = 63;
	memcpy(node, s ? s : "", n);
	node[n] = '\0';
}

/*
 * Room for bar nb: the array doubles at each power of two (it never
 * holds fewer than that), so 400,000 bars (50,000 attempts of 8 GPUs)
 * are not 400,000 reallocations.
 */
static void bars_room(struct bar **bars, size_t nb)
{
	if ((nb & (nb - 1)) == 0)
		*bars = xreallocarray(*bars, nb ? 2 * nb : 1, sizeof(**bars));
}

/*
 * The GPUs attempt a ran on on host (NULL: a NodeList it cannot read, one
 * row named as Slurm wrote it) into idx: how many, 0 when none is known.
 */
static long gpus_on(const struct attempt *a, const char *host, long long idx[TIMELINE_GPUS])
{
	const char *list;
	size_t n;
	long k;

	if (!host && strchr(a->gpus, '='))
		return 0;	/* each node's GPUs, and not which node this is */
	/* "" (not asked yet) and "?" (none named) are no list */
	list = slurm_gpu_map_find(a->gpus, host ? host : "", &n);
	k = list ? slurm_idx_list(list, n, idx, TIMELINE_GPUS) : 0;
	return k > 0 ? k : 0;
}

/*
 * An attempt that ran (or runs) becomes a bar of the timeline on each GPU
 * it was given on each of its nodes (one bar a node where no GPU is known).
 */
void timeline_add(struct bar **bars, size_t *nb, const struct rrun *x, const struct attempt *a,
		  long long now)
{
	long long end = a->ended_at ? a->ended_at : strcmp(a->state, "RUNNING") == 0 ? now : 0;
	long long idx[TIMELINE_GPUS];
	char **hosts = NULL;
	long nh, k, g, ng;
	int copies = 0;

	if (!a->started_at || !end || end < a->started_at)
		return;
	/*
	 * a NodeList it cannot read (or too long) is one row, named as Slurm
	 * wrote it; a node whose GPUs were seen while the job ran is one of
	 * its nodes, though the NodeList kept at its end may not say so (sacct
	 * read just after the end can name the batch host alone)
	 */
	nh = slurm_hostlist_expand(a->node, TIMELINE_NODES, &hosts, NULL);
	if (nh >= 0)
		nh = slurm_gpu_map_hosts(a->gpus, TIMELINE_NODES, &hosts, nh);
	for (k = 0; k < (nh > 0 ? nh : 1); k++) {
		ng = gpus_on(a, nh > 0 ? hosts[k] : NULL, idx);
		for (g = 0; g < (ng > 0 ? ng : 1); g++) {
			struct bar *r;

			bars_room(bars, *nb);
			r = &(*bars)[(*nb)++];
			memset(r, 0, sizeof(*r));
			r->start = a->started_at;
			r->end = end;
			r->run = x;
			r->n = a->n;
			r->attempt_id = a->id;
			r->cls = strcmp(a->verdict, "success") == 0 ? "success" :
				 strcmp(a->verdict, "failure") == 0 ? "failure" :
				 strcmp(a->verdict, "stopped") == 0 ? "stopped" : "live";
			xsnprintf(r->label, sizeof(r->label), "%s", *a->state ? a->state : a->phase);
			r->gpu = ng > 0 ? idx[g] : -1;
			r->gpus = (int)ng;
			r->restarts = a->restarts;
			set_node(r->node, nh > 0 ? hosts[k] : a->node);
			r->nodes = nh > 0 ? (int)nh : (int)slurm_hostlist_count(a->node);
			r->copy = copies++;
		}
	}
	slurm_hosts_free(hosts, nh > 0 ? nh : 0);
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
		size_t m;

		while (j < n0 && (*bars)[j].attempt_id < sp[i].attempt_id)
			j++;
		/* the segment on each node of its attempt's job */
		for (m = j; m < n0 && (*bars)[m].attempt_id == sp[i].attempt_id; m++) {
			struct bar *whole, *r;

			bars_room(bars, *nb);
			whole = &(*bars)[m];
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

		size_t first = n0;

		/* its attempt's bars (one per node) are step 1 */
		for (j = 0; j < n0; j++) {
			if ((*bars)[j].attempt_id != sp[i].attempt_id)
				continue;
			if (first == n0)
				first = j;
			if (!(*bars)[j].step) {
				(*bars)[j].step = 1;
				xsnprintf((*bars)[j].step_name, sizeof((*bars)[j].step_name), "job");
			}
		}
		if (first == n0)
			continue;
		bars_room(bars, *nb);
		r = &(*bars)[(*nb)++];
		*r = (*bars)[first];
		r->start = sp[i].start;
		r->end = sp[i].end;
		r->seg = 0;
		r->covered = 0;
		r->gpu = -1;		/* a later step's GPU and node are not recorded */
		r->gpus = 0;
		r->node[0] = '\0';
		r->nodes = 0;
		r->copy = 0;
		r->step = sp[i].k;
		xsnprintf(r->step_name, sizeof(r->step_name), "%s", sp[i].name);
		xsnprintf(r->label, sizeof(r->label), "%s", sp[i].state);
	}
}

/* Compare node names with their numbers as numbers: node2 before node10. */
static int node_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			size_t za = strspn(a, "0"), zb = strspn(b, "0");
			size_t da = strspn(a + za, "0123456789"), db = strspn(b + zb, "0123456789");
			int c;

			if (da != db)
				return da < db ? -1 : 1;
			c = memcmp(a + za, b + zb, da);
			if (c)
				return c;
			if (za != zb)
				return za < zb ? -1 : 1;	/* n01 after n1 */
			a += za + da;
			b += zb + db;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* GPU rows by node (unknown last), then index. */
static int by_row(const void *pa, const void *pb)
{
	const struct gpu_row *a = pa, *b = pb;
	int c = !*a->node - !*b->node;

	if (!c)
		c = node_cmp(a->node, b->node);
	return c ? c : (a->gpu > b->gpu) - (a->gpu < b->gpu);
}

/* The row of a bar's GPU, or nrows when it has none. */
static size_t row_of(const struct bar *b, const struct gpu_row *rows, size_t nrows, int named)
{
	size_t g;

	if (b->gpu < 0)
		return nrows;
	for (g = 0; g < nrows; g++)
		if (rows[g].gpu == b->gpu && (!named || strcmp(rows[g].node, b->node) == 0))
			break;
	return g;
}

/* Put each bar on its row: GPU rows by (node, index), then packed rows. */
int timeline_lanes(struct bar *bars, size_t nb, struct gpu_row *rows, size_t *nrows,
		   size_t max_rows, int max_lanes, int *named)
{
	long long *lane_end = xcalloc(max_lanes > 0 ? (size_t)max_lanes : 1, sizeof(*lane_end));
	long long t0 = 0, t1 = 0;
	const char *one = "";
	size_t i, g;
	int lanes;

	/* one node named (or none): the rows are its GPU indexes */
	*named = 0;
	for (i = 0; i < nb && !*named; i++) {
		if (bars[i].gpu < 0 || !*bars[i].node)
			continue;
		if (!*one)
			one = bars[i].node;
		else if (strcmp(one, bars[i].node) != 0)
			*named = 1;
	}
	*nrows = 0;
	for (i = 0; i < nb; i++) {
		if (bars[i].gpu < 0 || row_of(&bars[i], rows, *nrows, *named) < *nrows ||
		    *nrows >= max_rows)
			continue;
		rows[*nrows].gpu = bars[i].gpu;
		set_node(rows[*nrows].node, *named ? bars[i].node : one);
		rows[*nrows].busy = rows[*nrows].idle = 0;
		(*nrows)++;
	}
	qsort(rows, *nrows, sizeof(*rows), by_row);
	lanes = (int)*nrows;
	for (i = 0; i < nb; i++) {
		int l = (int)row_of(&bars[i], rows, *nrows, *named);

		if (l == (int)*nrows) {
			for (l = (int)*nrows; l < lanes && lane_end[l] > bars[i].start; l++)
				;
			if (l == lanes && lanes < max_lanes)
				lanes++;
			if (l >= lanes)
				l = lanes - 1;
		}
		bars[i].lane = l;
		if (l >= 0)
			lane_end[l] = bars[i].end;
		if (l >= 0 && l < (int)*nrows)
			rows[l].busy += bars[i].end - bars[i].start;
		if (!i || bars[i].start < t0)
			t0 = bars[i].start;
		if (bars[i].end > t1)
			t1 = bars[i].end;
	}
	for (g = 0; g < *nrows; g++)
		rows[g].idle = t1 - t0 > rows[g].busy ? t1 - t0 - rows[g].busy : 0;
	free(lane_end);
	return lanes;
}
