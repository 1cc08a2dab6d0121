/*
 * xloop status [T]: every run of the study with its latest attempt, or one
 * run in detail. Live states come from one squeue call for all jobs.
 * status only reads: a job that has left the queue is shown as "ended"
 * (not judged yet) until judge, next or tick judges it; it takes no lock,
 * so it answers while a tick holds one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <jansson.h>

#include "search/best.h"
#include "cmd/cmd.h"
#include "stages/feed.h"
#include "lib/fsutil.h"
#include "loop.h"
#include "jobs/segments.h"
#include "lib/sha256.h"
#include "jobs/steps.h"
#include "jobs/steps-run.h"
#include "jobs/progress.h"
#include "jobs/watch.h"
#include "search/autopilot.h"
#include "study.h"

#define CHANGE_WIDTH 80	/* a longer change is cut with "..." */

static const struct opt status_opts[] = {
	{ "sort", OPT_STRING, "KEY", "the table's order: \"score\" (best first, by each run's "
	  "latest score; unscored runs last, in creation order) or \"created\" (the default)" },
	OPT_END,
};

/* A row of the table, kept to be sorted (--sort score). */
struct row {
	char *text;
	int scored;
	double key;		/* the score, negated for goal max: smaller first */
	size_t i;		/* creation order */
};

