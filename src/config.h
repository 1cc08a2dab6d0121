/* xloop.json: the study's configuration (schemas/config.schema.json). */
#ifndef XLOOP_CONFIG_H
#define XLOOP_CONFIG_H

#include <stddef.h>

#include "search/space.h"

#define CONFIG_FILE "xloop.json"
#define CONFIG_MAX_BYTES (1 << 20)
#define CONFIG_MAX_LANES 64
#define CONFIG_TRACKER_MAX 16	/* tracker.run_id_vars and tracker.env each */

struct config {
	char *study;
	char *partition;
	char *account;		/* "" when unset */
	char *qos;		/* "" when unset */
	long long nice;		/* sbatch --nice; only ever lowers priority */
	int chain_any_user;	/* chain behind any job of the user in the partition */
	struct {
		char *gres;	/* "" for CPU-only studies */
		long long cpus;
		char *mem;	/* Slurm --mem syntax: "16G", "4000M" */
		char *time;	/* Slurm --time syntax */
	} res;
	char *metric;		/* name shown next to scores */
	int goal_max;		/* 1: higher is better; 0: lower is better */
	double min_delta;	/* metric.min_delta: a gain must exceed this */
	long long depth;	/* jobs kept waiting behind the running one */
	long long lanes;	/* afterany chains side by side; 0: "auto" */
	long long stale_after;	/* minutes a RUNNING job's log may stay silent */
	long long retry_infra_max;
	int retry_auto_resources;
	long long breaker_program;	/* consecutive program failures that stop feeding; 0: never */
	long long breaker_infra;	/* the same for infra failures */
	int breaker_no_gpu;		/* a GPU job whose START line shows no GPU stops feeding */
	char *notify_url_env;	/* name of the env var that holds the webhook URL */
	char *notify_kind;	/* payload: "discord", "slack", "ntfy" or "json" */
	struct {
		long long max;	/* segments per attempt; 0: off */
		char *signal;	/* sent before the time limit: "USR2" */
		long long lead;	/* seconds before the limit */
		char *checkpoint;	/* under the run directory: the job's state */
	} seg;
	struct {			/* a run going nowhere stops (help adopt: progress) */
		int on;			/* each job gets the stop watcher */
		long long grace;	/* seconds the job has to exit once told */
		long long chance_epochs;	/* epochs running at chance that stop it; 0: never */
		long long warmup;	/* behind the best: no bar at epochs 0..warmup */
		long long behind;	/* epochs running behind the bar that stop it; 0: never */
		double noise_z;		/* the bar's margin in seed-noise sds */
	} stop;
	char *remote_host;	/* "" when local */
	char *remote_dir;
	struct {			/* the search (help space, help best) */
		char *seed;		/* the seed variable, "" when none */
		long long replicates;	/* runs of the baseline that measure the noise */
		long long confirm_max;	/* a candidate's runs at most while confirming */
		double alpha;		/* family-wise level of the promotion rule */
		long long branch;	/* autopilot branches from the best few */
		struct space space;
	} search;
	struct {			/* autopilot (help auto) */
		int on;
		long long budget_runs;	/* 0: no limit */
		double budget_hours;	/* GPU-hours; 0: no limit */
		char *until;		/* ISO-8601, "" when none */
		long long since;	/* when it was switched on (unix seconds) */
	} autopilot;
	struct {
		char *mode;	/* "slurm", "scrontab", "cron" or "none" (driver.h) */
		char *partition;	/* where feeders run; "": slurm.partition */
		char *qos;		/* the feeders' QOS; "": slurm.qos */
		char *host;	/* the login node a feeder forwards to; "": none */
	} driver;
	struct {			/* what a tracker needs in every job (issue 36) */
		char **id_vars;		/* tracker.run_id_vars: each set to XLOOP_RUN_ID */
		size_t nid;
		char **env;		/* tracker.env as "NAME=VALUE", in the file's order */
		size_t nenv;
	} tracker;
};

/* A name usable as a study or a tag: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
int valid_name(const char *s);

/* A --mem value: "16G", "4000M", "2T", "1024" (MB); positive. */
int config_valid_mem(const char *s);
/* A --time value: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S; not zero. */
int config_valid_time(const char *s);
/* Megabytes in a --mem value (valid per config_valid_mem). */
long long config_mem_mb(const char *s);
/* Seconds in a --time value (valid per config_valid_time). */
long long config_time_secs(const char *s);

/* A signal name for segments.signal ("USR2", "TERM", ...). */
int config_valid_signal(const char *s);
/* A path below the run directory: relative, no "..", no "." parts. */
int config_valid_subpath(const char *s);

/* The defaults, with study and partition given (NULL: "main", "gpu"). */
void config_defaults(struct config *c, const char *study, const char *partition);

/*
 * Parse and validate JSON text. Unknown keys, wrong types and bad values
 * are errors: returns -1 with *cause naming the key. 0 on success.
 */
int config_parse(struct config *c, const char *text, size_t len, char **cause);

/* Load <root>/xloop.json. -1 with *cause (missing file, bad JSON, bad value). */
int config_load(struct config *c, const char *root, char **cause);

/*
 * Set keys in <root>/xloop.json, the rest of the file kept: changes is a
 * JSON array of {"key": "resources.cpus", "to": "2"} (numbers for integer
 * keys are given as text). The result must load; -1 with *cause, and the
 * file untouched, when it does not.
 */
struct json_t;
int config_patch_file(const char *root, const struct json_t *changes, char **cause);

/* The config as pretty JSON text, ending in a newline. Caller frees. */
char *config_to_json(const struct config *c);

/*
 * The value in force of the key at path (depth 1 to 4: "study",
 * "metric.min_delta", "search.space.LR"), as JSON (a new reference): the
 * file's when <root>/xloop.json sets it, else the default c holds
 * (*is_default 1). NULL when the table has no such key (*cause NULL) or
 * the file cannot be read (*cause says why).
 */
struct json_t *config_value(const struct config *c, const char *root, const char *const *path,
			    size_t depth, int *is_default, char **cause);

/*
 * The configuration table's keys as SECTION.KEY ("study" alone), those of
 * section only unless it is NULL, joined by sep; malloc'd ("" when none).
 */
char *config_keys(const char *section, const char *sep);

void config_release(struct config *c);

/*
 * Edit <root>/xloop.json: set the member at path[0].path[1]... to v (NULL:
 * remove it; v's reference is taken), keeping every other key and its
 * order, then validate the result and write it atomically. Objects on the
 * way are created. 0, or -1 with *cause (the file is then untouched).
 */
struct json_t;
int config_edit(const char *root, const char *const *path, size_t depth,
		struct json_t *v, char **cause);
/* config_edit's checks without the write: 0 when the edit is valid, else -1 with *cause. */
int config_check_edit(const char *root, const char *const *path, size_t depth,
		      struct json_t *v, char **cause);

/* Seconds since the epoch of an ISO-8601 UTC time ("2026-12-01T18:00:00Z",
 * also without seconds or Z); -1 when it is not one. */
long long config_parse_iso(const char *s);

#endif
