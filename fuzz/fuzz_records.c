/*
 * Other scontrol output: partition and node records (show partition|node,
 * -o or multi-line) through slurm_parse_records(), and the same bytes
 * through slurm_parse_config() (show config) and slurm_parse_ping() (ping).
 */
#include "fuzz-slurm.h"

/* Every pair findable; the lookups cmd/doctor.c and loop.c make. */
static void check_record(const struct slurm_record *rec)
{
	const char *parts;
	size_t i;

	for (i = 0; i < rec->nr_kv; i++) {
		FUZZ_CHECK(rec->kv[i].key && rec->kv[i].value, "NULL pair %zu", i);
		FUZZ_CHECK(slurm_record_get(rec, rec->kv[i].key) != NULL,
			   "key '%s' not found", rec->kv[i].key);
	}
	parts = slurm_record_get(rec, "Partitions");
	if (parts) {
		(void)slurm_list_has(parts, "gpu");
		(void)slurm_list_has(parts, "");
	}
	fuzz_fields(slurm_record_get(rec, "MaxTime") ?
		    slurm_record_get(rec, "MaxTime") : "");
	fuzz_fields(slurm_record_get(rec, "State") ?
		    slurm_record_get(rec, "State") : "");
}

/* Parse one input as records, as config and as ping output. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_records recs = SLURM_RECORDS_INIT;
	struct slurm_record conf = { NULL, 0 };
	struct slurm_ping ping = SLURM_PING_INIT;
	char *in = fuzz_cstr(data, size), *cause = NULL;
	size_t i;
	int rc;

	rc = slurm_parse_records(in, &recs, &cause);
	fuzz_check_rc(rc, cause, recs.nr, SLURM_PARSE_NOT_FOUND);
	for (i = 0; i < recs.nr; i++)
		check_record(&recs.v[i]);
	slurm_records_release(&recs);
	FREE_AND_NULL(cause);

	rc = slurm_parse_config(in, &conf, &cause);
	fuzz_check_rc(rc, cause, conf.nr_kv, 0);
	check_record(&conf);
	slurm_record_release(&conf);
	FREE_AND_NULL(cause);

	rc = slurm_parse_ping(in, &ping, &cause);
	fuzz_check_rc(rc, cause, ping.nr, 0);
	for (i = 0; i < ping.nr; i++)
		FUZZ_CHECK(ping.v[i].role && ping.v[i].host &&
			   (ping.v[i].up == 0 || ping.v[i].up == 1),
			   "bad controller %zu", i);
	slurm_ping_release(&ping);
	free(cause);
	free(in);
	return 0;
}
