/*
 * Pure parsers for what Slurm's command-line tools print: sbatch --parsable,
 * scontrol show job [-o], squeue -h -o FORMAT, sacct -P/-p, sinfo -R, job
 * states, exit codes, timestamps and durations.
 *
 * Nothing here does I/O, spawns, prints or exits. A parser that fails
 * returns -1 and, when cause is not NULL, sets *cause to a malloc'd
 * lowercase message naming the offending text (the caller frees it);
 * outputs are then left empty. Strings in parsed structures are never NULL
 * unless the comment says so, and belong to the structure: free them with
 * its *_release() function.
 *
 * Written from Slurm's documented output formats and checked against
 * samples of versions 14.11 to 25.11; Debian 12 ships 22.05.
 */
#ifndef XLOOP_SLURM_PARSE_H
#define XLOOP_SLURM_PARSE_H

#include <stddef.h>
#include <time.h>

/* Return values besides 0 (parsed) and -1 (error, *cause set). */
#define SLURM_PARSE_UNKNOWN_JOB 1	/* the controller forgot the job */
#define SLURM_PARSE_NO_ACCOUNTING 2	/* sacct: no accounting storage */

/*
 * Job states. The text tools print one word per job: a flag state
 * (COMPLETING, REQUEUED, ...) when one is set, else the base state.
 */
enum slurm_state {
	SLURM_STATE_UNKNOWN = 0,
	/* base states */
	SLURM_STATE_PENDING,
	SLURM_STATE_RUNNING,
	SLURM_STATE_SUSPENDED,
	SLURM_STATE_COMPLETED,
	SLURM_STATE_CANCELLED,
	SLURM_STATE_FAILED,
	SLURM_STATE_TIMEOUT,
	SLURM_STATE_NODE_FAIL,
	SLURM_STATE_PREEMPTED,
	SLURM_STATE_BOOT_FAIL,
	SLURM_STATE_DEADLINE,
	SLURM_STATE_OUT_OF_MEMORY,
	/* flag states, printed instead of the base state */
	SLURM_STATE_COMPLETING,
	SLURM_STATE_STAGE_OUT,
	SLURM_STATE_CONFIGURING,
	SLURM_STATE_EXPEDITING,
	SLURM_STATE_RESIZING,
	SLURM_STATE_REQUEUED,		/* also 20.11's REQUEUED_CRON (RC) */
	SLURM_STATE_REQUEUE_FED,
	SLURM_STATE_REQUEUE_HOLD,
	SLURM_STATE_SPECIAL_EXIT,
	SLURM_STATE_STOPPED,
	SLURM_STATE_REVOKED,
	SLURM_STATE_RESV_DEL_HOLD,
	SLURM_STATE_SIGNALING,
	/* flags seen only in JSON state arrays and verbose state strings */
	SLURM_STATE_LAUNCH_FAILED,
	SLURM_STATE_POWER_UP_NODE,
	SLURM_STATE_RECONFIG_FAIL,
	SLURM_STATE_UPDATE_DB,
	SLURM_STATE_NR
};

/* Flags of slurm_state_parse(). */
#define SLURM_STATE_COMPACT 1u	/* also squeue %t codes: PD, R, OOM, ... */

/*
 * Map a state as printed to the enum; SLURM_STATE_UNKNOWN when it is not a
 * state. Accepts any case, surrounding blanks, "CANCELLED by 1000", width
 * truncation with '+' ("CANCELLED+", "OUT_OF_ME+": the unique state with
 * that prefix), and comma lists of states and flags ("PENDING,REQUEUED"),
 * which resolve as Slurm's own job_state_string() does: the first flag
 * state in Slurm's order wins over the base state.
 */
enum slurm_state slurm_state_parse(const char *s, unsigned flags);
/* Long name ("OUT_OF_MEMORY"); "UNKNOWN" for SLURM_STATE_UNKNOWN. */
const char *slurm_state_name(enum slurm_state st);
/* squeue's compact code ("OOM"); "?" when the state has none. */
const char *slurm_state_code(enum slurm_state st);
/*
 * True for states after which the job will not run again on its own:
 * COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL, PREEMPTED, BOOT_FAIL,
 * DEADLINE, OUT_OF_MEMORY, REVOKED. PENDING, RUNNING, COMPLETING,
 * REQUEUED, SPECIAL_EXIT, ... and UNKNOWN are not final.
 */
