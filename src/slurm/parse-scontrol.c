/*
 * Parsers for scontrol: show job (one-line and multi-line), show of other
 * records, show config, ping; and the job struct squeue fills too.
 * See slurm-parse.h for the contract of each entry point.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* ------------------------------------------------------------ job struct */

/* Free an array of key/value pairs. */
static void kv_free(struct slurm_kv *kv, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

/* The first value of key among pairs, or NULL. */
static const char *kv_get(const struct slurm_kv *kv, size_t nr,
			  const char *key)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

/* Append a key/value pair to an array of them. */
static void kv_add(struct slurm_kv **kv, size_t *nr, size_t *cap,
		   struct span k, struct span v)
{
	GROW(*kv, *nr, *cap);
	(*kv)[*nr].key = xstrndup(k.s, k.n);
	(*kv)[*nr].value = xstrndup(v.s, v.n);
	(*nr)++;
}

/* Empty a job: strings NULL until filled, numbers -1. */
static void job_init(struct slurm_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = -1;
	j->exit_code = j->exit_signal = -1;
	j->derived_exit_code = j->derived_exit_signal = -1;
	j->batch_flag = j->requeue = j->restarts = -1;
}

/* The string members of struct slurm_job, for filling and freeing. */
static const size_t job_string_offs[] = {
	offsetof(struct slurm_job, job_id),
	offsetof(struct slurm_job, array_job_id),
	offsetof(struct slurm_job, array_task_id),
	offsetof(struct slurm_job, name),
	offsetof(struct slurm_job, user),
	offsetof(struct slurm_job, state_raw),
	offsetof(struct slurm_job, reason),
	offsetof(struct slurm_job, comment),
	offsetof(struct slurm_job, partition),
	offsetof(struct slurm_job, nodes),
	offsetof(struct slurm_job, submit_time),
	offsetof(struct slurm_job, start_time),
	offsetof(struct slurm_job, end_time),
	offsetof(struct slurm_job, time_limit),
	offsetof(struct slurm_job, run_time),
	offsetof(struct slurm_job, std_out),
	offsetof(struct slurm_job, std_err),
	offsetof(struct slurm_job, work_dir),
	offsetof(struct slurm_job, dependency),
};

/* The i-th string member of a job. */
static char **job_string(struct slurm_job *j, size_t i)
{
	return (char **)(void *)((char *)j + job_string_offs[i]);
}

/* Give every NULL string member of a job the value "". */
void job_fill_empty(struct slurm_job *j)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_string_offs); i++)
		if (*job_string(j, i) == NULL)
			*job_string(j, i) = xstrdup("");
}

/* Free one job's members. */
static void job_release(struct slurm_job *j)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_string_offs); i++)
		free(*job_string(j, i));
	kv_free(j->kv, j->nr_kv);
	job_init(j);
}

/* Free every job and the array. */
void slurm_jobs_release(struct slurm_jobs *jobs)
{
	size_t i;

	for (i = 0; i < jobs->nr; i++)
		job_release(&jobs->v[i]);
	free(jobs->v);
	jobs->v = NULL;
	jobs->nr = 0;
}

/* The job with this id. */
const struct slurm_job *slurm_jobs_find(const struct slurm_jobs *jobs, const char *id)
{
	size_t i;

	for (i = 0; id && *id && i < jobs->nr; i++)
		if (strcmp(jobs->v[i].job_id, id) == 0)
			return &jobs->v[i];
	return NULL;
}

const struct slurm_job *slurm_jobs_find_token(const struct slurm_jobs *jobs, const char *token)
{
	size_t i, n = strlen(token);

	for (i = 0; jobs && i < jobs->nr; i++) {
		const char *c = jobs->v[i].comment;
		size_t l = strlen(c);

		if (l > n && c[l - n - 1] == ':' && strcmp(c + l - n, token) == 0)
			return &jobs->v[i];
	}
	return NULL;
}

/* First value printed for key. */
const char *slurm_job_get(const struct slurm_job *job, const char *key)
{
	return kv_get(job->kv, job->nr_kv, key);
}

/* Append a key/value pair to a job. */
void job_add_kv(struct slurm_job *j, size_t *cap, struct span k,
		struct span v)
{
	kv_add(&j->kv, &j->nr_kv, cap, k, v);
}

