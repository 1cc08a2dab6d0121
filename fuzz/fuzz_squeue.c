/*
 * squeue -h -o FORMAT through slurm_parse_squeue(). The format is xloop's
 * own (SLURM_SQUEUE_FORMAT), two other common ones, or the one a leading
 * "#F FORMAT" line of the input names.
 */
#include "fuzz-slurm.h"

/* Parse in with one format and check what comes out. */
static void parse(const char *in, const char *format)
{
	struct slurm_jobs jobs = SLURM_JOBS_INIT;
	char *cause = NULL;
	int rc = slurm_parse_squeue(in, format, &jobs, &cause);
	size_t i;

	fuzz_check_rc(rc, cause, jobs.nr, SLURM_PARSE_UNKNOWN_JOB);
	for (i = 0; i < jobs.nr; i++)
		fuzz_job(&jobs.v[i]);
	slurm_jobs_release(&jobs);
	free(cause);
}

/* Parse one input as squeue output. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = {
		SLURM_SQUEUE_FORMAT,
		"%i|%E;%R;%C",
		"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R",
	};
	char *in = fuzz_cstr(data, size), *vals[1] = { NULL };
	const char *rest;
	size_t i;

	fuzz_directives(in, "F", vals, &rest);
	if (vals[0]) {
		parse(rest, vals[0]);
	} else {
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			parse(in, formats[i]);
	}
	free(vals[0]);
	free(in);
	return 0;
}
