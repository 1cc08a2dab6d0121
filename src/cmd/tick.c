/*
 * xloop tick: the cron entry. Takes the study's lock without waiting (held:
 * exit 75 quietly), reconciles and judges, keeps the queue fed, queues
 * notifications for what changed, prints only real news, and appends one
 * line to .xloop/tick.log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/best.h"
#include "briefing/briefing.h"
#include "cmd/cmd.h"
#include "lib/fsutil.h"
#include "loop.h"
#include "notify.h"
#include "slurm/reasons.h"
#include "stages/feed.h"
#include "driver/driver.h"

static const struct opt tick_opts[] = {
	{ "feeder", OPT_FLAG, NULL, "what a feeder job runs (see above)" },
	{ "feeder-job", OPT_STRING, "ID", "a forwarded feeder's job id (default: $SLURM_JOB_ID)" },
	{ "feeder-token", OPT_STRING, "T",
	  "a forwarded feeder's token (default: $XLOOP_FEEDER_TOKEN)" },
	OPT_END,
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether tag stands for the study's best now; its score into shown when it does. */
static int is_best(struct xl_ctx *ctx, const char *tag, char *shown, size_t size)
{
	struct best_info bi;
	struct run r;
	int yes = 0;

	if (best_get(ctx, &r, &bi) == 0) {
		yes = strcmp(r.tag, tag) == 0;
		if (yes)
			best_format(&bi, shown, size);
		run_release(&r);
	}
	return yes;
}

/* Turn new events into news lines and queued notifications. */
static void collect_news(struct xl_ctx *ctx, struct buf *news, int *changes)
{
	long long seen = db_kv_get(&ctx->db, "tick_seen"), max = seen, nstopped = 0;
	struct buf stopped = BUF_INIT;	/* runs stopped early: one notification for them all */
	struct stmt q;

	if (db_prepare(&ctx->db, &q, "SELECT e.id, e.kind, coalesce(r.tag, ''),"
		       " coalesce(e.detail, ''), coalesce(t.verdict, ''), coalesce(t.n, 0)"
		       " FROM event e LEFT JOIN run r ON r.id = e.run_id"
		       " LEFT JOIN attempt t ON t.id = e.attempt_id"
		       " WHERE e.id > :seen ORDER BY e.id") < 0)
		return;
	db_bind_int64(&q, ":seen", seen);
	while (db_step(&q) == SQLITE_ROW) {
		const char *kind = db_col_text(&q, 1), *tag = db_col_text(&q, 2);
		int verdict = strcmp(kind, "verdict") == 0;
		struct notify_event ev;
		char *text;

		max = db_col_int64(&q, 0);
		if (strcmp(kind, "decision") == 0)
			continue;	/* the user's own words: no news to them */
		if (verdict)
			text = xasprintf("%s attempt %lld: %s: %s", tag, db_col_int64(&q, 5),
					 db_col_text(&q, 4), db_col_text(&q, 3));
		else
			text = xasprintf("%s%s%s", tag, *tag ? ": " : "", db_col_text(&q, 3));
		buf_addf(news, "%s\n", text);
		(*changes)++;
		if (verdict && strcmp(db_col_text(&q, 4), "stopped") == 0) {
			buf_addf(&stopped, "%s%s", nstopped++ ? "; " : "", text);
		} else if (verdict) {
			int ok = strcmp(db_col_text(&q, 4), "success") == 0;
			char shown[128];
			char *full = NULL;

			ev.kind = !ok ? "failure" : is_best(ctx, tag, shown, sizeof(shown)) ?
				  "new_best" : "job_ended";
			/* the best's one score (help glossary), not only this run's */
			if (strcmp(ev.kind, "new_best") == 0)
				full = xasprintf("%s; the best: %s %s", text, ctx->cfg.metric, shown);
			ev.study = ctx->cfg.study;
			ev.tag = tag;
			ev.text = full ? full : text;
			notify_queue(&ctx->db, &ev);
			free(full);
		}
		free(text);
	}
	db_finalize(&q);
	if (nstopped) {
		struct notify_event ev;
		char *text = xasprintf("%lld run%s stopped early: %s", nstopped,
				       nstopped == 1 ? "" : "s", stopped.s);

		memset(&ev, 0, sizeof(ev));
		ev.kind = "stopped";
		ev.study = ctx->cfg.study;
		ev.tag = "";
		ev.text = text;
		notify_queue(&ctx->db, &ev);
		free(text);
	}
	buf_release(&stopped);
	if (max != seen)
		db_kv_set(&ctx->db, "tick_seen", max);
}

