/*
 * A segmented attempt's batch script and what sbatch gets for it: see
 * segments-wrapper.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "lib/fsutil.h"
#include "jobsh/directives.h"
#include "jobsh/jobsh.h"
#include "jobs/segments-wrapper.h"
#include "jobs/watch.h"

/* Slurm sends the signal up to this many seconds before the lead. */
#define SIGNAL_SLACK 60

/* The segment count for an attempt, checked against its time limit. */
int segments_wanted(const struct config *c, const char *flag, const char *time_,
		    int time_from_flag, long long *max, char **cause)
{
	const char *errstr;
	long long secs;

	*max = c->seg.max;
	if (flag && parse_ll(flag, 0, 1000, max, &errstr) < 0) {
		*cause = xasprintf("invalid --segments '%s': give 0 (off) to 1000", flag);
		return XL_USAGE;
	}
	if (*max == 0)
		return 0;
	secs = config_time_secs(time_);
	if (c->seg.lead >= secs) {
		*cause = xasprintf("segments.lead %llds is not shorter than the time limit "
				   "%s (%llds): the signal would come before the job "
				   "starts; lower segments.lead or raise %s", c->seg.lead,
				   time_, secs, time_from_flag ? "--time" :
				   "resources.time in xloop.json");
		return time_from_flag || flag ? XL_DATAERR : XL_CONFIG;
	}
	if (c->seg.lead + SIGNAL_SLACK >= secs)
		warning("segments.lead %llds leaves less than %d s of a %llds segment: Slurm "
			"may send SIG%s up to %d s early", c->seg.lead, SIGNAL_SLACK, secs,
			c->seg.signal, SIGNAL_SLACK);
	return 0;
}

/* Free what segments_prepare made. */
void segments_req_release(struct segments_req *sr)
{
	free(sr->script);
	free(sr->signal);
	memset(sr, 0, sizeof(*sr));
}

/*
 * The wrapper: a header line per segment in the attempt's log, the
 * checkpoint guard, job.sh as a child with the signal forwarded, and one
 * line per event in slurm/attemptN.seg ("K start STAMP", "K signal",
 * "K term" (SIGTERM from outside: requeue, preemption, scancel, the
 * limit), "K exit RC", "K noprogress", "K released JOB", "K cancelled JOB",
 * "K unneeded"), and what becomes of the held next segment (below).
 */
