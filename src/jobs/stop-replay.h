/*
 * Learning curves of real training replayed (issue 46): the stop
 * benchmark's data (bench/curves/, made by bench/curves.py), read for
 * `xloop test-search --curves` so that autopilot and the stop rule meet
 * the curves in process. Every configuration of the grid, several seeds,
 * each epoch's value (NaN: diverged) and seconds.
 */
#ifndef XLOOP_STOP_REPLAY_H
#define XLOOP_STOP_REPLAY_H

#include <stddef.h>

#include "jobs/stop-rule.h"

/* One run of the data: a configuration on one seed. */
struct replay_run {
	char key[65];		/* confkey.h's key of its configuration */
	long seed;		/* 0 .. seeds - 1 */
	double *acc, *sec;	/* epochs values (NAN: diverged) and seconds */
};

struct replay {
	struct replay_run *runs;
	size_t n;
	long seeds;		/* per configuration */
	size_t epochs;
	double chance;		/* the data's chance accuracy (the job's "chance C") */
	char **space;		/* "VAR=V1,V2,..." for space_parse_arg */
	size_t nspace;
	char *baseline;		/* job.sh text of the baseline, SEED=1 */
};

/* Read a curves document (bench/curves/NAME.json, uncompressed). 0, or -1 with *cause. */
int replay_load(const char *path, struct replay *rp, char **cause);

/* The run of configuration key on seed s (wrapped to the data's seeds), or NULL. */
const struct replay_run *replay_find(const struct replay *rp, const char *key, long s);

void replay_release(struct replay *rp);

/*
 * The bar a run gets at submit (stop_bar, as stop-bar.c): from the runs
 * done[0, n) that ran to their end, of configurations cfg[0, n). *bar is
 * malloc'd (epochs + 1 entries: epoch K at K, the data's first is 1);
 * returns stop_bar's count.
 */
size_t replay_bar(const struct replay *rp, const struct replay_run *const *done, const long *cfg,
		  size_t n, long best, long parent, const struct stop_params *p, double **bar);

/* What became of a replayed run. */
struct replay_end {
	long long stop_at;	/* the epoch it stopped at, -1: ran to its end */
	const char *why;	/* static */
	double cost;		/* the seconds it ran */
};

/*
 * Run cv with the rules on (rule_on; else to its end): progress.c's
 * plainest rule (the jobs say no "chance C"), then stop_first_behind on
 * bar; the first epoch either stops it at.
 */
void replay_finish(const struct replay *rp, const struct replay_run *cv, int rule_on,
		   const double *bar, size_t nbar, const struct stop_params *p,
		   struct replay_end *e);

#endif
