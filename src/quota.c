/* The user's Slurm limits, cached in the DB. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "cmd.h"
#include "quota.h"

/* What "auto" lanes are: the cached GPU limit, 1 while none is known. */
long long quota_auto_lanes(struct xl_ctx *ctx)
{
	long long n = db_kv_get(&ctx->db, "quota.gpus");

	return n > 0 ? n : 1;
}

/* The cached submit limit, -1 when none is known. */
long long quota_submit_limit(struct xl_ctx *ctx)
{
	long long n = db_kv_get(&ctx->db, "quota.submit");

	return n > 0 ? n : -1;
}
