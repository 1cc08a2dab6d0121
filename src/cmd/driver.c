/*
 * xloop driver [status] | driver install: who runs the loop when no agent
 * does (xloop.json driver.mode): the feeder job waiting now, the last one
 * that ran and how it ended, and how a feeder reaches the state DB; install
 * writes the study's scrontab entry (mode scrontab) or prints the crontab
 * line (mode cron).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "driver/driver.h"
#include "lib/fsutil.h"
#include "slurm/reasons.h"
#include "remote.h"
#include "runs.h"

/* "2026-12-01 18:40:12" in local time. */
static void when_text(long long t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(out, 32, "%Y-%m-%d %H:%M:%S", &tm);
}

/* How a feeder of this study reaches the DB, in words (malloc'd). */
static char *route_text(struct xl_ctx *ctx, char **fstype)
{
	*fstype = driver_fstype(ctx->root);
	if (!driver_fs_is_network(*fstype))
		return xasprintf("the study is on %s: a feeder opens the state DB itself",
				 *fstype);
	if (*ctx->cfg.driver.host)
		return xasprintf("the study is on a network filesystem (%s): a feeder "
				 "forwards its tick over ssh to %s", *fstype,
				 ctx->cfg.driver.host);
	return xasprintf("the study is on a network filesystem (%s) and driver.host is "
			 "not set: a feeder would open the state DB from a compute node; set "
			 "driver.host to the login node", *fstype);
}

/*
 * What a feeder waits for, in words: "job 47 (q1) or job 48 (q2) to end",
 * "its start time (about 60 s after it was queued)". malloc'd.
 */
static char *waits_words(struct xl_ctx *ctx, const char *waits)
{
	struct buf b = BUF_INIT;
	char **ids;
	size_t n, i;

	if (starts_with(waits, "now+"))
		return xasprintf("its start time: %s s after it was queued (--begin), so "
				 "that it looks again then", waits + 4);
	slurm_dependency_ids(waits, &ids, &n);
	for (i = 0; i < n; i++) {
		char *tag = runs_tag_of_job(&ctx->db, ctx->cfg.study, ids[i]);

		buf_addf(&b, "%sjob %s (%s)", i == 0 ? "" : i + 1 == n ? " or " : ", ",
			 ids[i], tag ? tag : "not a run of this study now");
		free(tag);
		free(ids[i]);
	}
	free(ids);
	if (n == 0) {
		buf_release(&b);
		return xstrdup(*waits ? waits : "nothing recorded");
	}
	buf_addf(&b, " to end (afterany: %s starts it)", n == 1 ? "its end" : "any one's end");
	return buf_detach(&b, NULL);
}

/*
 * What Slurm says the feeder job waits on: its state and Reason in words,
 * from q (NULL: squeue failed for the reason failed). *reason: Slurm's
 * code, NULL when none. malloc'd.
 */
static char *slurm_words(const struct slurm_jobs *q, const char *failed, const char *job,
			 char **reason)
{
	const struct slurm_job *j;
	char *text;

	*reason = NULL;
	if (!q)
		return xasprintf("Slurm could not be asked (%s)", failed);
	j = slurm_jobs_find(q, job);
	if (!j)
		text = xstrdup("Slurm no longer lists it: it has ended or was cancelled");
	else if (j->state != SLURM_STATE_PENDING)
		text = xasprintf("Slurm says %s", slurm_state_name(j->state));
	else if (!*j->reason || strcmp(j->reason, "None") == 0)
		text = xstrdup("Slurm says PENDING and gives no reason yet");
	else {
		*reason = xstrdup(j->reason);
		text = xasprintf("Slurm says PENDING (%s): %s", j->reason,
				 reason_explain(j->reason)->meaning);
	}
	return text;
}