/* Replace *dst with a copy of v, "" for "(null)". */
void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v && strcmp(v, "(null)") != 0 ? v : "");
}

/* Replace *dst with a copy of a time value, "" for the no-value words. */
void set_time(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v && !is_no_value(span_of(v)) ? v : "");
}

/* Parse a small number into *out, or fail naming key. */
static int set_int(int *out, const char *key, const char *v, char **cause)
{
	long long x;

	if (span_uint(trim(span_of(v)), 1000000000, &x))
		return fail(cause, "bad %s '%.*s': not a number", key,
			    QLEN(strlen(v)), v);
	*out = (int)x;
	return 0;
}

/* -------------------------------------------------------------- scontrol */

/*
 * Keys scontrol prints, in the order it prints them (union of 14.11 to
 * 26.05; 26.05's -d adds SLUID after JobName). KEY_TEXT: the value is free text that may hold spaces and "X=";
 * KEY_REPEAT: printed once per node group by -d, the others once a record.
 */
#define KEY_TEXT 1
#define KEY_REPEAT 2
static const struct scontrol_key {
	const char *key;
	int flags;
} scontrol_keys[] = {
	{ "JobId", 0 }, { "ArrayJobId", 0 }, { "ArrayTaskId", 0 },
	{ "ArrayTaskThrottle", 0 }, { "HetJobId", 0 }, { "HetJobOffset", 0 },
	{ "JobName", KEY_TEXT }, { "SLUID", 0 }, { "HetJobIdSet", 0 },
	{ "UserId", 0 },
	{ "GroupId", 0 }, { "MCS_label", 0 }, { "Priority", 0 }, { "Nice", 0 },
	{ "Account", 0 }, { "QOS", 0 }, { "WCKey", 0 }, { "JobState", 0 },
	{ "Reason", KEY_TEXT }, { "FailedNode", 0 }, { "Dependency", 0 },
	{ "Requeue", 0 }, { "Restarts", 0 }, { "BatchFlag", 0 },
	{ "Reboot", 0 }, { "ExitCode", 0 }, { "DerivedExitCode", 0 },
	{ "RunTime", 0 }, { "TimeLimit", 0 }, { "TimeMin", 0 },
	{ "SubmitTime", 0 }, { "EligibleTime", 0 }, { "AccrueTime", 0 },
	{ "ResizeTime", 0 }, { "StartTime", 0 }, { "EndTime", 0 },
	{ "Deadline", 0 }, { "CronJob", 0 }, { "CrontabSpec", KEY_TEXT },
	{ "PreemptEligibleTime", 0 }, { "PreemptTime", 0 },
	{ "SuspendTime", 0 }, { "SecsPreSuspend", 0 }, { "LastSchedEval", 0 },
	{ "Scheduler", 0 }, { "Partition", 0 }, { "AllocNode:Sid", 0 },
	{ "ReqNodeList", 0 }, { "ExcNodeList", 0 }, { "NodeList", 0 },
	{ "SchedNodeList", 0 }, { "BatchFeatures", 0 }, { "BatchHost", 0 },
	{ "StepMgrEnabled", 0 }, { "FedOrigin", 0 },
	{ "FedViableSiblings", 0 }, { "FedActiveSiblings", 0 },
	{ "NumNodes", 0 }, { "NumCPUs", 0 }, { "NumTasks", 0 },
	{ "CPUs/Task", 0 }, { "ReqB:S:C:T", 0 }, { "TRES", 0 },
	{ "ReqTRES", 0 }, { "AllocTRES", 0 }, { "Socks/Node", 0 },
	{ "NtasksPerN:B:S:C", 0 }, { "CoreSpec", 0 }, { "ThreadSpec", 0 },
	{ "JOB_GRES", 0 }, { "Nodes", KEY_REPEAT }, { "CPU_IDs", KEY_REPEAT },
	{ "Mem", KEY_REPEAT }, { "GRES", KEY_REPEAT },
	{ "GRES_IDX", KEY_REPEAT }, { "MinCPUsNode", 0 },
	{ "MinMemoryNode", 0 }, { "MinMemoryCPU", 0 }, { "MinMemoryTRES", 0 },
	{ "MinTmpDiskNode", 0 }, { "Features", 0 }, { "DelayBoot", 0 },
	{ "ClusterFeatures", 0 }, { "Prefer", 0 }, { "Gres", 0 },
	{ "Reservation", 0 }, { "OverSubscribe", 0 }, { "Exclusive", 0 },
	{ "Contiguous", 0 }, { "Licenses", 0 }, { "LicensesAlloc", 0 },
	{ "Network", 0 }, { "Command", KEY_TEXT }, { "SubmitLine", KEY_TEXT },
	{ "WorkDir", KEY_TEXT }, { "AdminComment", KEY_TEXT },
	{ "SystemComment", KEY_TEXT }, { "Comment", KEY_TEXT },
	{ "Extra", KEY_TEXT }, { "StdErr", 0 }, { "StdIn", 0 },
	{ "StdOut", 0 }, { "Switches", 0 }, { "BurstBuffer", 0 },
	{ "BurstBufferState", 0 }, { "CpuFreqMin", 0 }, { "CpuFreqMax", 0 },
	{ "CpuFreqGov", 0 }, { "Power", 0 }, { "GresAllowTaskSharing", 0 },
	{ "GresEnforceBind", 0 }, { "GresOneTaskPerSharing", 0 },
	{ "KillOInInvalidDependent", 0 }, { "KillOnInvalidDependent", 0 },
	{ "SpreadJob", 0 }, { "OOMKillStep", 0 }, { "CpusPerTres", 0 },
	{ "MemPerTres", 0 }, { "TresBind", 0 }, { "TresFreq", 0 },
	{ "TresPerJob", 0 }, { "TresPerNode", 0 }, { "TresPerSocket", 0 },
	{ "TresPerTask", 0 }, { "MailUser", 0 }, { "MailType", 0 },
	{ "NtasksPerTRES", 0 }, { "Container", 0 }, { "ContainerID", 0 },
	{ "SELinuxContext", 0 }, { "ResvPorts", 0 },
};

