/*
 * Pure parsers for the user's limits as sacctmgr prints them, and for the
 * sbatch refusals those limits cause (SPEC rule 12: a limit is
 * back-pressure, never a failure). Nothing here does I/O.
 *
 *   sacctmgr --parsable2 show assoc where user=U format=...   (a header line, then rows)
 *   sacctmgr --parsable2 show qos format=...
 *
 * Columns are found by the header's names, so their order does not
 * matter; an empty field is no limit.
 */
#ifndef XLOOP_SLURM_PARSE_SACCTMGR_H
#define XLOOP_SLURM_PARSE_SACCTMGR_H

/* The fields xloop asks for. */
#define SACCTMGR_ASSOC_FORMAT "format=User,Account,Partition,QOS,MaxJobs,MaxSubmit,GrpTRES,MaxTRES"
#define SACCTMGR_QOS_FORMAT "format=Name,MaxJobsPU,MaxSubmitPU,MaxTRESPU,GrpTRES,GrpJobs,GrpSubmit"

/* Limits on the user's jobs; -1 where none is set. */
struct slurm_limits {
	long long max_jobs;	/* running at once */
	long long max_submit;	/* queued or running at once */
	long long max_gpus;	/* GPUs held at once (gres/gpu) */
};

void slurm_limits_none(struct slurm_limits *l);

/*
 * The user's associations (account and partition: "" for any): the
 * tightest of their limits into *l (which it lowers, never raises), and
 * the QOS names they grant, comma-separated, into *qos (malloc'd). 0, or
 * -1 with *cause for text that is not sacctmgr's.
 */
int slurm_parse_sacctmgr_assoc(const char *text, const char *account, const char *partition,
			       struct slurm_limits *l, char **qos, char **cause);

/* The QOS named in the comma-separated list qos ("" for none): their limits into *l. */
int slurm_parse_sacctmgr_qos(const char *text, const char *qos, struct slurm_limits *l,
			     char **cause);

/* The GPUs in a TRES list ("cpu=8,gres/gpu=4" or "gres/gpu:a100=2"), -1 when none. */
long long slurm_tres_gpus(const char *tres);

/*
 * The limit that made sbatch refuse a job ("QOSMaxSubmitJobPerUserLimit",
 * "AssocMaxSubmitJobLimit", ...) from its stderr, or NULL when the
 * refusal was not a limit's. The result points into a static table.
 */
const char *slurm_limit_refusal(const char *sbatch_stderr);

/*
 * The GPU indexes in a GRES allocation as `scontrol -d show job` prints
 * it per node ("gpu:1(IDX:3)", "gpu(IDX:0,2-3)", "gpu:a100:2(IDX:0-1),
 * gg:g0(CNT:1)"): "3", "0,2-3", "0-1" (malloc'd); NULL when it names none.
 */
char *slurm_gres_gpu_idx(const char *gres);

/* The sinfo format for the partition's GPUs: nodes, then their GRES. */
#define SINFO_GPUS_FORMAT "%D|%G"

/*
 * The GPUs of a partition from `sinfo -h -p P -o SINFO_GPUS_FORMAT` (lines
 * "4|gpu:8(S:0-1)", "2|gpu:a100:4,mps:400"): nodes times GPUs, summed; 0
 * when it has none, -1 for lines that are not sinfo's.
 */
long long slurm_sinfo_gpus(const char *text);

#endif
