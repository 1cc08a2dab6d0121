/*
 * The Slurm adapter: the argument vector of every Slurm command xloop runs,
 * run through an injectable runner (proc_run unless a test swaps it), with
 * the answers handed to the pure parsers of slurm-parse.h. Failures come
 * back as exit codes of the command contract: XL_UNAVAILABLE when the
 * command is not installed, XL_TEMPFAIL when the controller cannot be
 * reached or the command timed out, XL_ERR otherwise; *cause says why.
 */
#ifndef XLOOP_SLURM_H
#define XLOOP_SLURM_H

#include "lib/proc.h"
#include "slurm/parse.h"

struct slurm {
	int (*run)(struct proc *p);	/* proc_run by default */
	int timeout_ms;			/* per command */
	int calls;			/* Slurm commands run so far */
	const char *refused_by;		/* the limit that refused the last sbatch, or NULL */
};

void slurm_init(struct slurm *s);

/* One sbatch submission. NULL or "" fields are left out. */
struct slurm_submit {
	const char *script;		/* absolute path of job.sh */
	const char *job_name;
	const char *output;		/* absolute log path (stdout and stderr) */
	const char *comment;		/* carries xloop's token */
	const char *partition;
	const char *gres;
	long long cpus;			/* 0: not given */
	long long nice;			/* --nice; 0: not given */
	const char *mem;
	const char *time;
	const char *account;
	const char *qos;
	const char *dependency;		/* "afterany:123" */
	const char *array;		/* "0-5%2", "3,5": a job array */
	const char *begin;		/* --begin: "now+60" */
	const char *workdir;
	const char *signal;		/* --signal, "B:USR2@300" (segments) */
	const char *exclude;		/* --exclude: nodes it must not run on */
	int append;			/* --open-mode=append (segments share a log) */
	int kill_invalid_dep;		/* --kill-on-invalid-dep=yes */
	int hold;			/* --hold: it starts only once released */
	const char *const *env;		/* "K=V" for sbatch's environment */
};

/*
 * The comment every feeder job's starts with (driver.h): no run's comment
 * ("xloop:...") starts so, and neither a chain nor a lane counts one.
 */
#define SLURM_FEEDER_COMMENT "xloop-feed:"

/* 1 when comment is a feeder's (of any study). */
int slurm_is_feeder_comment(const char *comment);

struct config;
/*
 * Fill req (zeroed first) with what xloop.json says of every job: its
 * partition, account, qos, nice, gres and cpus; mem, time_ and dependency
 * as given; the study's root as the working directory.
 */
void slurm_fill_request(const struct config *c, const char *root, struct slurm_submit *req,
			const char *mem, const char *time_, const char *dependency);

/* The argv for req (NULL-terminated; free the array, not the strings it borrows). */
char **slurm_sbatch_argv(const struct slurm_submit *req, struct buf *scratch);

/*
 * Submit. Returns 0 with *jobid; otherwise an exit code. *ambiguous is set
 * when sbatch may have submitted although no id came back (timeout, killed,
 * non-zero exit without a clear refusal): the caller must then look for
 * the job by its comment instead of submitting again.
 */
int slurm_sbatch(struct slurm *s, const struct slurm_submit *req,
		 long long *jobid, int *ambiguous, char **cause);

/*
 * `scontrol -d show job -o ID` (-d: DerivedExitCode). Returns 0 with the records (one per array
 * task), or with *unknown set and no records when Slurm no longer knows
 * the job; otherwise an exit code.
 */
int slurm_scontrol_job(struct slurm *s, const char *jobid,
		       struct slurm_jobs *jobs, int *unknown, char **cause);

/* The current user's jobs from `squeue -h -o SLURM_SQUEUE_FORMAT -u USER`. */
int slurm_squeue_mine(struct slurm *s, struct slurm_jobs *jobs, char **cause);

