/*
 * xloop adopt PATH --tag T [--cv FILE] [--step NAME=SCRIPT]...: register an
 * existing job script (and the steps that follow it) as a root run of the
 * study, copied byte for byte and committed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "jobsh/directives.h"
#include "loop.h"
#include "slurm/slurm.h"
#include "jobs/steps.h"
#include "study.h"
#include "jobs/submit.h"

static const struct opt adopt_opts[] = {
	{ "tag", OPT_STRING, "T", "the run's tag: 1-64 of [A-Za-z0-9._-], not starting with . _ -",
	  OPT_REQUIRED },
	{ "cv", OPT_STRING, "FILE", "make the run a proven run with FILE's score" },
	{ "step", OPT_LIST, "NAME=SCRIPT", "a step after PATH, its own Slurm job afterok on the "
	  "one before (repeatable, in order)" },
	{ "take-sbatch", OPT_FLAG, NULL, "take PATH's own #SBATCH requests (CPUs, memory, time, "
	  "GRES, partition) into xloop.json" },
	OPT_END,
};

/* The #SBATCH options --take-sbatch takes, and where they go in xloop.json. */
static const struct {
	const char *option;
	const char *key[2];
	int integer;
} takes[] = {
	{ "cpus-per-task", { "resources", "cpus" }, 1 }, { "mem", { "resources", "mem" }, 0 },
	{ "time", { "resources", "time" }, 0 }, { "gres", { "resources", "gres" }, 0 },
	{ "partition", { "slurm", "partition" }, 0 },
};

/* Where a value xloop gives sbatch comes from, by option. */
static const struct {
	const char *option;
	const char *from;
} sources[] = {
	{ "partition", "slurm.partition" }, { "gres", "resources.gres" },
	{ "cpus-per-task", "resources.cpus" }, { "mem", "resources.mem" },
	{ "time", "resources.time" }, { "account", "slurm.account" },
	{ "qos", "slurm.qos" }, { "nice", "slurm.nice" },
	{ "job-name", "the run's tag" }, { "output", "the attempt's own log" },
	{ "comment", "xloop's token" }, { "chdir", "the study root" },
	{ "export", "xloop, so the job gets XLOOP_RUN_DIR and the rest" },
};

/* Whether a #SBATCH value says the same as the one xloop passes. */
static int same_value(const char *option, const char *a, const char *b)
{
	long long x, y;
	const char *errstr;

	if (strcmp(option, "mem") == 0 && config_valid_mem(a) && config_valid_mem(b))
		return config_mem_mb(a) == config_mem_mb(b);
	if (strcmp(option, "time") == 0 && config_valid_time(a) && config_valid_time(b))
		return config_time_secs(a) == config_time_secs(b);
	if ((strcmp(option, "cpus-per-task") == 0 || strcmp(option, "nice") == 0) &&
	    parse_ll(a, 0, LLONG_MAX, &x, &errstr) == 0 &&
	    parse_ll(b, 0, LLONG_MAX, &y, &errstr) == 0)
		return x == y;
	return strcmp(a, b) == 0;
}

/* What a #SBATCH line that xloop does not pass itself means for the run. */
static char *other_directive(const struct sbatch_directive *d, const struct config *c)
{
	if (strcmp(d->option, "error") == 0)
		return xstrdup("sends stderr away from the attempt's log, where xloop and "
			       "the briefing look for the failure: remove it");
	if (strcmp(d->option, "array") == 0)
		return xstrdup("makes every submission a job array; xloop runs one job per "
			       "run (use `xloop sweep` for arrays): remove it");
	if (strcmp(d->option, "dependency") == 0)
		return xstrdup("is replaced by xloop's --dependency=afterany:... whenever it "
			       "chains the job (the usual case): remove it");
	if (strcmp(d->option, "mem-per-cpu") == 0 || strcmp(d->option, "mem-per-gpu") == 0)
		return xasprintf("conflicts with --mem=%s that xloop passes (resources.mem): "
				 "remove it and set resources.mem", c->res.mem);
	if ((strcmp(d->option, "gpus") == 0 || starts_with(d->option, "gpus-per-")) &&
	    *c->res.gres)
		return xasprintf("asks for GPUs besides --gres=%s that xloop passes "
				 "(resources.gres): remove it", c->res.gres);
	return NULL;
}