int slurm_state_is_final(enum slurm_state st);

/*
 * sbatch --parsable stdout: "12345\n" or "12345;cluster\n". Blank lines
 * and lines before the id (site banners, a merged "sbatch: ..." stderr
 * line) are skipped as long as none of them looks like a job id; the id
 * must be on the last non-blank line. Also accepts "Submitted batch job N
 * [on cluster C]" from wrappers that ignore --parsable. *cluster (when
 * cluster is not NULL) is set to a malloc'd name or NULL.
 */
int slurm_parse_sbatch(const char *out, long long *jobid, char **cluster,
		       char **cause);

/*
 * `sbatch --test-only`: "sbatch: Job 12 to start at 2026-11-29T14:20:00
 * using 1 processors on nodes vm in partition gpu" (on stderr). Returns 0
 * with *start, or -1 with *cause (the refusal Slurm printed, when there is
 * one: a request that can never run).
 */
int slurm_parse_test_only(const char *out, time_t *start, char **cause);

/*
 * How many hosts a NodeList names: "node1" 1, "node[1-2]" 2,
 * "a[1-3,7],b2" 5; "" and "None assigned" 0. A range it cannot read counts 1.
 */
long slurm_hostlist_count(const char *list);

/*
 * Of two NodeLists of one job (sacct's and scontrol's), the one naming
 * more hosts: a, unless b names more.
 */
const char *slurm_wider_nodes(const char *a, const char *b);

/*
 * The hosts a NodeList names, in its order (slurm/parse-hostlist.c):
 * "node[1-2]" node1 node2; "node[1,3-4]" node1 node3 node4; "gpu[08-10]"
 * gpu08 gpu09 gpu10 (the lower bound's width); "n[1-2]-ib" n1-ib n2-ib;
 * "a1,b2" a1 b2. Returns how many, *hosts a malloc'd array of malloc'd
 * names (slurm_hosts_free), or 0 and NULL for "", "None assigned" and
 * "(null)". -1 with *cause for what is not a hostlist (an empty name, a
 * space, a bracket not closed, a range that is not digits or runs
 * backwards) and for one naming more than max hosts.
 */
long slurm_hostlist_expand(const char *list, long max, char ***hosts, char **cause);
/* Free n hosts of slurm_hostlist_expand. */
void slurm_hosts_free(char **hosts, long n);

/* ExitCode "status:signal" ("0:0", "127:0", "0:9") into its two numbers. */
int slurm_parse_exit_code(const char *s, int *status, int *signo,
			  char **cause);

/*
 * Timestamp "2024-03-01T12:34:56" (local time) to time_t. "Unknown",
 * "None", "N/A", "NONE", "(null)" and "" give 0.
 */
int slurm_parse_time(const char *s, time_t *t, char **cause);
/* Format t the way Slurm prints it (local time); malloc'd, "" for 0. */
char *slurm_format_time(time_t t);

/*
 * Duration "[D-]HH:MM:SS", "H:MM:SS", "MM:SS", "M:SS" (fractions of a
 * second, as in sacct's TotalCPU, are dropped) to seconds. "UNLIMITED",
 * "INFINITE", "INVALID", "Partition_Limit", "N/A", "NONE" and "" give -1.
 */
int slurm_parse_duration(const char *s, long long *secs, char **cause);

/*
 * A job id as squeue, sacct and scontrol print it: "36", "36_3",
 * "36_[4-7%2]", "93+1", "36.batch", "36_3.extern", "67767+1.0".
 */
struct slurm_jobid {
	char *job;		/* the id without the step: "36_3" */
	long long id;		/* the leading number: 36 */
	char *array_task;	/* "3", "4-7%2" (brackets removed) or NULL */
	long long het_offset;	/* 1 in "93+1"; -1 when not a het component */
	char *step;		/* "batch", "extern", "0"; NULL: allocation */
	int step_truncated;	/* cut by a column width ("bat+") */
};
/* Parse a job id; a step cut to "bat+"/"ext+" is completed. */
int slurm_parse_jobid(const char *s, struct slurm_jobid *id, char **cause);
void slurm_jobid_release(struct slurm_jobid *id);

/* One key/value pair as printed (scontrol key, or "%i" for squeue). */
struct slurm_kv {
	char *key;
	char *value;
};

