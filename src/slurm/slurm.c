/* Running Slurm's command-line tools and reading their answers. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "slurm/slurm.h"

#define SLURM_TIMEOUT_MS 60000

/* Set up an adapter that really runs Slurm's commands. */
void slurm_init(struct slurm *s)
{
	s->run = proc_run;
	s->timeout_ms = SLURM_TIMEOUT_MS;
	s->calls = 0;
	s->refused_by = NULL;
}

/* 1 for a feeder's comment. */
int slurm_is_feeder_comment(const char *comment)
{
	return comment && starts_with(comment, SLURM_FEEDER_COMMENT);
}

/* The parts of an sbatch request that come from xloop.json. */
void slurm_fill_request(const struct config *c, const char *root, struct slurm_submit *req,
			const char *mem, const char *time_, const char *dependency)
{
	memset(req, 0, sizeof(*req));
	req->partition = c->partition;
	req->gres = c->res.gres;
	req->cpus = c->res.cpus;
	req->mem = mem;
	req->time = time_;
	req->account = c->account;
	req->qos = c->qos;
	req->dependency = dependency;
	req->workdir = root;
	req->nice = c->nice;
}

/* Words in a Slurm client's stderr that mean "try again later". */
static int transient(const char *err)
{
	static const char *const words[] = {
		"Unable to contact slurm controller",
		"Socket timed out",
		"Connection refused",
		"Zero Bytes were transmitted",
		"Communication connection failure",
		"Slurm backup controller in standby mode",
		"Resource temporarily unavailable",
		"Unable to establish connection",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strstr(err, words[i]))
			return 1;
	return 0;
}

/*
 * Variables that change what Slurm's clients print or which jobs they list
 * (SQUEUE_STATES, SQUEUE_PARTITION, SACCT_FORMAT, SLURM_TIME_FORMAT=relative,
 * SLURM_BITSTR_LEN...): removed from every child's environment, so the
 * parsers always read the format they asked for.
 */
static const char *const neutral_env[] = {
	"-SQUEUE_*", "-SACCT_*", "-SINFO_*", "-SCONTROL_*", "-SLURM_TIME_FORMAT",
	"-SLURM_BITSTR_LEN",
};

/* Run argv; returns 0 when it ran and exited 0, else an exit code. */
static int run(struct slurm *s, const char *const *argv, const char *const *env,
	       struct proc *p, char **cause)
{
	const char *envp[ARRAY_SIZE(neutral_env) + 48];
	struct buf how = BUF_INIT;
	size_t n = 0, i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(neutral_env); i++)
		envp[n++] = neutral_env[i];
	for (i = 0; env && env[i]; i++) {
		if (n + 1 >= ARRAY_SIZE(envp))
			BUG("too many environment entries for '%s'", argv[0]);
		envp[n++] = env[i];
	}
	envp[n] = NULL;
	p->argv = argv;
	p->env = envp;
	p->timeout_ms = s->timeout_ms;
	s->calls++;
	rc = s->run(p);
	p->env = NULL;		/* envp is ours, on this stack */
	if (rc < 0) {
		if (p->exec_errno == ENOENT) {
			*cause = xasprintf("'%s' not found: is Slurm installed and on PATH?",
					   argv[0]);
			return XL_UNAVAILABLE;
		}
		*cause = xasprintf("unable to run '%s': %s", argv[0],
				   strerror(p->exec_errno));
		return XL_ERR;
	}
	if (p->status == 0 && !p->timed_out)
		return 0;
	buf_rtrim(&p->err);
	proc_describe(p, &how);
	*cause = xasprintf("'%s' %s%s%s", argv[0], how.s, p->err.len ? ": " : "",
			   p->err.s);
	rc = (p->timed_out || transient(p->err.s)) ? XL_TEMPFAIL : XL_ERR;
	buf_release(&how);
	return rc;
}

