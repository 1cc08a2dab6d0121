/*
 * Runs and attempts in the state database (part of the DB module: the only
 * SQL outside db.c lives here), and the paths of a run in the repository.
 */
#ifndef XLOOP_RUNS_H
#define XLOOP_RUNS_H

#include "db.h"

struct step_set;

struct loop_decision;

struct run {
	long long id;
	char *study;
	char *tag;
	long long parent_id;	/* 0 for a root run */
	char *parent_tag;	/* "" for a root run */
	char *var, *old_value, *new_value;	/* "" for a root run */
	char *note;
	char *commit_id;
	long long created_at;
	char *config;		/* confkey.h text; "" until computed (and when not read) */
	char *config_key;	/* its key without the seed; "" likewise */
	const char *segments;	/* `new --segments N` (borrowed), NULL: segments.max;
				 * only runs_insert writes it (read: runs_segments) */
	const struct step_set *steps;	/* its scripts, job.sh first (borrowed), or
					 * NULL: job.sh only; only loop_create_run
					 * reads it (read: steps_read) */
	const struct loop_decision *decision;	/* committed with its job.sh (borrowed,
						 * loop.h), or NULL; only loop_create_run
						 * reads it */
};

struct attempt {
	long long id;
	long long run_id;
	long long n;
	char *token;
	char *phase;		/* submitting, submitted, submit_failed, adopted */
	char *job_id;		/* "" before sbatch answered */
	char *log_path;
	char *job_sha256;
	char *partition, *gres, *mem, *time_limit, *overrides, *after_job;
	long long cpus;
	char *submit_error;
	long long intent_at, submitted_at, started_at, ended_at;
	char *state, *exit_code, *node, *slurm_reason;
	char *verdict;		/* "", success, failure */
	char *failure_class;
	char *verdict_reason;
	int has_score;
	double score;
	char *auto_retry;	/* "", "infra", "resources": why xloop retried on its own */
	long long lane;		/* the chain it was put in (queue.lanes), from 0 */
	char *gpus;		/* its GPUs ("0", "1,3"; "node2=1;node3=0" when each node's
				 * differ: slurm_job_gpu_map), "" unknown, "?" none named */
	long long restarts;	/* Slurm requeued its job this often (same job id) */
	long long run_start;	/* the start of the job's current run; 0 unknown */
};

/* Paths of a run (malloc'd). */
char *run_dir(const char *root, const char *study, const char *tag);
char *run_job_path(const char *root, const char *study, const char *tag);
char *run_log_path(const char *root, const char *study, const char *tag, long long n);

/*
 * The run's identity for trackers (XLOOP_RUN_ID): 32 lowercase hex digits
 * of a hash of the study, the tag and the run's creation time, the same in
 * every job of the run; fits W&B run ids, Comet keys (32..50 alphanumerics)
 * and Neptune's custom ids (at most 36).
 */
#define RUN_IDENT_LEN 32
void run_ident(const char *study, const char *tag, long long created_at,
	       char id[RUN_IDENT_LEN + 1]);
/* run_ident of the study's run tag, read from the DB: 0, or -1 when there is none. */
int runs_ident(struct db *db, const char *study, const char *tag, char id[RUN_IDENT_LEN + 1]);

/* Look a run up by tag: 0 found, 1 not found, -1 error. */
int runs_get(struct db *db, const char *study, const char *tag, struct run *r);
/* Insert r (id and created_at are filled in). 0 or -1. */
int runs_insert(struct db *db, struct run *r);
/* All runs of a study in creation order; *v malloc'd. */
int runs_list(struct db *db, const char *study, struct run **v, size_t *n);
/*
 * Or one run at a time in the same order, uncopied (status --json of a long
 * study): open q, then runs_walk_next() fills *r with the row's id, tag,
 * parent_id, parent_tag, var, old_value and new_value, its strings the DB's
 * own until the next call (read only; the others "" or 0): 1, 0 at the
 * end, -1. db_finalize(q) ends it.
 */
int runs_walk_open(struct db *db, const char *study, struct stmt *q);
int runs_walk_next(struct stmt *q, struct run *r);
/* The run's own segment count (`new --segments N`, malloc'd), or NULL. */
char *runs_segments(struct db *db, long long run_id);
/* The tag of run id (malloc'd), or NULL when there is no such run. */
char *runs_tag(struct db *db, long long run_id);
/* The tag of the study's run whose latest attempt has Slurm job id job, or NULL. */
char *runs_tag_of_job(struct db *db, const char *study, const char *job);
/* How many runs the study has; -1 on error. */
long long runs_count(struct db *db, const char *study);
void run_release(struct run *r);
void runs_free(struct run *v, size_t n);

/* The latest attempt of a run: 0 found, 1 none, -1 error. */
int attempts_latest(struct db *db, long long run_id, struct attempt *a);
/* All attempts of a run in order. */
int attempts_list(struct db *db, long long run_id, struct attempt **v, size_t *n);
/*
 * Every attempt of a study (run_id 0) or of one run in one query, handed
 * out run by run: open, then attempt_walk_run() for each run in increasing
 * id order (runs_list's order), then close.
 */
struct attempt_walk {
	struct stmt q;
	struct attempt next;	/* read ahead: the first row of a later run */
	int have, done;
	int row;		/* attempt_walk_next: the statement is on a row not handed out */
	int shown;		/* attempt_walk_open_shown's columns (attempt_walk_next only) */
};
int attempt_walk_open(struct db *db, const char *study, long long run_id,
		      struct attempt_walk *w);
