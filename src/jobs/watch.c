/* The stop watcher in a job's batch script: see watch.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/progress.h"
#include "jobs/stop-rule.h"
#include "jobs/watch.h"
#include "jobsh/directives.h"
#include "lib/fsutil.h"

/*
 * progress.c's rule in awk, over the complete lines: prints the last
 * epoch, and after it why to stop when the rule says so. Keep the two
 * the same (test_progress and t1590 check each).
 */
static const char rule_awk[] =
	"$1 == \"chance\" && NF == 2 && tolower($2) ~ num { chance = $2 + 0; have = 1 }\n"
	"$1 == \"epoch\" && NF >= 3 && $2 ~ /^[0-9]+$/ {\n"
	"\tv = tolower($3)\n"
	"\tif (v ~ /^[-+]?(nan|inf|infinity)$/) {\n"
	"\t\tlast = $2 + 0\n"
	"\t\tif (rule == \"on\") { why = v ~ /nan/ ? \"the value is NaN\" : \"the value is infinite\"; exit }\n"
	"\t\tnext\n"
	"\t}\n"
	"\tif (v !~ num) next\n"
	"\tlast = $2 + 0\n"
	"\tif (!have || rule != \"on\") next\n"
	"\ttol = chance < 0 ? -chance / 100 : chance / 100\n"
	"\tat = goal == \"max\" ? v + 0 <= chance + tol : v + 0 >= chance - tol\n"
	"\trun = at ? run + 1 : 0\n"
	"\tif (runs >= 1 && run >= runs) { why = \"the value is at chance\"; exit }\n"
	"}\n"
	"END { printf \"%d\", last; if (why != \"\") printf \" %s\", why; print \"\" }\n";

/*
 * stop-rule.c's rule in awk, before rule_awk's (issue 46): the values to
 * beat from $XLOOP_RUN_DIR/stop-bar (written at submit), and a run
 * behind them at "behind" epochs running stops. Keep it the same as
 * stop_first_behind (test_stop_rule and t1590 check each).
 */
static const char bar_awk[] =
	"BEGIN {\n"
	"\tbf = ENVIRON[\"XLOOP_RUN_DIR\"] \"/stop-bar\"\n"
	"\twhile ((getline bl < bf) > 0) {\n"
	"\t\tsplit(bl, bw, \" \")\n"
	"\t\tif (bw[1] == \"behind\") bn = bw[2] + 0\n"
	"\t\telse if (bw[1] == \"bar\") { bar[bw[2] + 0] = bw[3] + 0; nbar++ }\n"
	"\t}\n"
	"\tclose(bf)\n"
	"}\n"
	"rule == \"on\" && nbar && bn >= 1 && $1 == \"epoch\" && NF >= 3 && $2 ~ /^[0-9]+$/ &&\n"
	"    tolower($3) ~ num {\n"
	"\tk = $2 + 0\n"
	"\tif (k in bar && (goal == \"max\" ? $3 + 0 < bar[k] : $3 + 0 > bar[k])) brun++\n"
	"\telse brun = 0\n"
	"\tif (brun >= bn) { last = k; why = \"" STOP_BEHIND_WHY " at \" bn \" epochs running\"; exit }\n"
	"}\n";

