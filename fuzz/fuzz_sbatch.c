/*
 * sbatch --parsable output (with banners, "Submitted batch job N on
 * cluster C", stray stderr lines) through slurm_parse_sbatch().
 */
#include "fuzz-slurm.h"

/* Parse one input as sbatch's standard output, with and without cluster. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size), *cause = NULL, *cluster = NULL;
	long long id = -2, id2 = -2;
	int rc = slurm_parse_sbatch(in, &id, &cluster, &cause);
	int rc2;

	fuzz_check_rc(rc, cause, 0, 0);
	if (rc == 0)
		FUZZ_CHECK(id > 0, "job id %lld", id);
	else
		FUZZ_CHECK(cluster == NULL, "failed but set cluster '%s'", cluster);
	FREE_AND_NULL(cause);
	rc2 = slurm_parse_sbatch(in, &id2, NULL, &cause);
	FUZZ_CHECK(rc2 == rc && (rc < 0 || id2 == id),
		   "without cluster: %d/%lld, with: %d/%lld", rc2, id2, rc, id);
	free(cause);
	free(cluster);
	free(in);
	return 0;
}