/*
 * Compare job.sh's #SBATCH lines with the options xloop gives sbatch (the
 * argv slurm.c builds from xloop.json): one warning per line that differs,
 * naming the value Slurm gets. Adds one object per warning to list.
 */
static void check_directives(struct xl_ctx *ctx, const char *tag, const char *text,
			     int took, json_t *list)
{
	struct sbatch_directives d;
	struct slurm_submit req;
	struct buf scratch = BUF_INIT;
	char **argv, *out, *dir;
	size_t i, j, k, n = 0;
	int takeable = 0;	/* a warned line --take-sbatch would take */

	sbatch_directives_parse(text, &d);
	if (d.nr == 0) {
		sbatch_directives_release(&d);
		return;
	}
	dir = run_dir(ctx->root, ctx->cfg.study, tag);
	out = xasprintf("%s/slurm/attemptN.out", dir);
	slurm_fill_request(&ctx->cfg, ctx->root, &req, ctx->cfg.res.mem, ctx->cfg.res.time,
			   NULL);
	req.job_name = tag;
	req.output = out;
	req.comment = "xloop:TOKEN";
	argv = slurm_sbatch_argv(&req, &scratch);
	for (i = 0; i < d.nr; i++) {
		const struct sbatch_directive *e = &d.v[i];
		const char *gets = NULL, *from = NULL;
		char *why = NULL;

		for (j = 0; argv[j] && !gets; j++) {
			size_t len = strlen(e->option);

			if (starts_with(argv[j], "--") &&
			    strncmp(argv[j] + 2, e->option, len) == 0 &&
			    argv[j][2 + len] == '=')
				gets = argv[j];
		}
		if (gets) {
			if (same_value(e->option, e->value, strchr(gets, '=') + 1))
				continue;
			for (k = 0; k < ARRAY_SIZE(sources); k++)
				if (strcmp(sources[k].option, e->option) == 0)
					from = sources[k].from;
			why = xasprintf("differs from what xloop passes: Slurm gets %s (%s%s)",
					gets, from ? from : "xloop",
					from && strchr(from, '.') && !strchr(from, ' ') ?
					" in xloop.json" : "");
		} else if ((why = other_directive(e, &ctx->cfg)) == NULL) {
			continue;
		}
		for (k = 0; k < ARRAY_SIZE(takes); k++)
			takeable |= strcmp(takes[k].option, e->option) == 0;
		warning("job.sh line %d: '#SBATCH %s' %s", e->line, e->text, why);
		json_array_append_new(list, json_pack("{s:i, s:s, s:s, s:s}", "line", e->line,
			"directive", e->text, "slurm_gets", gets ? gets : "", "why", why));
		free(why);
		n++;
	}
	/* --take-sbatch is offered only when not given and it would take a line above */
	if (n)
		warning("the rule: xloop gives sbatch the options from xloop.json (and the job "
			"name, log, comment, chdir) on its command line, and sbatch's command "
			"line wins over #SBATCH lines; other #SBATCH lines still apply (xloop "
			"help submit).%s", took ? " --take-sbatch takes only the CPUs, memory, "
			"time, GRES and partition: set the others in xloop.json or remove them "
			"from job.sh" : takeable ? " To run with the job's own CPUs, memory, "
			"time, GRES and partition instead, adopt it with --take-sbatch (they go "
			"into xloop.json)" : "");
	free(argv);
	buf_release(&scratch);
	free(out);
	free(dir);
	sbatch_directives_release(&d);
}

/*
 * adopt --take-sbatch: job.sh's own requests (the last #SBATCH line of each
 * option, as sbatch reads them) become xloop.json's, each a decision, so
 * that what the job asks for is what Slurm gets. 0 or an exit code.
 */