/* Index of a known key in print order, or -1. */
static int scontrol_rank(struct span k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scontrol_keys); i++)
		if (strlen(scontrol_keys[i].key) == k.n &&
		    memcmp(scontrol_keys[i].key, k.s, k.n) == 0)
			return (int)i;
	return -1;
}

/*
 * A key at p: [A-Za-z][A-Za-z0-9_:/]* then '=', or 20.11's
 * "NtasksPerTRES:". Returns its length (0: none) and where the value starts.
 */
static size_t key_at(const char *p, const char *end, const char **vstart)
{
	static const char colon_key[] = "NtasksPerTRES:";
	const char *q = p;

	if (q >= end || !isalpha((unsigned char)*q))
		return 0;
	while (q < end && (isalnum((unsigned char)*q) || *q == '_' ||
			   *q == ':' || *q == '/'))
		q++;
	if (q < end && *q == '=') {
		*vstart = q + 1;
		return (size_t)(q - p);
	}
	if ((size_t)(end - p) > strlen(colon_key) &&
	    memcmp(p, colon_key, strlen(colon_key)) == 0) {
		*vstart = p + strlen(colon_key);
		return strlen(colon_key) - 1;
	}
	return 0;
}

/* Keys of one record seen so far, so that a value's text cannot repeat one. */
struct seen {
	unsigned char key[ARRAY_SIZE(scontrol_keys)];
};

/*
 * Where the value starting at v ends: at the first " Key=" when the value
 * is plain and Key is known or capitalised; for a free-text value, at the
 * first " Key=" of the earliest-printed known key that scontrol prints
 * after this one (scontrol prints keys in a fixed order, so that is the
 * real next key even when the text itself holds later keys). A key the
 * record already had is text. Each free-text key occurs once a record, so
 * a line costs at most a dozen scans.
 */
static const char *value_end(int cur, const struct seen *seen, const char *v,
			     const char *end)
{
	const char *q, *best = end, *v2;
	int best_rank = -1;

	for (q = v; q < end; q++) {
		struct span cand;
		int r;

		if (*q != ' ')
			continue;
		cand.s = q + 1;
		cand.n = key_at(q + 1, end, &v2);
		if (cand.n == 0)
			continue;
		r = scontrol_rank(cand);
		if (r >= 0 && seen->key[r] &&
		    !(scontrol_keys[r].flags & KEY_REPEAT))
			continue;	/* a key this record already had */
		if (cur < 0 || !(scontrol_keys[cur].flags & KEY_TEXT)) {
			if (r >= 0 || isupper((unsigned char)cand.s[0]))
				return q;
			continue;
		}
		if (r > cur && (best_rank < 0 || r < best_rank)) {
			best = q;
			best_rank = r;
		}
	}
	return best;
}

