/*
 * The user's Slurm limits (SPEC rule 12): how many jobs they may have
 * queued or running at once and how many GPUs they may hold, from their
 * association and QOS (sacctmgr, where accounting exists; nothing
 * otherwise), cached in the DB's kv table and refreshed every
 * QUOTA_TTL_SECS or after sbatch was refused by a limit, so that a tick
 * costs two sacctmgr calls at most every few minutes.
 */
#ifndef XLOOP_QUOTA_H
#define XLOOP_QUOTA_H

struct xl_ctx;
struct slurm;

#define QUOTA_TTL_SECS 300

/*
 * Read the limits (and, for "auto" lanes, the nodes the newest run's
 * job.sh asks) again when the cache is older than QUOTA_TTL_SECS, a
 * refusal came since or the GPUs of the study's jobs changed; only for
 * studies with more than one lane or after a refusal (one lane never asks
 * sacctmgr). Failing to read is no error:
 * the cache then says "no limit known" until the next refresh.
 */
void quota_refresh(struct xl_ctx *ctx, struct slurm *s);

/* sbatch was refused by limit: the next feeding rereads the limits. */
void quota_refused(struct xl_ctx *ctx, const char *limit);

/*
 * How many lanes "auto" means: the fewest of the study's jobs (of the GPUs
 * its gres asks a node, on the nodes its newest job.sh's --nodes asks) the
 * user's GPU limit holds, the jobs they may run and the partition's nodes
 * hold at once (a node with fewer GPUs than a job asks holds none; a job of
 * N nodes takes N node places), else 1.
 */
long long quota_auto_lanes(struct xl_ctx *ctx);

/* How many jobs the user may have queued or running at once, -1 for no limit. */
long long quota_submit_limit(struct xl_ctx *ctx);

#endif
