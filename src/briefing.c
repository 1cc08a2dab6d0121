/* Building and printing the briefing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "breaker.h"
#include "autopilot.h"
#include "best.h"
#include "briefing.h"
#include "retry.h"
#include "fsutil.h"
#include "plan.h"
#include "reasons.h"
#include "runs.h"

#define TAIL_LINES 5

/* The last n non-blank lines of a log (carriage-return progress folded). */
json_t *briefing_log_tail(const char *path, int n)
{
	struct buf b = BUF_INIT;
	json_t *a = json_array();
	char *cause = NULL;
	const char *p, **lines = NULL;
	size_t nl = 0, i;
	int err;

	if (!*path || read_file(path, 64 << 20, &b, &err, &cause) < 0) {
		free(cause);
		buf_release(&b);
		return a;
	}
	for (p = b.s; *p;) {
		size_t len = strcspn(p, "\n");

		if (len > 0 && strspn(p, " \t\r") < len) {
			lines = xreallocarray(lines, nl + 1, sizeof(*lines));
			lines[nl++] = p;
		}
		p += len;
		if (*p)
			p++;
	}
	for (i = nl > (size_t)n ? nl - (size_t)n : 0; i < nl; i++) {
		const char *l = lines[i], *cr;
		size_t len = strcspn(l, "\n");

		/* after a carriage return the terminal shows what follows it */
		while ((cr = memchr(l, '\r', len)) != NULL && cr + 1 < l + len) {
			len -= (size_t)(cr + 1 - l);
			l = cr + 1;
		}
		if (len && l[len - 1] == '\r')
			len--;
		{
			char *clean = utf8_clean(l, len > 300 ? 300 : len);

			json_array_append_new(a, json_string(clean));
			free(clean);
		}
	}
	free(lines);
	buf_release(&b);
	return a;
}

/* The mean of a finished run's configuration beside its score ({mean, interval, n} or null). */
static json_t *config_json(const struct best_state *bs, long long run_id)
{
	long c = bs ? best_find_run(bs, run_id) : -1;
	struct best_info bi;

	if (c < 0 || bs->v[c].st.n == 0)
		return json_null();
	best_info_of(bs, c, &bi);
	return json_pack("{s:f, s:o, s:I, s:b}", "mean", bi.mean, "interval",
			 bi.checked ? json_real(bi.half) : json_null(), "n", (json_int_t)bi.n,
			 "best", c == bs->best);
}

static json_t *finished_since(struct xl_ctx *ctx, long long seen, long long *max_id)
{
	json_t *a = json_array();
	struct best_state bs;
	int have_bs = best_load(ctx, &bs) == 0;
	struct stmt q;

	if (db_prepare(&ctx->db, &q,
		       "SELECT e.id, r.tag, t.n, coalesce(r.var, ''), coalesce(r.old_value, ''),"
		       " coalesce(r.new_value, ''), t.verdict, coalesce(t.failure_class, ''),"
		       " t.score, coalesce(t.verdict_reason, ''), coalesce(t.evidence, ''),"
		       " t.log_path, coalesce(t.job_id, ''), coalesce(t.state, ''),"
		       " r.parent_id IS NOT NULL, r.id"
		       " FROM event e JOIN attempt t ON t.id = e.attempt_id"
		       " JOIN run r ON r.id = t.run_id"
		       " WHERE e.kind = 'verdict' AND e.id > :seen AND r.study = :study"
		       " ORDER BY e.id") < 0)
		return a;
	db_bind_int64(&q, ":seen", seen);
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW) {
		int ok = strcmp(db_col_text(&q, 6), "success") == 0;
		json_t *o = json_pack("{s:s, s:I, s:o, s:s, s:o, s:o, s:s, s:s, s:s, s:s, s:s}",
			"tag", db_col_text(&q, 1), "attempt", (json_int_t)db_col_int64(&q, 2),
			"change", db_col_int64(&q, 14) ? json_sprintf("%s: %s -> %s",
				db_col_text(&q, 3), db_col_text(&q, 4), db_col_text(&q, 5)) :
				json_null(),
			"verdict", db_col_text(&q, 6),
			"class", *db_col_text(&q, 7) ? json_string(db_col_text(&q, 7)) : json_null(),
			"score", db_col_is_null(&q, 8) ? json_null() :
				json_real(sqlite3_column_double(q.st, 8)),
			"reason", db_col_text(&q, 9), "evidence", db_col_text(&q, 10),
			"log", db_col_text(&q, 11), "job_id", db_col_text(&q, 12),
			"state", db_col_text(&q, 13));

		json_object_set_new(o, "log_tail", ok ? json_array() :
				    briefing_log_tail(db_col_text(&q, 11), TAIL_LINES));
		json_object_set_new(o, "configuration", ok ? config_json(have_bs ? &bs : NULL,
				    db_col_int64(&q, 15)) : json_null());
		json_array_append_new(a, o);
		if (db_col_int64(&q, 0) > *max_id)
			*max_id = db_col_int64(&q, 0);
	}
	db_finalize(&q);
	if (have_bs)
		best_release(&bs);
	return a;
}