/* Best first, then unscored runs in creation order. */
static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->scored != b->scored)
		return a->scored ? -1 : 1;
	if (a->scored && a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/*
 * One word for an attempt's state: its verdict, a live Slurm state, or
 * "ended" when it has left the queue and is not judged yet. Without a
 * squeue answer (!sq_ok) an unjudged attempt is "unknown".
 */
static const char *state_word(const struct attempt *a, const struct slurm_job *j, int sq_ok)
{
	if (*a->verdict)
		return a->verdict;
	if (strcmp(a->phase, "submit_failed") == 0)
		return "submit-failed";
	if (strcmp(a->phase, "submitting") == 0)
		return "submitting";
	if (!sq_ok)
		return "unknown";
	if (j && !slurm_state_is_final(j->state))
		return slurm_state_name(j->state);
	return "ended";		/* gone from squeue (or final there), not judged yet */
}

/* ":" or sep, then v (0 to 99) as two digits at o; the end. */
static char *two_digits(char *o, char sep, long long v)
{
	*o++ = sep;
	*o++ = (char)('0' + v / 10);
	*o++ = (char)('0' + v % 10);
	return o;
}

/*
 * Seconds as Slurm prints them: "0:21", "1:02:03", "2-01:02:03". By hand,
 * not printf: status --json writes one for each of 50,000 attempts.
 */
static void fmt_elapsed(long long t, char *out, size_t size)
{
	char tmp[32], *e = tmp + 12, *p = e, *o;
	long long lead = t >= 86400 ? t / 86400 : t >= 3600 ? t / 3600 : t / 60;
	size_t n;

	if (t < 0 || lead > 99999999) {	/* not a duration Slurm would print */
		if (t >= 86400)
			xsnprintf(out, size, "%lld-%02lld:%02lld:%02lld", t / 86400,
				  t / 3600 % 24, t / 60 % 60, t % 60);
		else
			xsnprintf(out, size, "%lld:%02lld", t / 60, t % 60);
		return;
	}
	do			/* the leading number, unpadded, ends at e */
		*--p = (char)('0' + lead % 10);
	while ((lead /= 10));
	o = e;
	if (t >= 86400)
		o = two_digits(o, '-', t / 3600 % 24);
	if (t >= 3600)
		o = two_digits(o, ':', t / 60 % 60);
	o = two_digits(o, ':', t % 60);
	n = (size_t)(o - p);
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/*
 * How long the attempt ran: squeue's while live, its recorded start and
 * end after. One that ended and is not judged yet has no end recorded: its
 * log's last write stands for it ("~0:42").
 */
static const char *elapsed(const struct attempt *a, const struct slurm_job *j,
			   char *out, size_t size)
{
	struct stat st;

	if (j && *j->run_time && !*a->verdict)
		return j->run_time;
	if (a->started_at > 0 && a->ended_at >= a->started_at) {
		fmt_elapsed(a->ended_at - a->started_at, out, size);
		return out;
	}
	if (!*a->verdict && a->started_at > 0 && *a->log_path &&
	    stat(a->log_path, &st) == 0 && st.st_mtime >= a->started_at) {
		out[0] = '~';
		fmt_elapsed((long long)st.st_mtime - a->started_at, out + 1, size - 1);
		return out;
	}
	return NULL;
}

/* Slurm's pending reason, or NULL for "None" and nothing. */
static const char *reason_of(const struct attempt *a, const struct slurm_job *j)
{
	const char *r = j ? j->reason : a->slurm_reason;

	return r && *r && strcmp(r, "None") != 0 ? r : NULL;
}

/* Warn when job.sh changed after a still-pending submission. */
static int changed_since_submit(struct xl_ctx *ctx, const struct run *r,
				const struct attempt *a)
{
	char *job = run_job_path(ctx->root, ctx->cfg.study, r->tag), sha[65];
	struct buf text = BUF_INIT;
	char *cause = NULL;
	int err, changed = 0;

	if (study_read_script(job, &text, &err, &cause) == 0) {
		sha256_hex(text.s, text.len, sha);
		changed = *a->job_sha256 && strcmp(sha, a->job_sha256) != 0;
	}
	free(cause);
	free(job);
	buf_release(&text);
	return changed;
}

/* Whether id is in the sorted ids. */
static int has_id(const long long *ids, size_t n, long long id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return 1;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* One attempt of status --json (schemas/status.json). */
static void attempt_json(struct xl_ctx *ctx, struct jsonw *w, const struct attempt *a,
			 const struct slurm_jobs *q, int sq_ok, const long long *infra,
			 size_t ninfra)
{
	const struct slurm_job *j = slurm_jobs_find(q, a->job_id);
	char el[32], *stp;

	jsonw_open(w, NULL, '{');
	jsonw_int(w, "n", a->n);
	jsonw_str(w, "phase", a->phase);
	jsonw_str(w, "state", state_word(a, j, sq_ok));
	jsonw_str_or_null(w, "last_seen", a->state);
	jsonw_str(w, "job_id", a->job_id);
	jsonw_str(w, "log", a->log_path);
	jsonw_str_or_null(w, "reason", reason_of(a, j));
	jsonw_str_or_null(w, "elapsed", elapsed(a, j, el, sizeof(el)));
	if (a->started_at)
		jsonw_int(w, "started_at", a->started_at);
	else
		jsonw_null(w, "started_at");
	if (a->ended_at)
		jsonw_int(w, "ended_at", a->ended_at);
	else
		jsonw_null(w, "ended_at");
	jsonw_str(w, "verdict", a->verdict);
	jsonw_str(w, "verdict_reason", a->verdict_reason);
	if (a->has_score)
		jsonw_real(w, "score", a->score);
	else
		jsonw_null(w, "score");
	jsonw_str(w, "resources", a->overrides);
	if (a->submitted_at)
		jsonw_int(w, "submitted_at", a->submitted_at);
	else
		jsonw_null(w, "submitted_at");
	jsonw_str_or_null(w, "class", a->failure_class);
	jsonw_str_or_null(w, "auto_retry", a->auto_retry);
	jsonw_int(w, "lane", a->lane);
	jsonw_str_or_null(w, "node", *a->node ? a->node : NULL);
	jsonw_int(w, "restarts", a->restarts);
	stp = has_id(infra, ninfra, a->id) ? segments_infra_note(ctx, a->id) : NULL;
	jsonw_str_or_null(w, "segments_redone", stp);
	free(stp);
	stp = *a->verdict ? NULL : steps_live_text(ctx, a->id, sq_ok ? q : NULL);
	jsonw_str_or_null(w, "step", stp);
	free(stp);
	jsonw_close(w, '}');
}

/* s into out (size bytes), cut if it must be: a bounded copy without printf. */
static void copy_word(char *out, size_t size, const char *s)
{
	size_t n = strlen(s);

	if (n >= size)
		n = size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/*
 * One run of status --json, written straight out (schemas/status.json).
 * Its attempts come from the walk one row at a time, uncopied, into side
 * (the run's state, the last attempt's, comes before them); infra: the
 * attempts with segments an infra failure ended (sorted). 0 or -1.
 */
static int run_json(struct xl_ctx *ctx, struct jsonw *w, struct buf *side, const struct run *r,
		    struct attempt_walk *walk, const struct slurm_jobs *q, int sq_ok, int best,
		    const long long *infra, size_t ninfra)
{
	struct jsonw aw;
	struct attempt a;
	const struct slurm_job *j;
	char state[64] = "new";
	size_t n = 0;
	int rc;

	buf_reset(side);
	jsonw_init(&aw, side, w->depth + 2);	/* the items of the run's "attempts" */
	while ((rc = attempt_walk_next(walk, r->id, &a)) == 1) {
		attempt_json(ctx, &aw, &a, q, sq_ok, infra, ninfra);
		j = slurm_jobs_find(q, a.job_id);
		copy_word(state, sizeof(state), state_word(&a, j, sq_ok));
		n++;
	}
	if (rc < 0)
		return -1;
	jsonw_open(w, NULL, '{');
	jsonw_str(w, "tag", r->tag);
	if (r->parent_id) {
		jsonw_str(w, "parent", r->parent_tag);
		jsonw_open(w, "change", '{');
		jsonw_str(w, "var", r->var);
		jsonw_str(w, "old", r->old_value);
		jsonw_str(w, "new", r->new_value);
		jsonw_close(w, '}');
	} else {
		jsonw_null(w, "parent");
		jsonw_null(w, "change");
	}
	jsonw_str(w, "state", state);
	jsonw_bool(w, "best", best);
	jsonw_open(w, "attempts", '[');
	jsonw_items(w, side->s, side->len, n);
	jsonw_close(w, ']');
	jsonw_close(w, '}');
	return 0;
}

/* Every run of the study into status --json, from one walk of the runs. 0 or -1. */
static int stream_runs(struct xl_ctx *ctx, struct json_stream *js, struct buf *side,
		       struct attempt_walk *walk, const struct slurm_jobs *q, int sq_ok,
		       long long best_id, const long long *infra, size_t ninfra)
{
	struct stmt rq;
	struct run r;
	int rc;

	if (runs_walk_open(&ctx->db, ctx->cfg.study, &rq) < 0)
		return -1;
	while ((rc = runs_walk_next(&rq, &r)) == 1) {
		if (run_json(ctx, &js->w, side, &r, walk, q, sq_ok, best_id == r.id, infra,
			     ninfra) < 0) {
			rc = -1;
			break;
		}
		if (js->out.len >= 1 << 16)
			cmd_json_flush(js);
	}
	db_finalize(&rq);
	return rc;
}

/* One run and all its attempts. */
static void print_detail(struct xl_ctx *ctx, const struct run *r, const struct attempt *v,
			 size_t n, const struct slurm_jobs *q, int sq_ok)
{
	size_t i;

	printf("run %s (study %s)\n", r->tag, r->study);
	if (r->parent_id)
		printf("  parent   %s\n  change   %s: %s -> %s\n", r->parent_tag, r->var,
		       r->old_value, r->new_value);
	else
		printf("  root run (adopted)\n");
	if (*r->note)
		printf("  note     %s\n", r->note);
	if (*r->commit_id)
		printf("  commit   %.12s\n", r->commit_id);
	printf("  job.sh   runs/%s/%s/job.sh\n", r->study, r->tag);
	if (n == 0)
		printf("  not submitted yet: xloop submit %s\n", r->tag);
	for (i = 0; i < n; i++) {
		const struct attempt *a = &v[i];
		const struct slurm_job *j = slurm_jobs_find(q, a->job_id);
		const char *st = state_word(a, j, sq_ok), *why = reason_of(a, j), *el;
		char buf[32], *stp = *a->verdict ? NULL :
			steps_live_text(ctx, a->id, sq_ok ? q : NULL);

		printf("  attempt %lld: ", a->n);
		if (strcmp(st, "ended") == 0 && stp)
			printf("step 1 '%s' ended", STEP_FIRST);	/* a later step goes on */
		else if (strcmp(st, "ended") == 0)
			printf("ended, not judged yet");
		else if (strcmp(st, "unknown") == 0)
			printf("unknown (Slurm could not be asked; last seen %s)",
			       *a->state ? a->state : "submitted");
		else
			printf("%s", st);
		if (*a->job_id)
			printf(", job %s", a->job_id);
		if (*a->node)
			printf(", node %s", a->node);
		if (a->restarts)
			printf(", restarted %lld time%s by Slurm", a->restarts,
			       a->restarts == 1 ? "" : "s");
		if (why && j)
			printf(" (%s)", why);
		el = elapsed(a, j, buf, sizeof(buf));
		if (el)
			printf(", elapsed %s", el);
		if (a->has_score)
			printf(", score %g", a->score);
		putchar('\n');
		if (strcmp(st, "ended") == 0 && !stp)
			printf("    `xloop judge %s` judges it (`xloop next` judges and feeds)\n",
			       r->tag);
		if (!*a->verdict) {
			char *seg = segments_progress(ctx, a->id);

			if (seg)
				printf("    %s\n", seg);
			free(seg);
			if (stp)
				printf("    %s\n", stp);
		}
		free(stp);
		stp = segments_infra_note(ctx, a->id);
		if (stp)
			printf("    %s\n", stp);
		free(stp);
		if (*a->verdict_reason)
			printf("    %s\n", a->verdict_reason);
		if (*a->submit_error)
			printf("    sbatch: %s\n", a->submit_error);
		if (*a->overrides)
			printf("    resources changed: %s\n", a->overrides);
		if (*a->log_path)
			printf("    log %s\n", a->log_path);
		if (j && j->state == SLURM_STATE_PENDING && changed_since_submit(ctx, r, a))
			printf("    warning: job.sh changed after this submission; Slurm will "
			       "run the copy it saved when the job was submitted\n");
	}
}

/* "VAR old->new" (cut at CHANGE_WIDTH) or "(root)". */
static void change_text(const struct run *r, char *out, size_t size)
{
	int w;

	if (!r->parent_id) {
		xsnprintf(out, size, "(root)");
		return;
	}
	w = snprintf(out, size, "%s %s->%s", r->var, r->old_value, r->new_value);
	if (w < 0 || (size_t)w >= size)
		xsnprintf(out + size - 4, 4, "...");
}

/* Column widths that fit every tag, parent and change of the table. */
struct widths {
	int tag, parent, change;
};

static void fit_columns(const struct run *runs, size_t n, struct widths *w)
{
	char change[CHANGE_WIDTH + 1];
	size_t i;

	w->tag = 3;
	w->parent = 6;
	w->change = 6;
	for (i = 0; i < n; i++) {
		int t = (int)strlen(runs[i].tag), p = (int)strlen(runs[i].parent_tag), c;

		change_text(&runs[i], change, sizeof(change));
		c = (int)strlen(change);
		w->tag = t > w->tag ? t : w->tag;
		w->parent = p > w->parent ? p : w->parent;
		w->change = c > w->change ? c : w->change;
	}
}

/* The lines under the table: what is not judged yet, who feeds. */
static void print_footer(struct xl_ctx *ctx, size_t ended, size_t unknown)
{
	struct feeder who;

	if (unknown)
		printf("unknown: Slurm could not be asked, so xloop cannot tell whether "
		       "these jobs still run (`xloop status T` shows the last state seen)\n");
	if (ended)
		printf("%zu run%s ended, not judged yet: `xloop judge` judges %s (`xloop next` "
		       "judges and feeds the queue)\n", ended, ended == 1 ? "" : "s",
		       ended == 1 ? "it" : "them");
	feed_who(ctx, &who);
	feed_print_who(who.text, who.last_at);
	feeder_release(&who);
}

/* The feeder as part of status --json. */
static json_t *feeder_json(struct xl_ctx *ctx)
{
	struct feeder who;
	json_t *o;

	feed_who(ctx, &who);
	o = json_pack("{s:s, s:o, s:s}", "kind", who.kind, "last_at",
		      who.last_at ? json_integer(who.last_at) : json_null(), "text", who.text);
	feeder_release(&who);
	return o;
}

/*
 * The runs whose latest attempt was stopped early (issue 45), and about the
 * GPU-hours their stops saved (each at the pace of the epochs it ran, read
 * from its stop record and the epochs its job planned).
 */
static size_t stopped_early(struct xl_ctx *ctx, double *hours)
{
	struct stmt q;
	size_t n = 0;

	*hours = 0;
	/* from the few stopped attempts (index attempt_stopped), not every run's */
	if (db_prepare(&ctx->db, &q, "SELECT r.tag, t.n, t.started_at, t.ended_at, t.gres,"
		       " t.node FROM attempt t CROSS JOIN run r ON r.id = t.run_id"
		       " WHERE t.verdict = 'stopped' AND r.study = :study"
		       " AND t.n = (SELECT max(n) FROM attempt WHERE run_id = t.run_id)") < 0)
		return 0;
	db_bind_text(&q, ":study", ctx->cfg.study);
	while (db_step(&q) == SQLITE_ROW) {
		char *dir = run_dir(ctx->root, ctx->cfg.study, db_col_text(&q, 0)), *why = NULL;
		long long epoch, planned;

		if (watch_read_record(dir, db_col_int64(&q, 1), &epoch, &planned, &why) == 1)
			*hours += autopilot_gpu_hours((long long)progress_saved_secs(epoch, planned,
				db_col_int64(&q, 3) - db_col_int64(&q, 2)), db_col_text(&q, 4),
				db_col_text(&q, 5));
		free(why);
		free(dir);
		n++;
	}
	db_finalize(&q);
	return n;
}

/* Show the study, or one run. */
static int cmd_status(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt_walk walk;
	struct json_stream js;
	struct run *runs = NULL, best;
	struct widths wd = { 3, 6, 6 };
	struct slurm s;
	char **pos = args->pos, *cause = NULL;
	size_t nruns = 0, i, ended = 0, unknown = 0;
	struct best_info bi;
	char shown[128];
	int npos = args->npos, rc, sq, have_best, by_score = 0;
	const char *sort = args_get(args, "sort");
	struct row *rows = NULL;
	long long *infra = NULL;
	size_t ninfra = 0;
	struct buf side = BUF_INIT;
	json_t *outlook;
	size_t nstopped;
	double saved;

	if (sort && strcmp(sort, "score") != 0 && strcmp(sort, "created") != 0)
		return cmd_usage_error(self, "--sort takes \"score\" or \"created\", not '%s'",
				       sort), XL_USAGE;
	if (sort && npos == 1)
		return cmd_usage_error(self, "--sort orders the table of every run, not "
				       "one run"), XL_USAGE;
	if (npos == 1) {
		runs = xcalloc(1, sizeof(*runs));
		rc = loop_find_run(ctx, pos[0], runs, &cause);
		if (rc) {
			error("%s", cause);
			free(cause);
			free(runs);
			return rc;
		}
		nruns = 1;
	} else if (!ctx->json && runs_list(&ctx->db, ctx->cfg.study, &runs, &nruns) < 0) {
		return XL_ERR;
	}	/* --json of the study: the runs are walked below, uncopied */

	/* one squeue call for every live job; without Slurm, say so and go on */
	slurm_init(&s);
	sq = slurm_squeue_mine(&s, &q, &cause);
	if (sq) {
		warning("live states unknown: %s", cause);
		FREE_AND_NULL(cause);
	}
	rc = XL_OK;
	{
		/* one load of the runs' configurations for the best and the choice */
		struct best_state bs;

		have_best = 0;
		outlook = NULL;
		if (best_load(ctx, &bs) == 0) {
			if (bs.best >= 0) {
				memset(&best, 0, sizeof(best));
				best.id = bs.v[bs.best].rep_id;
				best.tag = xstrdup(bs.v[bs.best].rep_tag);
				best_info_of(&bs, bs.best, &bi);
				have_best = 1;
			}
			outlook = best_outlook(&bs, &ctx->cfg.search.space, ctx->cfg.search.seed);
		}
		if (outlook == NULL || json_is_null(outlook))
			outlook = json_null();
		best_release(&bs);
	}
	/* the table only: --json readers sort themselves */
	by_score = sort && strcmp(sort, "score") == 0 && !ctx->json && npos == 0;
	if (by_score)
		rows = xcalloc(nruns ? nruns : 1, sizeof(*rows));

	if (ctx->json && segments_infra_attempts(ctx, &infra, &ninfra) < 0) {
		rc = XL_ERR;
	} else if ((ctx->json && npos == 0 ?
		    attempt_walk_open_shown(&ctx->db, ctx->cfg.study, &walk) :
		    attempt_walk_open(&ctx->db, ctx->cfg.study, npos ? runs[0].id : 0,
				      &walk)) < 0) {
		rc = XL_ERR;
	} else if (ctx->json) {
		/* streamed: a study of 10,000 runs is tens of MB of JSON */
		json_t *head = json_pack("{s:s, s:s, s:s, s:o, s:b, s:o}",
					 "schema", "xloop.status/3",
					 "study", ctx->cfg.study,
					 "metric", ctx->cfg.metric,
					 "best", have_best ? json_string(best.tag) : json_null(),
					 "slurm_reachable", sq == 0,
					 "feeder", feeder_json(ctx));

		json_object_set_new(head, "best_score", have_best ?
				    best_json(best.tag, &bi) : json_null());
		nstopped = stopped_early(ctx, &saved);
		json_object_set_new(head, "stopped_early", json_pack("{s:I, s:f}", "runs",
				    (json_int_t)nstopped, "gpu_hours_saved", saved));
		json_object_set(head, "outlook", outlook);
		cmd_json_begin(&js, head, "runs");
	} else if (npos == 0) {
		fit_columns(runs, nruns, &wd);
		printf("study %s: %zu run%s", ctx->cfg.study, nruns, nruns == 1 ? "" : "s");
		nstopped = stopped_early(ctx, &saved);
		if (nstopped && saved > 0)
			printf(", %zu stopped early (about %.2g GPU-hours saved)", nstopped, saved);
		else if (nstopped)
			printf(", %zu stopped early", nstopped);
		if (have_best) {
			best_format(&bi, shown, sizeof(shown));
			printf(", best %s: %s %s", best.tag, ctx->cfg.metric, shown);
		}
		if (json_is_object(outlook))
			printf("\nchoice: %s",
			       json_string_value(json_object_get(outlook, "text")));
		if (have_best)
			printf("\n%s", BEST_PM);
		printf("\n  %-*s %-*s %-*s %-13s %3s %-10s %-10s %s\n", wd.tag, "TAG",
		       wd.parent, "PARENT", wd.change, "CHANGE", "STATE", "ATT", "JOB",
		       "ELAPSED", "SCORE");
	}
	if (ctx->json && npos == 0 && rc == XL_OK && stream_runs(ctx, &js, &side, &walk, &q,
								 sq == 0, have_best ? best.id : 0,
								 infra, ninfra) < 0)
		rc = XL_ERR;	/* a broken document and exit 70 */
	for (i = 0; rc == XL_OK && i < nruns; i++) {
		struct run *r = &runs[i];
		struct attempt *v = NULL, *a;
		const struct slurm_job *j;
		const char *st, *el;
		size_t n = 0;
		char change[CHANGE_WIDTH + 1], score[32], buf[32], *stp = NULL;

		if (ctx->json) {
			if (run_json(ctx, &js.w, &side, r, &walk, &q, sq == 0,
				     have_best && best.id == r->id, infra, ninfra) < 0) {
				rc = XL_ERR;	/* a broken document and exit 70 */
				break;
			}
			if (js.out.len >= 1 << 16)
				cmd_json_flush(&js);
			continue;
		}
		if (attempt_walk_run(&walk, r->id, &v, &n) < 0) {
			rc = XL_ERR;
			break;
		}
		a = n ? &v[n - 1] : NULL;
		j = a ? slurm_jobs_find(&q, a->job_id) : NULL;
		st = a ? state_word(a, j, sq == 0) : "new";
		/* job.sh's job ended and a later step goes on: "eval:RUNNING" */
		if (a && strcmp(st, "ended") == 0 && npos == 0 &&
		    (stp = steps_live_word(ctx, a->id, &q)) != NULL)
			st = stp;
		ended += strcmp(st, "ended") == 0;
		unknown += strcmp(st, "unknown") == 0;
		if (npos == 1) {
			print_detail(ctx, r, v, n, &q, sq == 0);
		} else {
			struct buf line = BUF_INIT;

			change_text(r, change, sizeof(change));
			if (a && a->has_score)
				xsnprintf(score, sizeof(score), "%g", a->score);
			else
				xsnprintf(score, sizeof(score), "-");
			el = a ? elapsed(a, j, buf, sizeof(buf)) : NULL;
			/* ended, no verdict yet: it waits for judge, next or tick */
			buf_addf(&line, "%-2s%-*s %-*s %-*s %-13s %3lld %-10s %-10s %s\n",
				 have_best && best.id == r->id ? "*" : "", wd.tag, r->tag,
				 wd.parent, r->parent_id ? r->parent_tag : "-", wd.change, change,
				 strcmp(st, "ended") == 0 ? "judging" : st, a ? a->n : 0LL,
				 a && *a->job_id ? a->job_id : "-", el ? el : "-", score);
			if (a && j && j->state == SLURM_STATE_PENDING &&
			    changed_since_submit(ctx, r, a))
				buf_addf(&line, "  warning: %s's job.sh changed after submission; "
					 "Slurm will run the copy it saved then\n", r->tag);
			if (by_score) {
				rows[i].text = buf_detach(&line, NULL);
				rows[i].scored = a && a->has_score;
				rows[i].key = a && a->has_score ?
					(ctx->cfg.goal_max ? -a->score : a->score) : 0;
				rows[i].i = i;
			} else {
				fputs(line.s, stdout);
				buf_release(&line);
			}
		}
		attempts_free(v, n);
		free(stp);
	}
	if (by_score && rc == XL_OK) {
		qsort(rows, nruns, sizeof(*rows), cmp_row);
		for (i = 0; i < nruns; i++)
			fputs(rows[i].text, stdout);
	}
	for (i = 0; by_score && i < nruns; i++)
		free(rows[i].text);
	free(rows);
	if (ctx->json && rc != XL_ERR)
		cmd_json_end(&js);
	else if (!ctx->json && npos == 0 && rc == XL_OK)
		print_footer(ctx, ended, unknown);
	attempt_walk_close(&walk);
	free(infra);
	buf_release(&side);
	if (have_best)
		free(best.tag);
	json_decref(outlook);
	runs_free(runs, nruns);
	slurm_jobs_release(&q);
	return rc == XL_ERR ? XL_ERR : XL_OK;
}

const struct cmd_entry cmd_status_entry = {
	.name = "status", .opts = status_opts, .args = "[T]", .min = 0, .max = 1,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_NONE,
	.summary = "show every run of the study, or one run in detail",
	.help = "One row per run: tag, parent, change (VAR old->new), state, attempt, job\n"
	"id, elapsed time (live from squeue, then from the recorded start and end),\n"
	"score; '*' marks the run that stands for the best configuration (help best).\n"
	"The first line counts the runs stopped early (state 'stopped': xloop help\n"
	"adopt, progress) and about the GPU-hours their stops saved, the epochs\n"
	"their jobs planned and did not run at the pace of those they ran\n"
	"(--json: stopped_early).\n"
	"Beside it, \"choice:\" the best (the model's pick, help best), confirmed or\n"
	"not; the best's score is the estimate the choice uses, the raw mean and n\n"
	"beside it, and a legend line says what ± is (one posterior sd; help\n"
	"glossary). With T, the run's lineage and all its attempts. Live states come from a single squeue call. status only reads:\n"
	"a job that has left the queue shows as 'judging' (ended, waiting for its\n"
	"verdict; --json: state \"ended\") until `xloop judge`, `next` or `tick`\n"
	"judges it, its elapsed time then from its start to its log's last write\n"
	"(\"~0:42\"); without Slurm, unjudged attempts are 'unknown'. A run whose\n"
	"job.sh ended while a later step goes on shows that step, 'eval:RUNNING'\n"
	"(--json: the attempt's \"step\"). --sort score\n"
	"lists the best scores first (goal max: highest). The last line says who\n"
	"feeds the queue after this session.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_status,
};