static int take_sbatch(struct xl_ctx *ctx, const char *text)
{
	struct sbatch_directives d;
	size_t i, k;
	int rc = 0;

	sbatch_directives_parse(text, &d);
	for (k = 0; k < ARRAY_SIZE(takes) && rc == 0; k++) {
		const struct sbatch_directive *e = NULL;
		char cur[32];
		const char *now;
		long long n = 0;
		const char *errstr;
		char *what;
		json_t *v;

		for (i = 0; i < d.nr; i++)
			if (strcmp(d.v[i].option, takes[k].option) == 0)
				e = &d.v[i];
		if (!e || !*e->value)
			continue;
		xsnprintf(cur, sizeof(cur), "%lld", ctx->cfg.res.cpus);
		now = k == 0 ? cur : k == 1 ? ctx->cfg.res.mem : k == 2 ? ctx->cfg.res.time :
		      k == 3 ? ctx->cfg.res.gres : ctx->cfg.partition;
		if (same_value(takes[k].option, e->value, now))
			continue;
		if (takes[k].integer && parse_ll(e->value, 1, 4096, &n, &errstr) < 0) {
			error("job.sh line %d: '#SBATCH %s': %s is %s", e->line, e->text,
			      takes[k].option, errstr);
			rc = XL_DATAERR;
			break;
		}
		v = takes[k].integer ? json_integer(n) : json_string(e->value);
		what = xasprintf("%s.%s %s -> %s, from job.sh's '#SBATCH %s' (adopt "
				 "--take-sbatch)", takes[k].key[0], takes[k].key[1], now,
				 e->value, e->text);
		rc = loop_decide_config(ctx, takes[k].key, 2, v, what);
		if (rc == 0 && !ctx->json)
			printf("took %s\n", what);
		free(what);
	}
	sbatch_directives_release(&d);
	return rc;
}

/*
 * The scripts of --step NAME=SCRIPT after PATH (text, taken over) into set:
 * each read and checked as job.sh is, names unique, no variable in two.
 */
static int read_steps(const char *path, struct buf *text, const struct opt_list *steps,
		      struct step_set *set, char **cause)
{
	int i, err, rc;

	step_set_add(set, STEP_FIRST, path, text);
	for (i = 0; i < steps->n; i++) {
		struct buf t = BUF_INIT;
		char *name, *sp;
		size_t k;

		rc = steps_parse_arg(steps->v[i], &name, &sp, cause);
		if (rc)
			return rc;
		for (k = 0; k < set->nr; k++)
			if (strcmp(set->names[k], name) == 0) {
				*cause = xasprintf("step '%s' is given twice", name);
				rc = XL_USAGE;
			}
		if (rc == 0 && set->nr >= STEPS_MAX) {
			*cause = xasprintf("more than %d steps", STEPS_MAX - 1);
			rc = XL_USAGE;
		}
		if (rc == 0 && study_read_script(sp, &t, &err, cause) < 0)
			rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		if (rc == 0 && study_bash_syntax(sp, t.s, cause) < 0)
			rc = XL_DATAERR;
		if (rc == 0)
			step_set_add(set, name, sp, &t);
		buf_release(&t);
		free(name);
		free(sp);
		if (rc)
			return rc;
	}
	return steps_check_vars(set, cause);
}

/* Register a proven job script. */
static int cmd_adopt(struct xl_ctx *ctx, const struct cmd_entry *self,
		     struct cmd_args *args)
{
	const char *tag = args_get(args, "tag"), *cv = args_get(args, "cv");
	const struct opt_list *steps = args_list(args, "step");
	struct step_set set;
	struct buf text = BUF_INIT;
	json_t *sbatch_lines = json_array();
	struct run r = { 0 };
	char **pos = args->pos, *cause = NULL, *tmp = NULL;
	double score = 0;
	size_t i;
	int rc, err;

