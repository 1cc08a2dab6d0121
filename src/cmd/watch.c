/*
 * xloop watch [--every N] [--once]: the study's live jobs with their
 * progress (the log's last line) and an ETA when that line states one or
 * counts "k/N". On a terminal the view is redrawn in place every N
 * seconds; otherwise one line is printed per job whose line changed. One
 * squeue call per refresh; nothing is judged or submitted. It ends when
 * nothing is queued or running.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "briefing/briefing.h"
#include "cmd/cmd.h"
#include "runs.h"
#include "slurm/slurm.h"

static const struct opt watch_opts[] = {
	{ "every", OPT_STRING, "N", "seconds between views (1 to 3600, default 5)" },
	{ "once", OPT_FLAG, NULL, "one view, then exit" },
	OPT_END,
};

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* "ETA 3m", "eta: 00:12:00": the word after ETA, or NULL. */
static char *stated_eta(const char *line)
{
	const char *p = strcasestr(line, "eta");
	size_t n;

	while (p && (p > line && isalnum((unsigned char)p[-1])))
		p = strcasestr(p + 3, "eta");
	if (!p)
		return NULL;
	p += 3;
	p += strspn(p, " :=");
	n = strcspn(p, " ,;)");
	return n ? xstrndup(p, n) : NULL;
}

/* Seconds from squeue's elapsed "[D-]H:MM:SS" or "M:SS"; -1 unknown. */
static long long elapsed_secs(const char *s)
{
	long long v = 0, part = 0, days = 0;
	int seen = 0;

	for (; *s; s++) {
		if (isdigit((unsigned char)*s)) {
			part = part * 10 + (*s - '0');
			seen = 1;
		} else if (*s == ':') {
			v = v * 60 + part;
			part = 0;
		} else if (*s == '-') {
			days = part;
			part = 0;
		} else {
			return -1;
		}
	}
	return seen ? days * 86400 + v * 60 + part : -1;
}

/* "~2m10s left" from the first "k/N" in the line and the elapsed time. */
static char *estimated_eta(const char *line, long long elapsed)
{
	const char *p;

	for (p = line; *p; p++) {
		char *end;
		long long k, n;

		if (!isdigit((unsigned char)*p) || (p > line && isdigit((unsigned char)p[-1])))
			continue;
		k = strtoll(p, &end, 10);
		if (*end != '/' || !isdigit((unsigned char)end[1]))
			continue;
		n = strtoll(end + 1, NULL, 10);
		if (k <= 0 || n <= k || elapsed <= 0)
			return NULL;
		{
			long long left = elapsed * (n - k) / k;

			return xasprintf("~%lldm%02llds left", left / 60, left % 60);
		}
	}
	return NULL;
}

/* One live job as shown. */
struct row {
	char *key;		/* job id */
	char *text;
	char *what;		/* state and log line: a change prints a line */
};

/* The rows of this refresh; 0, or an exit code. */
static int collect(struct xl_ctx *ctx, struct slurm *s, struct row **rows, size_t *nr,
		   char **cause)
{
	struct slurm_jobs q = SLURM_JOBS_INIT;
	struct attempt *v = NULL;
	size_t n = 0, i;
	int rc;

	*rows = NULL;
	*nr = 0;
	if (attempts_unfinished(&ctx->db, ctx->cfg.study, &v, &n) < 0)
		return XL_ERR;
	if (n == 0)
		return 0;
	rc = slurm_squeue_mine(s, &q, cause);
	for (i = 0; rc == 0 && i < n; i++) {
		const struct slurm_job *job = slurm_jobs_find(&q, v[i].job_id);
		struct buf t = BUF_INIT;
		json_t *tail;
		char *eta = NULL, *tag;

		if (!job)
			continue;	/* ended: the next `xloop next` judges it */
		tag = runs_tag(&ctx->db, v[i].run_id);
		buf_addf(&t, "%-20s", tag ? tag : "?");
		free(tag);
		buf_addf(&t, " #%lld job %-10s %-9s %8s", v[i].n, v[i].job_id, job->state_raw,
			 *job->run_time ? job->run_time : "-");
		*rows = xreallocarray(*rows, *nr + 1, sizeof(**rows));
		if (slurm_state_is_final(job->state) || strcmp(job->state_raw, "PENDING") == 0) {
			if (*job->reason && strcmp(job->reason, "None") != 0)
				buf_addf(&t, "  (%s)", job->reason);
			(*rows)[*nr].what = xasprintf("%s %s", job->state_raw, job->reason);
		} else {
			const char *line = "";

			tail = briefing_log_tail(v[i].log_path, 1);
			if (json_array_size(tail)) {
				line = json_string_value(json_array_get(tail, 0));
				buf_addf(&t, "  %.90s", line);
				/* a line that states its ETA is shown as it is */
				if (!(eta = stated_eta(line)))
					eta = estimated_eta(line, elapsed_secs(job->run_time));
				else
					FREE_AND_NULL(eta);
			}
			(*rows)[*nr].what = xasprintf("%s %s", job->state_raw, line);
			json_decref(tail);
			if (eta)
				buf_addf(&t, "  ETA %s", eta);
			free(eta);
		}
		(*rows)[*nr].key = xstrdup(v[i].job_id);
		(*rows)[(*nr)++].text = buf_detach(&t, NULL);
	}
	attempts_free(v, n);
	slurm_jobs_release(&q);
	return rc;
}

