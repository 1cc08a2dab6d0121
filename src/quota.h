/*
 * The user's Slurm limits (SPEC rule 12): how many jobs they may have
 * submitted and running, how many GPUs at once, from their association
 * and QOS (sacctmgr, where accounting exists) or from the configuration;
 * cached in the DB's kv table and refreshed every few minutes or after
 * sbatch was refused by a limit.
 */
#ifndef XLOOP_QUOTA_H
#define XLOOP_QUOTA_H

struct xl_ctx;

/* How many lanes "auto" means: the GPUs the user may hold at once. */
long long quota_auto_lanes(struct xl_ctx *ctx);

/* How many jobs the study may have submitted at once, -1 for no limit. */
long long quota_submit_limit(struct xl_ctx *ctx);

#endif
