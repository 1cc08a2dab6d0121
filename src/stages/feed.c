/* Feeding the queue: retries, requests and plan entries become submissions. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "search/autopilot.h"
#include "search/best.h"
#include "stages/breaker.h"
#include "driver/driver.h"
#include "stages/feed.h"
#include "loop.h"
#include "plan.h"
#include "stages/quota.h"
#include "stages/retry.h"
#include "jobs/submit.h"
#include "tags.h"
#include "search/taken.h"

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
	free(res->held_back);
	free(res->stopped_why);
	free(res->v);
	free(res->skipped);
	memset(res, 0, sizeof(*res));
}

/* The tag of a fed run: a replicate (the seed changes) is B--rK. */
static char *feed_tag(struct xl_ctx *ctx, const char *from, const char *var,
		      const char *value)
{
	const char *seed = ctx->cfg.search.seed;
	char *why = NULL, *tag;
	struct run p;

	if (*seed && strcmp(var, seed) == 0 && loop_find_run(ctx, from, &p, &why) == 0) {
		tag = loop_make_tag(ctx, TAG_REPLICATE, p.tag, var, value);
		run_release(&p);
		return tag;
	}
	free(why);
	return loop_make_tag(ctx, TAG_CHANGE, NULL, var, value);
}

/*
 * A Slurm limit refused the run's job: back-pressure, not a failure. The
 * run stays without an attempt and is submitted first on a later tick
 * (feed_held); feeding stops for now. Returns 0.
 */
static int feed_held_back(struct xl_ctx *ctx, const char *tag, struct feed_result *res,
			  char **cause)
{
	free(res->held_back);
	res->held_back = xasprintf("%s: %s", tag, *cause);
	FREE_AND_NULL(*cause);
	db_kv_set(&ctx->db, "feed.held", 1);
	return 0;
}

/* Submit one run into the lane with room. 0, or an exit code with *cause. */
static int feed_submit(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		       const struct run *r, const char *change, struct feed_result *res,
		       char **cause)
{
	struct submit_opts o;
	struct submit_result sr;
	struct fed *f;
	int rc;

	memset(&o, 0, sizeof(o));
	if (!lanes_next(ctx, ref, 1, &o)) {
		/* (the caller checked that it has room) a later tick submits it */
		db_kv_set(&ctx->db, "feed.held", 1);
		return 0;
	}
	rc = submit_attempt(ctx, s, r, &o, &sr, cause);
	if (sr.limit)
		rc = feed_held_back(ctx, r->tag, res, cause);
	if (*sr.job_id) {
		res->v = xreallocarray(res->v, res->nr + 1, sizeof(*res->v));
		f = &res->v[res->nr++];
		f->tag = xstrdup(r->tag);
		f->change = xstrdup(change);
		f->job_id = xstrdup(sr.job_id);
		f->attempt = sr.n;
		f->after = xstrdup(sr.after);
		lanes_submitted(ref, o.lane, sr.tail ? sr.tail : sr.job_id, sr.after);	/* the lane's next chains onto it */
	}
	submit_result_release(&sr);
	return rc;
}

/*
 * Runs that a limit held back (planned, made, never submitted) go first,
 * oldest first, while the lanes have room. Only looked for after a
 * refusal (kv feed.held), so a tick does not walk the plan.
 */
static int feed_held(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		     struct feed_result *res, char **cause)
{
	struct stmt q;
	struct submit_opts probe;
	char **tags = NULL;
	size_t n = 0, i;
	int rc = 0, st;

	if (db_kv_get(&ctx->db, "feed.held") == 0)
		return 0;
	if (db_prepare(&ctx->db, &q, "SELECT r.tag FROM plan p JOIN run r ON r.id = p.run_id"
		       " WHERE p.study = :study AND p.status = 'done'"
		       " AND NOT EXISTS (SELECT 1 FROM attempt a WHERE a.run_id = r.id)"
		       " ORDER BY p.id") < 0)
		return XL_ERR;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((st = db_step(&q)) == SQLITE_ROW) {
		tags = xreallocarray(tags, n + 1, sizeof(*tags));
		tags[n++] = xstrdup(db_col_text(&q, 0));
	}
	db_finalize(&q);
	if (st != SQLITE_DONE)
		rc = XL_ERR;
	if (rc == 0 && n == 0)
		db_kv_set(&ctx->db, "feed.held", 0);
	memset(&probe, 0, sizeof(probe));
	for (i = 0; i < n && rc == 0 && !res->held_back && lanes_next(ctx, ref, 0, &probe); i++) {
		struct run r;
		char *change;

		if (runs_get(&ctx->db, ctx->cfg.study, tags[i], &r) != 0)
			continue;
		change = xasprintf("%s=%s", r.var, r.new_value);
		rc = feed_submit(ctx, s, ref, &r, change, res, cause);
		free(change);
		run_release(&r);
	}
	for (i = 0; i < n; i++)
		free(tags[i]);
	free(tags);
	return rc;
}

