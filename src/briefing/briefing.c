/* Building the briefing: the study's state since the last one, its history. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/autopilot.h"
#include "search/best.h"
#include "stages/breaker.h"
#include "briefing/briefing.h"
#include "briefing/briefing-impl.h"
#include "lib/fsutil.h"
#include "plan.h"
#include "stages/nodes.h"
#include "runs.h"

#define TAIL_LINES 5

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
	return json_pack("{s:f, s:o, s:I, s:b, s:f, s:o, s:s}", "mean", bi.mean, "interval",
			 bi.checked ? json_real(bi.half) : json_null(), "n", (json_int_t)bi.n,
			 "best", c == bs->best, "estimate", bi.est,
			 "estimate_sd", bi.est_sd > 0 || bi.checked ? json_real(bi.est_sd) : json_null(),
			 "estimate_kind", bi.est_kind);
}

/* The verdicts since event seen, each with its log tail or configuration. */
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
		       /* a run with steps: the log of the step that failed (steps-run.c) */
		       " coalesce((SELECT s.log_path FROM step_job s WHERE s.attempt_id = t.id"
		       "   AND s.phase = 'ended' AND NOT (s.state = 'COMPLETED'"
		       "   AND s.exit_code = '0:0') ORDER BY s.k DESC, s.try DESC LIMIT 1),"
		       " t.log_path), coalesce(t.job_id, ''), coalesce(t.state, ''),"
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

/* The details of the events of kind since event seen. */
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

static json_t *interval_change(struct xl_ctx *ctx, const struct best_state *bs);

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
/* The nodes every submission avoids now, and why (issue 34). */
static json_t *avoided_nodes(struct xl_ctx *ctx)
{
	struct avoided_node *v;
	json_t *a = json_array();
	size_t n, i;

	if (runs_avoided_nodes(&ctx->db, ctx->cfg.study, time(NULL), &v, &n) < 0)
		return a;
	for (i = 0; i < n; i++) {
		char *why = xasprintf("failed %lld of this study's attempts within %d minutes "
				      "(NODE_FAIL, BOOT_FAIL): every submission excludes it "
				      "while %d of its failures are less than %d minutes old",
				      v[i].fails, NODE_AVOID_SECS / 60, NODE_AVOID_FAILS,
				      NODE_AVOID_SECS / 60);

		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:s}", "node", v[i].node,
						   "fails", (json_int_t)v[i].fails,
						   "last_failed_at", (json_int_t)v[i].last,
						   "why", why));
		free(why);
	}
	avoided_nodes_free(v, n);
	return a;
}

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

/*
 * The best as best_json has it, with "check": the next step that checks
 * gains against the noise (null once it is measured). With a seed
 * variable named, that is replicates, not naming one again.
 */
static json_t *best_with_check(struct xl_ctx *ctx, const char *tag,
			       const struct best_info *bi, int autopilot)
{
	json_t *o = best_json(tag, bi);
	const char *seed = ctx->cfg.search.seed;
	char *t;

	if (bi->checked)
		t = NULL;
	else if (!*seed)
		t = xstrdup("no replicates yet: `xloop space seed VAR`, then `xloop replicate best`");
	else if (autopilot)
		t = xasprintf("the seed variable is %s: autopilot runs the replicates that "
			      "measure the noise (the baseline twice first)", seed);
	else
		t = xasprintf("the seed variable is %s, no replicate has ended yet: `xloop "
			      "replicate best` runs them (the noise is measured once two runs "
			      "of one configuration have ended)", seed);
	json_object_set_new(o, "check", t ? json_string(t) : json_null());
	free(t);
	return o;
}