/* " Nodes: vm: disk full." from sinfo -R (one call), or ""; malloc'd. */
static char *node_reasons(struct slurm *s)
{
	struct slurm_node_reasons r = SLURM_NODE_REASONS_INIT;
	struct buf b = BUF_INIT;
	char *cause = NULL;
	size_t i;

	if (slurm_sinfo_reasons(s, &r, &cause) == 0 && r.nr) {
		buf_adds(&b, " Nodes:");
		for (i = 0; i < r.nr && i < 8; i++)
			buf_addf(&b, " %s: %s%s", r.v[i].node, r.v[i].reason,
				 i + 1 < r.nr && i < 7 ? ";" : ".");
	}
	slurm_node_reasons_release(&r);
	free(cause);
	return buf_detach(&b, NULL);
}

/*
 * Flag, once per attempt, a RUNNING job whose log went silent and a PENDING
 * job that will not start by itself (PartitionTimeLimit, a hold, ...).
 */
static void collect_alerts(struct xl_ctx *ctx, struct slurm *s, struct buf *news,
			   int *changes)
{
	struct attempt *v = NULL;
	size_t n = 0, i;

	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++) {
		char key[64], *tag = NULL, *note;
		const char *kind;

		xsnprintf(key, sizeof(key), "stale_said_%lld", v[i].id);
		if (db_kv_get(&ctx->db, key))
			continue;
		tag = runs_tag(&ctx->db, v[i].run_id);
		note = tag ? briefing_stale(ctx, &v[i], tag) : NULL;
		kind = "stale";
		if (!note && tag && strcmp(v[i].state, "PENDING") == 0) {
			const struct reason_info *ri = reason_explain(v[i].slurm_reason);

			if (ri->kind == REASON_BLOCKED || ri->kind == REASON_HELD ||
			    ri->kind == REASON_NODE) {
				char *act = briefing_fill_action(ri->action, tag, v[i].job_id);
				char *nodes = ri->kind == REASON_NODE ? node_reasons(s) :
					xstrdup("");

				note = xasprintf("job %s is stuck pending (%s): %s %s%s",
						 v[i].job_id, v[i].slurm_reason, ri->meaning, act,
						 nodes);
				kind = "stuck";
				free(nodes);
				free(act);
			}
		}
		if (note) {
			struct notify_event ev = { kind, ctx->cfg.study, tag, note };

			notify_queue(&ctx->db, &ev);
			buf_addf(news, "%s: %s\n", tag, note);
			db_kv_set(&ctx->db, key, 1);
			(*changes)++;
		}
		free(note);
		free(tag);
	}
	attempts_free(v, n);
}

/* One line per tick in .xloop/tick.log. */
static void tick_log(struct xl_ctx *ctx, const char *what, int calls, long long ms)
{
	char *path = xasprintf("%s/.xloop/tick.log", ctx->root), when[32];
	struct buf line = BUF_INIT;
	time_t now = time(NULL);
	struct tm tm;
	int fd;
	ssize_t w;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	buf_addf(&line, "%s %s; slurm_calls=%d; %lld ms\n", when, what, calls, ms);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		w = write(fd, line.s, line.len);
		(void)w;
		close(fd);
	}
	buf_release(&line);
	free(path);
}

/*
 * A feeder runs inside a Slurm job: the job's own SLURM_* variables must not
 * reach the jobs it submits (SLURM_CONF stays: it says which cluster).
 */
static void feeder_clean_env(void)
{
	extern char **environ;
	char **names = NULL;
	size_t n = 0, i;
	char **e;

	for (e = environ; e && *e; e++)
		if (starts_with(*e, "SLURM_") && !starts_with(*e, "SLURM_CONF=")) {
			names = xreallocarray(names, n + 1, sizeof(*names));
			names[n++] = xstrndup(*e, strcspn(*e, "="));
		}
	for (i = 0; i < n; i++) {
		unsetenv(names[i]);
		free(names[i]);
	}
	free(names);
}

/* Reconcile; a feeder waits out a controller restart (about a minute) first. */
static int reconcile_patiently(struct xl_ctx *ctx, struct slurm *s, struct refresh *ref,
			       int feeder, char **cause)
{
	unsigned delay = 2;
	int rc, waited = 0;

	for (;;) {
		rc = reconcile(ctx, s, ref, cause);
		if (rc != XL_TEMPFAIL || !feeder || waited >= 90)
			return rc;
		refresh_release(ref);
		FREE_AND_NULL(*cause);
		sleep(delay);
		waited += (int)delay;
		delay = delay * 2 > 30 ? 30 : delay * 2;
	}
}