static json_t *events_since(struct xl_ctx *ctx, const char *kind, long long seen,
			    long long *max_id)
{
	json_t *a = json_array();
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "SELECT id, coalesce(detail, '') FROM event"
		       " WHERE kind = :kind AND id > :seen ORDER BY id") < 0)
		return a;
	db_bind_text(&q, ":kind", kind);
	db_bind_int64(&q, ":seen", seen);
	while (db_step(&q) == SQLITE_ROW) {
		json_array_append_new(a, json_string(db_col_text(&q, 1)));
		if (db_col_int64(&q, 0) > *max_id)
			*max_id = db_col_int64(&q, 0);
	}
	db_finalize(&q);
	return a;
}

/* The action text with its TAG and JOBID placeholders filled in. */
char *briefing_fill_action(const char *action, const char *tag, const char *job)
{
	struct buf b = BUF_INIT;
	const char *p = action;

	while (*p) {
		if (starts_with(p, "TAG")) {
			buf_adds(&b, tag);
			p += 3;
		} else if (starts_with(p, "JOBID")) {
			buf_adds(&b, job);
			p += 5;
		} else {
			buf_addc(&b, *p++);
		}
	}
	return buf_detach(&b, NULL);
}

static json_t *fill_action(const char *action, const char *tag, const char *job)
{
	char *s = briefing_fill_action(action, tag, job);
	json_t *j = json_string(s);

	free(s);
	return j;
}

/* Seconds of log silence after which a RUNNING job is stale. */
static long long stale_secs(struct xl_ctx *ctx)
{
#ifdef XLOOP_TEST_BUILD
	const char *v = getenv("XLOOP_TEST_STALE_SECS");

	if (v && *v)
		return strtoll(v, NULL, 10);
#endif
	return ctx->cfg.stale_after * 60;
}

/* A RUNNING job whose log is silent: the node may have frozen. */
char *briefing_stale(struct xl_ctx *ctx, const struct attempt *a, const char *tag)
{
	struct stat st;
	time_t now = time(NULL);

	if (strcmp(a->state, "RUNNING") != 0 || !*a->log_path ||
	    stat(a->log_path, &st) < 0 || now - st.st_mtime < stale_secs(ctx))
		return NULL;
	return xasprintf("job %s is RUNNING but its log has been silent for %lld min: "
			 "the node may have frozen; check it, then `xloop cancel %s` and "
			 "`xloop retry %s`", a->job_id, (long long)(now - st.st_mtime) / 60,
			 tag, tag);
}

static json_t *live_jobs(struct xl_ctx *ctx)
{
	json_t *a = json_array();
	struct attempt *v = NULL;
	size_t n = 0, i;

	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return a;
	for (i = 0; i < n; i++) {
		const struct reason_info *ri = reason_explain(v[i].slurm_reason);
		char *found = runs_tag(&ctx->db, v[i].run_id);
		const char *tag = found ? found : "?";
		int pending = strcmp(v[i].state, "PENDING") == 0;
		json_t *o;

		o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:o, s:o}", "tag", tag,
			      "attempt", (json_int_t)v[i].n, "job_id", v[i].job_id,
			      "state", *v[i].state ? v[i].state :
				(*v[i].job_id ? "SUBMITTED" : "SUBMITTING"),
			      "reason", v[i].slurm_reason,
			      "reason_meaning", pending ? json_string(ri->meaning) : json_null(),
			      "reason_action", pending && *ri->action ?
				fill_action(ri->action, tag, v[i].job_id) : json_null());
		free(found);
		{
			char *note = briefing_stale(ctx, &v[i],
						    json_string_value(json_object_get(o, "tag")));

			json_object_set_new(o, "stale", note ? json_string(note) : json_null());
			free(note);
		}
		json_array_append_new(a, o);
	}
	attempts_free(v, n);
	return a;
}

/*
 * For a run that ran out of memory or time: the retry with that resource
 * raised (the sweep's retry for a sweep task).
 */
