/* Autopilot: proposals recorded before their runs, budgets, stopping once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/autopilot.h"
#include "search/best.h"
#include "search/confkey.h"
#include "loop.h"
#include "notify.h"
#include "plan.h"
#include "search/propose.h"
#include "runs.h"
#include "slurm/parse.h"
#include "search/space.h"
#include "tags.h"
#include "search/taken.h"

/* Free a status. */
void auto_status_release(struct auto_status *st)
{
	free(st->stopped);
	memset(st, 0, sizeof(*st));
}

/* Free a pick. */
void auto_pick_release(struct auto_pick *p)
{
	free(p->tag);
	free(p->parent);
	free(p->var);
	free(p->value);
	free(p->reason);
	memset(p, 0, sizeof(*p));
}

/* GPU-hours of a job: elapsed x GPUs a node (slurm_gres_charged_gpus) x nodes. */
double autopilot_gpu_hours(long long secs, const char *gres, const char *nodes)
{
	long n = slurm_hostlist_count(nodes);

	if (secs <= 0)
		return 0;
	return (double)secs * (double)slurm_gres_charged_gpus(gres) * (double)(n > 1 ? n : 1) /
	       3600.0;
}

/* Spending since `auto on`. */
int autopilot_status(struct xl_ctx *ctx, struct auto_status *st)
{
	const struct config *c = &ctx->cfg;
	long long now = time(NULL);
	struct stmt q;

	memset(st, 0, sizeof(*st));
	st->on = c->autopilot.on;
	if (db_prepare(&ctx->db, &q, "SELECT count(*) FROM proposal WHERE study = :study"
		       " AND at >= :since AND status != 'failed'") < 0)
		return -1;
	db_bind_text(&q, ":study", c->study);
	db_bind_int64(&q, ":since", c->autopilot.since);
	if (db_step(&q) == SQLITE_ROW)
		st->runs = db_col_int64(&q, 0);
	db_finalize(&q);
	if (db_prepare(&ctx->db, &q, "SELECT t.started_at, coalesce(t.ended_at, 0),"
		       " coalesce(t.gres, ''), coalesce(t.node, '')"
		       " FROM proposal p JOIN attempt t ON t.run_id = p.run_id"
		       " WHERE p.study = :study AND p.at >= :since AND t.started_at > 0") < 0)
		return -1;
	db_bind_text(&q, ":study", c->study);
	db_bind_int64(&q, ":since", c->autopilot.since);
	while (db_step(&q) == SQLITE_ROW) {
		long long end = db_col_int64(&q, 1) ? db_col_int64(&q, 1) : now;
		double h = autopilot_gpu_hours(end - db_col_int64(&q, 0), db_col_text(&q, 2),
					       db_col_text(&q, 3));

		st->hours += h;
		if (!db_col_int64(&q, 1)) {
			st->live++;
			st->live_hours += h;
		}
	}
	db_finalize(&q);
	if (!st->on)
		return 0;
	if (c->autopilot.budget_runs && st->runs >= c->autopilot.budget_runs)
		st->stopped = xasprintf("budget spent: %lld of %lld runs", st->runs,
					c->autopilot.budget_runs);
	else if (c->autopilot.budget_hours > 0 && st->hours >= c->autopilot.budget_hours)
		st->stopped = xasprintf("budget spent: %.2f of %g GPU-hours%s", st->hours,
					c->autopilot.budget_hours, st->live ?
					" (runs in flight counted up to now)" : "");
	else if (*c->autopilot.until && now >= config_parse_iso(c->autopilot.until))
		st->stopped = xasprintf("the time is up (--until %s)", c->autopilot.until);
	return 0;
}

/* Say once (per `auto on`) that autopilot stopped: an event and a notification. */
static void say_stopped(struct xl_ctx *ctx, const char *why)
{
	char key[128], *text;
	struct notify_event ev;

	xsnprintf(key, sizeof(key), "autopilot_said:%s", ctx->cfg.study);
	if (db_kv_get(&ctx->db, key) == ctx->cfg.autopilot.since + 1)
		return;
	if (db_begin_write(&ctx->db) < 0)
		return;
	text = xasprintf("autopilot stopped: %s", why);
	ev.kind = "autopilot";
	ev.study = ctx->cfg.study;
	ev.tag = "";
	ev.text = text;
	if (loop_event(ctx, "autopilot", 0, 0, text) < 0 ||
	    db_kv_set(&ctx->db, key, ctx->cfg.autopilot.since + 1) < 0 ||
	    notify_queue(&ctx->db, &ev) < 0)
		db_rollback(&ctx->db);
	else
		db_commit(&ctx->db);
	free(text);
}

