/* Feeding the queue: retries, requests and plan entries become submissions. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "breaker.h"
#include "feed.h"
#include "loop.h"
#include "plan.h"
#include "retry.h"
#include "tags.h"

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
	free(res->stopped_why);
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
	struct run parent;
	char *tag, *note;
	struct fed *f;
	int rc;

	if (plan_id) {
		/* what `plan add` checked may have changed since ("best" moved) */
		rc = loop_find_parent(ctx, from, 0, &parent, cause);
		if (rc == 0) {
			rc = loop_check_change(ctx, &parent, var, value, cause);
			run_release(&parent);
		}
		if (rc)
			return rc;
	}
	tag = tag_opt ? xstrdup(tag_opt) : tag_make(ctx, TAG_CHANGE, NULL, var, value);
	note = plan_id ? xasprintf("from plan entry %lld", plan_id) : NULL;
	rc = loop_new_run(ctx, tag, from, var, value, note, 0, &nr, cause);
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

/* Record why feeding stopped (why is taken over). */
static void stop(struct feed_result *res, const char *what, char *why)
{
	res->stopped = what;
	free(res->stopped_why);
	res->stopped_why = why;
}

/* "the queue is full: ..." with the chain a new job would join. */
static char *depth_why(struct xl_ctx *ctx, const struct refresh *ref)
{
	return xasprintf("the queue is full: %zu running and %zu waiting (queue.depth %lld)%s%s",
			 ref->running, ref->pending, ctx->cfg.depth,
			 *ref->newest_live_job ? "; the next job would chain behind job " : "",
			 ref->newest_live_job);
}

/* "the plan is empty", counting the sweep tasks still queued. */
static char *plan_empty_why(struct xl_ctx *ctx)
{
	long long n = feed_sweep_queued(ctx);

	if (n > 0)
		return xasprintf("the plan is empty (%lld sweep task%s still queued in Slurm)",
				 n, n == 1 ? "" : "s");
	return xstrdup("the plan is empty");
}

/* Keep depth jobs waiting behind the running one. */
int feed_queue(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       const struct feed_request *req, struct feed_result *res, char **cause)
{
	struct plan_entry *plan = NULL;
	size_t nplan = 0, next = 0, waiting = 0;
	int rc = 0, used_request = !(req && req->var), no_best;
	struct run best;
	double score;

	memset(res, 0, sizeof(*res));
	/* failures in a row stop everything, retries included */
	{
		struct breaker bk;

		if (breaker_check(ctx, &bk) < 0) {
			stop(res, "error", xstrdup("unable to read the breaker's state"));
			return XL_ERR;
		}
		if (bk.open) {
			res->breaker = bk.reason;
			res->breaker_opened = bk.opened_now;
			stop(res, "breaker", xasprintf("the breaker is open: %s", bk.reason));
			return 0;
		}
	}
	/* what failed for the machine's reasons goes first: it was already due */
	rc = retry_auto(ctx, s, ref, res, cause);
	if (rc == 0 && plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan) < 0)
		rc = XL_ERR;
	no_best = runs_best(&ctx->db, ctx->cfg.study, ctx->cfg.goal_max, &best, &score) != 0;
	if (!no_best)
		run_release(&best);
	while (rc == 0) {
		if (ref->running + ref->pending >= (size_t)ctx->cfg.depth + 1) {
			stop(res, "depth", depth_why(ctx, ref));
			break;
		}
		if (!used_request) {
			used_request = 1;
			rc = feed_one(ctx, s, ref, req->tag, req->from ? req->from : "best",
				      req->var, req->value, 0, res, cause);
			continue;
		}
		if (next >= nplan) {
			stop(res, "plan_empty", waiting ? xasprintf("the plan's %zu entr%s from "
				"best wait%s for a proven run (there is no best yet)", waiting,
				waiting == 1 ? "y" : "ies", waiting == 1 ? "s" : "") :
				plan_empty_why(ctx));
			break;
		}
		if (no_best && strcmp(plan[next].parent, "best") == 0) {
			next++;	/* not yet: it stays queued until there is a best */
			waiting++;
			continue;
		}
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
		}
		next++;
	}
	if (rc)
		stop(res, "error", xstrdup(*cause ? *cause : "unable to feed the queue"));
	plan_entries_free(plan, nplan);
	return rc;
}

/* How long ago, in words: "4 min", "3 h", "2 days". */
char *feed_ago(long long secs)
{
	if (secs < 120)
		return xasprintf("%lld s", secs < 0 ? 0 : secs);
	if (secs < 2 * 3600)
		return xasprintf("%lld min", secs / 60);
	if (secs < 2 * 86400)
		return xasprintf("%lld h", secs / 3600);
	return xasprintf("%lld days", secs / 86400);
}

/* Who feeds the queue after this session. */
void feed_who(struct xl_ctx *ctx, struct feeder *f)
{
	char *log = xasprintf("%s/.xloop/tick.log", ctx->root);
	long long now = (long long)time(NULL);
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->kind = "none";
	if (stat(log, &st) == 0)
		f->last_at = (long long)st.st_mtime;
	free(log);
	/* no "N min ago" in the text: the same state gives the same document */
	if (f->last_at && now - f->last_at <= FEED_CRON_FRESH_SECS) {
		f->kind = "cron";
		f->text = xstrdup("cron: `xloop tick` runs and keeps the queue fed");
	} else if (f->last_at) {
		f->text = xasprintf("nothing: `xloop tick` has not run for %d min (is cron "
				    "still running it?); once this session ends the queue "
				    "drains: `xloop cron-line` prints a crontab entry",
				    FEED_CRON_FRESH_SECS / 60);
	} else {
		f->text = xstrdup("nothing: no cron runs `xloop tick` for this study; once "
				  "this session ends the queue drains: `xloop cron-line` "
				  "prints a crontab entry");
	}
}

/* "after this session: TEXT (the last tick ran N min ago)" on stdout. */
void feed_print_who(const char *text, long long last_at)
{
	char *when = last_at ? feed_ago((long long)time(NULL) - last_at) : NULL;

	printf("after this session: %s", text);
	if (when)
		printf(" (the last tick ran %s ago)", when);
	putchar('\n');
	free(when);
}

/* Free a feeder's text. */
void feeder_release(struct feeder *f)
{
	FREE_AND_NULL(f->text);
}

/* Pending sweep tasks of the study. */
long long feed_sweep_queued(struct xl_ctx *ctx)
{
	struct stmt q;
	long long n = -1;

	/* verdict IS NULL: the attempt_open index, as attempts_unfinished */
	if (db_prepare(&ctx->db, &q, "SELECT count(*) FROM attempt t"
		       " JOIN sweep_task k ON k.run_id = t.run_id"
		       " JOIN sweep w ON w.id = k.sweep_id"
		       " WHERE t.phase IN ('submitting', 'submitted') AND t.verdict IS NULL"
		       " AND t.ended_at IS NULL AND coalesce(t.state, '') <> 'RUNNING'"
		       " AND w.study = :study") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	if (db_step(&q) == SQLITE_ROW)
		n = db_col_int64(&q, 0);
	db_finalize(&q);
	return n;
}