static char *resource_action(struct xl_ctx *ctx, const char *tag, const char *state)
{
	int oom = strcmp(state, "OUT_OF_MEMORY") == 0;
	struct proposal p;
	struct attempt a;
	struct run r;
	char *sweep = NULL, *out;

	memset(&p, 0, sizeof(p));
	if (runs_get(&ctx->db, ctx->cfg.study, tag, &r) != 0)
		return xasprintf("%s ended %s", tag, state);
	sweep = sweeps_of_run(&ctx->db, r.id);
	if (attempts_latest(&ctx->db, r.id, &a) == 0) {
		if (retry_proposal(ctx, &a, &p))
			out = xasprintf("%s %s (%s): retry with more, `xloop %s %s --%s %s` "
					"(%s)", tag, oom ? "ran out of memory" :
					"hit its time limit", oom ? a.mem : a.time_limit,
					sweep ? "sweep retry" : "retry", sweep ? sweep : tag,
					oom ? "mem" : "time", oom ? p.mem : p.time, p.why);
		else
			out = xasprintf("%s %s and cannot simply get more: %s", tag,
					oom ? "ran out of memory" : "hit its time limit", p.why);
		attempt_release(&a);
	} else {
		out = xasprintf("%s ended %s", tag, state);
	}
	proposal_release(&p);
	free(sweep);
	run_release(&r);
	return out;
}

/* The one thing to do next. */
static char *next_action(struct xl_ctx *ctx, json_t *finished, json_t *live,
			 size_t queued, int has_runs, int has_best, int autopilot)
{
	size_t i;
	json_t *f;

	/* the newest failure that needs a decision comes first */
	for (i = json_array_size(finished); i-- > 0;) {
		const char *tag, *state, *cls;

		f = json_array_get(finished, i);
		if (strcmp(json_string_value(json_object_get(f, "verdict")), "success") == 0)
			continue;
		tag = json_string_value(json_object_get(f, "tag"));
		state = json_string_value(json_object_get(f, "state"));
		cls = json_string_value(json_object_get(f, "class"));
		if (strcmp(state, "OUT_OF_MEMORY") == 0 || strcmp(state, "TIMEOUT") == 0)
			return resource_action(ctx, tag, state);
		if (cls && strcmp(cls, "infra") == 0)
			return xasprintf("%s failed for reasons outside the job (%s): "
					 "`xloop retry %s`", tag, state, tag);
		return xasprintf("%s failed: read its log tail above, fix the cause in a new "
				 "run (`xloop new TAG --from %s --set VAR=VALUE --force`) or "
				 "record why you drop it (`xloop decide TEXT --run %s`)",
				 tag, tag, tag);
	}
	for (i = 0; i < json_array_size(live); i++) {
		f = json_array_get(live, i);
		if (json_is_string(json_object_get(f, "stale")))
			return xstrdup(json_string_value(json_object_get(f, "stale")));
		if (json_is_string(json_object_get(f, "reason_action")) &&
		    strcmp(json_string_value(json_object_get(f, "state")), "PENDING") == 0)
			return xasprintf("%s is stuck pending: %s",
					 json_string_value(json_object_get(f, "tag")),
					 json_string_value(json_object_get(f, "reason_action")));
	}
	if (!has_runs)
		return xstrdup("adopt a proven baseline: `xloop adopt PATH --tag base "
			       "--cv cv.json`");
	if (!has_best && json_array_size(live) == 0)
		return xstrdup("no run is proven yet: submit the baseline "
			       "(`xloop submit TAG`) or adopt one with --cv");
	if (queued == 0 && autopilot)
		return xstrdup("autopilot feeds the queue from the search space (`xloop auto "
			       "status`); plan entries you add go first");
	if (queued == 0)
		return xstrdup(json_array_size(live) ?
			"the plan is empty: queue the next changes with `xloop plan add "
			"VAR=VALUE` so the GPU stays busy after the running job" :
			"the plan is empty and the GPU is idle: `xloop next --set VAR=VALUE` "
			"or `xloop plan add VAR=VALUE`");
	return xstrdup("nothing to decide now: run `xloop next` again after the running "
		       "job ends (or let cron run `xloop tick`)");
}

