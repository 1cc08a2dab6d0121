/* Feeding the queue: retries, requests and plan entries become submissions. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breaker.h"
#include "feed.h"
#include "loop.h"
#include "plan.h"
#include "retry.h"

/* Free what feeding made. */
void feed_result_release(struct feed_result *res)
{
	size_t i;

	for (i = 0; i < res->nr; i++) {
		free(res->v[i].tag);
		free(res->v[i].change);
		free(res->v[i].job_id);
		free(res->v[i].after);
	}
	for (i = 0; i < res->nr_skipped; i++)
		free(res->skipped[i]);
	free(res->breaker);
	free(res->v);
	free(res->skipped);
	memset(res, 0, sizeof(*res));
}

/* Create and submit one run; 0, or an exit code with *cause. */
static int feed_one(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		    const char *tag_opt, const char *from, const char *var,
		    const char *value, long long plan_id, struct feed_result *res,
		    char **cause)
{
	struct submit_opts o;
	struct submit_result sr;
	struct new_run nr;
	char *tag = tag_opt ? xstrdup(tag_opt) : loop_auto_tag(ctx, var, value);
	char *note = plan_id ? xasprintf("from plan entry %lld", plan_id) : NULL;
	int rc = loop_new_run(ctx, tag, from, var, value, note, 0, &nr, cause);
	struct fed *f;

	free(note);
	free(tag);
	if (rc)
		return rc;
	if (plan_id)
		plan_mark(&ctx->db, ctx->cfg.study, plan_id, "done", nr.run.id, NULL);
	memset(&o, 0, sizeof(o));
	if (*ref->newest_live_job)
		o.after = ref->newest_live_job;
	else if (!ctx->cfg.chain_any_user)
		o.no_chain = 1;	/* (any-user: loop_submit looks for other projects' jobs) */
	rc = loop_submit(ctx, s, &nr.run, &o, &sr, cause);
	if (rc == 0 || *sr.job_id) {
		res->v = xreallocarray(res->v, res->nr + 1, sizeof(*res->v));
		f = &res->v[res->nr++];
		f->tag = xstrdup(nr.run.tag);
		f->change = xasprintf("%s=%s", var, value);
		f->job_id = xstrdup(sr.job_id);
		f->attempt = sr.n;
		f->after = xstrdup(sr.after);
		/* the next one chains onto this one */
		free(ref->newest_live_job);
		ref->newest_live_job = xstrdup(sr.tail ? sr.tail : sr.job_id);
		if (ref->running + ref->pending == 0)
			ref->running++;	/* it will start at once */
		else
			ref->pending++;
	}
	submit_result_release(&sr);
	new_run_release(&nr);
	return rc;
}

/* Keep depth jobs waiting behind the running one. */
int feed_queue(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       const struct feed_request *req, struct feed_result *res, char **cause)
{
	struct plan_entry *plan = NULL;
	size_t nplan = 0, next = 0;
	int rc = 0, used_request = !(req && req->var);

	memset(res, 0, sizeof(*res));
	/* failures in a row stop everything, retries included */
	{
		struct breaker bk;

		if (breaker_check(ctx, &bk) < 0)
			return XL_ERR;
		if (bk.open) {
			res->breaker = bk.reason;
			res->breaker_opened = bk.opened_now;
			return 0;
		}
	}
	/* what failed for the machine's reasons goes first: it was already due */
	rc = retry_auto(ctx, s, ref, res, cause);
	if (rc)
		return rc;
	if (plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan) < 0)
		return XL_ERR;
	while (ref->running + ref->pending < (size_t)ctx->cfg.depth + 1) {
		if (!used_request) {
			used_request = 1;
			rc = feed_one(ctx, s, ref, req->tag, req->from ? req->from : "best",
				      req->var, req->value, 0, res, cause);
			if (rc)
				break;
			continue;
		}
		if (next >= nplan)
			break;
		rc = feed_one(ctx, s, ref, NULL, plan[next].parent, plan[next].var,
			      plan[next].value, plan[next].id, res, cause);
		if (rc == XL_DATAERR || rc == XL_NOINPUT || rc == XL_USAGE) {
			/* this entry cannot become a run (any more): skip it, go on */
			char *why = xasprintf("plan entry %lld (%s=%s from %s) skipped: %s",
					      plan[next].id, plan[next].var, plan[next].value,
					      plan[next].parent, *cause);

			plan_mark(&ctx->db, ctx->cfg.study, plan[next].id, "skipped", 0, *cause);
			loop_event(ctx, "plan-skipped", 0, 0, why);
			res->skipped = xreallocarray(res->skipped, res->nr_skipped + 1,
						     sizeof(*res->skipped));
			res->skipped[res->nr_skipped++] = why;
			FREE_AND_NULL(*cause);
			rc = 0;
		} else if (rc) {
			break;
		}
		next++;
	}
	plan_entries_free(plan, nplan);
	return rc;
}
