/*
 * sacct -n -P / -p through slurm_parse_sacct() and slurm_acct_summarize().
 * Without directives each input is parsed with xloop's field list (with and
 * without -p's trailing delimiter) and two other lists; leading lines
 * "#F JobID,State,...", "#D DELIM" and "#T" (trailing delimiter) choose
 * the arguments instead.
 */
#include "fuzz-slurm.h"

/* Split a comma list in place into at most max fields; how many. */
static size_t split(char *list, const char **v, size_t max)
{
	size_t n = 0;
	char *p = list;

	while (n < max) {
		char *c = strchr(p, ',');

		v[n++] = p;
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

/* Parse in once, then summarise every job it names. */
static void parse(const char *in, const char *const *fields, size_t nr,
		  const char *delim, unsigned flags)
{
	struct slurm_acct acct = SLURM_ACCT_INIT;
	struct slurm_acct_summary sum;
	char *cause = NULL;
	int rc = slurm_parse_sacct(in, fields, nr, delim, flags, &acct, &cause);
	size_t i, k;

	fuzz_check_rc(rc, cause, acct.nr, SLURM_PARSE_NO_ACCOUNTING);
	for (i = 0; i < acct.nr; i++) {
		const struct slurm_acct_row *r = &acct.rows[i];

		FUZZ_CHECK(r->id.job != NULL, "row %zu without a job id", i);
		for (k = 0; k < acct.nr_fields; k++) {
			FUZZ_CHECK(r->values[k] != NULL, "NULL value %zu", k);
			FUZZ_CHECK(slurm_acct_get(&acct, r, acct.fields[k]) != NULL,
				   "field '%s' not found", acct.fields[k]);
		}
		fuzz_fields(r->id.job);
		if (slurm_acct_summarize(&acct, r->id.job, &sum, &cause) == 0) {
			FUZZ_CHECK(sum.alloc != NULL, "summary without allocation");
			FUZZ_CHECK(sum.state >= SLURM_STATE_UNKNOWN &&
				   sum.state < SLURM_STATE_NR, "state %d",
				   (int)sum.state);
		}
		FREE_AND_NULL(cause);
	}
	slurm_acct_release(&acct);
	free(cause);
}

/* Parse one input as sacct output. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const toil[] = { "JobIDRaw", "State", "ExitCode" };
	static const char *const hb[] = {
		"JobID", "JobName", "State", "Start", "End", "Elapsed", "Comment",
	};
	char *in = fuzz_cstr(data, size), *vals[3] = { NULL, NULL, NULL };
	const char *rest, *fields[64];
	const char *const *xl;
	size_t nxl, n = 0;

	xl = slurm_sacct_fields(&nxl);
	fuzz_directives(in, "FDT", vals, &rest);
	if (vals[0] || vals[1] || vals[2]) {
		if (vals[0])
			n = split(vals[0], fields, sizeof(fields) / sizeof(fields[0]));
		parse(rest, vals[0] ? fields : xl, vals[0] ? n : nxl, vals[1],
		      vals[2] ? SLURM_SACCT_TRAILING_DELIM : 0);
	} else {
		parse(in, xl, nxl, NULL, 0);
		parse(in, xl, nxl, NULL, SLURM_SACCT_TRAILING_DELIM);
		parse(in, toil, sizeof(toil) / sizeof(toil[0]), "|", 0);
		parse(in, hb, sizeof(hb) / sizeof(hb[0]), "\xe2\x98\x83",
		      SLURM_SACCT_TRAILING_DELIM);
	}
	free(vals[0]);
	free(vals[1]);
	free(vals[2]);
	free(in);
	return 0;
}