	(void)self;
	step_set_init(&set);
	rc = loop_check_new_tag(ctx, tag, &cause);
	if (rc)
		goto fail;
	if (study_read_script(pos[0], &text, &err, &cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto fail;
	}
	if (study_bash_syntax(pos[0], text.s, &cause) < 0) {
		rc = XL_DATAERR;
		goto fail;
	}
	if (steps && steps->n) {
		rc = read_steps(pos[0], &text, steps, &set, &cause);
		if (rc)
			goto fail;
		r.steps = &set;
	}
	if (cv && study_load_cv(cv, ctx->cfg.metric, &score, NULL, &err, &cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto fail;
	}
	r.study = ctx->cfg.study;
	r.tag = (char *)tag;
	rc = loop_create_run(ctx, &r, r.steps ? set.texts[0].s : text.s,
			     r.steps ? set.texts[0].len : text.len, cv, score, &cause);
	if (rc)
		goto fail;
	if (args_flag(args, "take-sbatch")) {
		rc = take_sbatch(ctx, r.steps ? set.texts[0].s : text.s);
		r.study = ctx->cfg.study;	/* the config was reloaded */
		if (rc)
			goto fail;
	}
	check_directives(ctx, tag, r.steps ? set.texts[0].s : text.s,
			 args_flag(args, "take-sbatch"), sbatch_lines);
	if (ctx->json) {
		json_t *sl = json_array();

		for (i = 1; i < set.nr; i++)
			json_array_append_new(sl, json_string(set.names[i]));
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:b, s:o, s:s, s:O, s:o}", "study", r.study,
					"tag", r.tag, "job", (tmp = run_job_path(ctx->root,
					r.study, r.tag)), "proven", cv != NULL,
					"score", cv ? json_real(score) : json_null(),
					"commit", r.commit_id ? r.commit_id : "",
					"sbatch_lines", sbatch_lines, "steps", sl));
	} else {
		printf("adopted %s as run '%s' of study '%s'%s\n", pos[0], tag, r.study,
		       cv ? " (proven)" : "");
		if (cv)
			printf("  score %g from %s\n", score, cv);
		for (i = 1; i < set.nr; i++)
			printf("  step %zu '%s': runs/%s/%s/%s.sh, afterok on '%s'\n", i + 1,
			       set.names[i], r.study, tag, set.names[i], set.names[i - 1]);
		if (r.commit_id && *r.commit_id)
			printf("  committed runs/%s/%s/job.sh%s as %.12s\n", r.study, tag,
			       set.nr > 1 ? " and its steps" : "", r.commit_id);
		printf("next: xloop new TAG --from %s --set VAR=VALUE\n", tag);
	}
	free(r.commit_id);
	free(r.config);
	free(r.config_key);
	free(tmp);
	buf_release(&text);
	step_set_release(&set);
	json_decref(sbatch_lines);
	return XL_OK;
fail:
	error("%s", cause ? cause : "adopt failed");
	free(r.config);
	free(r.config_key);
	free(cause);
	buf_release(&text);
	step_set_release(&set);
	json_decref(sbatch_lines);
	return rc ? rc : XL_ERR;
}