/*
 * The oldest unfinished proposal, into *pick: 1, 0 none, -1. Unfinished:
 * its run is not made, or has no attempt, or its last attempt never
 * reached Slurm (a crash between the intent and sbatch: reconcile marks it
 * submit_failed after SUBMIT_ORPHAN_SECS; submitted again, twice at most).
 */
static int unfinished(struct xl_ctx *ctx, struct auto_pick *pick)
{
	struct stmt q;
	int rc;

	if (db_prepare(&ctx->db, &q, "SELECT p.id, p.tag, p.parent, p.var, p.value, p.reason,"
		       " p.status, p.run_id IS NOT NULL FROM proposal p"
		       " WHERE p.study = :study AND (p.status IN ('intent', 'created')"
		       " OR (p.status = 'decided' AND NOT EXISTS (SELECT 1 FROM attempt t"
		       " WHERE t.run_id = p.run_id AND (t.phase != 'submit_failed'"
		       " OR t.submit_error IS NOT :orphan OR t.n >= 3))))"
		       " ORDER BY p.id LIMIT 1") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_text(&q, ":orphan", SUBMIT_ORPHAN_ERROR);
	rc = db_step(&q);
	if (rc == SQLITE_ROW) {
		pick->id = db_col_int64(&q, 0);
		pick->tag = db_col_dup(&q, 1);
		pick->parent = db_col_dup(&q, 2);
		pick->var = db_col_dup(&q, 3);
		pick->value = db_col_dup(&q, 4);
		pick->reason = db_col_dup(&q, 5);
		pick->created = db_col_int64(&q, 7) != 0;
		pick->decided = strcmp(db_col_text(&q, 6), "decided") == 0;
	}
	db_finalize(&q);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Keys already proposed (their runs may not exist yet). */
static char **proposed_keys(struct xl_ctx *ctx, size_t *n)
{
	struct stmt q;
	char **v = NULL;

	*n = 0;
	if (db_prepare(&ctx->db, &q, "SELECT config_key FROM proposal WHERE study = :study") < 0)
		return NULL;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW) {
		v = xreallocarray(v, *n + 1, sizeof(*v));
		v[(*n)++] = db_col_dup(&q, 0);
	}
	db_finalize(&q);
	return v;
}

/* Record a new proposal as an intent (before its run exists). */
static int record_intent(struct xl_ctx *ctx, const struct auto_pick *p, const char *key,
			 long long *id)
{
	struct stmt q;
	int rc;

	if (db_prepare(&ctx->db, &q, "INSERT INTO proposal (study, at, kind, parent, var,"
		       " value, tag, config_key, reason) VALUES (:study, :at, :kind, :parent,"
		       " :var, :value, :tag, :key, :reason)") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	db_bind_int64(&q, ":at", time(NULL));
	db_bind_text(&q, ":kind", *ctx->cfg.search.seed &&
		     strcmp(p->var, ctx->cfg.search.seed) == 0 ? "replicate" : "change");
	db_bind_text(&q, ":parent", p->parent);
	db_bind_text(&q, ":var", p->var);
	db_bind_text(&q, ":value", p->value);
	db_bind_text(&q, ":tag", p->tag);
	db_bind_text(&q, ":key", key);
	db_bind_text(&q, ":reason", p->reason);
	rc = db_step(&q);
	db_finalize(&q);
	*id = sqlite3_last_insert_rowid(ctx->db.h);
	return rc == SQLITE_DONE ? 0 : -1;
}

/*
 * The tag of a new configuration: the space's variables whose value is not
 * the baseline's, each as short as its grid allows (tag_config); NULL when
 * none differs or it does not fit (the caller names it VAR-VALUE).
 */
static char *config_tag(struct xl_ctx *ctx, const struct best_state *bs, const char *config)
{
	const struct space *sp = &ctx->cfg.search.space;
	const char *base = bs->baseline >= 0 ? bs->v[bs->baseline].config : "";
	struct tag_part *parts = xcalloc(sp->n ? sp->n : 1, sizeof(*parts));
	char **vals = xcalloc(sp->n ? sp->n : 1, sizeof(*vals)), *tag;
	size_t i, n = 0;

	for (i = 0; i < sp->n; i++) {
		char *v = confkey_value(config, sp->v[i].name);
		char *b = confkey_value(base, sp->v[i].name);

		if (v && (!b || !value_same(v, b))) {
			vals[n] = v;
			parts[n].var = sp->v[i].name;
			parts[n].value = v;
			parts[n].grid = (const char *const *)sp->v[i].values;
			parts[n].ngrid = sp->v[i].n;
			n++;
		} else {
			free(v);
		}
		free(b);
	}
	tag = n ? loop_make_config_tag(ctx, parts, n) : NULL;
	for (i = 0; i < n; i++)
		free(vals[i]);
	free(vals);
	free(parts);
	return tag;
}

/*
 * No configuration is proven yet: the baseline (a root run, the oldest)
 * that never ran is autopilot's first proposal, counted in the budget. 1
 * with *pick (tag and parent the baseline's, no var); 0 with *wait (what
 * a person must do, or what it waits for); -1.
 */
static int baseline_pick(struct xl_ctx *ctx, const struct best_state *bs,
			 struct auto_pick *pick, char **wait)
{
	struct stmt q;
	int rc;
	long long id = 0;
	char *tag = NULL, *failed = NULL, *open = NULL;

	if (db_prepare(&ctx->db, &q, "SELECT r.id, r.tag, (SELECT count(*) FROM attempt"
		       " WHERE run_id = r.id), coalesce((SELECT verdict FROM attempt WHERE"
		       " run_id = r.id ORDER BY n DESC LIMIT 1), '')"
		       " FROM run r WHERE +r.study = :study AND r.parent_id IS NULL"
		       " ORDER BY r.id") < 0)
		return -1;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while ((rc = db_step(&q)) == SQLITE_ROW && !tag) {
		if (db_col_int64(&q, 2) == 0) {
			id = db_col_int64(&q, 0);
			tag = db_col_dup(&q, 1);
		} else if (!*db_col_text(&q, 3) && !open) {
			open = db_col_dup(&q, 1);
		} else if (!failed) {
			failed = db_col_dup(&q, 1);
		}
	}
	db_finalize(&q);
	if (tag) {
		long c = best_find_run(bs, id);

		pick->tag = tag;
		pick->parent = xstrdup(tag);
		pick->var = xstrdup("");
		pick->value = xstrdup("");
		pick->reason = xasprintf("the baseline %s has not run and no run is "
					 "proven yet: autopilot runs it first (it counts in the "
					 "budget)", tag);
		free(open);
		free(failed);
		if (c < 0)
			return -1;
		if (db_begin_write(&ctx->db) < 0)
			return -1;
		if (record_intent(ctx, pick, bs->v[c].key, &pick->id) < 0) {
			db_rollback(&ctx->db);
			return -1;
		}
		if (db_commit(&ctx->db) < 0)
			return -1;
		crash_point("auto-after-intent");
		return 1;
	}
	if (open)
		*wait = xasprintf("waits for the verdict of the baseline %s (no run "
				  "is proven yet)", open);
	else if (failed)
		*wait = xasprintf("waits for a person: no run is proven, and the "
				  "baseline %s failed (`xloop show %s`); fix its job.sh and run "
				  "`xloop retry %s`", failed, failed, failed);
	else
		*wait = xstrdup("waits for a person: the study has no baseline; "
				"`xloop adopt PATH --tag T` one");
	free(open);
	free(failed);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/*
 * Choose a new proposal and record it: 1, 0 (none: *why when it has
 * converged, *wait when it waits for verdicts or a person), -1.
 */
static int make_proposal(struct xl_ctx *ctx, struct auto_pick *pick, char **why, char **wait)
{
	struct best_state bs;
	struct prop_input in;
	struct prop_cfg *v;
	struct prop_run *runs;
	struct prop_out out;
	char **taken, key[65];
	size_t ntaken = 0, i;
	long open = 0;
	int rc = 0;

	if (best_load(ctx, &bs) < 0)
		return -1;
	if (bs.baseline < 0) {	/* nothing is proven: nothing to compare with */
		rc = baseline_pick(ctx, &bs, pick, wait);
		best_release(&bs);
		return rc;
	}
	v = xcalloc(bs.n + 1, sizeof(*v));
	for (i = 0; i < bs.n; i++) {
		v[i].key = bs.v[i].key;
		v[i].config = bs.v[i].config;
		v[i].rep_tag = bs.v[i].rep_id ? bs.v[i].rep_tag : NULL;
		v[i].st = bs.v[i].st;
		v[i].open = bs.v[i].open;
		open += bs.v[i].open;
	}
	runs = xcalloc(bs.nruns + 1, sizeof(*runs));
	for (i = 0; i < bs.nruns; i++) {
		runs[i].cfg = bs.runs[i].cfg;
		runs[i].seed = bs.runs[i].seed;
		/*
		 * a stopped run is a lower-fidelity observation for the proposer (its
		 * value at the stop: BENCHMARKS.md 8); the choice's model sees it as
		 * partial (best.c), never as the best
		 */
		runs[i].proven = bs.runs[i].proven || bs.runs[i].stopped;
		runs[i].open = bs.runs[i].open;
		runs[i].score = bs.runs[i].proven ? bs.runs[i].score : bs.runs[i].last;
		if (bs.runs[i].stopped)
			noise_add(&v[bs.runs[i].cfg].st, bs.runs[i].last);
	}
	taken = proposed_keys(ctx, &ntaken);
	{
		/* and what the plan will make: "queued" is queued anywhere */
		size_t np, k;
		char **pk = taken_plan_keys(ctx, &bs, &np);

		taken = xreallocarray(taken, ntaken + np + 1, sizeof(*taken));
		for (k = 0; k < np; k++)
			taken[ntaken++] = pk[k];
		free(pk);
	}
	memset(&in, 0, sizeof(in));
	in.v = v;
	in.n = bs.n;
	in.runs = runs;
	in.nruns = bs.nruns;
	in.best = bs.best;
	in.baseline = bs.baseline;
	in.noise = bs.noise;
	in.p = bs.p;
	in.space = &ctx->cfg.search.space;
	in.seed = ctx->cfg.search.seed;
	in.replicates = ctx->cfg.search.replicates;
	in.confirm_max = ctx->cfg.search.confirm_max;
	in.budget_runs = ctx->cfg.autopilot.budget_runs;
	in.branch = ctx->cfg.search.branch;
	in.taken = (const char *const *)taken;
	in.ntaken = ntaken;
	in.turn = (unsigned long)db_kv_get(&ctx->db, "autopilot_turn");
	in.metric = ctx->cfg.metric;
	propose_next(&in, &out);
	if (out.kind == PROP_NONE) {
		/* runs in flight may still move the best: converged only when none is */
		if (open == 0)
			*why = xstrdup(out.reason);
		else
			*wait = xasprintf("waits for the verdicts of %ld run%s in flight", open,
					  open == 1 ? "" : "s");
		goto out;
	}
	pick->parent = xstrdup(bs.v[out.cfg].rep_tag);
	pick->var = xstrdup(out.var);
	pick->reason = xstrdup(out.reason);
	if (out.kind == PROP_REPLICATE) {
		size_t nused, k;
		char **used = best_seeds_used(ctx, &bs, out.cfg, &nused);
		int has = 0;

		/*
		 * a seed the best has (common random numbers); when this
		 * configuration has it waiting already, the best's next one it
		 * lacks (replicate's rule, best.h), else a fresh one
		 */
		for (k = 0; k < nused && out.value && !has; k++)
			has = strcmp(used[k], out.value) == 0;
		pick->value = !out.value ? NULL : !has ? xstrdup(out.value) :
			      best_next_seed(ctx, &bs, bs.best == out.cfg ? -1 : bs.best,
					     used, nused);
		if (!pick->value)
			pick->value = space_fresh_seed((const char *const *)used, nused);
		strv_free(used, nused);
		pick->tag = loop_make_tag(ctx, TAG_REPLICATE, pick->parent, pick->var, pick->value);
		xsnprintf(key, sizeof(key), "%s", bs.v[out.cfg].key);
	} else {
		pick->value = xstrdup(out.value);
		pick->tag = config_tag(ctx, &bs, out.config);
		if (!pick->tag)
			pick->tag = loop_make_tag(ctx, TAG_CHANGE, NULL, pick->var, pick->value);
		confkey_key(out.config, in.seed, key);
	}
	if (db_begin_write(&ctx->db) < 0) {
		rc = -1;
		goto out;
	}
	if (record_intent(ctx, pick, key, &pick->id) < 0 ||
	    db_kv_set(&ctx->db, "autopilot_turn", (long long)in.turn + 1) < 0) {
		db_rollback(&ctx->db);
		rc = -1;
		goto out;
	}
	rc = db_commit(&ctx->db) < 0 ? -1 : 1;
	crash_point("auto-after-intent");
out:
	prop_out_release(&out);
	strv_free(taken, ntaken);
	free(runs);
	free(v);
	best_release(&bs);
	return rc;
}

/* What feeding submits first now, in words: read only. */
char *autopilot_first(struct xl_ctx *ctx)
{
	struct auto_pick pick;
	struct auto_status st;
	struct plan_entry *plan = NULL;
	struct run best;
	struct stmt q;
	size_t nplan = 0;
	char *text = NULL, *tag = NULL;
	int has_best, ran = 0;

	memset(&pick, 0, sizeof(pick));
	if (unfinished(ctx, &pick) == 1) {
		text = xasprintf("autopilot's proposal %s, made already (%s)", pick.tag, pick.reason);
		auto_pick_release(&pick);
		return text;
	}
	if (plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan) == 0 && nplan) {
		text = xasprintf("the plan's entry %lld (%s=%s from %s): the plan goes before "
				 "autopilot", plan[0].id, plan[0].var, plan[0].value, plan[0].parent);
		plan_entries_free(plan, nplan);
		return text;
	}
	plan_entries_free(plan, nplan);
	if (autopilot_status(ctx, &st) == 0 && st.stopped)
		text = xasprintf("nothing: autopilot stops (%s)", st.stopped);
	auto_status_release(&st);
	if (text)
		return text;
	has_best = best_get(ctx, &best, NULL) == 0;
	if (has_best) {
		run_release(&best);
		return xstrdup("autopilot's first proposal, chosen when it is fed (its reason "
			       "goes to ops/decisions.md)");
	}
	/* nothing proven: the oldest root run that never ran is the first */
	if (db_prepare(&ctx->db, &q, "SELECT r.tag, EXISTS (SELECT 1 FROM attempt WHERE"
		       " run_id = r.id) FROM run r WHERE +r.study = :study AND r.parent_id IS NULL"
		       " ORDER BY r.id") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		while (!tag && db_step(&q) == SQLITE_ROW) {
			if (db_col_int64(&q, 1))
				ran = 1;
			else
				tag = db_col_dup(&q, 0);
		}
		db_finalize(&q);
	}
	if (tag)
		text = xasprintf("the baseline %s, which has not run (no configuration is proven "
				 "yet)", tag);
	else
		text = xstrdup(ran ? "nothing until a configuration is proven: autopilot waits "
			       "for the baseline's verdict, or for you when it failed (`xloop "
			       "status`)" : "nothing: the study has no baseline (`xloop adopt "
			       "PATH --tag T`)");
	free(tag);
	return text;
}

/* The next autopilot run. */
int autopilot_next(struct xl_ctx *ctx, struct auto_pick *pick, char **idle, char **cause)
{
	struct auto_status st;
	char *why = NULL, *wait = NULL;
	int rc;

	memset(pick, 0, sizeof(*pick));
	*idle = NULL;
	if (!ctx->cfg.autopilot.on)
		return 0;
	/* a proposal a crash interrupted is finished first, budget or not */
	rc = unfinished(ctx, pick);
	if (rc != 0) {
		if (rc < 0)
			*cause = xstrdup("unable to read autopilot's proposals");
		return rc;
	}
	if (autopilot_status(ctx, &st) < 0) {
		*cause = xstrdup("unable to read autopilot's spending");
		return -1;
	}
	if (st.stopped) {
		say_stopped(ctx, st.stopped);
		*idle = st.stopped;
		st.stopped = NULL;
		auto_status_release(&st);
		return 0;
	}
	auto_status_release(&st);
	rc = make_proposal(ctx, pick, &why, &wait);
	if (rc < 0)
		*cause = xstrdup("unable to record autopilot's proposal");
	if (rc == 0 && why)
		say_stopped(ctx, why);
	if (rc <= 0)
		auto_pick_release(pick);
	if (rc == 0) {
		*idle = why ? xasprintf("stopped: %s", why) : wait;
		wait = NULL;
	}
	free(why);
	free(wait);
	return rc;
}

static int set_status(struct xl_ctx *ctx, long long id, const char *status,
		      long long run_id, const char *err)
{
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "UPDATE proposal SET status = :s,"
		       " run_id = CASE WHEN :run > 0 THEN :run ELSE run_id END,"
		       " error = coalesce(:err, error) WHERE id = :id") < 0)
		return -1;
	db_bind_text(&q, ":s", status);
	db_bind_int64(&q, ":run", run_id);
	db_bind_text(&q, ":err", err);
	db_bind_int64(&q, ":id", id);
	return db_run(&q);
}

