/*
 * What one feeding of the queue made (feed.h's feed_queue, with its steps
 * such as retry.h's automatic retries), for the commands to report and for
 * the driver to know whether feeding is stopped. Only the structs: the
 * modules that fill them sit above this header.
 */
#ifndef XLOOP_FED_H
#define XLOOP_FED_H

#include <stddef.h>

/* One submission that feeding made. */
struct fed {
	char *tag;
	char *change;		/* "VAR=VALUE" */
	char *job_id;
	long long attempt;
	char *after;
};

struct feed_result {
	struct fed *v;
	size_t nr;
	char *breaker;		/* why feeding is stopped (breaker.h), or NULL */
	int breaker_opened;	/* this call opened the breaker */
	char **skipped;		/* plan entries that could not become runs */
	size_t nr_skipped;
	char *held_back;	/* a Slurm limit refused a submission: which and what, or NULL */
	/*
	 * Why feeding stopped where it did: "breaker", "depth" (queue.depth
	 * jobs already wait in the chain, in every lane), "limit" (a Slurm
	 * limit refused a job: held_back), "plan_empty" or "error"; NULL when
	 * feeding did not run. stopped_why says it for people.
	 */
	const char *stopped;
	char *stopped_why;
	/*
	 * Feeding stopped with nothing of the study live in Slurm and nothing
	 * submitted (plan entries that wait for a best, autopilot converged or
	 * waiting for a person): no job will change that, so no feeder is
	 * queued for it (driver.h).
	 */
	int idle;
};

#endif