/* The watcher's shell, before job.sh starts. */
void watch_shell(const struct config *c, int rule_on, struct buf *b)
{
	buf_adds(b, "# xloop's stop watcher (xloop help adopt: progress)\n"
		 "xl_pf=\"$XLOOP_RUN_DIR/progress\" xl_sf=\"$XLOOP_RUN_DIR/stopped\" "
		 "xl_rq=\"$XLOOP_RUN_DIR/stop-request\"\n");
	buf_addf(b, "xl_rule=%s xl_goal=%s xl_runs=%lld xl_grace=%lld xl_poll=%d\n",
		 rule_on ? "on" : "off", c->goal_max ? "max" : "min", c->stop.chance_epochs,
		 c->stop.grace, WATCH_POLL);
	buf_adds(b,
		 "# a new attempt starts afresh; a later segment or a requeue keeps the epochs\n"
		 "if [ \"${XLOOP_SEGMENT:-1}\" = 1 ] && [ \"${SLURM_RESTART_COUNT:-0}\" = 0 ]; then\n"
		 "\trm -f \"$xl_pf\" \"$xl_sf\"\n"
		 "elif [ -f \"$xl_sf\" ]; then\n"
		 "\t# stopped already (a requeue, a segment that started anyway): not again\n"
		 "\techo \"xloop: this attempt was stopped early ($(cat \"$xl_sf\")): not run again\" >&2\n"
		 "\texit \"${xl_stopped_exit:-0}\"\nfi\n"
		 "xl_asked() {\n"
		 "\tlocal w a\n"
		 "\t[ -f \"$xl_rq\" ] && read -r w a <\"$xl_rq\" && [ \"$a\" = \"$XLOOP_ATTEMPT\" ]\n"
		 "}\n"
		 "xl_check() {\n"
		 "\tawk -v goal=\"$xl_goal\" -v runs=\"$xl_runs\" -v rule=\"$1\" \\\n"
		 "\t    -v num='^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)(e[-+]?[0-9]+)?$' '\n");
	buf_adds(b, bar_awk);
	buf_adds(b, rule_awk);
	buf_adds(b,
		 "' <<<\"$2\"\n"
		 "}\n"
		 "xl_watch() {\n"
		 "\tlocal text seen= full out k why i\n"
		 "\twhile kill -0 \"$child\" 2>/dev/null; do\n"
		 "\t\ttext= why=\n"
		 "\t\t[ -f \"$xl_pf\" ] && IFS= read -r -d '' text <\"$xl_pf\"\n"
		 "\t\tfull=${text%\"${text##*$'\\n'}\"}\t# the complete lines\n"
		 "\t\txl_asked && why='you asked (xloop stop)'\n"
		 "\t\tif [ -n \"$why\" ] || { [ \"$xl_rule\" = on ] && [ \"$full\" != \"$seen\" ]; }; then\n"
		 "\t\t\tseen=$full\n"
		 "\t\t\tif [ -n \"$why\" ]; then out=$(xl_check off \"$full\")\n"
		 "\t\t\telse out=$(xl_check on \"$full\"); fi\n"
		 "\t\t\tk=${out%% *}\n"
		 "\t\t\t[ -n \"$why\" ] || [ \"$out\" = \"$k\" ] || why=${out#* }\n"
		 "\t\tfi\n"
		 "\t\tif [ -n \"$why\" ]; then\n"
		 "\t\t\t# the record first: it is the verdict; then the job is told\n"
		 "\t\t\tprintf 'attempt %s epoch %s %s\\n' \"$XLOOP_ATTEMPT\" \"${k:-0}\" \"$why\" "
		 ">\"$xl_sf.tmp\" &&\n"
		 "\t\t\t\tmv -f \"$xl_sf.tmp\" \"$xl_sf\"\n"
		 "\t\t\techo \"xloop: stopping at epoch ${k:-0}: $why; the job has ${xl_grace}s to "
		 "write cv.json and exit\" >&2\n"
		 "\t\t\ti=0\n"
		 "\t\t\twhile kill -0 \"$child\" 2>/dev/null && [ \"$i\" -lt \"$xl_grace\" ]; do\n"
		 "\t\t\t\tsleep 1; i=$((i + 1))\n"
		 "\t\t\tdone\n"
		 "\t\t\tif kill -0 \"$child\" 2>/dev/null; then\n"
		 "\t\t\t\techo \"xloop: the job did not exit within ${xl_grace}s of the stop: "
		 "ending it\" >&2\n"
		 "\t\t\t\tkill -TERM \"$child\" 2>/dev/null; sleep 10; kill -KILL \"$child\" 2>/dev/null\n"
		 "\t\t\tfi\n"
		 "\t\t\treturn 0\n"
		 "\t\tfi\n"
		 "\t\tsleep \"$xl_poll\"\n"
		 "\tdone\n"
		 "}\n");
}