/* Build the briefing document. */
json_t *briefing_build(struct xl_ctx *ctx, const struct refresh *ref,
		       const struct feed_result *fed, int with_rules)
{
	long long seen = db_kv_get(&ctx->db, "briefing_seen"), max_id = seen;
	json_t *b, *finished, *repaired, *live, *sub = json_array(), *skipped = json_array();
	struct plan_entry *plan = NULL;
	struct run best;
	size_t nplan = 0, i;
	long long nruns;
	struct best_info bi;
	struct auto_status ap;
	json_t *autonews;
	int has_best;
	char *action, *breaker;

	finished = finished_since(ctx, seen, &max_id);
	repaired = events_since(ctx, "repaired", seen, &max_id);
	live = live_jobs(ctx);
	plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan);
	nruns = runs_count(&ctx->db, ctx->cfg.study);
	has_best = best_get(ctx, &best, &bi) == 0;
	for (i = 0; fed && i < fed->nr; i++)
		json_array_append_new(sub, json_pack("{s:s, s:s, s:s, s:I, s:o}",
			"tag", fed->v[i].tag, "change", fed->v[i].change,
			"job_id", fed->v[i].job_id, "attempt", (json_int_t)fed->v[i].attempt,
			"after", *fed->v[i].after ? json_string(fed->v[i].after) : json_null()));
	for (i = 0; fed && i < fed->nr_skipped; i++)
		json_array_append_new(skipped, json_string(fed->skipped[i]));
	breaker = breaker_open_reason(ctx);
	if (autopilot_status(ctx, &ap) < 0)
		memset(&ap, 0, sizeof(ap));
	autonews = events_since(ctx, "autopilot", seen, &max_id);
	action = next_action(ctx, finished, live, nplan, nruns > 0, has_best,
			     ap.on && !ap.stopped);
	if (breaker) {
		char *a = xasprintf("feeding is stopped (%s). %s; then `xloop breaker reset` "
				    "(or `xloop resume --feed`) to feed again", breaker, action);

		free(action);
		action = a;
	}
	b = json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:s, s:I, s:I}",
		      "schema", "xloop.next/1", "study", ctx->cfg.study, "metric", ctx->cfg.metric,
		      "generated_at", (json_int_t)time(NULL),
		      "finished", finished, "repaired", repaired, "live", live,
		      "best", has_best ? best_json(best.tag, &bi) : json_null(),
		      "submitted", sub, "skipped", skipped,
		      "plan_queued", (json_int_t)nplan, "next_action", action,
		      "slurm_calls", (json_int_t)(ref ? ref->calls : 0),
		      "seen_upto", (json_int_t)max_id);
	json_object_set_new(b, "breaker", breaker ? json_string(breaker) : json_null());
	json_object_set_new(b, "autopilot", json_pack("{s:b, s:I, s:I, s:f, s:o, s:o}",
		"on", ap.on, "spent_runs", (json_int_t)ap.runs,
		"budget_runs", (json_int_t)ctx->cfg.autopilot.budget_runs,
		"spent_gpu_hours", ap.hours,
		"stopped", ap.stopped ? json_string(ap.stopped) : json_null(),
		"news", autonews));
	auto_status_release(&ap);
	free(breaker);
	json_object_set_new(b, "rules", with_rules ? json_pack("[s, s, s]",
		"one change per run: `xloop new TAG --from P|best --set VAR=VALUE` "
		"(never edit or sbatch a job.sh by hand)",
		"logs: runs/<study>/<tag>/slurm/attemptN.out; START first, progress "
		"every 30-60 s, FINISHED or FAILED last",
		"a run succeeded only if Slurm says COMPLETED with ExitCode 0:0 and it "
		"wrote a fresh cv.json with a finite \"score\"") : json_array());
	free(action);
	if (has_best)
		run_release(&best);
	plan_entries_free(plan, nplan);
	return b;
}

/* Remember that the agent saw everything up to this briefing. */
int briefing_mark_seen(struct xl_ctx *ctx, json_t *b)
{
	return db_kv_set(&ctx->db, "briefing_seen",
			 json_integer_value(json_object_get(b, "seen_upto")));
}

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