/* squeue's start time of a pending job, NULL when it gives none. */
static const char *start_of(const struct slurm_job *j)
{
	if (j->state != SLURM_STATE_PENDING || !j->start_time || !*j->start_time ||
	    strcmp(j->start_time, "N/A") == 0 || strcmp(j->start_time, "Unknown") == 0)
		return NULL;
	return j->start_time;
}

/* The watchdog in words (q NULL: squeue failed for the reason failed). malloc'd. */
static char *watch_words(const struct slurm_jobs *q, const char *failed,
			 const struct slurm_job *w)
{
	if (!q)
		return xasprintf("watchdog: Slurm could not be asked (%s)", failed);
	if (!w)
		return xstrdup("no watchdog queued: none while nothing is left to feed (the next "
			       "`xloop next` or `xloop tick` queues one with the feeder)");
	if (w->state != SLURM_STATE_PENDING)
		return xasprintf("watchdog job %s %s: it checks that a feeder is alive, and "
				 "ticks as the feeder when none is", w->job_id,
				 slurm_state_name(w->state));
	if (start_of(w))
		return xasprintf("watchdog job %s pending until %s (--begin): then it checks "
				 "that a feeder is alive, and ticks as the feeder when none is",
				 w->job_id, start_of(w));
	return xasprintf("watchdog job %s pending (%s): when it starts it checks that a "
			 "feeder is alive", w->job_id, *w->reason ? w->reason : "no reason yet");
}

/* The watchdog for --json: null when none is listed. */
static json_t *watch_json(const struct slurm_job *w)
{
	if (!w)
		return json_null();
	return json_pack("{s:s, s:s, s:o, s:o}", "job_id", w->job_id,
			 "state", slurm_state_name(w->state),
			 "starts_at", start_of(w) ? json_string(start_of(w)) : json_null(),
			 "reason", *w->reason && strcmp(w->reason, "None") != 0 ?
			 json_string(w->reason) : json_null());
}

/* The mode, the pending feeder and the watchdog (one squeue call), the last run. */
static int driver_show(struct xl_ctx *ctx)
{
	struct driver_status st;
	struct slurm_jobs q = SLURM_JOBS_INIT;
	const struct slurm_job *watch = NULL;
	char when[32], *fstype = NULL, *route, *words = NULL, *said = NULL, *reason = NULL;
	char *failed = NULL, *watched = NULL;
	int slurm = 0, listed = 0;

	if (driver_status_read(ctx, &st) < 0)
		return error("unable to read the state DB"), XL_ERR;
	route = route_text(ctx, &fstype);
	slurm = strcmp(st.mode, "slurm") == 0;
	if (slurm || *st.job_id) {
		struct slurm s;

		slurm_init(&s);
		listed = slurm_squeue_mine(&s, &q, &failed) == 0;
		if (!listed && !failed)
			failed = xstrdup("squeue failed");
		if (listed)
			watch = driver_find_watch(ctx, &q);
		if (slurm)
			watched = watch_words(listed ? &q : NULL, failed, watch);
	}
	if (*st.job_id) {
		words = waits_words(ctx, st.waits);
		said = slurm_words(listed ? &q : NULL, failed, st.job_id, &reason);
	}
	if (ctx->json) {
		json_t *doc = json_pack("{s:s, s:s?, s:s, s:s, s:b, s:s}",
					"mode", st.mode,
					"pending_job_id", *st.job_id ? st.job_id : NULL,
					"waits", st.waits, "filesystem", fstype,
					"forwards", driver_forward_host(&ctx->cfg, ctx->root) != NULL,
					"route", route);

		json_object_set_new(doc, "waits_text", words ? json_string(words) : json_null());
		json_object_set_new(doc, "slurm_reason", reason ? json_string(reason) : json_null());
		json_object_set_new(doc, "slurm_says", said ? json_string(said) : json_null());
		json_object_set_new(doc, "slurm_error", failed ? json_string(failed) : json_null());
		json_object_set_new(doc, "watchdog", watch_json(watch));
		json_object_set_new(doc, "watchdog_text", watched ? json_string(watched) :
				    json_null());

		if (*st.last_job || st.last_at)
			json_object_set_new(doc, "last", json_pack("{s:s, s:I, s:s, s:s}",
				"job_id", st.last_job, "started_at", (json_int_t)st.last_at,
				"phase", st.last_phase, "result", st.last_result));
		else
			json_object_set_new(doc, "last", json_null());
		cmd_emit_json(doc);
	} else {
		printf("driver: %s\n", st.mode);
		if (*st.job_id)
			printf("feeder job %s pending: it waits for %s\n  %s\n", st.job_id, words,
			       said);
		else if (strcmp(st.mode, "slurm") == 0)
			printf("no feeder pending: nothing is left to feed, or it was cancelled "
			       "(the next `xloop next` or `xloop tick` queues one when there is "
			       "work)\n");
		if (watched)
			printf("%s\n", watched);
		if (st.last_at) {
			when_text(st.last_at, when);
			printf("last feeder: job %s at %s, %s: %s\n", st.last_job, when,
			       st.last_phase, st.last_result);
		} else {
			printf("last feeder: none has run yet\n");
		}
		printf("%s\n", route);
	}
	free(route);
	free(fstype);
	free(words);
	free(said);
	free(reason);
	free(failed);
	free(watched);
	slurm_jobs_release(&q);
	driver_status_release(&st);
	return XL_OK;
}

