/*
 * Checks shared by the Slurm parser targets: what every parsed job must
 * satisfy (slurm-parse.h's contract), and the small field parsers run on
 * the values the big ones hand out, as reconcile.c and loop.c do.
 */
#ifndef XLOOP_FUZZ_SLURM_H
#define XLOOP_FUZZ_SLURM_H

#include <time.h>

#include "fuzz.h"
#include "slurm/parse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Make time parsing fast and round trips exact: no DST, no zone file. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

/* A parser's return value and cause agree with its documented contract. */
static inline void fuzz_check_rc(int rc, char *cause, size_t nr, int others)
{
	FUZZ_CHECK(rc == 0 || rc == -1 || (others && rc > 0 && rc <= others),
		   "unexpected return value %d", rc);
	if (rc < 0) {
		FUZZ_CHECK(cause != NULL && *cause, "failed without a cause");
		FUZZ_CHECK(nr == 0, "failed but left %zu results", nr);
	} else {
		FUZZ_CHECK(cause == NULL, "succeeded but set cause '%s'", cause);
	}
}

/* Run the state parser both ways and its lookups on s. */
static inline void fuzz_state(const char *s)
{
	unsigned flags[] = { 0, SLURM_STATE_COMPACT };
	size_t i;

	for (i = 0; i < 2; i++) {
		enum slurm_state st = slurm_state_parse(s, flags[i]);

		FUZZ_CHECK(st >= SLURM_STATE_UNKNOWN && st < SLURM_STATE_NR,
			   "state %d out of range", (int)st);
		FUZZ_CHECK(slurm_state_name(st) != NULL, "no name for %d", (int)st);
		FUZZ_CHECK(slurm_state_code(st) != NULL, "no code for %d", (int)st);
		/* a state's own name reads back as that state */
		FUZZ_CHECK(slurm_state_parse(slurm_state_name(st), 0) == st,
			   "'%s' does not read back", slurm_state_name(st));
		(void)slurm_state_is_final(st);
	}
}

/* Run every small field parser on s; successful times must round-trip. */
static inline void fuzz_fields(const char *s)
{
	struct slurm_jobid id;
	char *cause = NULL, *txt;
	long long secs;
	int status, signo;
	time_t t, t2;

	if (slurm_parse_jobid(s, &id, &cause) == 0) {
		FUZZ_CHECK(id.job != NULL && id.id > 0, "bad job id from '%s'", s);
		FUZZ_CHECK(cause == NULL, "cause set on success");
		slurm_jobid_release(&id);
	}
	FREE_AND_NULL(cause);
	if (slurm_parse_exit_code(s, &status, &signo, &cause) == 0)
		FUZZ_CHECK(status >= 0 && status <= 255 && signo >= 0 && signo <= 255,
			   "exit code %d:%d from '%s'", status, signo, s);
	FREE_AND_NULL(cause);
	if (slurm_parse_duration(s, &secs, &cause) == 0)
		FUZZ_CHECK(secs >= -1, "duration %lld from '%s'", secs, s);
	FREE_AND_NULL(cause);
	if (slurm_parse_time(s, &t, &cause) == 0 && t != 0) {
		txt = slurm_format_time(t);
		FUZZ_CHECK(slurm_parse_time(txt, &t2, NULL) == 0 && t2 == t,
			   "time '%s' -> %lld -> '%s' does not round-trip", s,
			   (long long)t, txt);
		free(txt);
	}
	FREE_AND_NULL(cause);
	fuzz_state(s);
}

/* A job from scontrol or squeue: strings set, pairs findable, fields parse. */
static inline void fuzz_job(const struct slurm_job *j)
{
	const char *strs[] = {
		j->job_id, j->array_job_id, j->array_task_id, j->name, j->user,
		j->state_raw, j->reason, j->comment, j->partition, j->nodes,
		j->submit_time, j->start_time, j->end_time, j->time_limit,
		j->run_time, j->std_out, j->std_err, j->work_dir, j->dependency,
	};
	size_t i;

	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		FUZZ_CHECK(strs[i] != NULL, "string field %zu is NULL", i);
	FUZZ_CHECK(j->state >= SLURM_STATE_UNKNOWN && j->state < SLURM_STATE_NR,
		   "state %d", (int)j->state);
	for (i = 0; i < j->nr_kv; i++) {
		FUZZ_CHECK(j->kv[i].key && j->kv[i].value, "NULL pair %zu", i);
		FUZZ_CHECK(slurm_job_get(j, j->kv[i].key) != NULL,
			   "key '%s' not found", j->kv[i].key);
	}
	fuzz_fields(j->job_id);
	fuzz_fields(j->submit_time);
	fuzz_fields(j->start_time);
	fuzz_fields(j->end_time);
	fuzz_fields(j->time_limit);
	fuzz_fields(j->run_time);
	fuzz_fields(j->state_raw);
}

#endif