/* Build sbatch's argument vector. */
char **slurm_sbatch_argv(const struct slurm_submit *req, struct buf *scratch)
{
	char **argv = xcalloc(28, sizeof(*argv));
	size_t n = 0, i, off[28];
	struct {
		const char *opt;
		const char *val;
	} s[] = {
		{ "--job-name=", req->job_name },
		{ "--output=", req->output },
		{ "--comment=", req->comment },
		{ "--partition=", req->partition },
		{ "--gres=", req->gres },
		{ "--mem=", req->mem },
		{ "--time=", req->time },
		{ "--account=", req->account },
		{ "--qos=", req->qos },
		{ "--dependency=", req->dependency },
		{ "--array=", req->array },
		{ "--begin=", req->begin },
		{ "--chdir=", req->workdir },
		{ "--signal=", req->signal },
		{ "--exclude=", req->exclude },
		{ "--open-mode=", req->append ? "append" : NULL },
		{ "--kill-on-invalid-dep=", req->kill_invalid_dep ? "yes" : NULL },
	};
	size_t nopt = 0;

	/* build every "--opt=value" in one buffer, then point into it */
	buf_reset(scratch);
	for (i = 0; i < ARRAY_SIZE(s); i++) {
		if (s[i].val == NULL || *s[i].val == '\0')
			continue;
		off[nopt++] = scratch->len;
		buf_addf(scratch, "%s%s", s[i].opt, s[i].val);
		buf_addc(scratch, '\0');
	}
	if (req->cpus > 0) {
		off[nopt++] = scratch->len;
		buf_addf(scratch, "--cpus-per-task=%lld", req->cpus);
		buf_addc(scratch, '\0');
	}
	if (req->nice > 0) {
		off[nopt++] = scratch->len;
		buf_addf(scratch, "--nice=%lld", req->nice);
		buf_addc(scratch, '\0');
	}
	argv[n++] = "sbatch";
	argv[n++] = "--parsable";
	argv[n++] = "--export=ALL";
	if (req->hold)
		argv[n++] = "--hold";
	for (i = 0; i < nopt; i++)
		argv[n++] = scratch->s + off[i];
	argv[n++] = (char *)req->script;
	argv[n] = NULL;
	return argv;
}

/* Submit a batch script. */
int slurm_sbatch(struct slurm *s, const struct slurm_submit *req,
		 long long *jobid, int *ambiguous, char **cause)
{
	struct buf scratch = BUF_INIT;
	char **argv = slurm_sbatch_argv(req, &scratch);
	struct proc p = PROC_INIT;
	int rc;

	*ambiguous = 0;
	s->refused_by = NULL;
	rc = run(s, (const char *const *)argv, req->env, &p, cause);
	if (rc == 0) {
		if (slurm_parse_sbatch(p.out.s, jobid, NULL, cause) < 0) {
			/* it exited 0, so it most likely submitted */
			*ambiguous = 1;
			rc = XL_TEMPFAIL;
		}
	} else if (rc != XL_UNAVAILABLE) {
		/*
		 * "sbatch: error: Batch job submission failed: ..." is a clear
		 * refusal; anything else (a timeout, a signal, a silent exit 1)
		 * may have reached the controller.
		 */
		*ambiguous = strstr(p.err.s, "Batch job submission failed") == NULL;
		if (!*ambiguous && rc == XL_TEMPFAIL)
			rc = XL_ERR;
		/* a limit of the user's: try again when a job of theirs ended */
		if (!*ambiguous && (s->refused_by = slurm_limit_refusal(p.err.s)))
			rc = XL_TEMPFAIL;
	}
	proc_release(&p);
	free(argv);
	buf_release(&scratch);
	return rc;
}

