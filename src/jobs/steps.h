/*
 * A run's steps (issue 28): job.sh is step 1 ("job"); `adopt --step
 * NAME=SCRIPT` adds steps 2.. in order, each its own script NAME.sh in the
 * run's directory and its own Slurm job, chained afterok on the step
 * before. Here: names, paths, the table run_step, and the rules a set of
 * scripts obeys (a variable lives in one step; the configuration covers
 * them all). Submitting and judging steps is steps-run.h's.
 */
#ifndef XLOOP_STEPS_H
#define XLOOP_STEPS_H

#include <stddef.h>

#include "lib/buf.h"
#include "config.h"
#include "db.h"
#include "slurm/slurm.h"

#define STEP_FIRST "job"	/* job.sh's name as a step (XLOOP_STEP) */
#define STEPS_MAX 16		/* steps of one run, job.sh included */

/* The scripts of a run in step order: [0] is job.sh. */
struct step_set {
	char *names[STEPS_MAX];
	char *paths[STEPS_MAX];	/* where each was read from */
	struct buf texts[STEPS_MAX];
	size_t nr;
};

void step_set_init(struct step_set *set);
void step_set_release(struct step_set *set);
/* Append a script (name and path copied, text taken over). */
void step_set_add(struct step_set *set, const char *name, const char *path,
		  struct buf *text);

/* 1 when name is a step name: [a-z][a-z0-9_-]{0,31}, not "job". */
int steps_valid_name(const char *name);
/*
 * Split "--step NAME=SCRIPT" into name and path (malloc'd); XL_USAGE with
 * *cause when malformed.
 */
int steps_parse_arg(const char *arg, char **name, char **path, char **cause);

/* runs/<study>/<tag>/<name>.sh (malloc'd). */
char *step_path(const char *root, const char *study, const char *tag, const char *name);
/* The log of step name of attempt n: slurm/attemptN.NAME.out (malloc'd). */
char *step_log_path(const char *root, const char *study, const char *tag, long long n,
		    const char *name);

/*
 * Refuse a set where one variable is assigned at the top level of two
 * scripts (the one change could not say which): XL_DATAERR with *cause,
 * or 0. A script that does not scan is refused too.
 */
int steps_check_vars(const struct step_set *set, char **cause);
/*
 * The index of the script assigning var at its top level (0 when none
 * does: job.sh, whose scan then says why).
 */
size_t steps_holder(const struct step_set *set, const char *var);
/* The configuration of every script (confkey.h), lines merged and sorted. */
int steps_config(const struct step_set *set, char **out, char **cause);

/*
 * The names of run_id's steps after job.sh in order (malloc'd each, into
 * names; *n of them, at most STEPS_MAX - 1). 0 or -1.
 */
int steps_names(struct db *db, long long run_id, char **names, size_t *n);
/* Record steps 2.. of a run (set's names from [1]), in the caller's transaction. */
int steps_insert(struct db *db, long long run_id, const struct step_set *set);
/*
 * Read a run's scripts (job.sh and its steps) into set. 0, or an exit
 * code with *cause.
 */
int steps_read(struct db *db, const char *root, const char *study, long long run_id,
	       const char *tag, struct step_set *set, char **cause);

/*
 * The request of a step after job.sh (text: its script): mem and time
 * (the run's, or NULL) unless its own #SBATCH lines give them, and no GPU
 * unless its #SBATCH asks; cpus the run's (0: the config's) unless its
 * #SBATCH gives cpus-per-task. slurm_fill_request's, then these.
 */
void steps_fill_request(const struct config *c, const char *root, const char *text,
			const char *mem, const char *time_, long long cpus, const char *dep,
			struct slurm_submit *req);

#endif