/*
 * Split one line of key=value pairs into kv. With seen NULL (not a job),
 * every value is plain. 0, or -1: not such a line.
 */
static int scontrol_line(struct span line, struct slurm_kv **kv, size_t *nr,
			 size_t *cap, struct seen *seen)
{
	static const struct seen none;
	const char *p = line.s, *end = line.s + line.n, *v, *q;
	struct span k, val;
	size_t klen;
	int rank;

	while (p < end && isspace((unsigned char)*p))
		p++;
	klen = key_at(p, end, &v);
	if (klen == 0)
		return -1;
	for (;;) {
		k.s = p;
		k.n = klen;
		rank = seen ? scontrol_rank(k) : -1;
		if (rank >= 0)
			seen->key[rank] = 1;
		q = value_end(rank, seen ? seen : &none, v, end);
		val.s = v;
		val.n = (size_t)(q - v);
		while (val.n && isspace((unsigned char)val.s[val.n - 1]))
			val.n--;
		kv_add(kv, nr, cap, k, val);
		if (q >= end)
			break;
		p = q + 1;
		klen = key_at(p, end, &v);
	}
	return 0;
}

/* True for "Job 36_5 not found" (scontrol, an id it does not know). */
static int is_job_not_found(struct span line)
{
	static const char tail[] = " not found";
	size_t n = strlen(tail);

	return span_starts(line, "Job ") && line.n > 4 + n &&
	       memcmp(line.s + line.n - n, tail, n) == 0 &&
	       isdigit((unsigned char)line.s[4]);
}

/* Fill the named members of a job from its scontrol pairs. */
static int scontrol_fill(struct slurm_job *j, char **cause)
{
	const char *jobid = slurm_job_get(j, "JobId");
	const char *ajob = slurm_job_get(j, "ArrayJobId");
	const char *atask = slurm_job_get(j, "ArrayTaskId");
	const char *het = slurm_job_get(j, "HetJobId");
	const char *hoff = slurm_job_get(j, "HetJobOffset");
	const char *v;
	long long x;
	int a, b;

	if (jobid == NULL)
		return fail(cause, "scontrol record without JobId: '%.*s=%.*s'",
			    QLEN(strlen(j->kv[0].key)), j->kv[0].key,
			    QLEN(strlen(j->kv[0].value)), j->kv[0].value);
	if (span_uint(span_of(jobid), 999999999999LL, &x))
		return fail(cause, "bad JobId '%.*s'", QLEN(strlen(jobid)),
			    jobid);
	j->id = x;
	if (ajob && atask && strcmp(ajob, "0") != 0) {
		set_str(&j->array_job_id, ajob);
		set_str(&j->array_task_id, atask);
		if (span_uint(span_of(atask), 999999999, &x) == 0)
			j->job_id = xasprintf("%s_%s", ajob, atask);
		else
			j->job_id = xasprintf("%s_[%s]", ajob, atask);
	} else if (het && hoff && strcmp(het, "0") != 0) {
		j->job_id = xasprintf("%s+%s", het, hoff);
	} else {
		j->job_id = xstrdup(jobid);
	}
	set_str(&j->name, slurm_job_get(j, "JobName"));
	if ((v = slurm_job_get(j, "UserId"))) {
		const char *paren = strchr(v, '(');

		j->user = xstrndup(v, paren ? (size_t)(paren - v) : strlen(v));
	}
	if ((v = slurm_job_get(j, "JobState"))) {
		j->state = slurm_state_parse(v, 0);
		set_str(&j->state_raw, v);
	}
	set_str(&j->reason, slurm_job_get(j, "Reason"));
	if ((v = slurm_job_get(j, "ExitCode"))) {
		if (slurm_parse_exit_code(v, &a, &b, cause))
			return -1;
		j->exit_code = a;
		j->exit_signal = b;
	}
	if ((v = slurm_job_get(j, "DerivedExitCode"))) {
		if (slurm_parse_exit_code(v, &a, &b, cause))
			return -1;
		j->derived_exit_code = a;
		j->derived_exit_signal = b;
	}
	set_str(&j->comment, slurm_job_get(j, "Comment"));
	set_str(&j->partition, slurm_job_get(j, "Partition"));
	set_str(&j->nodes, slurm_job_get(j, "NodeList"));
	set_time(&j->submit_time, slurm_job_get(j, "SubmitTime"));
	set_time(&j->start_time, slurm_job_get(j, "StartTime"));
	set_time(&j->end_time, slurm_job_get(j, "EndTime"));
	set_str(&j->time_limit, slurm_job_get(j, "TimeLimit"));
	set_str(&j->run_time, slurm_job_get(j, "RunTime"));
	set_str(&j->std_out, slurm_job_get(j, "StdOut"));
	set_str(&j->std_err, slurm_job_get(j, "StdErr"));
	set_str(&j->work_dir, slurm_job_get(j, "WorkDir"));
	set_str(&j->dependency, slurm_job_get(j, "Dependency"));
	if ((v = slurm_job_get(j, "BatchFlag")) &&
	    set_int(&j->batch_flag, "BatchFlag", v, cause))
		return -1;
	if ((v = slurm_job_get(j, "Requeue")) &&
	    set_int(&j->requeue, "Requeue", v, cause))
		return -1;
	if ((v = slurm_job_get(j, "Restarts")) &&
	    set_int(&j->restarts, "Restarts", v, cause))
		return -1;
	job_fill_empty(j);
	return 0;
}