/* Print the briefing. */
void briefing_print(const json_t *b)
{
	const json_t *a, *o, *l;
	size_t i, k;

	printf("xloop briefing: study %s\n", jstr(b, "study"));
	a = json_object_get(b, "rules");
	if (json_array_size(a)) {
		printf("\nrules of this study:\n");
		json_array_foreach(a, i, o)
			printf("  - %s\n", json_string_value(o));
	}
	a = json_object_get(b, "finished");
	printf("\nfinished since the last briefing: %s\n", json_array_size(a) ? "" : "nothing");
	json_array_foreach(a, i, o) {
		const json_t *sc = json_object_get(o, "score");

		printf("  %s attempt %lld: %s", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")),
		       jstr(o, "verdict"));
		if (json_is_string(json_object_get(o, "class")))
			printf(" (%s)", jstr(o, "class"));
		if (json_is_number(sc))
			printf(", %s %g", jstr(b, "metric"), json_number_value(sc));
		l = json_object_get(o, "configuration");
		if (json_is_object(l) && json_integer_value(json_object_get(l, "n")) > 1) {
			printf(" (its configuration: mean %g",
			       json_number_value(json_object_get(l, "mean")));
			if (json_is_number(json_object_get(l, "interval")))
				printf(" ± %.2g", json_number_value(json_object_get(l, "interval")));
			printf(", n=%lld%s)", (long long)json_integer_value(json_object_get(l, "n")),
			       json_is_true(json_object_get(l, "best")) ? ", the best" : "");
		}
		if (json_is_string(json_object_get(o, "change")))
			printf("  [%s]", jstr(o, "change"));
		printf("\n    %s\n", jstr(o, "reason"));
		if (*jstr(o, "evidence"))
			printf("    %s\n", jstr(o, "evidence"));
		l = json_object_get(o, "log_tail");
		if (json_array_size(l)) {
			printf("    log tail (%s):\n", jstr(o, "log"));
			json_array_foreach(l, k, sc)
				printf("      | %s\n", json_string_value(sc));
		}
	}
	a = json_object_get(b, "repaired");
	json_array_foreach(a, i, o)
		printf("  repaired: %s\n", json_string_value(o));
	a = json_object_get(b, "live");
	printf("\nrunning and pending: %s\n", json_array_size(a) ? "" : "none (the GPU is idle)");
	json_array_foreach(a, i, o) {
		printf("  %s attempt %lld: job %s %s", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")),
		       jstr(o, "job_id"), jstr(o, "state"));
		if (json_is_string(json_object_get(o, "reason_meaning")))
			printf(" (%s: %s)", jstr(o, "reason"), jstr(o, "reason_meaning"));
		putchar('\n');
		if (json_is_string(json_object_get(o, "stale")))
			printf("    STALE: %s\n", jstr(o, "stale"));
	}
	o = json_object_get(b, "best");
	if (json_is_object(o)) {
		struct best_info bi;
		char shown[128];

		memset(&bi, 0, sizeof(bi));
		bi.mean = json_number_value(json_object_get(o, "score"));
		bi.n = (long)json_integer_value(json_object_get(o, "n"));
		bi.checked = json_is_true(json_object_get(o, "checked"));
		bi.half = json_number_value(json_object_get(o, "interval"));
		bi.sd = json_number_value(json_object_get(o, "noise_sd"));
		best_format(&bi, shown, sizeof(shown));
		printf("\nbest so far: %s, %s %s\n", jstr(o, "tag"), jstr(b, "metric"), shown);
		if (!bi.checked)
			printf("  (gains are not checked against noise: %s)\n",
			       "no replicates yet; `xloop space seed VAR` names the seed variable");
	}
	else
		printf("\nbest so far: no proven run yet\n");
	a = json_object_get(b, "submitted");
	if (json_array_size(a)) {
		printf("\nsubmitted now:\n");
		json_array_foreach(a, i, o)
			printf("  %s (%s) as job %s%s%s\n", jstr(o, "tag"), jstr(o, "change"),
			       jstr(o, "job_id"),
			       json_is_string(json_object_get(o, "after")) ? ", after job " : "",
			       jstr(o, "after"));
	}
	a = json_object_get(b, "skipped");
	json_array_foreach(a, i, o)
		printf("  %s\n", json_string_value(o));
	printf("\nplan: %lld change%s queued\n",
	       (long long)json_integer_value(json_object_get(b, "plan_queued")),
	       json_integer_value(json_object_get(b, "plan_queued")) == 1 ? "" : "s");
	if (json_is_string(json_object_get(b, "breaker")))
		printf("\nFEEDING STOPPED: %s\n", jstr(b, "breaker"));
	o = json_object_get(b, "autopilot");
	if (json_is_true(json_object_get(o, "on")))
		printf("\nautopilot: on, %lld run%s spent%s%s\n",
		       (long long)json_integer_value(json_object_get(o, "spent_runs")),
		       json_integer_value(json_object_get(o, "spent_runs")) == 1 ? "" : "s",
		       json_is_string(json_object_get(o, "stopped")) ? "; stopped: " : "",
		       jstr(o, "stopped"));
	json_array_foreach(json_object_get(o, "news"), i, l)
		printf("  %s\n", json_string_value(l));
	printf("\nnext: %s\n", jstr(b, "next_action"));
}