/*
 * One job as scontrol or squeue describe it. Fields a source does not give
 * are "" (strings) or -1 (numbers). "(null)", "Unknown", "None" and "N/A"
 * in the time fields and "(null)" elsewhere become "".
 */
struct slurm_job {
	char *job_id;		/* "36", "36_3", "36_[4-7]", "93+1" */
	long long id;		/* numeric id (JobId, %A); -1 when not given */
	char *array_job_id;	/* "36" or "" */
	char *array_task_id;	/* "3", "4-7%2" (no brackets) or "" */
	char *name;
	char *user;		/* without the "(uid)" */
	enum slurm_state state;
	char *state_raw;	/* as printed */
	char *reason;
	int exit_code;		/* ExitCode status, -1 when not given */
	int exit_signal;	/* ExitCode signal, -1 when not given */
	/* DerivedExitCode (scontrol -d): the worst of the job's srun steps; -1 when not given */
	int derived_exit_code, derived_exit_signal;
	char *comment;
	char *partition;
	char *nodes;
	char *submit_time;
	char *start_time;
	char *end_time;
	char *time_limit;
	char *run_time;
	char *std_out;
	char *std_err;
	char *work_dir;
	char *dependency;
	int batch_flag;		/* -1 when not given */
	int requeue;		/* -1 when not given */
	int restarts;		/* -1 when not given */
	struct slurm_kv *kv;	/* every pair as printed, in order */
	size_t nr_kv;
};

struct slurm_jobs {
	struct slurm_job *v;
	size_t nr;
	long long read_at;	/* squeue's: the time (s) just before it ran; 0 unknown */
};
#define SLURM_JOBS_INIT { NULL, 0, 0 }

/* The first value printed for key (exact match), or NULL. */
const char *slurm_job_get(const struct slurm_job *job, const char *key);
void slurm_jobs_release(struct slurm_jobs *jobs);
/* The job with this id ("12", "12_3"), or NULL (also for an empty id). */
const struct slurm_job *slurm_jobs_find(const struct slurm_jobs *jobs, const char *id);
/* The job of jobs (may be NULL) whose comment ends in ":token", or NULL. */
const struct slurm_job *slurm_jobs_find_token(const struct slurm_jobs *jobs, const char *token);

/*
 * `scontrol show job [-d] [-o] [ID]`: one-line (-o) or multi-line records.
 * Values may contain spaces. A key the record already had is text (each
 * key is printed once, except the -d node lines). A free-text value
 * (JobName, Reason, Command, SubmitLine, WorkDir, Comment, AdminComment,
 * SystemComment, Extra, CrontabSpec) ends at the " Key=" of the key
 * scontrol prints next: the earliest-printed known key printed after it,
 * so a comment "a b=c Partition=x" or a SubmitLine holding " Comment=y"
 * stays whole (a comment holding a key printed later than Comment and
 * before the real next key is still cut there). Other values end at the
 * next known or " Capitalised=" key, so keys of newer versions still
 * split. 20.11's "NtasksPerTRES:0" is key NtasksPerTRES. "No jobs in the
 * system" gives 0 jobs. Returns SLURM_PARSE_UNKNOWN_JOB for
 * "slurm_load_jobs error: Invalid job id specified" or "Job N not found",
 * and -1 for other error text or lines that are not key=value.
 */
int slurm_parse_scontrol(const char *out, struct slurm_jobs *jobs,
			 char **cause);

/* Records of other scontrol entities: Key=Value pairs in print order. */
struct slurm_record {
	struct slurm_kv *kv;
	size_t nr_kv;
};

struct slurm_records {
	struct slurm_record *v;
	size_t nr;
};
#define SLURM_RECORDS_INIT { NULL, 0 }

/* "Partition gpux not found", "Node x not found" from scontrol show. */
#define SLURM_PARSE_NOT_FOUND SLURM_PARSE_UNKNOWN_JOB

/*
 * `scontrol show partition|node|... [-o] [NAME]`: one record per -o line
 * or per multi-line block (a key line at column 0 starts one). A value
 * ends at the next " Key=" with a capitalised or job key, so "OS=Linux
 * 6.1.0 #1 SMP" and "Reason=Not responding [slurm@...]" stay whole. "No
 * ... in the system" gives 0 records; "... not found" gives
 * SLURM_PARSE_NOT_FOUND; other lines that are not key=value give -1.
 */
