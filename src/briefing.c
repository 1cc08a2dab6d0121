/* Building and printing the briefing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "search/autopilot.h"
#include "search/best.h"
#include "breaker.h"
#include "briefing.h"
#include "segments.h"
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

/* "VAR: old -> new" for a run with a parent, null for a root. */
static json_t *change_json(int child, const char *var, const char *old, const char *new)
{
	return child ? json_sprintf("%s: %s -> %s", var, old, new) : json_null();
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
			"change", change_json(db_col_int64(&q, 14) != 0, db_col_text(&q, 3),
					      db_col_text(&q, 4), db_col_text(&q, 5)),
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

/* Slurm's reason, or NULL for "None" and nothing. */
static const char *real_reason(const char *r)
{
	return r && *r && strcmp(r, "None") != 0 ? r : NULL;
}

/*
 * The run behind Slurm job id job (an array "12" is its sweep's tasks):
 * its tag and sweep (malloc'd, NULL when not ours).
 */
static void whose_job(struct xl_ctx *ctx, const char *job, char **tag, char **sweep)
{
	char *lo = xasprintf("%s_", job), *hi = xasprintf("%s`", job);
	struct stmt q;

	*tag = *sweep = NULL;
	/* the attempt_job index: one id, or the range of an array's tasks */
	if (db_prepare_cached(&ctx->db, &q, "SELECT r.id, r.tag FROM attempt t"
			      " JOIN run r ON r.id = t.run_id WHERE r.study = :study"
			      " AND (t.job_id = :job OR (t.job_id > :lo AND t.job_id < :hi))"
			      " ORDER BY t.id DESC LIMIT 1") == 0) {
		db_bind_text(&q, ":study", ctx->cfg.study);
		db_bind_text(&q, ":job", job);
		db_bind_text(&q, ":lo", lo);
		db_bind_text(&q, ":hi", hi);
		if (db_step(&q) == SQLITE_ROW) {
			*tag = xstrdup(db_col_text(&q, 1));
			*sweep = sweeps_of_run(&ctx->db, db_col_int64(&q, 0));
		}
		db_finalize(&q);
	}
	free(lo);
	free(hi);
}

/* What a pending job waits for: the job it is chained behind, or Slurm's reason. */
static json_t *waits_for(struct xl_ctx *ctx, const struct attempt *a)
{
	const char *reason = real_reason(a->slurm_reason);
	char *tag = NULL, *sweep = NULL, *text;
	int chained = *a->after_job && (!reason || strcmp(reason, "Dependency") == 0);
	json_t *o;

	if (strcmp(a->state, "PENDING") != 0)
		return json_null();
	if (chained) {
		whose_job(ctx, a->after_job, &tag, &sweep);
		if (sweep)
			text = xasprintf("job %s (sweep %s) to end: it is chained afterany",
					 a->after_job, sweep);
		else if (tag)
			text = xasprintf("job %s (%s) to end: it is chained afterany",
					 a->after_job, tag);
		else
			text = xasprintf("job %s (not this study's) to end: it is chained "
					 "afterany", a->after_job);
	} else if (reason) {
		text = xasprintf("%s (%s)", reason_explain(reason)->meaning, reason);
	} else {
		text = xstrdup("its turn: Slurm gives no reason yet");
	}
	o = json_pack("{s:o, s:o, s:o, s:o, s:s}",
		      "job_id", chained ? json_string(a->after_job) : json_null(),
		      "tag", tag ? json_string(tag) : json_null(),
		      "sweep", sweep ? json_string(sweep) : json_null(),
		      "reason", reason ? json_string(reason) : json_null(), "text", text);
	free(tag);
	free(sweep);
	free(text);
	return o;
}

static json_t *live_jobs(struct xl_ctx *ctx)
{
	json_t *a = json_array();
	struct attempt *v = NULL;
	size_t n = 0, i;

	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return a;
	for (i = 0; i < n; i++) {
		const char *reason = real_reason(v[i].slurm_reason);
		const struct reason_info *ri = reason_explain(reason);
		char *found = runs_tag(&ctx->db, v[i].run_id), *note;
		const char *tag = found ? found : "?";
		int pending = strcmp(v[i].state, "PENDING") == 0;
		json_t *o;

		o = json_pack("{s:s, s:I, s:s, s:s, s:o, s:o, s:o, s:o}", "tag", tag,
			      "attempt", (json_int_t)v[i].n, "job_id", v[i].job_id,
			      "state", *v[i].state ? v[i].state :
				(*v[i].job_id ? "SUBMITTED" : "SUBMITTING"),
			      "reason", reason ? json_string(reason) : json_null(),
			      "reason_meaning", pending && reason ? json_string(ri->meaning) :
				json_null(),
			      "reason_action", pending && reason && *ri->action ?
				fill_action(ri->action, tag, v[i].job_id) : json_null(),
			      "waits_for", waits_for(ctx, &v[i]));
		note = briefing_stale(ctx, &v[i], tag);
		json_object_set_new(o, "stale", note ? json_string(note) : json_null());
		free(note);
		note = segments_progress(ctx, v[i].id);
		json_object_set_new(o, "segment", note ? json_string(note) : json_null());
		free(note);
		free(found);
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

/* The next action: a sentence with its command in backquotes, and why. */
struct action {
	char *text;
	char *why;
};

/* Set both (taking them over); returns 1, "this needs a decision". */
static int act(struct action *a, char *why, char *text)
{
	a->why = why;
	a->text = text;
	return 1;
}

/*
 * The one thing to do next. Returns 1 when it is a decision about a
 * failure or a stuck job, 0 when it is the routine of feeding.
 */
static int next_action(struct xl_ctx *ctx, json_t *finished, json_t *live,
		       size_t queued, long long sweep_queued, const struct feeder *who,
		       int has_runs, int has_best, int autopilot, struct action *out)
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
			return act(out, xasprintf("%s ended %s", tag, state),
				   resource_action(ctx, tag, state));
		if (cls && strcmp(cls, "infra") == 0)
			return act(out, xasprintf("%s failed for reasons outside the job (%s)",
						  tag, state),
				   xasprintf("%s failed for reasons outside the job (%s): "
					     "`xloop retry %s`", tag, state, tag));
		return act(out, xasprintf("%s failed: %s", tag,
					  json_string_value(json_object_get(f, "reason"))),
			   xasprintf("%s failed: read its log tail above, fix the cause in a "
				     "new run (`xloop new TAG --from %s --set VAR=VALUE --force`) "
				     "or record why you drop it (`xloop decide TEXT --run %s`)",
				     tag, tag, tag));
	}
	for (i = 0; i < json_array_size(live); i++) {
		const char *tag;

		f = json_array_get(live, i);
		tag = json_string_value(json_object_get(f, "tag"));
		if (json_is_string(json_object_get(f, "stale")))
			return act(out, xasprintf("%s is RUNNING but its log is silent", tag),
				   xstrdup(json_string_value(json_object_get(f, "stale"))));
		if (json_is_string(json_object_get(f, "reason_action")) &&
		    strcmp(json_string_value(json_object_get(f, "state")), "PENDING") == 0)
			return act(out, xasprintf("%s is pending: %s", tag,
						  json_string_value(json_object_get(f,
							  "reason_meaning"))),
				   xasprintf("%s is stuck pending: %s", tag,
					     json_string_value(json_object_get(f,
						     "reason_action"))));
	}
	if (!has_runs)
		act(out, xstrdup("the study has no run yet"),
		    xstrdup("adopt a proven baseline: `xloop adopt PATH --tag base --cv cv.json`"));
	else if (!has_best && json_array_size(live) == 0)
		act(out, xstrdup("no run is proven yet and nothing runs"),
		    xstrdup("no run is proven yet: submit the baseline (`xloop submit TAG`) "
			    "or adopt one with --cv"));
	else if (queued == 0 && autopilot)
		act(out, xstrdup("the plan is empty and autopilot is on"),
		    xstrdup("nothing to decide now: autopilot feeds the queue from the search "
			    "space (`xloop auto status`); plan entries you add go first"));
	else if (queued == 0 && sweep_queued > 0)
		act(out, xasprintf("%lld sweep task%s still queued and the plan is empty",
				   sweep_queued, sweep_queued == 1 ? " is" : "s are"),
		    xasprintf("nothing to decide now: %lld sweep task%s still queued; the plan "
			      "is empty, so queue what should run after them with `xloop plan "
			      "add VAR=VALUE`", sweep_queued,
			      sweep_queued == 1 ? " is" : "s are"));
	else if (queued == 0 && json_array_size(live))
		act(out, xstrdup("the plan is empty"),
		    xstrdup("the plan is empty: queue the next changes with `xloop plan add "
			    "VAR=VALUE` so the GPU stays busy after the running job"));
	else if (queued == 0)
		act(out, xstrdup("the plan is empty and nothing runs"),
		    xstrdup("the plan is empty and the GPU is idle: `xloop next --set "
			    "VAR=VALUE` or `xloop plan add VAR=VALUE`"));
	else
		act(out, xasprintf("%zu change%s queued in the plan and the queue is fed",
				   queued, queued == 1 ? "" : "s"),
		    strcmp(who->kind, "none") != 0 ?
		    xasprintf("nothing to decide now: %s; look again with `xloop next` after "
			      "the running job ends", who->text) :
		    xstrdup("nothing to decide now: run `xloop next` again after the running "
			    "job ends; nothing else feeds the queue (`xloop cron-line` prints a "
			    "crontab entry for `xloop tick`)"));
	return 0;
}

/* Words of an action's command that stand for something to fill in. */
static int placeholder(const char *w)
{
	static const char *const words[] = {
		"TAG", "VAR=VALUE", "PATH", "TEXT", "TIME", "MEM", "JOBID", "NAME",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(w, words[i]) == 0)
			return 1;
	return 0;
}

/*
 * The next action as JSON: its text, why, and the first `xloop ...`
 * command of the text as an argv array (null when it names none) with the
 * words still to fill in. Tags never hold blanks, so blanks split it.
 */
static json_t *action_json(const struct action *a)
{
	const char *p = a->text, *q;
	json_t *argv = json_null(), *fill = json_array();

	while ((p = strchr(p, '`')) != NULL) {
		p++;
		q = strchr(p, '`');
		if (!q)
			break;
		if (starts_with(p, "xloop ")) {
			argv = json_array();
			while (p < q) {
				size_t n = strcspn(p, " `");
				char *w = xstrndup(p, n);

				if (n) {
					if (placeholder(w))
						json_array_append_new(fill, json_string(w));
					json_array_append_new(argv, json_string(w));
				}
				free(w);
				p += n;
				p += strspn(p, " ");
			}
			break;
		}
		p = q + 1;
	}
	return json_pack("{s:s, s:o, s:o, s:s}", "text", a->text, "argv", argv,
			 "placeholders", fill, "why", a->why);
}

/* The first line of a markdown entry and the rest, trimmed. */
static json_t *decision_json(const char *e, size_t len)
{
	size_t hl = strcspn(e, "\n");
	const char *body = e + (hl < len ? hl + 1 : len);
	size_t bl = len - (size_t)(body - e);
	char *h, *t;
	json_t *o;

	if (hl > len)
		hl = len;
	while (bl && (body[bl - 1] == '\n' || body[bl - 1] == ' '))
		bl--;
	h = utf8_clean(e + 3, hl > 3 ? (hl > 300 ? 297 : hl - 3) : 0);
	t = utf8_clean(body, bl > 1000 ? 1000 : bl);
	o = json_pack("{s:s, s:s}", "heading", h, "text", t);
	free(h);
	free(t);
	return o;
}

#define DECISIONS_SHOWN 5

/* The last entries ("## " headings) of ops/decisions.md, oldest first. */
static json_t *latest_decisions(struct xl_ctx *ctx)
{
	char *path = xasprintf("%s/ops/decisions.md", ctx->root), *cause = NULL;
	const char *starts[DECISIONS_SHOWN + 1], *p;
	struct buf b = BUF_INIT;
	json_t *a = json_array();
	size_t n = 0, i;
	int err;

	if (read_file(path, 64 << 20, &b, &err, &cause) == 0) {
		/* walk back from the end to the last DECISIONS_SHOWN headings */
		for (p = b.s + b.len; p > b.s && n < DECISIONS_SHOWN;) {
			p--;
			if (starts_with(p, "## ") && (p == b.s || p[-1] == '\n'))
				starts[n++] = p;
		}
		for (i = n; i-- > 0;) {
			const char *end = i ? starts[i - 1] : b.s + b.len;

			json_array_append_new(a, decision_json(starts[i],
							       (size_t)(end - starts[i])));
		}
	}
	free(cause);
	free(path);
	buf_release(&b);
	return a;
}

/* The score of run id's latest attempt, as JSON. */
static json_t *run_score(struct xl_ctx *ctx, long long id)
{
	struct attempt a;
	json_t *j = json_null();

	if (attempts_latest(&ctx->db, id, &a) == 0) {
		if (a.has_score)
			j = json_real(a.score);
		attempt_release(&a);
	}
	return j;
}

#define MAX_LINEAGE 10000

/* The chain of parents from the root to the best run (best_get), root first. */
static json_t *best_lineage(struct xl_ctx *ctx)
{
	json_t *a = json_array();
	struct run r, up;
	size_t n = 0;

	if (best_get(ctx, &r, NULL) != 0)
		return a;
	for (;;) {
		json_array_insert_new(a, 0, json_pack("{s:s, s:o, s:o}", "tag", r.tag,
			"change", change_json(r.parent_id != 0, r.var, r.old_value, r.new_value),
			"score", run_score(ctx, r.id)));
		if (!r.parent_id || ++n >= MAX_LINEAGE ||
		    runs_get(&ctx->db, ctx->cfg.study, r.parent_tag, &up) != 0)
			break;
		run_release(&r);
		r = up;
	}
	run_release(&r);
	return a;
}

/* Every run whose latest attempt failed, with the reason, oldest first. */
static json_t *failures(struct xl_ctx *ctx)
{
	json_t *a = json_array();
	struct stmt q;

	if (db_prepare(&ctx->db, &q,
		       "SELECT r.tag, t.n, coalesce(t.job_id, ''), coalesce(t.state, ''),"
		       " coalesce(t.failure_class, ''), coalesce(t.verdict_reason, ''),"
		       " r.parent_id IS NOT NULL, coalesce(r.var, ''),"
		       " coalesce(r.old_value, ''), coalesce(r.new_value, '')"
		       " FROM run r JOIN attempt t ON t.run_id = r.id"
		       " WHERE r.study = :study AND t.verdict = 'failure'"
		       " AND t.n = (SELECT max(n) FROM attempt WHERE run_id = r.id)"
		       " ORDER BY t.id") < 0)
		return a;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW)
		json_array_append_new(a, json_pack("{s:s, s:I, s:s, s:s, s:o, s:s, s:o}",
			"tag", db_col_text(&q, 0), "attempt", (json_int_t)db_col_int64(&q, 1),
			"job_id", db_col_text(&q, 2), "state", db_col_text(&q, 3),
			"class", *db_col_text(&q, 4) ? json_string(db_col_text(&q, 4)) :
				json_null(),
			"reason", db_col_text(&q, 5),
			"change", change_json(db_col_int64(&q, 6) != 0, db_col_text(&q, 7),
					      db_col_text(&q, 8), db_col_text(&q, 9))));
	db_finalize(&q);
	return a;
}