/* What `squeue` shows of the chain: id, array job id, state, elapsed, dependency. */
#define SLURM_SQUEUE_LINE_FORMAT "%i|%A|%T|%M|%E"
/* The current user's jobs with what each waits for (SLURM_SQUEUE_LINE_FORMAT). */
int slurm_squeue_line(struct slurm *s, struct slurm_jobs *jobs, char **cause);

/*
 * `sacct -n -P -o SLURM_SACCT_FIELDS -j ID[,ID...]`. Returns 0 (with
 * *no_accounting set and no rows when accounting is off), or an exit code.
 */
int slurm_sacct(struct slurm *s, const char *const *jobids, size_t n,
		struct slurm_acct *acct, int *no_accounting, char **cause);


/*
 * `scontrol show partition -o [NAME]` or `scontrol show node -o`: records
 * of Key=Value pairs. *unknown is set when NAME does not exist.
 */
int slurm_scontrol_show(struct slurm *s, const char *entity, const char *name,
			struct slurm_records *recs, int *unknown, char **cause);


/*
 * `sbatch --test-only` with req: when Slurm would start it now. 0 with
 * *start, or an exit code (*cause: Slurm's refusal).
 */
int slurm_sbatch_test(struct slurm *s, const struct slurm_submit *req, time_t *start,
		      char **cause);

/* `scontrol update jobid=ID KEY=VALUE`. 0 or an exit code. */
int slurm_scontrol_update(struct slurm *s, const char *jobid, const char *key,
			  const char *value, char **cause);

/* `scontrol hold ID` (hold) or `scontrol release ID`. 0 or an exit code. */
int slurm_scontrol_hold(struct slurm *s, const char *jobid, int hold, char **cause);

/* `scancel ID`. 0 or an exit code. */
int slurm_scancel(struct slurm *s, const char *jobid, char **cause);

/*
 * `scontrol ping`: 0 with every configured controller and whether it
 * answers (also when none does: scontrol then exits 1), or an exit code
 * when scontrol could not be run or printed something else.
 */
int slurm_ping(struct slurm *s, struct slurm_ping *ping, char **cause);

/* `sinfo -R -h -o '%n|%E|%H'`: down, drained and failing nodes with why. */
int slurm_sinfo_reasons(struct slurm *s, struct slurm_node_reasons *reasons,
			char **cause);

/* `scontrol show config`: the "Key = Value" pairs as one record. */
int slurm_show_config(struct slurm *s, struct slurm_record *conf, char **cause);

/*
 * The user's limits from the accounting database (two sacctmgr calls: the
 * associations, then their QOS, or the configured qos when not ""). 0, or
 * an exit code with *cause (no accounting: sacctmgr cannot reach slurmdbd).
 */
int slurm_sacctmgr_limits(struct slurm *s, const char *account, const char *partition,
			  const char *qos, struct slurm_limits *l, char **cause);

/*
 * The GPU indexes job jobid runs on, node by node, from `scontrol -d show
 * job -o`: slurm_job_gpu_map's map ("0", "1,3", "node2=1;node3=0";
 * malloc'd in *idx, NULL when Slurm names none). 0 or an exit code with
 * *cause.
 */
int slurm_job_gpus(struct slurm *s, const char *jobid, char **idx, char **cause);

/*
 * How many jobs of per_job GPUs a node the nodes of partition hold at once
 * (sinfo, one call; slurm_sinfo_gpus): 0 or an exit code with *cause.
 */
int slurm_partition_gpus(struct slurm *s, const char *partition, long long per_job,
			 long long *gpus, char **cause);

/*
 * `scrontab -l` into *out ("" when the user has none). 0 or an exit code
 * (*cause: Slurm's words, e.g. scrontab disabled by the site).
 */
int slurm_scrontab_get(struct slurm *s, struct buf *out, char **cause);
/* `scrontab FILE`: replace the user's scrontab. 0 or an exit code. */
int slurm_scrontab_set(struct slurm *s, const char *file, char **cause);

#endif