/* install: the scrontab entry or the cron line for the study. */
static int driver_install(struct xl_ctx *ctx, const struct cmd_entry *self)
{
	const char *mode = ctx->cfg.driver.mode;
	struct slurm s;
	char *cause = NULL, *exe;
	struct buf line = BUF_INIT, old = BUF_INIT;
	int rc;

	if (strcmp(mode, "cron") == 0) {
		const struct cmd_entry *cron = cmd_find("cron-line");
		char *args[] = { "cron-line", NULL };

		return cmd_run(ctx, cron, 1, args);
	}
	if (strcmp(mode, "scrontab") != 0)
		return cmd_usage_error(self, "driver.mode is '%s': install is for \"scrontab\" "
				       "and \"cron\" (\"slurm\" needs nothing installed)",
				       mode), XL_CONFIG;
	exe = driver_self_exe(&cause);
	if (!exe) {
		error("%s", cause);
		free(cause);
		return XL_ERR;
	}
	buf_addf(&line, "#SCRON --job-name=%s --cpus-per-task=1 --mem=%s --time=%s%s%s\n",
		 DRIVER_JOB_NAME, DRIVER_MEM, DRIVER_TIME,
		 *ctx->cfg.driver.partition ? " --partition=" : "",
		 ctx->cfg.driver.partition);
	buf_adds(&line, "*/5 * * * * ");
	remote_quote(&line, exe);
	buf_adds(&line, " -C ");
	remote_quote(&line, ctx->root);
	buf_adds(&line, " tick --feeder\n");
	slurm_init(&s);
	rc = slurm_scrontab_get(&s, &old, &cause);
	if (rc == 0) {
		char *text = driver_scrontab_merge(old.s, ctx->root, line.s);
		char *file = xasprintf("%s/.xloop/scrontab", ctx->root);

		rc = write_file_atomic(file, text, strlen(text), 0600, &cause) < 0 ? XL_ERR :
			slurm_scrontab_set(&s, file, &cause);
		free(text);
		free(file);
	}
	buf_release(&old);
	if (rc) {
		error("%s", cause ? cause : "scrontab failed");
	} else if (!ctx->json) {
		printf("scrontab entry for %s:\n%s", ctx->root, line.s);
	} else {
		cmd_emit_json(json_pack("{s:s, s:s}", "mode", mode, "entry", line.s));
	}
	free(cause);
	free(exe);
	buf_release(&line);
	return rc;
}