/* autopilot_created for the baseline: its decision entry says so. */
static int created_baseline(struct xl_ctx *ctx, const struct auto_pick *pick, const char *when)
{
	char *entry, *msg, *once, *cause = NULL;

	entry = xasprintf("## %s · autopilot runs the baseline %s\n- reason: %s\n", when,
			  pick->tag, pick->reason);
	msg = xasprintf("xloop: autopilot runs the baseline %s/%s\n\n%s\n", ctx->cfg.study,
			pick->tag, pick->reason);
	once = xasprintf(" · autopilot runs the baseline %s\n", pick->tag);
	if (loop_decide_once(ctx, entry, once, NULL, msg, &cause) < 0) {
		warning("proposal %s recorded, but ops/decisions.md was not updated: %s",
			pick->tag, cause);
		free(cause);
	}
	free(entry);
	free(msg);
	free(once);
	return set_status(ctx, pick->id, "decided", 0, NULL);
}

/* A proposal's decision entry, its once mark and its commit message. */
void autopilot_entry(struct xl_ctx *ctx, const struct auto_pick *pick, char **entry,
		     char **once, char **msg)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	*entry = xasprintf("## %s · autopilot proposes %s\n- change: %s=%s from %s\n"
			   "- reason: %s\n", when, pick->tag, pick->var, pick->value,
			   pick->parent, pick->reason);
	*msg = xasprintf("xloop: autopilot proposes %s/%s: %s=%s from %s\n\n%s\n",
			 ctx->cfg.study, pick->tag, pick->var, pick->value, pick->parent,
			 pick->reason);
	/* a crash after the entry was written, before "decided": not twice */
	*once = xasprintf(" · autopilot proposes %s\n", pick->tag);
}