/* Create and submit one run; 0, or an exit code with *cause. */
static int feed_one(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		    const char *tag_opt, const char *from, const char *var,
		    const char *value, long long plan_id, struct feed_result *res,
		    char **cause)
{
	struct new_run nr;
	char *tag, *note, *change;
	int rc;

	/*
	 * a configuration run or queued already is not made again: for a plan
	 * entry what `plan add` checked may have changed since ("best" moved;
	 * the plan's other entries come later: the first one made wins); --set
	 * is refused like `plan add`, the plan included
	 */
	rc = loop_check_from(ctx, from, var, value, plan_id ? 0 : TAKEN_PLAN, cause);
	if (rc)
		return rc;
	tag = tag_opt ? xstrdup(tag_opt) : feed_tag(ctx, from, var, value);
	note = plan_id ? xasprintf("from plan entry %lld", plan_id) : NULL;
	rc = loop_new_run(ctx, tag, from, var, value, note, 0, &nr, cause);
	free(note);
	free(tag);
	if (rc)
		return rc;
	if (plan_id)
		plan_mark(&ctx->db, ctx->cfg.study, plan_id, "done", nr.run.id, NULL);
	change = xasprintf("%s=%s", var, value);
	rc = feed_submit(ctx, s, ref, &nr.run, change, res, cause);
	free(change);
	new_run_release(&nr);
	return rc;
}

/*
 * Autopilot's next run: made (unless a crash left it made) from its
 * recorded proposal, its decision entry written, then submitted. Returns
 * an exit code (*cause says why); *done is 1 when a proposal was fed or
 * given up, 0 when autopilot has nothing now.
 */
static int feed_auto(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
		     struct feed_result *res, int *done, char **idle, char **cause)
{
	struct auto_pick pk;
	struct new_run nr;
	struct run r;
	char *change;
	int rc = autopilot_next(ctx, &pk, idle, cause), got;

	*done = rc > 0;
	if (rc <= 0)
		return rc < 0 ? XL_ERR : 0;
	got = runs_get(&ctx->db, ctx->cfg.study, pk.tag, &r);
	if (got < 0) {
		auto_pick_release(&pk);
		return XL_ERR;
	}
	if (got == 1) {
		char *note = xasprintf("autopilot: %s", pk.reason), *entry, *once, *msg;
		struct loop_decision dec;

		/* its tag was free when it was proposed: a directory there now is
		 * what a crash in the creation left */
		loop_clear_leftover(ctx, pk.tag);
		/* one commit: the job.sh and the proposal's entry with its reason */
		autopilot_entry(ctx, &pk, &entry, &once, &msg);
		dec.entry = entry;
		dec.once = once;
		dec.msg = msg;
		rc = loop_new_run_decided(ctx, pk.tag, pk.parent, pk.var, pk.value, note, &dec,
					  &nr, cause);
		free(note);
		free(entry);
		free(once);
		free(msg);
		if (rc == XL_DATAERR || rc == XL_NOINPUT || rc == XL_USAGE) {
			/* the value cannot be written: information, not a broken study */
			autopilot_failed(ctx, &pk, *cause);
			FREE_AND_NULL(*cause);
			auto_pick_release(&pk);
			return 0;
		}
		if (rc) {
			auto_pick_release(&pk);
			return rc;
		}
		crash_point("auto-after-run");
		r = nr.run;
		memset(&nr.run, 0, sizeof(nr.run));
		new_run_release(&nr);
	}
	if (!pk.decided)
		autopilot_created(ctx, &pk, r.id);
	change = *pk.var ? xasprintf("%s=%s", pk.var, pk.value) : xstrdup("the baseline");
	rc = feed_submit(ctx, s, ref, &r, change, res, cause);
	free(change);
	run_release(&r);
	auto_pick_release(&pk);
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
	size_t lanes = lanes_count(ctx);
	long long room = lanes_room(ctx, ref);