/* The study so far, for an agent with no memory of it (resume). */
static json_t *history(struct xl_ctx *ctx)
{
	return json_pack("{s:o, s:o, s:o}", "best_lineage", best_lineage(ctx),
			 "failures", failures(ctx), "decisions", latest_decisions(ctx));
}

/* What feeding did and who feeds after this session. */
static json_t *feed_json(const struct feed_result *fed, long long sweep_queued,
			 const struct feeder *who)
{
	int ran = fed && fed->stopped;

	return json_pack("{s:o, s:o, s:I, s:{s:s, s:o, s:s}}",
			 "stopped", ran ? json_string(fed->stopped) : json_null(),
			 "why", ran && fed->stopped_why ? json_string(fed->stopped_why) :
				json_null(),
			 "sweep_tasks_queued", (json_int_t)(sweep_queued > 0 ? sweep_queued : 0),
			 "feeder", "kind", who->kind,
			 "last_at", who->last_at ? json_integer(who->last_at) : json_null(),
			 "text", who->text);
}

/* Build the briefing document. */
json_t *briefing_build(struct xl_ctx *ctx, const struct refresh *ref,
		       const struct feed_result *fed, int resume)
{
	long long seen = db_kv_get(&ctx->db, "briefing_seen"), max_id = seen, sweep_queued;
	json_t *b, *finished, *repaired, *live, *sub = json_array(), *skipped = json_array();
	struct plan_entry *plan = NULL;
	struct action action = { NULL, NULL };
	struct feeder who;
	struct run best;
	size_t nplan = 0, i;
	long long nruns;
	struct best_info bi;
	struct auto_status ap;
	json_t *autonews;
	int has_best, decision;
	char *breaker;

	finished = finished_since(ctx, seen, &max_id);
	repaired = events_since(ctx, "repaired", seen, &max_id);
	live = live_jobs(ctx);
	plan_list(&ctx->db, ctx->cfg.study, 1, &plan, &nplan);
	nruns = runs_count(&ctx->db, ctx->cfg.study);
	has_best = best_get(ctx, &best, &bi) == 0;
	if (autopilot_status(ctx, &ap) < 0)
		memset(&ap, 0, sizeof(ap));
	autonews = events_since(ctx, "autopilot", seen, &max_id);
	sweep_queued = feed_sweep_queued(ctx);
	feed_who(ctx, &who);
	for (i = 0; fed && i < fed->nr; i++)
		json_array_append_new(sub, json_pack("{s:s, s:s, s:s, s:I, s:o}",
			"tag", fed->v[i].tag, "change", fed->v[i].change,
			"job_id", fed->v[i].job_id, "attempt", (json_int_t)fed->v[i].attempt,
			"after", *fed->v[i].after ? json_string(fed->v[i].after) : json_null()));
	for (i = 0; fed && i < fed->nr_skipped; i++)
		json_array_append_new(skipped, json_string(fed->skipped[i]));
	breaker = breaker_open_reason(ctx);
	decision = next_action(ctx, finished, live, nplan, sweep_queued, &who, nruns > 0,
			       has_best, ap.on && !ap.stopped, &action);
	if (breaker) {
		char *t = decision ?
			xasprintf("feeding is stopped (%s). %s; then `xloop breaker reset` "
				  "(or `xloop resume --feed`) to feed again", breaker, action.text) :
			xasprintf("feeding is stopped (%s): read the failures' logs (`xloop "
				  "status`), fix the cause, then `xloop breaker reset` (or "
				  "`xloop resume --feed`) to feed again", breaker);

		free(action.text);
		action.text = t;
		if (!decision) {
			free(action.why);
			action.why = xasprintf("the breaker is open: %s", breaker);
		}
	}
	b = json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:I, s:I}",
		      "schema", "xloop.next/2", "study", ctx->cfg.study, "metric", ctx->cfg.metric,
		      "generated_at", (json_int_t)time(NULL),
		      "finished", finished, "repaired", repaired, "live", live,
		      "best", has_best ? best_json(best.tag, &bi) : json_null(),
		      "submitted", sub, "skipped", skipped,
		      "plan_queued", (json_int_t)nplan, "next_action", action_json(&action),
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
	json_object_set_new(b, "feed", feed_json(fed, sweep_queued, &who));
	json_object_set_new(b, "history", resume ? history(ctx) : json_null());
	free(breaker);
	json_object_set_new(b, "rules", resume ? json_pack("[s, s, s]",
		"one change per run: `xloop new TAG --from P|best --set VAR=VALUE` "
		"(never edit or sbatch a job.sh by hand)",
		"logs: runs/<study>/<tag>/slurm/attemptN.out; START first, progress "
		"every 30-60 s, FINISHED or FAILED last",
		"a run succeeded only if Slurm says COMPLETED with ExitCode 0:0 and it "
		"wrote a fresh cv.json with a finite \"score\"") : json_array());
	free(action.text);
	free(action.why);
	feeder_release(&who);
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

