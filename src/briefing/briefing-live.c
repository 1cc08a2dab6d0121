/* The briefing's live jobs: log tails, pending reasons, what each waits for. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "briefing/briefing.h"
#include "briefing/briefing-impl.h"
#include "lib/fsutil.h"
#include "slurm/reasons.h"
#include "runs.h"
#include "jobs/segments.h"
#include "jobs/steps-run.h"

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

/* The action text filled in, as a JSON string. */
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
	size_t own = strcspn(a->job_id, "_");
	int chained = *a->after_job && (!reason || strcmp(reason, "Dependency") == 0);
	int self = chained && strcspn(a->after_job, "_") == own &&
		strncmp(a->after_job, a->job_id, own) == 0;
	json_t *o;

	if (strcmp(a->state, "PENDING") != 0)
		return json_null();
	if (self) {
		/* a job never waits for itself: the DB's record is wrong, Slurm knows */
		chained = 0;
		text = xasprintf("the job it is chained behind (the state DB names job %s, "
				 "its own): `xloop why` asks Slurm", a->after_job);
	} else if (chained) {
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

/* The study's unfinished attempts, what each waits for, stale or not. */
json_t *briefing_live(struct xl_ctx *ctx)
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
		note = steps_live_text(ctx, v[i].id, NULL);
		json_object_set_new(o, "step", note ? json_string(note) : json_null());
		free(note);
		free(found);
		json_array_append_new(a, o);
	}
	attempts_free(v, n);
	return a;
}