/* Build the briefing document. */
json_t *briefing_build(struct xl_ctx *ctx, const struct refresh *ref,
		       const struct feed_result *fed, int resume)
{
	long long seen = db_kv_get(&ctx->db, "briefing_seen"), max_id = seen, sweep_queued;
	json_t *b, *finished, *repaired, *live, *sub = json_array(), *skipped = json_array();
	struct plan_entry *plan = NULL;
	struct briefing_action action = { NULL, NULL };
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
	live = briefing_live(ctx);
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
	decision = briefing_next_action(ctx, finished, live, nplan, sweep_queued, &who,
					nruns > 0, has_best, ap.on && !ap.stopped, &action);
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
		      "schema", "xloop.next/3", "study", ctx->cfg.study, "metric", ctx->cfg.metric,
		      "generated_at", (json_int_t)time(NULL),
		      "finished", finished, "repaired", repaired, "live", live,
		      "best", has_best ? best_with_check(ctx, best.tag, &bi, ap.on && !ap.stopped) : json_null(),
		      "submitted", sub, "skipped", skipped,
		      "plan_queued", (json_int_t)nplan,
		      "next_action", briefing_action_json(&action),
		      "slurm_calls", (json_int_t)(ref ? ref->calls : 0),
		      "seen_upto", (json_int_t)max_id);
	json_object_set_new(b, "breaker", breaker ? json_string(breaker) : json_null());
	json_object_set_new(b, "avoided_nodes", avoided_nodes(ctx));
	{
		/* beside the proven best: what xloop thinks, and what it does about it */
		struct best_state bs;

		if (best_load(ctx, &bs) == 0) {
			json_t *o = best_outlook(&bs, &ctx->cfg.search.space, ctx->cfg.search.seed);

			if (json_is_object(o))
				json_object_set_new(o, "interval_change", interval_change(ctx, &bs));
			json_object_set_new(b, "outlook", o);
			best_release(&bs);
		} else {
			json_object_set_new(b, "outlook", json_null());
		}
	}
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

/* The kv keys of what the best's interval was made of at the last briefing. */
static void basis_keys(struct xl_ctx *ctx, char (*k)[128])
{
	xsnprintf(k[0], sizeof(k[0]), "briefing_interval_best:%s", ctx->cfg.study);
	xsnprintf(k[1], sizeof(k[1]), "briefing_interval_n:%s", ctx->cfg.study);
	xsnprintf(k[2], sizeof(k[2]), "briefing_interval_df:%s", ctx->cfg.study);
}

/*
 * What moved the best's interval since the last briefing: its own runs, the
 * noise estimate, both, the best itself, or nothing; null the first time.
 */
static json_t *interval_change(struct xl_ctx *ctx, const struct best_state *bs)
{
	char k[3][128];
	long long pb, pn, pdf, n, df;

	if (bs->best < 0)
		return json_null();
	basis_keys(ctx, k);
	pb = db_kv_get(&ctx->db, k[0]);
	pn = db_kv_get(&ctx->db, k[1]);
	pdf = db_kv_get(&ctx->db, k[2]);
	n = bs->v[bs->best].st.n;
	df = bs->noise.df;
	if (pb == 0)
		return json_null();
	if (pb != bs->v[bs->best].first_id)
		return json_string("the best is another configuration since the last briefing");
	if (pn != n && pdf != df)
		return json_sprintf("its own runs (n %lld -> %lld) and the noise estimate "
				    "(df %lld -> %lld)", pn, n, pdf, df);
	if (pn != n)
		return json_sprintf("its own runs (n %lld -> %lld)", pn, n);
	if (pdf != df)
		return json_sprintf("the noise estimate (noise re-measured: df %lld -> %lld, sd "
				    "now %.3g; no new run of it)", pdf, df, bs->noise.sd);
	return json_string("nothing: the same runs and the same noise estimate");
}

/* Remember that the agent saw everything up to this briefing. */
int briefing_mark_seen(struct xl_ctx *ctx, json_t *b)
{
	struct best_state bs;
	char k[3][128];

	if (best_load(ctx, &bs) == 0) {
		/* what the best's interval is made of now, for the next briefing */
		basis_keys(ctx, k);
		if (bs.best >= 0 && (db_kv_set(&ctx->db, k[0], bs.v[bs.best].first_id) < 0 ||
				     db_kv_set(&ctx->db, k[1], bs.v[bs.best].st.n) < 0 ||
				     db_kv_set(&ctx->db, k[2], bs.noise.df) < 0))
			warning("unable to remember the best's interval for the next briefing");
		best_release(&bs);
	}
	return db_kv_set(&ctx->db, "briefing_seen",
			 json_integer_value(json_object_get(b, "seen_upto")));
}