#define FAILURES_PRINTED 100

/* Print the study so far (resume). */
static void print_history(const json_t *b, const json_t *h)
{
	const json_t *a, *o;
	size_t i, n;

	if (!json_is_object(h))
		return;
	printf("\nthe study so far:\n");
	a = json_object_get(h, "best_lineage");
	if (json_array_size(a)) {
		printf("  best lineage (root first):\n");
		json_array_foreach(a, i, o) {
			const json_t *sc = json_object_get(o, "score");

			printf("    %-24s %-32s", jstr(o, "tag"),
			       json_is_string(json_object_get(o, "change")) ?
			       jstr(o, "change") : "(root)");
			if (json_is_number(sc))
				printf(" %s %g", jstr(b, "metric"), json_number_value(sc));
			putchar('\n');
		}
	} else {
		printf("  best lineage: no proven run yet\n");
	}
	a = json_object_get(h, "failures");
	n = json_array_size(a);
	printf("  failures: %s\n", n ? "" : "none");
	if (n > FAILURES_PRINTED)
		printf("    (%zu older failures: `xloop resume --json` lists them all)\n",
		       n - FAILURES_PRINTED);
	json_array_foreach(a, i, o) {
		if (n > FAILURES_PRINTED && i < n - FAILURES_PRINTED)
			continue;
		printf("    %s attempt %lld", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")));
		if (json_is_string(json_object_get(o, "class")))
			printf(" (%s)", jstr(o, "class"));
		printf(": %s", jstr(o, "reason"));
		if (json_is_string(json_object_get(o, "change")))
			printf("  [%s]", jstr(o, "change"));
		putchar('\n');
	}
	a = json_object_get(h, "decisions");
	if (json_array_size(a)) {
		printf("  latest in ops/decisions.md:\n");
		json_array_foreach(a, i, o) {
			const char *t = jstr(o, "text");

			printf("    ## %s\n", jstr(o, "heading"));
			while (*t) {
				size_t len = strcspn(t, "\n");

				printf("      %.*s\n", (int)len, t);
				t += len;
				if (*t)
					t++;
			}
		}
	}
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
	print_history(b, json_object_get(b, "history"));
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
		if (json_is_string(json_object_get(o, "segment")))
			printf(", %s", jstr(o, "segment"));
		if (json_is_string(json_object_get(o, "reason_meaning")))
			printf(" (%s: %s)", jstr(o, "reason"), jstr(o, "reason_meaning"));
		putchar('\n');
		l = json_object_get(o, "waits_for");
		/* a reason explained above needs no second line */
		if (json_is_object(l) && (json_is_string(json_object_get(l, "job_id")) ||
					  !json_is_string(json_object_get(o, "reason_meaning"))))
			printf("    waits for %s\n", jstr(l, "text"));
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
			       "no replicates yet: `xloop space seed VAR`, then `xloop replicate best`");
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
	o = json_object_get(b, "feed");
	if (json_is_string(json_object_get(o, "why")))
		printf("%s: %s\n", json_array_size(json_object_get(b, "submitted")) ?
		       "stopped feeding" : "fed nothing", jstr(o, "why"));
	l = json_object_get(o, "feeder");
	feed_print_who(jstr(l, "text"), json_integer_value(json_object_get(l, "last_at")));
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
	printf("\nnext: %s\n", jstr(json_object_get(b, "next_action"), "text"));
}