/*
 * driver_ensure; a feeder also waits out a controller restart here (it
 * would leave no successor). *submitted: a feeder was queued, whose
 * survival the feeder checks once its lock is released
 * (driver_check_successor).
 */
static int ensure_feeder(struct xl_ctx *ctx, struct slurm *s, const struct feed_result *fed,
			 const char *self_job, int feeder, int *submitted, char **cause)
{
	unsigned delay = 2;
	int rc, waited = 0;

	for (;;) {
		*submitted = 0;
		rc = driver_ensure(ctx, s, fed, self_job, submitted, cause);
		if (!feeder || rc != XL_TEMPFAIL || waited >= 90)
			return rc;
		FREE_AND_NULL(*cause);
		sleep(delay);
		waited += (int)delay;
		delay = delay * 2 > 30 ? 30 : delay * 2;
	}
}

/*
 * The watchdog's check (driver.h): 1 when a feeder of the study is alive,
 * so that it only queued the next watchdog (and logged it); 0 when it must
 * tick as the feeder would.
 */
static int watchdog_first(struct xl_ctx *ctx, struct slurm *s, const char *self_job)
{
	char *why = NULL, *cause = NULL, *line;
	long long t0 = now_ms();
	int rc = driver_watch_check(ctx, s, self_job, &why, &cause);

	if (rc == 1) {
		driver_keep_feeder(ctx, s, NULL, self_job);
		tick_log(ctx, "watchdog: a feeder waits, nothing to do", s->calls, now_ms() - t0);
		return 1;
	}
	line = rc == 0 ? xasprintf("watchdog: %s: ticking as the feeder", why) :
		xasprintf("watchdog: %s: ticking as the feeder", cause ? cause : "squeue failed");
	fprintf(stderr, "xloop: %s\n", line);
	tick_log(ctx, line, s->calls, now_ms() - t0);
	free(line);
	free(why);
	free(cause);
	return 0;
}