/* Ask scontrol about one job. */
int slurm_scontrol_job(struct slurm *s, const char *jobid,
		       struct slurm_jobs *jobs, int *unknown, char **cause)
{
	/* -d: DerivedExitCode, an srun step's failure that the batch script's 0:0 hides */
	const char *argv[] = { "scontrol", "-d", "show", "job", "-o", jobid, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	*unknown = 0;
	/* scontrol exits 1 for an unknown job: let the parser see it */
	if (rc == XL_ERR && !p.timed_out && !p.signo) {
		struct buf all = BUF_INIT;

		buf_addf(&all, "%s%s", p.out.s, p.err.s);
		if (slurm_parse_scontrol(all.s, jobs, NULL) == SLURM_PARSE_UNKNOWN_JOB) {
			FREE_AND_NULL(*cause);
			*unknown = 1;
			rc = 0;
		}
		buf_release(&all);
	} else if (rc == 0) {
		rc = slurm_parse_scontrol(p.out.s, jobs, cause);
		if (rc == SLURM_PARSE_UNKNOWN_JOB)
			*unknown = 1;
		rc = rc < 0 ? XL_ERR : 0;
	}
	proc_release(&p);
	return rc;
}

/* List the current user's jobs in one squeue format. */
static int squeue_user(struct slurm *s, const char *format, struct slurm_jobs *jobs,
		       char **cause)
{
	char uid[24];
	/* -r: one line per array task, never a pending range "12_[3-7%2]";
	 * -u takes a uid as well as a name: no passwd lookup needed */
	const char *argv[] = { "squeue", "-h", "-r", "-o", format, "-u", uid, NULL };
	struct proc p = PROC_INIT;
	long long at = (long long)time(NULL);
	int rc;

	xsnprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	rc = run(s, argv, NULL, &p, cause);
	if (rc == 0 && slurm_parse_squeue(p.out.s, format, jobs, cause) != 0)
		rc = XL_ERR;
	if (rc == 0)
		jobs->read_at = at;	/* a job queued since is not in it */
	proc_release(&p);
	return rc;
}

/* List the current user's jobs. */
int slurm_squeue_mine(struct slurm *s, struct slurm_jobs *jobs, char **cause)
{
	return squeue_user(s, SLURM_SQUEUE_FORMAT, jobs, cause);
}

/* List the current user's jobs with their dependencies. */
int slurm_squeue_line(struct slurm *s, struct slurm_jobs *jobs, char **cause)
{
	return squeue_user(s, SLURM_SQUEUE_LINE_FORMAT, jobs, cause);
}

/* Ask the accounting database about some jobs. */
int slurm_sacct(struct slurm *s, const char *const *jobids, size_t n,
		struct slurm_acct *acct, int *no_accounting, char **cause)
{
	struct buf ids = BUF_INIT;
	const char *argv[] = { "sacct", "-n", "-P", "-o", SLURM_SACCT_FIELDS, "-j",
			       NULL, NULL };
	struct proc p = PROC_INIT;
	const char *const *fields;
	size_t i, nf;
	int rc;

