/*
 * A run and its attempt 1 as the unit tests insert them: the fields the
 * DB requires filled with plain values, the rest zero. A test sets what it
 * is about, then calls runs_insert and attempts_insert.
 */
#ifndef XLOOP_TEST_FIXTURE_RUN_H
#define XLOOP_TEST_FIXTURE_RUN_H

#include <string.h>

#include "runs.h"

/* Run tag of study: no parent, no change, created at 1. */
static inline void fixture_run(struct run *r, const char *study, const char *tag)
{
	memset(r, 0, sizeof(*r));
	r->study = (char *)study;
	r->tag = (char *)tag;
	r->var = r->old_value = r->new_value = "";
	r->created_at = 1;
}

/* Attempt 1 of run_id, submitted with token tok and gres on partition gpu. */
static inline void fixture_attempt(struct attempt *a, long long run_id, const char *tok,
				   const char *gres)
{
	memset(a, 0, sizeof(*a));
	a->run_id = run_id;
	a->n = 1;
	a->token = (char *)tok;
	a->phase = "submitted";
	a->log_path = "l";
	a->job_sha256 = "x";
	a->partition = "gpu";
	a->gres = (char *)gres;
	a->mem = "1G";
	a->time_limit = "1:00";
	a->intent_at = 1;
}

#endif
