/*
 * The user's limits: sacctmgr --parsable2 assoc and qos tables, sbatch's
 * limit refusals, a GRES allocation's GPU IDX and sinfo's GPU count,
 * through the parsers of slurm-parse-sacctmgr.c, -scontrol.c and -sinfo.c.
 */
#include "fuzz-slurm.h"

/* Parse one input every way a limit can come in. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size), *cause = NULL, *qos = NULL, *idx;
	struct slurm_limits l;
	int rc;

	slurm_limits_none(&l);
	rc = slurm_parse_sacctmgr_assoc(in, "", "", &l, &qos, &cause);
	fuzz_check_rc(rc, cause, 0, 0);
	FUZZ_CHECK(rc < 0 ? qos == NULL : qos != NULL, "assoc: qos list and return disagree");
	FUZZ_CHECK(l.max_jobs >= -1 && l.max_submit >= -1 && l.max_gpus >= -1,
		   "assoc: a limit below -1");
	free(cause);
	cause = NULL;
	rc = slurm_parse_sacctmgr_qos(in, qos ? qos : "normal", &l, &cause);
	fuzz_check_rc(rc, cause, 0, 0);
	free(cause);
	free(qos);
	(void)slurm_limit_refusal(in);
	FUZZ_CHECK(slurm_tres_gpus(in) >= -1, "TRES: GPUs below -1");
	idx = slurm_gres_gpu_idx(in);
	FUZZ_CHECK(!idx || (*idx && strspn(idx, "0123456789,-") == strlen(idx)),
		   "IDX '%s' is not a list of indexes", idx);
	free(idx);
	{
		long long all = slurm_sinfo_gpus(in, 1), pairs = slurm_sinfo_gpus(in, 2);

		FUZZ_CHECK(all >= -1, "sinfo: GPUs below -1");
		/* a node holds no more jobs of 2 GPUs than it has GPUs */
		FUZZ_CHECK(pairs <= all, "sinfo: %lld jobs of 2 GPUs on %lld GPUs", pairs, all);
	}
	free(in);
	return 0;
}