static void rows_free(struct row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].key);
		free(rows[i].text);
		free(rows[i].what);
	}
	free(rows);
}

/* What was shown last for key (state and log line), or NULL. */
static const char *shown(const struct row *prev, size_t np, const char *key)
{
	size_t i;

	for (i = 0; i < np; i++)
		if (strcmp(prev[i].key, key) == 0)
			return prev[i].what;
	return NULL;
}

/* Refresh until nothing is live. */
static int cmd_watch(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	const char *every_s = args_get(args, "every"), *errstr;
	int once = args_flag(args, "once");
	struct row *prev = NULL, *rows;
	size_t np = 0, nr, i;
	long long every = 5;
	int rc, tty = isatty(STDOUT_FILENO);
	struct slurm s;
	char *cause = NULL;

	if (every_s && parse_ll(every_s, 1, 3600, &every, &errstr) < 0)
		return cmd_usage_error(self, "--every wants seconds from 1 to 3600"), XL_USAGE;
	signal(SIGINT, on_int);
	signal(SIGTERM, on_int);
	slurm_init(&s);
	for (;;) {
		char when[16];
		time_t now = time(NULL);
		struct tm tm;

		rc = collect(ctx, &s, &rows, &nr, &cause);
		if (rc) {
			error("%s", cause ? cause : "unable to read the queue");
			FREE_AND_NULL(cause);
			break;
		}
		localtime_r(&now, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		if (tty) {
			printf("\033[H\033[2Jxloop watch: study %s, %zu live, %s (every %llds, "
			       "Ctrl-C ends)\n\n", ctx->cfg.study, nr, when, every);
			for (i = 0; i < nr; i++)
				printf("%s\n", rows[i].text);
		} else {
			for (i = 0; i < nr; i++) {
				const char *old = shown(prev, np, rows[i].key);

				if (!old || strcmp(old, rows[i].what) != 0)
					printf("%s %s\n", when, rows[i].text);
			}
		}
		fflush(stdout);
		rows_free(prev, np);
		prev = rows;
		np = nr;
		if (nr == 0) {
			printf("%s nothing is queued or running\n", when);
			break;
		}
		if (once || interrupted)
			break;
		sleep((unsigned)every);
		if (interrupted)
			break;
	}
	rows_free(prev, np);
	return rc;
}

const struct cmd_entry cmd_watch_entry = {
	.name = "watch", .opts = watch_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOK,
	.target = CMD_TARGET_NONE,
	.summary = "a live view of the study's queued and running jobs with progress and ETA",
	.help = "Every N seconds (default 5), one squeue call: each live job with its\n"
	"state, elapsed time and its log's last line, and an ETA when that line\n"
	"states one (\"ETA 4m\") or counts steps (\"fold 3/5\": estimated from the\n"
	"elapsed time). On a terminal the view is redrawn in place; otherwise one\n"
	"line is printed per job whose line changed. It ends when nothing is\n"
	"queued or running (or after one view with --once). Nothing is judged.\n",
	.flags = CMD_DB | CMD_NOROOT, .exec = cmd_watch,
};
