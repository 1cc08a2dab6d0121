/*
 * xloop mem T [--attempt N]: what the run's job really needed in memory,
 * from the sampler's file (peak anon+shmem, peak total with page cache, by
 * phase), sacct's MaxRSS on accounting clusters, and the --mem to ask for.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "stages/retry.h"
#include "jobs/submit.h"

static const struct opt mem_opts[] = {
	{ "attempt", OPT_STRING, "N", "attempt N (default: the newest one with samples)" },
	OPT_END,
};

/* Bytes to MB, rounded up; -1 stays -1. */
static long long to_mb(long long bytes)
{
	return bytes < 0 ? -1 : (bytes + (1 << 20) - 1) >> 20;
}

/* sacct's "123456K", "1.5G": MB, or -1. */
static long long size_mb(const char *v)
{
	char *end;
	double x = strtod(v, &end);

	if (end == v || x < 0 || !isfinite(x))
		return -1;
	switch (*end) {
	case 'K': case 'k': x /= 1024; break;
	case 'G': case 'g': x *= 1024; break;
	case 'T': case 't': x *= 1024 * 1024; break;
	case 'M': case 'm': break;
	case '\0': x /= 1024 * 1024; break;
	default: return -1;
	}
	return (long long)ceil(x);
}

/* The largest MaxRSS over the job's steps from one sacct call, or -1. */
static long long max_rss_mb(const char *job_id)
{
	struct slurm_acct acct = SLURM_ACCT_INIT;
	const char *ids[] = { job_id };
	char *cause = NULL;
	long long best = -1;
	struct slurm s;
	int noacct = 1;
	size_t i;

	if (!*job_id)
		return -1;
	slurm_init(&s);
	if (slurm_sacct(&s, ids, 1, &acct, &noacct, &cause) == 0 && !noacct) {
		for (i = 0; i < acct.nr; i++) {
			const char *v = slurm_acct_get(&acct, &acct.rows[i], "MaxRSS");
			long long mb = v && *v ? size_mb(v) : -1;

			if (strcmp(acct.rows[i].id.job, job_id) == 0 && mb > best)
				best = mb;
		}
	}
	free(cause);
	slurm_acct_release(&acct);
	return best;
}

/* The attempt to look at: --attempt N, else the newest with samples. */
static int pick_attempt(struct xl_ctx *ctx, const struct run *r, long long want,
			struct attempt *out)
{
	struct attempt *v;
	size_t n, i;
	int found = -1;

	if (attempts_list(&ctx->db, r->id, &v, &n) < 0)
		return -1;
	for (i = n; i-- > 0 && found < 0;) {
		struct mem_summary sum;
		char *cause = NULL;

		if (want ? v[i].n == want : retry_mem_samples(&v[i], &sum, &cause) == 0)
			found = (int)i;
		free(cause);
	}
	if (found < 0 && !want && n)
		found = (int)n - 1;
	if (found >= 0) {
		*out = v[found];
		memset(&v[found], 0, sizeof(v[found]));
	}
	attempts_free(v, n);
	return found >= 0 ? 0 : 1;
}

/* Report one attempt's memory. */
static int cmd_mem(struct xl_ctx *ctx, const struct cmd_entry *self,
		   struct cmd_args *args)
{
	const char *att = args_get(args, "attempt"), *errstr;
	struct mem_summary sum;
	struct part_limits lim;
	struct proposal p;
	struct attempt a;
	struct run *r = args->run;
	char *cause = NULL, *note = NULL, *suggest = NULL, *why = NULL;
	long long want = 0, limit, rss;
	int rc, have;