int slurm_parse_records(const char *out, struct slurm_records *recs,
			char **cause);
/* The first value of key in a record (exact match), or NULL. */
const char *slurm_record_get(const struct slurm_record *rec, const char *key);
void slurm_records_release(struct slurm_records *recs);
/* True when the comma list ("gpu,short") holds item exactly. */
int slurm_list_has(const char *list, const char *item);

/* The squeue format xloop asks for, and what slurm_parse_squeue takes. */
#define SLURM_SQUEUE_FORMAT "%i|%j|%T|%r|%S|%e|%k|%P|%M|%l|%A"

/*
 * `squeue -h -o FORMAT` lines. format is the -o string: %X fields (width
 * modifiers allowed) between literal separators. Known fields fill the
 * struct (%i %A %F %K %j %u %T %t %r %R %N %S %e %V %k %P %M %l %E %Z);
 * every field is kept raw under its "%X" key. When a line holds more
 * separators than the format, one free-text field takes the extra: the
 * first of %k (comment), %j (name), %r, %R, %E, %Z for which every other
 * field is valid; the fields before it are split from the left and those
 * after it from the right. A header line (JOBID) is skipped. "slurm_load_
 * jobs error: Invalid job id specified" gives SLURM_PARSE_UNKNOWN_JOB.
 */
int slurm_parse_squeue(const char *out, const char *format,
		       struct slurm_jobs *jobs, char **cause);

/* One line of sinfo -R. */
struct slurm_node_reason {
	char *node;		/* a node (%n) or a node list (default form) */
	char *reason;
	char *user;		/* "" when not printed */
	char *timestamp;	/* as printed */
	int truncated;		/* the reason filled its fixed-width column */
};

struct slurm_node_reasons {
	struct slurm_node_reason *v;
	size_t nr;
};
#define SLURM_NODE_REASONS_INIT { NULL, 0 }

/*
 * `sinfo -R -h -o '%n|%E|%H'` (node|reason|timestamp; the reason takes any
 * extra '|'), or sinfo -R's default fixed-width table with its header
 * (REASON USER TIMESTAMP NODELIST, or REASON NODELIST), where reasons are
 * cut at the column width.
 */
int slurm_parse_sinfo_reasons(const char *out,
			      struct slurm_node_reasons *reasons, char **cause);
void slurm_node_reasons_release(struct slurm_node_reasons *reasons);

/* The sacct fields xloop asks for (comma-separated for -o). */
#define SLURM_SACCT_FIELDS "JobID,JobIDRaw,JobName,State,ExitCode,Start,End," \
	"Elapsed,MaxRSS,ReqMem,Comment,NodeList,Partition,Submit"
/* The same list as an array, for slurm_parse_sacct(). */
const char *const *slurm_sacct_fields(size_t *nr);

/* Flags of slurm_parse_sacct(). */
#define SLURM_SACCT_TRAILING_DELIM 1u	/* -p: a delimiter ends each line */

/* One sacct line: the allocation or one step of a job. */
struct slurm_acct_row {
	struct slurm_jobid id;	/* from JobID, else JobIDRaw */
	long long raw_id;	/* JobIDRaw's number, -1 when not requested */
	enum slurm_state state;	/* SLURM_STATE_UNKNOWN without State */
	int exit_code;		/* -1 without ExitCode */
	int exit_signal;
	char **values;		/* one per requested field, as printed */
};

struct slurm_acct {
	char **fields;		/* the requested names, without %width */
	size_t nr_fields;
	struct slurm_acct_row *rows;
	size_t nr;
};
#define SLURM_ACCT_INIT { NULL, 0, NULL, 0 }

/*
 * `sacct -n -P` (or -p with SLURM_SACCT_TRAILING_DELIM, or --delimiter=D
 * with delim D; NULL means "|") for the given fields, in the order
 * requested (names case-insensitive, "%width" ignored). JobID or JobIDRaw
 * must be among them. A header line is skipped; blank output gives 0 rows.
 * A free-text field (Comment, JobName, SubmitLine, WorkDir, ...) takes any
 * extra delimiters, chosen as in slurm_parse_squeue. "sacct: error: ..."
 * lines give -1 with that line as cause; "Slurm accounting storage is
 * disabled" gives SLURM_PARSE_NO_ACCOUNTING.
 */