	if (room >= 0 && (long long)(ref->running + ref->pending) >= room)
		return xasprintf("your Slurm submit limit holds it back: %lld job%s at once "
				 "(QOS/association MaxSubmit), %zu of them the study's, %lld "
				 "other job%s of yours", quota_submit_limit(ctx),
				 quota_submit_limit(ctx) == 1 ? "" : "s", ref->running + ref->pending,
				 quota_submit_limit(ctx) - room, quota_submit_limit(ctx) - room == 1 ?
				 "" : "s");
	if (lanes > 1)
		return xasprintf("the queue is full: %zu running and %zu waiting in %zu lanes "
				 "(queue.lanes %zu, %zu jobs a lane)", ref->running, ref->pending,
				 lanes, lanes, lanes_per_lane(ctx, ref, lanes));
	return xasprintf("the queue is full: %zu running and %zu waiting (queue.depth %lld)%s%s",
			 ref->running, ref->pending, ctx->cfg.depth,
			 *ref->newest_live_job ? "; the next job would chain behind job " : "",
			 ref->newest_live_job);
}

/* "the plan is empty", counting the sweep tasks still queued, and why autopilot waits. */
static char *plan_empty_why(struct xl_ctx *ctx, const char *idle)
{
	long long n = feed_sweep_queued(ctx);
	char *why, *w;

	if (n > 0)
		why = xasprintf("the plan is empty (%lld sweep task%s still queued in Slurm)",
				n, n == 1 ? "" : "s");
	else
		why = xstrdup("the plan is empty");
	if (!ctx->cfg.autopilot.on || !idle)
		return why;
	w = xasprintf("%s; autopilot %s", why, idle);
	free(why);
	return w;
}

/* Keep depth jobs waiting behind the running one. */
int feed_queue(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
	       const struct feed_request *req, struct feed_result *res, char **cause)
{
	struct plan_entry *plan = NULL;
	size_t nplan = 0, next = 0, waiting = 0;
	int rc = 0, used_request = !(req && req->var), no_best;
	struct submit_opts probe;
	struct run best;

	memset(res, 0, sizeof(*res));
	/* feeding writes anyway: store the configurations best.c computed on the fly */
	if (best_persist(ctx) < 0)
		return XL_ERR;
	/* a job Slurm held after a failed launch blocks its lane: let it go */
	retry_release_held(ctx, s);
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
	quota_refresh(ctx, s);
	rc = retry_auto(ctx, s, ref, res, cause);
	if (rc == 0)
		rc = feed_held(ctx, s, ref, res, cause);
	if (rc == 0 && plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan) < 0)
		rc = XL_ERR;
	memset(&probe, 0, sizeof(probe));
	no_best = best_get(ctx, &best, NULL) != 0;
	if (!no_best)
		run_release(&best);
	while (rc == 0) {
		if (res->held_back) {
			stop(res, "limit", xstrdup(res->held_back));
			break;
		}
		if (!lanes_next(ctx, ref, 0, &probe)) {
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
			/* the plan is done: autopilot, when it is on */
			int done;
			char *idle = NULL;

			rc = feed_auto(ctx, s, ref, res, &done, &idle, cause);
			if (rc == 0 && done)
				continue;
			if (rc == 0)
				stop(res, "plan_empty", waiting ? xasprintf("the plan's %zu entr%s "
					"from best wait%s for a proven run (there is no best yet)",
					waiting, waiting == 1 ? "y" : "ies", waiting == 1 ? "s" : "") :
					plan_empty_why(ctx, idle));
			free(idle);
			break;
		}
		if (no_best && strcmp(plan[next].parent, "best") == 0) {
			next++;	/* not yet: it stays queued until there is a best */
			waiting++;
			continue;
		}
		if (lanes_in_flight(ctx, plan[next].parent, plan[next].var, plan[next].value)) {
			next++;	/* it waits: the same configuration runs in another lane */
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
	else if (res->stopped && strcmp(res->stopped, "plan_empty") == 0 && res->nr == 0 &&
		 ref->running + ref->pending == 0)
		res->idle = 1;	/* nothing will end: only a person moves the study now */
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
	if (driver_who(ctx, &f->text, &f->last_at))
		f->kind = "slurm";
	else if (f->last_at && now - f->last_at <= FEED_CRON_FRESH_SECS) {
		f->kind = "cron";
		f->text = xstrdup("cron: `xloop tick` runs and keeps the queue fed");
	} else if (f->last_at) {
		f->text = xasprintf("nothing: `xloop tick` has not run for %d min (is cron "
				    "still running it?); once this session ends the queue "
				    "drains: set driver.mode to \"slurm\" in xloop.json (a "
				    "feeder job, no cron), or `xloop cron-line` prints a "
				    "crontab entry", FEED_CRON_FRESH_SECS / 60);
	} else {
		f->text = xstrdup("nothing: no cron runs `xloop tick` for this study; once "
				  "this session ends the queue drains: set driver.mode to "
				  "\"slurm\" in xloop.json (a feeder job, no cron), or `xloop "
				  "cron-line` prints a crontab entry");
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