/*
 * The same walk of a whole study with only the fields status --json shows
 * (id, run_id, n, phase, job_id, log_path, overrides, submitted_at,
 * started_at, ended_at, state, node, slurm_reason, verdict, failure_class,
 * verdict_reason, score, auto_retry, lane, restarts); the others are "" or 0.
 * Read it with attempt_walk_next only.
 */
int attempt_walk_open_shown(struct db *db, const char *study, struct attempt_walk *w);
/* The attempts of run_id into *v (malloc'd, attempts_free); 0 or -1. */
int attempt_walk_run(struct attempt_walk *w, long long run_id, struct attempt **v, size_t *n);
/*
 * Or one attempt at a time, without a copy: the next attempt of run_id
 * into *a, its strings the DB's own, valid until the next call or close
 * (read them, never free or change them). 1, 0 when run_id has no more,
 * -1. A walk uses either this or attempt_walk_run, not both.
 */
int attempt_walk_next(struct attempt_walk *w, long long run_id, struct attempt *a);
void attempt_walk_close(struct attempt_walk *w);
/* Attempts with a job id and no final state yet (live as far as we know). */
int attempts_unfinished(struct db *db, const char *study, struct attempt **v, size_t *n);
/* Insert a (id filled in). 0 or -1. */
int attempts_insert(struct db *db, struct attempt *a);
/* Record the result of sbatch for attempt id. */
int attempts_set_submitted(struct db *db, long long id, const char *job_id,
			   long long at);
int attempts_set_submit_failed(struct db *db, long long id, const char *err);

#define SUBMIT_ORPHAN_SECS 120	/* an intent older than this with no job: failed */
/* its submit_error (a crash between the intent and sbatch, most likely) */
#define SUBMIT_ORPHAN_ERROR "sbatch never answered and no job carries this attempt's token"
/*
 * How long an intent (an attempt's or a segment's) may wait for its
 * sbatch before reconcile calls it failed: SUBMIT_ORPHAN_SECS (test
 * builds: XLOOP_TEST_ORPHAN_SECS).
 */
long long attempts_orphan_secs(void);
/* The GPUs a running job was given (slurm_job_gpu_map: each node's IDX). */
int attempts_set_gpus(struct db *db, long long id, const char *gpus);

/* A limit held sbatch back: the intent goes, its attempt number is free again. */
int attempts_release_intent(struct db *db, long long id);
/* The study's first root run (its baseline): 0 found, 1 none, -1 error. */
int runs_first_root(struct db *db, const char *study, struct run *r);
/* Set a run's configuration and key. 0 or -1. */
int runs_set_config(struct db *db, long long run_id, const char *config,
		    const char *key);
/* The runs of a study without a configuration yet (runs_list's order). */
int runs_without_config(struct db *db, const char *study, struct run **v, size_t *n);
/* Every run of a study with config and config_key read too (the others leave them ""). */
int runs_list_configs(struct db *db, const char *study, struct run **v, size_t *n);
/* The seconds (end - start) of the study's latest limit successful attempts. */
int attempts_recent_elapsed(struct db *db, const char *study, long long limit,
			    long long **secs, size_t *n);
/* Record the code an attempt runs: HEAD's commit and the changes' hash ("" none). */
int attempts_set_code(struct db *db, long long id, const char *commit, const char *changes);
/*
 * The code pinned for attempt_id, or (parent) for the attempt of its run's
 * parent that counts (its latest success, else its latest): 1 with commit
 * and changes, 0 when none was recorded, -1 on error.
 */
int attempts_code(struct db *db, long long attempt_id, int parent, char commit[41],
		  char changes[65]);
/* Record that attempt id now waits for job after ("" none). 0 or -1. */
int attempts_set_after(struct db *db, long long id, const char *after);
void attempt_release(struct attempt *a);
void attempts_free(struct attempt *v, size_t n);

/* One run of a sweep: its array index never changes. */
struct sweep_task {
	long long idx;
	long long run_id;
	char *tag;
	char *value;		/* the sweep variable's value in this run */
};

/* A sweep: one run per value of var, submitted as job arrays. */
struct sweep {
	long long id;
	char *name;
	char *parent;		/* the parent's tag */
	char *var;
	long long max_parallel;	/* the %K of --array; 0: no limit */
	long long created_at;
	struct sweep_task *tasks;	/* in index order */
	size_t nr;
};

/* Insert a sweep without tasks (id filled in). 0 or -1. */
int sweeps_insert(struct db *db, const char *study, struct sweep *sw);
/* Give run_id the array index idx in sweep_id. 0 or -1. */
int sweeps_add_task(struct db *db, long long sweep_id, long long idx, long long run_id);
/* Look a sweep up by name with its tasks: 0 found, 1 not found, -1 error. */
int sweeps_get(struct db *db, const char *study, const char *name, struct sweep *sw);
/* Remove sweep_id when it has no task (a creation that failed at once). */
int sweeps_delete_empty(struct db *db, long long sweep_id);
/* The name of the sweep run_id belongs to (malloc'd), or NULL. */
char *sweeps_of_run(struct db *db, long long run_id);
void sweep_release(struct sweep *sw);

/*
 * The abbreviations a study's configuration tags used (kv
 * "tag_abbrev:STUDY:ABBR" = VAR; tags.h tag_abbrevs): how many, with the
 * arrays malloc'd into *abbr and *var; and recording one (kept once made).
 */
size_t runs_tag_abbrevs(struct db *db, const char *study, char ***abbr, char ***var);
void runs_tag_abbrev_record(struct db *db, const char *study, const char *abbr,
			    const char *var);

#endif