int slurm_parse_sacct(const char *out, const char *const *fields,
		      size_t nr_fields, const char *delim, unsigned flags,
		      struct slurm_acct *acct, char **cause);
/* A row's value of field (case-insensitive), or NULL if not requested. */
const char *slurm_acct_get(const struct slurm_acct *acct,
			   const struct slurm_acct_row *row, const char *field);
void slurm_acct_release(struct slurm_acct *acct);

/* The rows of one job folded into what a verdict needs. */
struct slurm_acct_summary {
	enum slurm_state state;		/* the verdict state, see below */
	enum slurm_state alloc_state;	/* the allocation row's state */
	int exit_code;			/* see below */
	int exit_signal;
	const struct slurm_acct_row *alloc;	/* the allocation row */
	const struct slurm_acct_row *worst_step; /* NULL when no step failed */
	size_t nr_steps;
	const char *nodes;	/* the job's NodeList, see below; NULL without the field */
	int partial;		/* the allocation row is slurmdbd's first one, see below */
};

/*
 * Fold the rows of job ("36", "36_3", "93+1", matched against JobID and
 * JobIDRaw) into one summary. When the allocation is final, a step that
 * ended in anything but COMPLETED can make it worse: state becomes the
 * more telling of the two (OUT_OF_MEMORY > NODE_FAIL, BOOT_FAIL >
 * TIMEOUT, DEADLINE, PREEMPTED > FAILED, REVOKED > CANCELLED > COMPLETED),
 * so COMPLETED with an OUT_OF_MEMORY step is OUT_OF_MEMORY. exit_code and
 * exit_signal are the allocation's, or the worst step's when the
 * allocation says 0:0. With sacct -D (requeued jobs print one allocation
 * per run), the last allocation row and the steps after it count. nodes is
 * the allocation's NodeList, or a step's naming more hosts: just after the
 * end the allocation row can still be the one slurmdbd wrote at the start
 * (JobName "allocation", NodeList the batch host alone). Returns
 * -1 when no allocation row of job is present.
 * partial: the allocation row is that first one (JobName "allocation" or
 * no Partition): its state may be final, but without an srun step its
 * NodeList is the batch host alone; ask scontrol for the job's nodes
 * (slurm_wider_nodes).
 */
int slurm_acct_summarize(const struct slurm_acct *acct, const char *job,
			 struct slurm_acct_summary *sum, char **cause);

/*
 * The failed step a summary's state came from, for a verdict: "step 6.0
 * (bash) on node[1-2] ended FAILED 3:0, the batch script's allocation
 * COMPLETED 0:0" (malloc'd), or NULL when no step failed.
 */
char *slurm_acct_step_note(const struct slurm_acct *acct,
			   const struct slurm_acct_summary *sum);

/* Free one record's pairs (a record not inside a struct slurm_records). */
void slurm_record_release(struct slurm_record *rec);

/*
 * `scontrol show config`: every "Key = Value" line, in print order, as one
 * record. Keys keep an index ("SlurmctldHost[0]"), values their unit
 * ("300 sec") and any '=' of their own ("socket=/run/munge"). The "as of"
 * title, section titles ("Cgroup Support Configuration:"), blank lines and
 * the "Slurmctld(primary) at vm is UP" lines are skipped; a key repeated
 * in a later section is kept twice (slurm_record_get finds the first).
 * "... error: ..." lines, or no pair at all, give -1.
 */
int slurm_parse_config(const char *out, struct slurm_record *conf,
		       char **cause);

/*
 * True when the configuration stores accounting: AccountingStorageType
 * names a plugin other than none. Slurm 24.05 and later print "(null)"
 * without accounting, before that "accounting_storage/none".
 */
int slurm_config_accounting(const struct slurm_record *conf);

/* One controller as `scontrol ping` reports it. */
struct slurm_ping_ctld {
	char *role;		/* "primary", "backup1", "backup" */
	char *host;
	int up;			/* 1: "UP", 0: "DOWN" */
};

struct slurm_ping {
	struct slurm_ping_ctld *v;
	size_t nr;
};
#define SLURM_PING_INIT { NULL, 0 }