/* Add an empty job to the list and return it. */
struct slurm_job *jobs_add(struct slurm_jobs *jobs, size_t *cap)
{
	GROW(jobs->v, jobs->nr, *cap);
	job_init(&jobs->v[jobs->nr]);
	return &jobs->v[jobs->nr++];
}

/* True when the line (after any indentation) starts with a key. */
static int is_key_line(struct span line)
{
	const char *p = line.s, *end = line.s + line.n, *v;

	while (p < end && isspace((unsigned char)*p))
		p++;
	return key_at(p, end, &v) != 0;
}

/* Add the lines held in more to the last value, which went on. */
static void flush_more(struct slurm_kv *kv, size_t nr, struct buf *more)
{
	char *joined;

	if (kv == NULL || nr == 0 || more->len == 0)
		return;
	joined = xasprintf("%s%s", kv[nr - 1].value, more->s);
	free(kv[nr - 1].value);
	kv[nr - 1].value = joined;
	buf_reset(more);
}

/*
 * Parse scontrol show job output. A record starts with a "JobId=" line at
 * column 0 (every -o line is one), or with any key line after a blank line;
 * indented lines continue it; a blank line ends it.
 */
int slurm_parse_scontrol(const char *out, struct slurm_jobs *jobs,
			 char **cause)
{
	const char *p = out ? out : "";
	struct slurm_jobs res = SLURM_JOBS_INIT;
	struct slurm_job *cur = NULL;
	struct buf more = BUF_INIT;
	size_t cap = 0, kvcap = 0, i;
	struct seen seen;
	struct span line, t;
	int unknown = 0;

	jobs->v = NULL;
	jobs->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0) {
			if (cur)
				flush_more(cur->kv, cur->nr_kv, &more);
			cur = NULL;
			continue;
		}
		if (is_key_line(line)) {
			if (cur)
				flush_more(cur->kv, cur->nr_kv, &more);
			if (cur == NULL || span_starts(line, "JobId=")) {
				cur = jobs_add(&res, &cap);
				kvcap = 0;
				memset(&seen, 0, sizeof(seen));
			}
			scontrol_line(line, &cur->kv, &cur->nr_kv, &kvcap,
				      &seen);
			continue;
		}
		if (cur) {
			/* a value that went on over a newline */
			buf_addc(&more, '\n');
			buf_add(&more, line.s, line.n);
			continue;
		}
		if (mem_find(t.s, t.n, "Invalid job id specified", 24) ||
		    is_job_not_found(t)) {
			unknown = 1;
		} else if (!span_ieq(t, "No jobs in the system")) {
			fail(cause, "unexpected scontrol output '%.*s'",
			     QLEN(t.n), t.s);
			goto err;
		}
	}
	if (cur)
		flush_more(cur->kv, cur->nr_kv, &more);
	buf_release(&more);
	if (unknown) {
		slurm_jobs_release(&res);
		return SLURM_PARSE_UNKNOWN_JOB;
	}
	for (i = 0; i < res.nr; i++)
		if (scontrol_fill(&res.v[i], cause))
			goto err;
	*jobs = res;
	return 0;
