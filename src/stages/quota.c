/* The user's Slurm limits, cached in the DB. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "ctx.h"
#include "jobsh/directives.h"
#include "lib/buf.h"
#include "runs.h"
#include "stages/quota.h"
#include "slurm/slurm.h"
#include "study.h"

/* Store one limit: kv holds integers, 0 meaning unset, so n + 1. */
static void put(struct xl_ctx *ctx, const char *key, long long n)
{
	db_kv_set(&ctx->db, key, n < 0 ? 0 : n + 1);
}

/* One cached limit, -1 when none. */
static long long get(struct xl_ctx *ctx, const char *key)
{
	return db_kv_get(&ctx->db, key) - 1;
}

/* The GPUs a job of the study holds on a node, at least 1 (a CPU job holds a lane too). */
static long long job_gpus(struct xl_ctx *ctx)
{
	return slurm_gres_charged_gpus(ctx->cfg.res.gres);
}

/*
 * The nodes a job of the study spans: the --nodes of its newest run's
 * job.sh (the fewest it allows), 1 when it names none or cannot be read.
 */
static long long job_nodes(struct xl_ctx *ctx)
{
	struct sbatch_directives d;
	struct buf text = BUF_INIT;
	struct stmt q;
	char *path = NULL, *cause = NULL;
	long long n = 1;
	int err;

	if (db_prepare(&ctx->db, &q, "SELECT tag FROM run WHERE study = :study"
		       " ORDER BY id DESC LIMIT 1") < 0)
		return 1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	if (db_step(&q) == SQLITE_ROW)
		path = run_job_path(ctx->root, ctx->cfg.study, db_col_text(&q, 0));
	db_finalize(&q);
	if (path && study_read_script(path, &text, &err, &cause) == 0) {
		sbatch_directives_parse(text.s, &d);
		n = sbatch_directives_nodes(&d);
		sbatch_directives_release(&d);
	}
	free(cause);
	free(path);
	buf_release(&text);
	return n;
}

/*
 * Reread the limits (and the nodes a job spans) when they are old, a
 * refusal came since or the study's GPUs a job changed.
 */
void quota_refresh(struct xl_ctx *ctx, struct slurm *s)
{
	long long at = db_kv_get(&ctx->db, "quota.at");
	long long stale = db_kv_get(&ctx->db, "quota.stale");
	long long per = job_gpus(ctx), nodes;
	struct slurm_limits l;
	long long gpus = -1;
	char *cause = NULL;
	time_t now = time(NULL);

	if (ctx->cfg.lanes == 1 && !stale)
		return;		/* one lane: as before lanes, no sacctmgr */
	if (!stale && now - at < QUOTA_TTL_SECS && now >= at &&
	    get(ctx, "quota.job_gpus") == per)
		return;
	/* only "auto" counts them; read with the limits, not on every tick */
	nodes = ctx->cfg.lanes == 0 ? job_nodes(ctx) : 1;
	if (slurm_sacctmgr_limits(s, ctx->cfg.account, ctx->cfg.partition, ctx->cfg.qos,
				  &l, &cause) != 0) {
		slurm_limits_none(&l);	/* no accounting: the config's lanes hold */
		FREE_AND_NULL(cause);
	}
	/* the jobs of this study's GPUs that its partition's nodes hold at once:
	 * a node of 1 GPU holds no job of 2, so it is no lane of the study */
	if (ctx->cfg.lanes == 0 &&
	    slurm_partition_gpus(s, ctx->cfg.partition, per, &gpus, &cause)) {
		gpus = -1;	/* "auto" lanes without the partition's count: the limits alone */
		FREE_AND_NULL(cause);
	}
	if (db_begin_write(&ctx->db) < 0)
		return;
	put(ctx, "quota.submit", l.max_submit);
	put(ctx, "quota.jobs", l.max_jobs);
	put(ctx, "quota.gpus", l.max_gpus);
	put(ctx, "quota.partition_jobs", gpus > 0 ? gpus : -1);
	put(ctx, "quota.job_gpus", per);
	put(ctx, "quota.job_nodes", nodes);
	db_kv_set(&ctx->db, "quota.at", now);
	db_kv_set(&ctx->db, "quota.stale", 0);
	if (db_commit(&ctx->db) < 0)
		warning("unable to cache the Slurm limits");
}

/* Remember that a limit refused a job. */
void quota_refused(struct xl_ctx *ctx, const char *limit)
{
	(void)limit;
	db_kv_set(&ctx->db, "quota.stale", 1);
}

/*
 * What "auto" lanes are: the fewest of the study's jobs the user's GPUs
 * hold, the running jobs they may have, and the study's jobs the
 * partition's nodes hold at once. A job of N nodes takes N of the
 * partition's node-sized places and N times its GPUs a node.
 */
long long quota_auto_lanes(struct xl_ctx *ctx)
{
	long long per = get(ctx, "quota.job_gpus"), gpus = get(ctx, "quota.gpus");
	long long nodes = get(ctx, "quota.job_nodes");
	long long v[] = { gpus, get(ctx, "quota.jobs"), get(ctx, "quota.partition_jobs") }, n = -1;
	size_t i;

	per = per > 1 ? per : 1;
	nodes = nodes > 1 ? nodes : 1;
	/* a limit under one job: one lane */
	if (gpus > 0 && per * nodes > 1)
		v[0] = gpus / (per * nodes) > 0 ? gpus / (per * nodes) : 1;
	if (v[2] > 0 && nodes > 1)
		v[2] = v[2] / nodes > 0 ? v[2] / nodes : 1;

	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (v[i] > 0 && (n < 0 || v[i] < n))
			n = v[i];
	return n > 0 ? n : 1;
}

/* The cached submit limit, -1 when none is known. */
long long quota_submit_limit(struct xl_ctx *ctx)
{
	return get(ctx, "quota.submit");
}