/* After watch_shell: job.sh as the child, watched, its status passed on. */
void watch_run_child(struct buf *b, int later_steps)
{
	buf_adds(b,
		 "# a signal job.sh's own #SBATCH --signal=B:... sends the batch shell: to job.sh\n"
		 "trap 'kill -USR1 \"$child\" 2>/dev/null' USR1\n"
		 "trap 'kill -USR2 \"$child\" 2>/dev/null' USR2\n"
		 "\"$XLOOP_RUN_DIR/job.sh\" & child=$!\n"
		 "xl_watch & xl_w=$!\n"
		 "wait \"$child\"; rc=$?\n"
		 "while kill -0 \"$child\" 2>/dev/null; do wait \"$child\"; rc=$?; done\n"
		 "kill \"$xl_w\" 2>/dev/null\n");
	if (later_steps)
		buf_addf(b, "if [ \"$rc\" = 0 ] && [ -f \"$xl_sf\" ]; then\n"
			 "\techo \"xloop: stopped early: the later steps do not run\" >&2\n"
			 "\texit %d\nfi\n", WATCH_STOPPED_EXIT);
	buf_adds(b,
		 "# killed by a signal: end the same way, so Slurm says so\n"
		 "if [ \"$rc\" -gt 128 ] && [ \"$rc\" -lt 160 ]; then\n"
		 "\ttrap - $((rc - 128)); kill -$((rc - 128)) $$\nfi\n"
		 "exit \"$rc\"\n");
}

/* Write the batch script of a run that is not segmented. */
int watch_write_wrapper(struct xl_ctx *ctx, const char *tag, long long n, const char *token,
			const char *jobtext, int rule_on, int later_steps, char **path,
			char **cause)
{
	const struct config *c = &ctx->cfg;
	struct buf b = BUF_INIT, header = BUF_INIT;
	char *dir = path_join(ctx->root, ".xloop/watch");
	int rc;

	sbatch_header_lines(jobtext, &header);
	buf_addf(&b, "#!/bin/bash\n# written by xloop: %s/%s attempt %lld with its stop watcher\n%s",
		 c->study, tag, n, header.s ? header.s : "");
	if (later_steps)	/* a stopped attempt's job that runs again: no step after it */
		buf_addf(&b, "xl_stopped_exit=%d\n", WATCH_STOPPED_EXIT);
	watch_shell(c, rule_on, &b);
	watch_run_child(&b, later_steps);
	*path = xasprintf("%s/%s.sh", dir, token);
	rc = make_dir(dir, 0700, cause);
	if (rc == 0)
		rc = write_file_atomic(*path, b.s, b.len, 0700, cause);
	buf_release(&b);
	buf_release(&header);
	free(dir);
	return rc;
}

/* The stop record of attempt n in run_dir, if there is one. */
int watch_read_record(const char *run_dir, long long n, long long *epoch, long long *planned,
		      char **why)
{
	char *p = path_join(run_dir, "stopped"), *cause = NULL;
	struct buf t = BUF_INIT;
	struct progress pr;
	long long a;
	int err, found = 0;

	*why = NULL;
	*planned = 0;
	if (read_file(p, 4096, &t, &err, &cause) == 0 && t.s &&
	    progress_parse_record(t.s, &a, epoch, why) == 0) {
		found = a == n;
		if (!found)
			FREE_AND_NULL(*why);
	}
	buf_release(&t);
	FREE_AND_NULL(cause);
	free(p);
	if (found) {
		/* the plan the job said: what the stop saved */
		p = path_join(run_dir, "progress");
		if (read_file(p, 1 << 20, &t, &err, &cause) == 0 && t.s) {
			progress_parse(t.s, 1, 0, &pr);
			*planned = pr.planned;
		}
		buf_release(&t);
		free(cause);
		free(p);
	}
	return found;
}

/* Ask attempt n's watcher to stop it. */
int watch_request(const char *run_dir, long long n, char **cause)
{
	char *p = path_join(run_dir, "stop-request"), *text = xasprintf("attempt %lld\n", n);
	int rc = write_file_atomic(p, text, strlen(text), 0644, cause);

	free(text);
	free(p);
	return rc;
}