	for (i = 0; i < n; i++)
		buf_addf(&ids, "%s%s", i ? "," : "", jobids[i]);
	argv[6] = ids.s;
	*no_accounting = 0;
	rc = run(s, argv, NULL, &p, cause);
	if (rc == XL_ERR && strstr(p.err.s, "accounting storage is disabled")) {
		FREE_AND_NULL(*cause);
		*no_accounting = 1;
		rc = 0;
	} else if (rc == 0) {
		fields = slurm_sacct_fields(&nf);
		rc = slurm_parse_sacct(p.out.s, fields, nf, NULL, 0, acct, cause);
		if (rc == SLURM_PARSE_NO_ACCOUNTING)
			*no_accounting = 1;
		rc = rc < 0 ? XL_ERR : 0;
	}
	proc_release(&p);
	buf_release(&ids);
	return rc;
}

/* Partition or node records from scontrol. */
int slurm_scontrol_show(struct slurm *s, const char *entity, const char *name,
			struct slurm_records *recs, int *unknown, char **cause)
{
	const char *argv[] = { "scontrol", "show", entity, "-o", name, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	*unknown = 0;
	if (rc == XL_ERR && (strstr(p.out.s, " not found") || strstr(p.err.s, " not found"))) {
		FREE_AND_NULL(*cause);
		*unknown = 1;
		rc = 0;
	} else if (rc == 0 && slurm_parse_records(p.out.s, recs, cause) < 0) {
		rc = XL_ERR;
	}
	proc_release(&p);
	return rc;
}

/* Ask sbatch when a request would start, submitting nothing. */
int slurm_sbatch_test(struct slurm *s, const struct slurm_submit *req, time_t *start,
		      char **cause)
{
	struct buf scratch = BUF_INIT, all = BUF_INIT;
	char **argv = slurm_sbatch_argv(req, &scratch), **a;
	struct proc p = PROC_INIT;
	int rc;

	/* "--parsable" becomes "--test-only": nothing is submitted */
	for (a = argv; *a; a++)
		if (strcmp(*a, "--parsable") == 0)
			*a = "--test-only";
	rc = run(s, (const char *const *)argv, req->env, &p, cause);
	if (rc == 0 || rc == XL_ERR) {
		buf_addf(&all, "%s%s", p.out.s, p.err.s);
		FREE_AND_NULL(*cause);
		rc = slurm_parse_test_only(all.s, start, cause) < 0 ? XL_DATAERR : 0;
	}
	proc_release(&p);
	free(argv);
	buf_release(&scratch);
	buf_release(&all);
	return rc;
}

/* Change one field of a job. */
int slurm_scontrol_update(struct slurm *s, const char *jobid, const char *key,
			  const char *value, char **cause)
{
	char *id = xasprintf("jobid=%s", jobid), *kv = xasprintf("%s=%s", key, value);
	const char *argv[] = { "scontrol", "update", id, kv, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	proc_release(&p);
	free(id);
	free(kv);
	return rc;
}

/* Hold or release a pending job. */
int slurm_scontrol_hold(struct slurm *s, const char *jobid, int hold, char **cause)
{
	const char *argv[] = { "scontrol", hold ? "hold" : "release", jobid, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	proc_release(&p);
	return rc;
}

/* Cancel a job. */
int slurm_scancel(struct slurm *s, const char *jobid, char **cause)
{
	const char *argv[] = { "scancel", jobid, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	proc_release(&p);
	return rc;
}

/* Ask every configured controller whether it answers. */
int slurm_ping(struct slurm *s, struct slurm_ping *ping, char **cause)
{
	const char *argv[] = { "scontrol", "ping", NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	/* scontrol ping exits 1 when a controller is DOWN, saying so on stdout */
	if (rc == 0 || (rc != XL_UNAVAILABLE && !p.timed_out && !p.signo &&
			p.out.len)) {
		char *why = NULL;

		if (slurm_parse_ping(p.out.s, ping, &why) == 0) {
			FREE_AND_NULL(*cause);
			rc = 0;
		} else if (rc == 0) {
			*cause = why;
			why = NULL;
			rc = XL_ERR;
		}
		free(why);
	}
	proc_release(&p);
	return rc;
}

/* Nodes that are down, drained or failing, each with its reason. */
int slurm_sinfo_reasons(struct slurm *s, struct slurm_node_reasons *reasons,
			char **cause)
{
	const char *argv[] = { "sinfo", "-R", "-h", "-o", "%n|%E|%H", NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	if (rc == 0 && slurm_parse_sinfo_reasons(p.out.s, reasons, cause) < 0)
		rc = XL_ERR;
	proc_release(&p);
	return rc;
}

/* The controller's running configuration. */
int slurm_show_config(struct slurm *s, struct slurm_record *conf, char **cause)
{
	const char *argv[] = { "scontrol", "show", "config", NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	if (rc == 0 && slurm_parse_config(p.out.s, conf, cause) < 0)
		rc = XL_ERR;
	proc_release(&p);
	return rc;
}

/* The user's association and QOS limits. */
int slurm_sacctmgr_limits(struct slurm *s, const char *account, const char *partition,
			  const char *qos, struct slurm_limits *l, char **cause)
{
	char user[48], *names = NULL;
	const char *assoc[] = { "sacctmgr", "--parsable2", "show", "assoc", "where", user,
				SACCTMGR_ASSOC_FORMAT, NULL };
	const char *qosv[] = { "sacctmgr", "--parsable2", "show", "qos",
			       SACCTMGR_QOS_FORMAT, NULL };
	struct proc p = PROC_INIT;
	struct passwd *pw;
	int rc;

	slurm_limits_none(l);
	pw = getpwuid(getuid());
	if (!pw || !valid_name(pw->pw_name)) {
		*cause = xasprintf("no user name for uid %u", (unsigned)getuid());
		return XL_ERR;
	}
	xsnprintf(user, sizeof(user), "user=%s", pw->pw_name);
	rc = run(s, assoc, NULL, &p, cause);
	if (rc == 0 && slurm_parse_sacctmgr_assoc(p.out.s, account, partition, l, &names,
						  cause) < 0)
		rc = XL_ERR;
	proc_release(&p);
	if (rc)
		return rc;
	if (*qos) {
		free(names);
		names = xstrdup(qos);
	}
	if (*names) {
		p = (struct proc)PROC_INIT;
		rc = run(s, qosv, NULL, &p, cause);
		if (rc == 0 && slurm_parse_sacctmgr_qos(p.out.s, names, l, cause) < 0)
			rc = XL_ERR;
		proc_release(&p);
	}
	free(names);
	return rc;
}

/* The GPUs a running job was given. */
int slurm_job_gpus(struct slurm *s, const char *jobid, char **idx, char **cause)
{
	const char *argv[] = { "scontrol", "-d", "show", "job", "-o", jobid, NULL };
	struct slurm_records recs = SLURM_RECORDS_INIT;
	struct proc p = PROC_INIT;
	size_t i;
	int rc = run(s, argv, NULL, &p, cause);

	*idx = NULL;
	if (rc == 0 && slurm_parse_records(p.out.s, &recs, cause) < 0)
		rc = XL_ERR;
	for (i = 0; rc == 0 && i < recs.nr && !*idx; i++)
		*idx = slurm_job_gpu_map(&recs.v[i]);	/* each node's */
	slurm_records_release(&recs);
	proc_release(&p);
	return rc;
}

/* How many jobs of per_job GPUs the partition's nodes hold at once. */
int slurm_partition_gpus(struct slurm *s, const char *partition, long long per_job,
			 long long *gpus, char **cause)
{
	const char *argv[] = { "sinfo", "-h", "-p", partition, "-o", SINFO_GPUS_FORMAT, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	*gpus = 0;
	if (rc == 0 && (*gpus = slurm_sinfo_gpus(p.out.s, per_job)) < 0) {
		*cause = xasprintf("sinfo printed what is not '%s': '%.60s'", SINFO_GPUS_FORMAT,
				   p.out.s);
		rc = XL_ERR;
	}
	proc_release(&p);
	return rc;
}

/* The user's scrontab. */
int slurm_scrontab_get(struct slurm *s, struct buf *out, char **cause)
{
	const char *argv[] = { "scrontab", "-l", NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	buf_reset(out);
	if (rc == XL_ERR && strstr(p.err.s, "no crontab for")) {
		FREE_AND_NULL(*cause);
		rc = 0;
	} else if (rc == 0) {
		buf_add(out, p.out.s, p.out.len);
	}
	proc_release(&p);
	return rc;
}

/* Replace the user's scrontab with a file. */
int slurm_scrontab_set(struct slurm *s, const char *file, char **cause)
{
	const char *argv[] = { "scrontab", file, NULL };
	struct proc p = PROC_INIT;
	int rc = run(s, argv, NULL, &p, cause);

	proc_release(&p);
	return rc;
}