/*
 * `scontrol ping`: "Slurmctld(primary) at vm is UP" lines (DOWN too; the
 * "RESTORE SLURMCTLD DAEMON" banner of '*' lines is skipped), or the form
 * before 20.02, "Slurmctld(primary/backup) at a/b are UP/DOWN", where a
 * "(NULL)" host (no backup) is left out. Other text, or no controller,
 * gives -1.
 */
int slurm_parse_ping(const char *out, struct slurm_ping *ping, char **cause);
void slurm_ping_release(struct slurm_ping *ping);

/*
 * The jobs a Dependency (scontrol Dependency=, squeue %E) waits for, in
 * order: "afterany:12(unfulfilled),afterok:13_2:14" gives 12, 13_2, 14.
 * "(null)", "" and "singleton" give none. *ids malloc'd (free each and it).
 */
void slurm_dependency_ids(const char *dep, char ***ids, size_t *n);

/*
 * The user's limits as sacctmgr prints them, and the sbatch refusals those
 * limits cause (slurm-parse-sacctmgr.c; SPEC rule 12: a limit is
 * back-pressure, never a failure):
 *   sacctmgr --parsable2 show assoc where user=U format=...   (a header line, then rows)
 *   sacctmgr --parsable2 show qos format=...
 * Columns are found by the header's names, so their order does not
 * matter; an empty field is no limit.
 */
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

/*
 * The GPUs each node of a job was given, from one record of `scontrol -d
 * show job` (its "Nodes=node[1-2] ... GRES=gpu:1(IDX:0)" lines, one per
 * group of nodes alike; GRES_IDX= before 21.08), as attempt.gpus keeps
 * them: the IDX list alone when every node got the same ("0", "1,3"; one
 * node always), else "HOSTLIST=IDX" for each node line, joined by ';'
 * ("node2=1;node3=0": another index on each node). NULL when it names no
 * GPU. Malloc'd.
 */
char *slurm_job_gpu_map(const struct slurm_record *rec);

/* A job across more nodes than this has no node's GPUs found in its map. */
#define SLURM_GPU_MAP_HOSTS 1024

/*
 * The IDX list of node in a map of slurm_job_gpu_map (or one xloop kept
 * before maps: an IDX list): the whole map when it is one list, else the
 * list of the first entry whose hostlist names node. Points into map,
 * *len its length; NULL (and 0) when the map names no GPU of node.
 */
const char *slurm_gpu_map_find(const char *map, const char *node, size_t *len);

/*
 * Add to the n hosts in *hosts (malloc'd, as slurm_hostlist_expand makes
 * them) each host a map of slurm_job_gpu_map names that is not there yet,
 * up to max hosts in all; returns how many there are then. A map that is
 * one IDX list names no host.
 */
long slurm_gpu_map_hosts(const char *map, long max, char ***hosts, long n);

/*
 * The GPU indexes of an IDX list s[0..n) ("0,2-3,5": 0 2 3 5) into out, at
 * most max of them; how many, or -1 for what is not such a list.
 */
long slurm_idx_list(const char *s, size_t n, long long *out, long max);

/* The sinfo format for the partition's GPUs: nodes, then their GRES. */
#define SINFO_GPUS_FORMAT "%D|%G"

/*
 * How many jobs of per_job GPUs a node (>= 1) fit at once on a partition,
 * from `sinfo -h -p P -o SINFO_GPUS_FORMAT` (lines "4|gpu:8(S:0-1)",
 * "2|gpu:a100:4,mps:400"): each line's nodes times the jobs one of its
 * nodes holds (its GPUs / per_job, rounded down: a node of 1 GPU holds no
 * job of 2), summed; per_job 1: the partition's GPUs. 0 when it has none,
 * -1 for lines that are not sinfo's.
 */
long long slurm_sinfo_gpus(const char *text, long long per_job);

/*
 * The GPUs a node of a job asks for in a --gres request ("gpu:2",
 * "gpu:a100:2", "gpu" (1), "gpu:1,mps:100"); 0 when it asks none.
 */
long long slurm_gres_request_gpus(const char *gres);

/*
 * The GPUs a node of a job counts as, for GPU-hours, the autopilot's
 * budget, export and lanes: slurm_gres_request_gpus, and 1 for a job that
 * asks no GPU ("", "mps:100"): a CPU job holds its node's place as 1 GPU.
 */
long long slurm_gres_charged_gpus(const char *gres);

#endif