	if (att && parse_ll(att, 1, 1000000, &want, &errstr) < 0)
		return cmd_usage_error(self, "--attempt wants an attempt number"), XL_USAGE;
	rc = pick_attempt(ctx, r, want, &a);
	if (rc) {
		error(want ? "%s has no attempt %lld" : "%s has no attempt yet", r->tag, want);
		return rc < 0 ? XL_ERR : XL_NOINPUT;
	}
	have = retry_mem_samples(&a, &sum, &cause);
	if (have < 0) {
		error("%s", cause);
		rc = XL_DATAERR;
		goto out;
	}
	if (have == 1)
		memset(&sum, 0, sizeof(sum));
	limit = config_mem_mb(*a.mem ? a.mem : ctx->cfg.res.mem);
	rss = max_rss_mb(a.job_id);
	submit_known_limits(ctx, &lim);
	memset(&p, 0, sizeof(p));
	if (strcmp(a.state, "OUT_OF_MEMORY") == 0) {
		if (retry_proposal(ctx, &a, &p))
			suggest = xstrdup(p.mem);
		why = xstrdup(p.why);
		proposal_release(&p);
	} else if (have == 0 && sum.peak_nonreclaim > 0) {
		long long mb = mem_round_up_mb((long long)ceil(to_mb(sum.peak_nonreclaim) *
							      MEM_MARGIN));

		if (lim.real_mb > 0 && mb > lim.real_mb)
			mb = lim.real_mb;
		suggest = mem_format_mb(mb);
		why = xasprintf("peak anon+shmem %lldM x%.1f, rounded up",
				to_mb(sum.peak_nonreclaim), MEM_MARGIN);
	} else if (rss > 0) {
		suggest = mem_format_mb(mem_round_up_mb((long long)ceil(rss * MEM_MARGIN)));
		why = xasprintf("sacct MaxRSS %lldM x%.1f (no sampler data)", rss, MEM_MARGIN);
	} else {
		why = xstrdup("no measurement: run `xloop sample --out "
			      "\"$XLOOP_RUN_DIR/slurm/attempt$XLOOP_ATTEMPT.mem\" &` in job.sh");
	}
	if (have == 0 && sum.peak_eval > 0 && sum.peak_train > 0 &&
	    sum.peak_eval > sum.peak_train)
		note = xasprintf("evaluation peaked higher than training (%lldM vs %lldM): "
				 "size --mem for evaluation", to_mb(sum.peak_eval),
				 to_mb(sum.peak_train));
	if (ctx->json) {
		json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:I}", "tag", r->tag,
				      "attempt", (json_int_t)a.n, "job_id", a.job_id, "state",
				      *a.state ? a.state : a.phase, "limit_mb",
				      (json_int_t)limit, "samples", (json_int_t)sum.samples,
				      "duration_s", (json_int_t)(sum.last_at - sum.first_at));
		struct { const char *k; long long v; } f[] = {
			{ "peak_nonreclaimable_mb", have == 0 ? to_mb(sum.peak_nonreclaim) : -1 },
			{ "peak_total_mb", have == 0 ? to_mb(sum.peak_total) : -1 },
			{ "peak_gpu_mb", have == 0 ? to_mb(sum.peak_gpu) : -1 },
			{ "peak_train_mb", have == 0 ? to_mb(sum.peak_train) : -1 },
			{ "peak_eval_mb", have == 0 ? to_mb(sum.peak_eval) : -1 },
			{ "max_rss_mb", rss },
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(f); i++)
			json_object_set_new(o, f[i].k, f[i].v >= 0 ?
					    json_integer(f[i].v) : json_null());
		json_object_set_new(o, "suggested_mem", suggest ? json_string(suggest) :
				    json_null());
		json_object_set_new(o, "why", json_string(why));
		json_object_set_new(o, "note", note ? json_string(note) : json_null());
		cmd_emit_json(o);
	} else {
		printf("%s attempt %lld%s%s: %s, --mem %lldM\n", r->tag, a.n,
		       *a.job_id ? ", job " : "", a.job_id, *a.state ? a.state : a.phase,
		       limit);
		if (have == 0) {
			printf("  samples: %zu over %lld s\n", sum.samples,
			       sum.last_at - sum.first_at);
			printf("  peak non-reclaimable (anon+shmem): %lldM\n",
			       to_mb(sum.peak_nonreclaim));
			printf("  peak total (with page cache):      %lldM\n", to_mb(sum.peak_total));
			if (sum.peak_train > 0 || sum.peak_eval > 0)
				printf("  peak while training: %lldM, while evaluating: %lldM\n",
				       to_mb(sum.peak_train), to_mb(sum.peak_eval));
			if (sum.peak_gpu >= 0)
				printf("  peak GPU memory: %lldM\n", to_mb(sum.peak_gpu));
		} else {
			printf("  no sampler data for this attempt\n");
		}
		if (rss > 0)
			printf("  sacct MaxRSS: %lldM\n", rss);
		if (note)
			printf("  note: %s\n", note);
		if (suggest)
			printf("suggested --mem %s (%s)\n", suggest, why);
		else
			printf("no suggestion: %s\n", why);
	}
	rc = 0;
out:
	attempt_release(&a);
	free(cause);
	free(note);
	free(suggest);
	free(why);
	return rc;
}

const struct cmd_entry cmd_mem_entry = {
	.name = "mem", .opts = mem_opts, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_RUN,
	.summary = "what a run's job really needed in memory, and the --mem to ask for",
	.help = "Reads the file `xloop sample` wrote beside the attempt's log (the newest\n"
	"attempt that has one, or --attempt N): peak non-reclaimable memory\n"
	"(anon+shmem: what the job needs), peak total (with page cache, which the\n"
	"kernel reclaims: not a need), peaks while training and evaluating, GPU\n"
	"memory; sacct's MaxRSS where accounting is on. Suggests --mem: peak\n"
	"anon+shmem x1.2 rounded up; after OUT_OF_MEMORY the limit (or the\n"
	"peak) x1.5, capped at a node's RealMemory.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_mem,
};