err:
	buf_release(&more);
	slurm_jobs_release(&res);
	return -1;
}

/* ------------------------------------------------------- other records */

/* Free the records. */
void slurm_records_release(struct slurm_records *recs)
{
	size_t i;

	for (i = 0; i < recs->nr; i++)
		kv_free(recs->v[i].kv, recs->v[i].nr_kv);
	free(recs->v);
	recs->v = NULL;
	recs->nr = 0;
}

/* The first value of key in a record. */
const char *slurm_record_get(const struct slurm_record *rec, const char *key)
{
	return kv_get(rec->kv, rec->nr_kv, key);
}

/* True when a comma list holds item exactly. */
int slurm_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	if (list == NULL || n == 0)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && memcmp(p, item, n) == 0)
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Parse scontrol show records of any entity, one-line or multi-line. */
int slurm_parse_records(const char *out, struct slurm_records *recs,
			char **cause)
{
	struct slurm_records res = SLURM_RECORDS_INIT;
	struct slurm_record *cur = NULL;
	const char *p = out ? out : "";
	struct buf more = BUF_INIT;
	size_t cap = 0, kvcap = 0;
	struct span line, t;
	int not_found = 0;

	recs->v = NULL;
	recs->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (cur && (t.n == 0 || is_key_line(line)))
			flush_more(cur->kv, cur->nr_kv, &more);
		if (t.n == 0) {
			cur = NULL;
			continue;
		}
		if (is_key_line(line)) {
			if (cur == NULL || !isspace((unsigned char)line.s[0])) {
				GROW(res.v, res.nr, cap);
				cur = &res.v[res.nr++];
				memset(cur, 0, sizeof(*cur));
				kvcap = 0;
			}
			scontrol_line(line, &cur->kv, &cur->nr_kv, &kvcap,
				      NULL);
			continue;
		}
		if (cur) {
			buf_addc(&more, '\n');
			buf_add(&more, line.s, line.n);
			continue;
		}
		if (t.n > 10 && memcmp(t.s + t.n - 10, " not found", 10) == 0) {
			not_found = 1;
		} else if (!(span_starts(t, "No ") &&
			     mem_find(t.s, t.n, " in the system", 14))) {
			fail(cause, "unexpected scontrol output '%.*s'",
			     QLEN(t.n), t.s);
			buf_release(&more);
			slurm_records_release(&res);
			return -1;
		}
	}
	buf_release(&more);
	if (not_found) {
		slurm_records_release(&res);
		return SLURM_PARSE_NOT_FOUND;
	}
	*recs = res;
	return 0;
}


/* ----------------------------------------------------------- show config */

/* Free one record's pairs. */
void slurm_record_release(struct slurm_record *rec)
{
	kv_free(rec->kv, rec->nr_kv);
	rec->kv = NULL;
	rec->nr_kv = 0;
}

/* Parse `scontrol show config`: its "Key = Value" lines. */
int slurm_parse_config(const char *out, struct slurm_record *conf,
		       char **cause)
{
	struct slurm_record res = { NULL, 0 };
	const char *p = out ? out : "";
	struct span line, t, k, v;
	size_t cap = 0, i;
	const char *eq;

	conf->kv = NULL;
	conf->nr_kv = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0)
			continue;
		if (mem_find(t.s, t.n, " error:", 7) || span_starts(t, "error:")) {
			fail(cause, "scontrol show config failed: '%.*s'",
			     QLEN(t.n), t.s);
			slurm_record_release(&res);
			return -1;
		}
		eq = memchr(t.s, '=', t.n);
		if (eq == NULL)
			continue;	/* a title, a section, a ping line */
		k.s = t.s;
		k.n = (size_t)(eq - t.s);
		k = trim(k);
		for (i = 0; i < k.n && !isspace((unsigned char)k.s[i]); i++)
			;
		if (k.n == 0 || i < k.n)
			continue;	/* not "Key = Value" */
		v.s = eq + 1;
		v.n = (size_t)(t.s + t.n - v.s);
		kv_add(&res.kv, &res.nr_kv, &cap, k, trim(v));
	}
	if (res.nr_kv == 0)
		return fail(cause, "no 'Key = Value' line in scontrol show "
			    "config output");
	*conf = res;
	return 0;
}

