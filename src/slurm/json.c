/* JSON views of parsed Slurm records. */
#include "slurm/json.h"
#include "lib/util.h"

static json_t *exit_json(int code, int sig)
{
	char s[32];

	if (code < 0)
		return json_null();
	xsnprintf(s, sizeof(s), "%d:%d", code, sig < 0 ? 0 : sig);
	return json_string(s);
}

/* One job from scontrol or squeue. */
json_t *slurm_job_json(const struct slurm_job *j)
{
	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:s,"
			 " s:s, s:s, s:s, s:s, s:s}",
			 "job_id", j->job_id, "id", (json_int_t)j->id,
			 "array_task_id", j->array_task_id, "name", j->name,
			 "state", slurm_state_name(j->state), "state_raw", j->state_raw,
			 "reason", j->reason, "exit_code", exit_json(j->exit_code, j->exit_signal),
			 "comment", j->comment, "partition", j->partition,
			 "nodes", j->nodes, "start_time", j->start_time,
			 "end_time", j->end_time, "time_limit", j->time_limit,
			 "std_out", j->std_out, "work_dir", j->work_dir);
}

/* A list of jobs. */
json_t *slurm_jobs_json(const struct slurm_jobs *jobs)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < jobs->nr; i++)
		json_array_append_new(a, slurm_job_json(&jobs->v[i]));
	return a;
}

/* One sacct row. */
json_t *slurm_acct_row_json(const struct slurm_acct *acct,
			    const struct slurm_acct_row *row)
{
	json_t *o = json_pack("{s:s, s:o, s:s, s:o}", "job", row->id.job,
			      "step", row->id.step ? json_string(row->id.step) : json_null(),
			      "state", slurm_state_name(row->state),
			      "exit_code", exit_json(row->exit_code, row->exit_signal));
	json_t *f = json_object();
	size_t i;

	for (i = 0; i < acct->nr_fields; i++)
		json_object_set_new(f, acct->fields[i], json_string(row->values[i]));
	json_object_set_new(o, "fields", f);
	return o;
}

/* The folded verdict view of one job's rows. */
json_t *slurm_acct_summary_json(const struct slurm_acct_summary *sum)
{
	return json_pack("{s:s, s:s, s:o, s:o, s:I}",
			 "state", slurm_state_name(sum->state),
			 "alloc_state", slurm_state_name(sum->alloc_state),
			 "exit_code", exit_json(sum->exit_code, sum->exit_signal),
			 "worst_step", sum->worst_step && sum->worst_step->id.step ?
				json_string(sum->worst_step->id.step) : json_null(),
			 "steps", (json_int_t)sum->nr_steps);
}