const struct cmd_entry cmd_adopt_entry = {
	.name = "adopt", .opts = adopt_opts, .args = "PATH", .min = 1, .max = 1,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "register an existing job script as a root run of the study",
	.help = "The script is copied byte for byte to runs/<study>/T/job.sh (mode 0755)\n"
	"and committed to git (only that path; what you staged stays staged). It\n"
	"must pass `bash -n` and have Unix line ends (sbatch refuses CRLF).\n"
	"\n"
	"The job's output contract: it writes \"$XLOOP_RUN_DIR/cv.json\" (a JSON\n"
	"object), and its score is the finite number under the key metric.name in\n"
	"xloop.json names (default \"score\"; when that key is absent, \"score\" is\n"
	"read). A job that already writes {\"accuracy\": 0.91} needs metric.name\n"
	"\"accuracy\", not a rename. Slurm runs a copy of job.sh, so use\n"
	"$XLOOP_RUN_DIR, not dirname \"$0\", to find the run directory.\n"
	"\n"
	"With --step NAME=SCRIPT (repeatable, in order), the run has steps: PATH\n"
	"is step 1 (\"job\", job.sh), each SCRIPT is copied to NAME.sh beside it\n"
	"and committed, and each step is its own Slurm job that waits afterok on\n"
	"the step before (--kill-on-invalid-dep=yes: Slurm drops a step whose\n"
	"step before failed). Step 1 takes the run's resources; a later step asks\n"
	"for no GPU unless its own #SBATCH --gres does, and takes CPUs, memory and\n"
	"time from its own #SBATCH lines where it has them (xloop.json's where\n"
	"not). The steps share $XLOOP_RUN_DIR; $XLOOP_STEP holds the step's name;\n"
	"step NAME logs to slurm/attemptN.NAME.out. The last step writes cv.json.\n"
	"A variable may live in any step, but in one only: one assigned in two is\n"
	"refused. `new` copies every step and changes the one holding the variable.\n"
	"\n"
	"With --cv, FILE is a cv.json from a run you made by hand: the run is\n"
	"proven with its score, so it can be a parent straight away.\n"
	"\n"
	"Progress and early stop (stop.on, default true). A job may report as it\n"
	"trains by appending lines to \"$XLOOP_RUN_DIR/progress\" (a file, not the\n"
	"log: the log holds anything a program prints, and no prefix is safe from\n"
	"it; one line per write, each ended by a newline):\n"
	"  epochs N        the epochs it plans (once, optional)\n"
	"  chance C        the value a model that learned nothing gets (optional)\n"
	"  epoch K VALUE   after epoch K: the metric's value now, in metric.goal's\n"
	"                  direction (nan, inf allowed); K is the job's own count,\n"
	"                  kept across segments and restarts from a checkpoint\n"
	"  # for example, in Python, after each epoch:\n"
	"  open(os.environ[\"XLOOP_RUN_DIR\"] + \"/progress\", \"a\").write(f\"epoch {k} {acc}\\n\")\n"
	"Each job's batch script watches that file on the node, every 2 s, with\n"
	"no access to the study's DB. It stops the run when a VALUE is NaN or\n"
	"infinite, or no better than chance (within 1% of C) stop.chance_epochs\n"
	"(2) epochs running, or when `xloop stop T` asks. It first writes its\n"
	"record, \"$XLOOP_RUN_DIR/stopped\" (\"attempt N epoch K WHY\"), then the job\n"
	"should see that file after its epoch, write cv.json with its last value\n"
	"and exit; after stop.grace seconds (120) it is ended (TERM, then KILL).\n"
	"The verdict is \"stopped early at epoch K (WHY)\" from that record,\n"
	"whatever Slurm says: neither success nor failure. The rule is off for the\n"
	"baseline (a root run), for runs whose one change is the seed (replicates,\n"
	"confirming runs) and for `retry` of a stopped run (it runs to its end).\n"
	"Every job of a run is watched: a plain one, each segment (K goes on from\n"
	"the checkpoint), a sweep's task (its stop is that task's verdict); the\n"
	"later steps of a stopped run (afterok, a sweep's aftercorr) do not run.\n"
	"A job that reports nothing runs as before. runs/digits-mlp/base/job.sh in\n"
	"xloop's repository is a PyTorch job that does all of this.\n"
	"\n"
	"Behind the best (issue 46). At submit xloop writes \"$XLOOP_RUN_DIR/stop-bar\"\n"
	"(\"bar K V\": the value to beat at epoch K): the best configuration's mean\n"
	"curve at K (and the run's parent's: the less demanding of the two), less\n"
	"stop.noise_z (3) sds of the seed noise at K, measured from replicates\n"
	"(configurations with two runs or more; epochs K-2..K+2, never less than\n"
	"from K to the end; widened by Student's t for the replicates' df), times\n"
	"sqrt(1 + 1/n) for a mean of n runs; only epochs both reached, at the same\n"
	"K, none up to stop.warmup (10); and never above the last epoch's bar less\n"
	"the largest rise any proven run's curve made from K to its end (a slow\n"
	"starter that could still reach it is not stopped). A run behind the bar\n"
	"at stop.behind (5) reported epochs running stops\n"
	"(\"behind the best by more than the noise\"). No replicates, no bar. The\n"
	"same runs as above never stop by it.\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_adopt,
};