/* The cron entry. */
static int cmd_tick(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	struct feed_request req;
	struct feed_result fed;
	struct refresh ref;
	struct slurm s;
	struct buf news = BUF_INIT, what = BUF_INIT;
	char *cause = NULL, *warn = NULL, *self_job = NULL, *token = NULL;
	const char *feeder_job = args_get(args, "feeder-job");
	const char *feeder_token = args_get(args, "feeder-token");
	int feeder = args_flag(args, "feeder");
	long long t0 = now_ms();
	int rc, changes = 0, live, submitted = 0;
	long long prev;
	size_t i;

	(void)self;
	if (feeder) {
		const char *j = feeder_job ? feeder_job : getenv("SLURM_JOB_ID");
		const char *t = feeder_token ? feeder_token : getenv("XLOOP_FEEDER_TOKEN");

		self_job = j && *j ? xstrdup(j) : NULL;
		token = t && *t ? xstrdup(t) : NULL;
		feeder_clean_env();
		unsetenv("XLOOP_FEEDER_TOKEN");	/* runs it submits must not carry it */
		slurm_init(&s);
		if (driver_is_watch_token(token) && watchdog_first(ctx, &s, self_job)) {
			rc = 0;
			goto out_early;
		}
		driver_feeder_started(ctx, self_job, token);
		buf_adds(&what, driver_is_watch_token(token) ? "watchdog: " : "feeder: ");
	}
	slurm_init(&s);
	memset(&req, 0, sizeof(req));
	memset(&fed, 0, sizeof(fed));
	rc = reconcile_patiently(ctx, &s, &ref, feeder, &cause);
	if (rc) {
		/* one clear line; nothing changed; the next tick catches up */
		fprintf(stderr, "xloop tick: %s; nothing changed, the next tick will "
			"catch up\n", cause ? cause : "Slurm is unreachable");
		buf_addf(&what, "skipped: %s", cause ? cause : "slurm unreachable");
		tick_log(ctx, what.s, s.calls, now_ms() - t0);
		if (feeder)
			driver_feeder_ended(ctx, self_job, token, 0, what.s);
		goto out;
	}
	rc = feed_queue(ctx, &s, &ref, &req, &fed, &cause);
	if (rc)
		buf_addf(&news, "feeding the queue failed: %s\n", cause);
	if (fed.breaker_opened) {
		buf_addf(&news, "feeding stopped: %s; fix the cause, then "
			 "`xloop breaker reset`\n", fed.breaker);
		changes++;
	}
	if (fed.held_back) {
		buf_addf(&news, "held back: %s\n", fed.held_back);
		changes++;
	}
	for (i = 0; i < fed.nr; i++) {
		buf_addf(&news, "submitted %s (%s) as job %s%s%s\n", fed.v[i].tag,
			 fed.v[i].change, fed.v[i].job_id, *fed.v[i].after ? " after job " : "",
			 fed.v[i].after);
		changes++;
	}
	collect_news(ctx, &news, &changes);
	collect_alerts(ctx, &s, &news, &changes);

	/* the queue drains: say so when it happens, not on every tick */
	live = (int)(ref.running + ref.pending);
	prev = db_kv_get(&ctx->db, "last_live");
	if (live != prev) {
		struct notify_event ev = { NULL, ctx->cfg.study, "", NULL };

		if (live == 0 && prev > 0) {
			ev.kind = "queue_empty";
			ev.text = "the queue is empty: the GPU is idle; add changes with "
				  "`xloop plan add VAR=VALUE`";
		} else if (live == 1 && prev > 1 && fed.nr == 0) {
			ev.kind = "one_left";
			ev.text = "one job left in the queue: add changes with "
				  "`xloop plan add VAR=VALUE` to keep the GPU busy";
		}
		if (ev.kind) {
			notify_queue(&ctx->db, &ev);
			buf_addf(&news, "%s\n", ev.text);
			changes++;
		}
		db_kv_set(&ctx->db, "last_live", live);
	}
	notify_flush(&ctx->db, &ctx->cfg, &warn);
	if (warn)
		buf_addf(&what, "notify: %s; ", warn);
	/* the last thing under the lock: the next feeder (driver.mode slurm) */
	{
		char *why = NULL;

		if (ensure_feeder(ctx, &s, &fed, self_job, feeder, &submitted, &why) != 0) {
			buf_addf(&news, "no feeder job could be queued: %s\n", why);
			buf_addf(&what, "feeder: %s; ", why);
			changes++;
		}
		free(why);
	}
	buf_addf(&what, "%d change%s (%zu judged, %zu submitted), %zu running, "
		 "%zu pending", changes, changes == 1 ? "" : "s", ref.judged, fed.nr,
		 ref.running, ref.pending);
	tick_log(ctx, what.s, s.calls, now_ms() - t0);
	if (feeder)
		driver_feeder_ended(ctx, self_job, token, rc == 0, what.s);
	if (news.len)
		fputs(news.s, stdout);
	if (feeder && submitted)
		driver_check_successor(ctx, &s, &fed, self_job);
out:
	feed_result_release(&fed);
	refresh_release(&ref);
out_early:
	free(self_job);
	free(token);
	buf_release(&news);
	buf_release(&what);
	free(cause);
	free(warn);
	return rc;
}

const struct cmd_entry cmd_tick_entry = {
	.name = "tick", .opts = tick_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_UNATTENDED,
	.target = CMD_TARGET_NONE,
	.summary = "the cron entry: reconcile, judge, feed, notify; silent when nothing happened",
	.help = "Takes .xloop/lock without waiting: when another xloop holds it, exits 75\n"
	"quietly. Then does what `next` does without the briefing, queues and sends\n"
	"notifications for what changed, and prints one line per change (nothing\n"
	"when nothing happened, so cron mails only news). Each tick appends a line\n"
	"to .xloop/tick.log. When Slurm is unreachable it exits 75 with one line.\n"
	"`xloop cron-line` prints a ready crontab entry.\n"
	"\n"
	"With driver.mode slurm (what init writes), every tick, next and feeder\n"
	"leaves exactly one small feeder job (name xloop-feed, 1 CPU, no GPU)\n"
	"pending behind the running runs while there is work, and none when\n"
	"there is none: no cron is needed. `xloop driver status` shows it.\n"
	"\n"
	"With --feeder (what a feeder job runs) it waits up to 3 min for the lock\n"
	"(a command that is no tick or next leaves no feeder behind, so this one\n"
	"must tick after it), then exits 75 with one line; it waits out a\n"
	"controller restart; on a network filesystem it forwards itself to\n"
	"driver.host, naming itself with --feeder-job and --feeder-token.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK | CMD_LOCK_NOWAIT, .exec = cmd_tick,
};
