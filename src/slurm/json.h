/* Parsed Slurm records as JSON, for --json output and the test-* commands. */
#ifndef XLOOP_SLURM_JSON_H
#define XLOOP_SLURM_JSON_H

#include <jansson.h>

#include "slurm/parse.h"

json_t *slurm_job_json(const struct slurm_job *j);
json_t *slurm_jobs_json(const struct slurm_jobs *jobs);
json_t *slurm_acct_row_json(const struct slurm_acct *acct,
			    const struct slurm_acct_row *row);
json_t *slurm_acct_summary_json(const struct slurm_acct_summary *sum);

#endif
