/*
 * scontrol show job [-d] [-o]: one-line and multi-line job records through
 * slurm_parse_scontrol(), every parsed job checked by fuzz_job().
 */
#include "fuzz-slurm.h"

/* Parse one input as scontrol show job output. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_jobs jobs = SLURM_JOBS_INIT;
	char *in = fuzz_cstr(data, size), *cause = NULL;
	int rc = slurm_parse_scontrol(in, &jobs, &cause);
	size_t i;

	fuzz_check_rc(rc, cause, jobs.nr, SLURM_PARSE_UNKNOWN_JOB);
	for (i = 0; i < jobs.nr; i++)
		fuzz_job(&jobs.v[i]);
	slurm_jobs_release(&jobs);
	FUZZ_CHECK(jobs.nr == 0 && jobs.v == NULL, "release left jobs");
	free(cause);
	free(in);
	return 0;
}