/* True when AccountingStorageType names a storage plugin other than none. */
int slurm_config_accounting(const struct slurm_record *conf)
{
	const char *type = slurm_record_get(conf, "AccountingStorageType");

	return type && !is_no_value(span_of(type)) &&
	       strcmp(type, "accounting_storage/none") != 0;
}

/* ------------------------------------------------------------------ ping */

/* Free the controllers. */
void slurm_ping_release(struct slurm_ping *ping)
{
	size_t i;

	for (i = 0; i < ping->nr; i++) {
		free(ping->v[i].role);
		free(ping->v[i].host);
	}
	free(ping->v);
	ping->v = NULL;
	ping->nr = 0;
}

/* The i-th '/'-separated piece of sp; empty when there are fewer pieces. */
static struct span slash_piece(struct span sp, size_t i)
{
	const char *p = sp.s, *end = sp.s + sp.n, *q;
	struct span r;

	for (;;) {
		q = memchr(p, '/', (size_t)(end - p));
		if (i == 0) {
			r.s = p;
			r.n = q ? (size_t)(q - p) : (size_t)(end - p);
			return r;
		}
		if (q == NULL) {
			r.s = end;
			r.n = 0;
			return r;
		}
		p = q + 1;
		i--;
	}
}

/* Parse `scontrol ping`. */
int slurm_parse_ping(const char *out, struct slurm_ping *ping, char **cause)
{
	struct slurm_ping res = { NULL, 0 };
	const char *p = out ? out : "";
	struct span line, t, role, host, state;
	const char *open, *close, *at, *is;
	size_t cap = 0, i;

	ping->v = NULL;
	ping->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0 || t.s[0] == '*')
			continue;	/* the "RESTORE SLURMCTLD" banner */
		open = span_starts(t, "Slurmctld(") ? t.s + 9 : NULL;
		close = open ? memchr(open, ')', (size_t)(t.s + t.n - open)) : NULL;
		at = close ? mem_find(close, (size_t)(t.s + t.n - close), ") at ", 5) : NULL;
		is = at ? mem_rfind(at, (size_t)(t.s + t.n - at), " is ", 4) : NULL;
		if (is == NULL && at)
			is = mem_rfind(at, (size_t)(t.s + t.n - at), " are ", 5);
		/* "at is UP": no host between them (found by fuzzing) */
		if (at != close || is == NULL || is < at + 5) {
			fail(cause, "unexpected scontrol ping output '%.*s'",
			     QLEN(t.n), t.s);
			slurm_ping_release(&res);
			return -1;
		}
		role.s = open + 1;
		role.n = (size_t)(close - role.s);
		host.s = at + 5;
		host.n = (size_t)(is - host.s);
		state.s = is + (is[1] == 'i' ? 4 : 5);
		state.n = (size_t)(t.s + t.n - state.s);
		/* before 20.02: "Slurmctld(primary/backup) at a/b are UP/DOWN" */
		for (i = 0; i == 0 || slash_piece(role, i).n; i++) {
			struct span r = trim(slash_piece(role, i));
			struct span h = trim(slash_piece(host, i));
			struct span s = trim(slash_piece(state, i));
			struct slurm_ping_ctld *c;

			if (h.n == 0 || span_ieq(h, "(null)"))
				continue;	/* no backup configured */
			if (!span_ieq(s, "UP") && !span_ieq(s, "DOWN")) {
				fail(cause, "unexpected scontrol ping state "
				     "'%.*s'", QLEN(s.n), s.s);
				slurm_ping_release(&res);
				return -1;
			}
			GROW(res.v, res.nr, cap);
			c = &res.v[res.nr++];
			c->role = xstrndup(r.s, r.n);
			c->host = xstrndup(h.s, h.n);
			c->up = span_ieq(s, "UP");
		}
	}
	if (res.nr == 0)
		return fail(cause, "no controller in scontrol ping output");
	*ping = res;
	return 0;
}