static char *wrapper_text(struct xl_ctx *ctx, const char *tag, long long n,
			  const char *sha, const char *header, long long max, int rule_on,
			  int later_steps)
{
	const struct config *c = &ctx->cfg;
	struct buf b = BUF_INIT;
	char *q;

	buf_addf(&b, "#!/bin/bash\n# written by xloop: the segments of %s/%s attempt %lld\n%s",
		 c->study, tag, n, header);
	q = jobsh_quote(c->seg.checkpoint);
	buf_addf(&b, "k=${XLOOP_SEGMENT:-1} max=%lld sig=%s ck=\"$XLOOP_RUN_DIR\"/%s\n", max,
		 c->seg.signal, q);
	free(q);
	buf_addf(&b, "st=\"$XLOOP_RUN_DIR/slurm/attempt%lld.seg\"\n", n);
	buf_adds(&b,
		 "stamp() {\n"
		 "\tif [ -d \"$ck\" ]; then\n"
		 "\t\tfind \"$ck\" -type f -printf '%T@ %s %p\\n' 2>/dev/null | sort -n | tail -n 1\n"
		 "\telif [ -e \"$ck\" ]; then stat -c '%.9Y %s' \"$ck\"\n"
		 "\telse echo none; fi\n}\n"
		 "now=$(stamp)\n"
		 "if [ \"$k\" -gt 1 ]; then\n"
		 "\tp=$((k - 1))\n"
		 "\tprc=$(sed -n \"s/^$p exit //p\" \"$st\" 2>/dev/null | tail -n 1)\n"
		 "\tbefore=$(sed -n \"s/^$p start //p\" \"$st\" 2>/dev/null | tail -n 1)\n"
		 "\tif [ \"$prc\" = 85 ] || grep -qx \"$p signal\" \"$st\" 2>/dev/null; then\n"
		 "\t\t# it asked to continue: it must have saved progress\n"
		 "\t\tif [ \"$now\" = \"$before\" ]; then\n"
		 "\t\t\techo \"$k noprogress\" >>\"$st\"\n"
		 "\t\t\techo \"xloop: no progress between segments: $ck did not change "
		 "during segment $p\" >&2\n"
		 "\t\t\texit 0\n\t\tfi\n"
		 "\telif [ -n \"$prc\" ] && ! grep -qx \"$p term\" \"$st\" 2>/dev/null; then\n"
		 "\t\t# it ended by itself without asking to continue\n"
		 "\t\techo \"$k unneeded\" >>\"$st\"\n"
		 "\t\texit 0\n"
		 "\tfi\n"
		 "\t# else the machine killed it (no exit line, or TERM from outside):\n"
		 "\t# retried as that segment, from the checkpoint\n"
		 "fi\n"
		 "echo \"==== xloop segment $k (at most $max) · job ${SLURM_JOB_ID:-?} · "
		 "$(date -u +%Y-%m-%dT%H:%M:%SZ) ====\"\n");
	buf_addf(&b,
		 "if command -v sha256sum >/dev/null &&\n"
		 "   ! echo \"%s  $XLOOP_RUN_DIR/job.sh\" | sha256sum -c --status; then\n"
		 "\techo \"xloop: $XLOOP_RUN_DIR/job.sh changed after it was submitted; "
		 "not running it\" >&2\n\texit 65\nfi\n", sha);
	if (rule_on >= 0 && c->stop.on) {
		if (later_steps)	/* a stopped attempt's segment that starts: no step after it */
			buf_addf(&b, "xl_stopped_exit=%d\n", WATCH_STOPPED_EXIT);
		watch_shell(c, rule_on, &b);
	}
	buf_adds(&b,
		 "echo \"$k start $now\" >>\"$st\"\n"
		 "trap 'echo \"$k signal\" >>\"$st\"; got=1; kill -\"$sig\" \"$child\" 2>/dev/null' \"$sig\"\n"
		 "[ \"$sig\" = TERM ] ||\n"
		 "\ttrap 'echo \"$k term\" >>\"$st\"; termed=1; kill -TERM \"$child\" 2>/dev/null' TERM\n"
		 "\"$XLOOP_RUN_DIR/job.sh\" & child=$!\n");
	if (rule_on >= 0 && c->stop.on)
		buf_adds(&b, "xl_watch & xl_w=$!\n");
	buf_adds(&b,
		 "wait \"$child\"; rc=$?\n"
		 "if [ \"$rc\" -gt 128 ] && [ -n \"${got:-}\" ]; then wait \"$child\"; rc=$?; fi\n"
		 "[ -z \"${xl_w:-}\" ] || kill \"$xl_w\" 2>/dev/null\n"
		 "echo \"$k exit $rc\" >>\"$st\"\n");
	/*
	 * The next segment waits held. Released when this one asked to go on
	 * and its checkpoint changed; cancelled (it never starts) when it
	 * asked to go on unsaved ("noprogress") or ended by itself: then the
	 * run behind it may start as soon as this job ends. After a TERM from
	 * outside (preemption, scancel, a node) it stays held: reconcile
	 * decides (an infra failure goes on from the checkpoint).
	 */
	buf_addf(&b,
		 "next=\"xloop:%s/%s#%lld.$((k + 1)):\" act=\n"
		 "if [ -n \"${xl_sf:-}\" ] && [ -f \"$xl_sf\" ]; then act=cancelled	# stopped\n"
		 "elif [ \"$rc\" = 85 ] || [ -n \"${got:-}\" ]; then\n"
		 "\tif [ \"$(stamp)\" = \"$now\" ]; then\n"
		 "\t\techo \"$((k + 1)) noprogress\" >>\"$st\"; act=cancelled\n"
		 "\telse act=released; fi\n"
		 "elif [ -z \"${termed:-}\" ]; then act=cancelled; fi\n"
		 "if [ -n \"$act\" ]; then\n"
		 "\tid=$(squeue -h -u \"$(id -un)\" -t PD -o '%%i %%k' 2>/dev/null |\n"
		 "\t\tawk -v w=\"$next\" 'index($2, w) == 1 { print $1 }' | tail -n 1)\n"
		 "\tif [ -n \"$id\" ]; then\n"
		 "\t\tif [ \"$act\" = released ]; then scontrol release \"$id\"\n"
		 "\t\telse scancel \"$id\"; fi >/dev/null 2>&1 &&\n"
		 "\t\t\techo \"$((k + 1)) $act $id\" >>\"$st\"\n"
		 "\tfi\n"
		 "fi\n", c->study, tag, n);
	if (later_steps && rule_on >= 0 && c->stop.on)
		buf_addf(&b, "if [ \"$rc\" = 0 ] && [ -f \"$xl_sf\" ]; then\n"
			 "\techo \"xloop: stopped early: the later steps do not run\" >&2\n"
			 "\texit %d\nfi\n", WATCH_STOPPED_EXIT);
	buf_adds(&b, "exit \"$rc\"\n");
	return buf_detach(&b, NULL);
}

/* The wrapper's path for the attempt with token. */
char *segments_wrapper_path(struct xl_ctx *ctx, const char *token)
{
	return xasprintf("%s/.xloop/segments/%s.sh", ctx->root, token);
}

/* Write the wrapper of an attempt (its #SBATCH header from jobtext). */
int segments_write_wrapper(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
			   const char *sha, const char *jobtext, long long max, int rule_on,
			   int later_steps, char **path, char **cause)
{
	struct buf header = BUF_INIT;
	char *dir = path_join(ctx->root, ".xloop/segments"), *text;
	int rc;

	sbatch_header_lines(jobtext, &header);
	text = wrapper_text(ctx, tag, n, sha, header.s ? header.s : "", max, rule_on,
			    later_steps);
	*path = segments_wrapper_path(ctx, token);
	rc = make_dir(dir, 0700, cause);
	if (rc == 0)
		rc = write_file_atomic(*path, text, strlen(text), 0700, cause);
	free(text);
	free(dir);
	buf_release(&header);
	return rc;
}

/* The --signal of a segment: "B:USR2@300" (malloc'd). */
char *segments_signal(const struct config *c)
{
	return xasprintf("B:%s@%lld", c->seg.signal, c->seg.lead);
}

/* Write the wrapper and point req at it. */
int segments_prepare(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
		     const char *sha, const char *jobtext, long long max, int rule_on,
		     int later_steps, struct slurm_submit *req, struct segments_req *sr,
		     char **cause)
{
	int rc;

	memset(sr, 0, sizeof(*sr));
	rc = segments_write_wrapper(ctx, tag, n, token, sha, jobtext, max, rule_on, later_steps,
				    &sr->script, cause);
	sr->signal = segments_signal(&ctx->cfg);
	req->script = sr->script;
	req->signal = sr->signal;
	req->append = 1;
	return rc;
}
