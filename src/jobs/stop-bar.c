/* The stop bar of a run, written at submit: see stop-bar.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobs/stop-bar.h"
#include "jobs/stop-rule.h"
#include "lib/fsutil.h"
#include "lib/util.h"
#include "search/best.h"

/* At most this many runs' progress files are read for one bar (the replicates first). */
#define STOP_BAR_RUNS 256

/* Read run id's curve from its progress file into c (empty when none). */
static void read_curve(struct xl_ctx *ctx, long long id, long cfg, struct stop_curve *c)
{
	char *tag = runs_tag(&ctx->db, id), *dir, *p, *cause = NULL;
	struct buf t = BUF_INIT;
	int err;

	c->v = NULL;
	c->len = 0;
	c->cfg = cfg;
	if (!tag)
		return;
	dir = run_dir(ctx->root, ctx->cfg.study, tag);
	p = path_join(dir, "progress");
	if (read_file(p, 1 << 22, &t, &err, &cause) == 0 && t.s)
		stop_curve_parse(t.s, c);
	buf_release(&t);
	free(cause);
	free(p);
	free(dir);
	free(tag);
}

/* Whether configuration k's proven runs are read first: the best's, the parent's, replicated ones. */
static int wanted(const struct best_state *bs, long k, long parent)
{
	return k == bs->best || k == parent || bs->v[k].st.n >= 2;
}

/* Write or remove the run's stop bar. */
int stop_bar_write(struct xl_ctx *ctx, const struct run *r, int rule_on, char **cause)
{
	const struct config *c = &ctx->cfg;
	struct stop_params p = { c->stop.warmup, c->stop.behind, c->stop.noise_z, c->goal_max };
	char *dir = run_dir(ctx->root, c->study, r->tag), *path = path_join(dir, "stop-bar");
	struct best_state bs;
	struct stop_curve *cv = NULL;
	size_t i, n = 0, len = 0, nbar = 0;
	long parent = -1;
	double *bar = NULL;
	int rc = 0, loaded = 0, pass;

	memset(&bs, 0, sizeof(bs));
	if (rule_on && c->stop.behind > 0)
		loaded = best_load(ctx, &bs) == 0;
	if (loaded && bs.best >= 0) {
		cv = xcalloc(STOP_BAR_RUNS, sizeof(*cv));
		for (i = 0; i < bs.nruns; i++)
			if (bs.runs[i].id == r->parent_id)
				parent = bs.runs[i].cfg;
		/*
		 * the newest first: the study's latest replicates when there are
		 * many; then the other proven runs, whose rises the bar allows for
		 */
		for (pass = 0; pass < 2; pass++)
			for (i = bs.nruns; i-- > 0 && n < STOP_BAR_RUNS;) {
				if (!bs.runs[i].proven || bs.runs[i].id == r->id ||
				    wanted(&bs, bs.runs[i].cfg, parent) != !pass)
					continue;
				read_curve(ctx, bs.runs[i].id, bs.runs[i].cfg, &cv[n]);
				if (cv[n].len > len)
					len = cv[n].len;
				n++;
			}
		bar = xcalloc(len + 1, sizeof(*bar));
		nbar = stop_bar(cv, n, bs.best, parent, &p, bar, len);
	}
	if (nbar) {
		struct buf b = BUF_INIT;

		stop_bar_text(bar, nbar, &p, &b);
		rc = write_file_atomic(path, b.s, b.len, 0644, cause);
		buf_release(&b);
	} else if (unlink(path) < 0 && errno != ENOENT) {
		*cause = xasprintf("unable to remove '%s': %s", path, strerror(errno));
		rc = -1;
	}
	for (i = 0; i < n; i++)
		stop_curve_release(&cv[i]);
	free(cv);
	free(bar);
	if (loaded)
		best_release(&bs);
	free(path);
	free(dir);
	return rc;
}
