/* The user's Slurm limits, cached in the DB. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#include "ctx.h"
#include "stages/quota.h"
#include "slurm/slurm.h"

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

/* Reread the limits when they are old, a refusal came since or the study's GPUs a job changed. */
void quota_refresh(struct xl_ctx *ctx, struct slurm *s)
{
	long long at = db_kv_get(&ctx->db, "quota.at");
	long long stale = db_kv_get(&ctx->db, "quota.stale");
	long long per = job_gpus(ctx);
	struct slurm_limits l;
	long long gpus = -1;
	char *cause = NULL;
	time_t now = time(NULL);

	if (ctx->cfg.lanes == 1 && !stale)
		return;		/* one lane: as before lanes, no sacctmgr */
	if (!stale && now - at < QUOTA_TTL_SECS && now >= at &&
	    get(ctx, "quota.job_gpus") == per)
		return;
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
 * partition's nodes hold at once.
 */
long long quota_auto_lanes(struct xl_ctx *ctx)
{
	long long per = get(ctx, "quota.job_gpus"), gpus = get(ctx, "quota.gpus");
	long long v[] = { gpus, get(ctx, "quota.jobs"), get(ctx, "quota.partition_jobs") }, n = -1;
	size_t i;

	if (gpus > 0 && per > 1)
		v[0] = gpus / per > 0 ? gpus / per : 1;	/* a limit under one job: one lane */

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
