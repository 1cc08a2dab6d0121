/*
 * The small Slurm field parsers on every line of the input: job ids,
 * ExitCode, timestamps (which must round-trip through slurm_format_time),
 * durations and job states.
 */
#include "fuzz-slurm.h"

/* Run the field parsers on each line, and on the whole input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size), *p = in;

	fuzz_fields(in);
	while (*p) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n);

		fuzz_fields(line);
		free(line);
		p += n;
		if (*p)
			p++;
	}
	free(in);
	return 0;
}