/* driver status (also bare `xloop driver`), driver install. */
static int cmd_driver(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	(void)args;
	return cmd_is(self, "install") ? driver_install(ctx, self) : driver_show(ctx);
}

static const struct cmd_entry driver_subs[] = {
	{ .name = "driver status", .exec = cmd_driver,
	  .summary = "the mode, the feeder waiting now, the watchdog, the last feeder that ran" },
	{ .name = "driver install", .exec = cmd_driver,
	  .summary = "write the scrontab entry, or print the crontab line" },
	{ NULL },
};

const struct cmd_entry cmd_driver_entry = {
	.name = "driver", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_UNATTENDED,
	.target = CMD_TARGET_NONE,
	.summary = "who runs the loop when no agent does: the feeder job, or the scrontab/cron entry",
	.help = "driver.mode in xloop.json says who calls xloop when no agent does:\n"
	"  slurm     (what init writes where Slurm answers) every next, tick and\n"
	"            feeder leaves exactly one small feeder job pending behind the\n"
	"            running runs while there is work: job name xloop-feed, 1 CPU,\n"
	"            no GPU, " DRIVER_MEM ", " DRIVER_TIME ", afterany on the live runs (any of\n"
	"            them ending starts it), output in .xloop/driver/feeder.log. It\n"
	"            runs `xloop -C ROOT tick --feeder`. With runs waiting but none\n"
	"            able to start (a limit, a hold) it waits with --begin=now+60s\n"
	"            (XLOOP_DRIVER_RETRY_SECS) instead; with nothing left (plan\n"
	"            empty, breaker open, nothing running) none is queued, nor\n"
	"            while only a person can move the study (plan entries waiting\n"
	"            for a best, autopilot converged or waiting for a fix, with\n"
	"            nothing live). sweep, submit, retry, replicate, plan add and\n"
	"            auto on leave one too.\n"
	"            Partition and QOS: driver.partition and driver.qos (default\n"
	"            slurm.*): when runs ask for every CPU of their node, give the\n"
	"            feeder one whose jobs start first (doctor warns otherwise).\n"
	"            The watchdog: beside it waits one job named xloop-watch with\n"
	"            --begin=now+600s (XLOOP_DRIVER_WATCH_SECS; log\n"
	"            .xloop/driver/watchdog.log). When it starts and a feeder is\n"
	"            alive (pending and not held, or running) it only queues the\n"
	"            next watchdog; when none is (cancelled, lost, held, failed at\n"
	"            launch) it ticks as the feeder and leaves a new one (a held one\n"
	"            is cancelled). Never two feeders or two watchdogs wait: each\n"
	"            next, tick and feeder cancels any extra. A feeder cancelled by\n"
	"            hand is also replaced by the next next or tick.\n"
	"  scrontab  `xloop driver install` writes the study's scrontab entry (every\n"
	"            5 minutes, where the site enables scrontab).\n"
	"  cron      `xloop driver install` prints the crontab line (cron-line).\n"
	"  none      only an agent's or a person's calls move the loop.\n"
	"\n"
	"On a network filesystem (NFS, Lustre, GPFS, sshfs; read from\n"
	"/proc/self/mountinfo) a feeder never opens the state DB on the compute\n"
	"node: it forwards its tick over ssh to driver.host (init sets it to the\n"
	"host it runs on there).\n"
	"\n"
	"status (the default) prints the mode, the feeder job waiting now and what\n"
	"it waits for in words (the runs by job id and tag, or its start time) and\n"
	"what Slurm says it waits on (its state and Reason), the watchdog (its job,\n"
	"pending until its start time, or running; with driver.mode slurm), both\n"
	"from one squeue call, the last feeder that ran and its result, and which\n"
	"way a feeder reaches the state DB (the filesystem type from mountinfo,\n"
	"else statfs).\n",
	.flags = CMD_DB | CMD_NOROOT, .subs = driver_subs, .dflt = &driver_subs[0],
};
