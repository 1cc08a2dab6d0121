/*
 * sinfo -R: the '%n|%E|%H' form xloop asks for and the default fixed-width
 * table, through slurm_parse_sinfo_reasons().
 */
#include "fuzz-slurm.h"

/* Parse one input as sinfo -R output. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_node_reasons nr = SLURM_NODE_REASONS_INIT;
	char *in = fuzz_cstr(data, size), *cause = NULL;
	int rc = slurm_parse_sinfo_reasons(in, &nr, &cause);
	size_t i;

	fuzz_check_rc(rc, cause, nr.nr, 0);
	for (i = 0; i < nr.nr; i++)
		FUZZ_CHECK(nr.v[i].node && nr.v[i].reason && nr.v[i].user &&
			   nr.v[i].timestamp, "NULL string in reason %zu", i);
	slurm_node_reasons_release(&nr);
	free(cause);
	free(in);
	return 0;
}
