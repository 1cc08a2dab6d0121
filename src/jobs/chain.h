/*
 * The chain: the user's live jobs, each waiting (afterany) for the one
 * before it, so the GPU goes from one to the next without a gap (SPEC
 * rule 3). Read from one squeue call and mapped to the study's runs; used
 * by `why` (what a job waits for, when it may start) and `prioritize`.
 */
#ifndef XLOOP_CHAIN_H
#define XLOOP_CHAIN_H

#include "ctx.h"
#include "slurm/slurm.h"

struct chain_job {
	char *id;		/* what a dependency names: "12" (an array: its job id) */
	char *tag;		/* the study's run, a sweep's name, or "" (not the study's) */
	int array;		/* a job array (a sweep) */
	int running;		/* it, or one of its tasks, runs */
	long long pending;	/* its tasks still pending (1 for a pending job) */
	long long elapsed;	/* seconds its running task has run so far, -1 none */
	char *after;		/* the first job its dependency names, "" none */
	char *dependency;	/* as squeue prints it */
	long long attempt_id;	/* the study's attempt of a single job, 0 otherwise */
};

/* kv key: the job `prioritize` holds while it swaps two jobs (0: none). */
#define CHAIN_HELD_KEY "prioritize_held"

struct chain {
	struct chain_job *v;
	size_t n;
};

/* The user's live jobs (one squeue call). 0 or an exit code with *cause. */
int chain_load(struct xl_ctx *ctx, struct slurm *s, struct chain *c, char **cause);
void chain_release(struct chain *c);
/* The job named id ("12" or "12_3": its array), or NULL. */
struct chain_job *chain_find(struct chain *c, const char *id);
/* A job that waits for id, or NULL. */
struct chain_job *chain_waiting_for(struct chain *c, const char *id);

/*
 * How long a run of the study usually takes: the median seconds of its
 * latest 20 successful attempts; -1 when it has none. *samples: how many.
 */
long long chain_typical_secs(struct xl_ctx *ctx, size_t *samples);

/* Release the job a `prioritize` that died held (CHAIN_HELD_KEY). */
void chain_release_held(struct xl_ctx *ctx, struct slurm *s);

/* "45 s", "12 min", "3.5 h" (malloc'd). */
char *chain_duration(long long secs);

#endif