/* Link the run, then write the decision entry. */
int autopilot_created(struct xl_ctx *ctx, const struct auto_pick *pick, long long run_id)
{
	char *entry, *msg, *once, *cause = NULL, when[32];
	time_t now = time(NULL);
	struct tm tm;

	if (set_status(ctx, pick->id, "created", run_id, NULL) < 0)
		return -1;
	crash_point("auto-after-created");
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	if (!*pick->var)	/* the baseline, which had not run */
		return created_baseline(ctx, pick, when);
	/* written and committed with the run already (feed): then nothing is left */
	autopilot_entry(ctx, pick, &entry, &once, &msg);
	if (loop_decide_once(ctx, entry, once, NULL, msg, &cause) < 0) {
		warning("proposal %s recorded, but ops/decisions.md was not updated: %s",
			pick->tag, cause);
		free(cause);
	}
	free(entry);
	free(msg);
	free(once);
	return set_status(ctx, pick->id, "decided", 0, NULL);
}

/* The proposal cannot become a run. */
int autopilot_failed(struct xl_ctx *ctx, const struct auto_pick *pick, const char *why)
{
	char *d = xasprintf("autopilot's proposal %s (%s=%s from %s) failed: %s", pick->tag,
			    pick->var, pick->value, pick->parent, why);
	int rc = set_status(ctx, pick->id, "failed", 0, why);

	loop_event(ctx, "autopilot", 0, 0, d);
	free(d);
	return rc;
}
