/*
 * xloop init: make the current repository an xloop study. Creates
 * xloop.json (defaults), .xloop/ with the state DB, ops/decisions.md, a
 * section in AGENTS.md and a .gitignore entry. Running it again changes
 * nothing; every file is replaced atomically.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "doctor/doctor.h"
#include "driver/driver.h"
#include "lib/fsutil.h"
#include "loop.h"

static const struct opt init_opts[] = {
	{ "study", OPT_STRING, "S", "the study name (default: main); runs live in runs/S/" },
	{ "partition", OPT_STRING, "P", "the Slurm partition jobs go to (default: gpu)" },
	{ "metric", OPT_STRING, "NAME", "the score's key in cv.json (metric.name; default: score)" },
	{ "goal", OPT_STRING, "max|min", "whether a higher or a lower score is better (metric.goal; "
	  "default: max)" },
	OPT_END,
};

#define AGENTS_BEGIN "<!-- xloop:begin (maintained by 'xloop init') -->"
#define AGENTS_END "<!-- xloop:end -->"

static const char agents_section[] =
	AGENTS_BEGIN "\n"
	"## Experiments run through xloop\n"
	"\n"
	"This repository's experiments are run on Slurm by xloop. Its state lives in\n"
	"`.xloop/state.db` and in git, not in your memory.\n"
	"\n"
	"- Start every session with `xloop resume`; continue with `xloop next`. They tell\n"
	"  you what finished, what runs, what is best, and what to do next.\n"
	"- Never write or run `sbatch` by hand, and never edit a submitted job.sh:\n"
	"  `xloop new TAG --from PARENT --set VAR=VALUE` makes a run with exactly one\n"
	"  change, `xloop submit TAG` submits it (logs in runs/<study>/<tag>/slurm/).\n"
	"- A run succeeded only if Slurm says COMPLETED with ExitCode 0:0 and the job\n"
	"  wrote \"$XLOOP_RUN_DIR/cv.json\" with a finite number under the key\n"
	"  metric.name in xloop.json names (default \"score\"). A run its stop watcher\n"
	"  stopped is \"stopped early at epoch K (why)\": neither success nor failure.\n"
	"- Report each epoch: append \"epoch K VALUE\" (and once \"chance C\") to\n"
	"  \"$XLOOP_RUN_DIR/progress\"; when \"$XLOOP_RUN_DIR/stopped\" appears, write\n"
	"  cv.json with the last value and exit 0. NaN, or chance twice running, stops\n"
	"  a run; so does `xloop stop TAG` (`xloop help adopt`).\n"
	"- Record why you chose a change: `xloop decide \"TEXT\" --run TAG`.\n"
	"- MCP clients: `xloop mcp` serves these commands as tools (`xloop agent-setup\n"
	"  claude|codex` registers it); `xloop export` gives the runs as CSV or JSONL.\n"
	"- git: xloop commits job.sh, each verdict with the run's cv.json, and\n"
	"  ops/decisions.md itself; logs (runs/*/*/slurm/) and report.html are ignored.\n"
	"  #SBATCH lines lose to xloop.json's resources (`xloop help submit`).\n"
	"- Job logs: first line `START` with the config and the device, a progress line\n"
	"  every 30-60 s, last line `FINISHED` or `FAILED`; no tqdm or carriage returns.\n"
	"- The job reads XLOOP_RUN_DIR, XLOOP_TAG, XLOOP_ATTEMPT, XLOOP_STUDY and\n"
	"  XLOOP_ROOT from its environment: write cv.json to \"$XLOOP_RUN_DIR/cv.json\".\n"
	"  XLOOP_RUN_ID is the same in every job of a run (attempts, segments, steps,\n"
	"  Slurm requeues): give it to a tracker as its run id (wandb.init(id=...,\n"
	"  resume=\"allow\")), or name WANDB_RUN_ID in xloop.json's tracker.run_id_vars.\n"
	"- Runs longer than the time limit (segments.max in xloop.json, or `--segments\n"
	"  N`): the job gets SIGUSR2 segments.lead seconds before its limit; it saves\n"
	"  its state under \"$XLOOP_RUN_DIR/checkpoint\" and exits 85 (XLOOP_CONTINUE),\n"
	"  resumes from it when it exists, and XLOOP_SEGMENT says which segment runs.\n"
	"  job.sh forwards the signal to the program and waits for its true exit code:\n"
	"  ```bash\n"
	"  trap 'kill -USR2 \"$child\" 2>/dev/null; got=1' USR2\n"
	"  python train.py & child=$!\n"
	"  wait \"$child\"; rc=$?\n"
	"  if [ \"$rc\" -gt 128 ] && [ -n \"${got:-}\" ]; then wait \"$child\"; rc=$?; fi\n"
	"  exit \"$rc\"\n"
	"  ```\n"
	"- Train, then evaluate: `xloop adopt train.sh --tag T --step eval=eval.sh`\n"
	"  makes each step its own job, afterok on the one before (XLOOP_STEP names it;\n"
	"  logs slurm/attemptN.NAME.out; no GPU unless its own #SBATCH --gres asks).\n"
	"  The last step writes cv.json; a variable lives in one step only, and `new`\n"
	"  changes the step that holds it.\n"
	"- A grid of one variable is a sweep: `xloop sweep --set VAR=V1,V2,...`; its\n"
	"  failed tasks are resubmitted with `xloop sweep retry NAME`. Failures of the\n"
	"  machine (NODE_FAIL, PREEMPTED) are retried by xloop itself; for TIMEOUT and\n"
	"  OUT_OF_MEMORY the briefing gives the retry command with the raised limit.\n"
	"- `--json` on next, resume, status, doctor and report gives a versioned\n"
	"  document (\"schema\": \"xloop.next/3\", ...; see schemas/ in xloop); the\n"
	"  briefing's next_action.argv is the command to run next.\n"
	"- Never: scancel or `scontrol update` any job (least of all other users'),\n"
	"  edit or delete a job.sh that was submitted, reorder or renumber a sweep,\n"
	"  or edit .xloop/. Ask the user before `xloop cancel`.\n"
	AGENTS_END "\n";

static const char decisions_header[] =
	"# Decisions\n"
	"\n"
	"Append-only log of this study's decisions. xloop adds an entry and commits\n"
	"it for every verdict and every `xloop decide`.\n";

/* What init did, for its report. */
struct change {
	json_t *created;
	json_t *updated;
	json_t *fitted;		/* doctor_fit's changes of the defaults */
	json_t *committed;
	json_t *not_committed;
	char *commit;		/* the commit made, or NULL */
	int slurm;		/* Slurm answered */
	struct doctor_checks *checks;
};

/* Write path if its content differs; note what happened. */
static int put_file(const char *root, const char *rel, const char *text,
		    int existed, struct change *ch, char **cause)
{
	char *path = path_join(root, rel);
	int rc = write_file_atomic(path, text, strlen(text), 0644, cause);

	free(path);
	if (rc == 0)
		json_array_append_new(existed ? ch->updated : ch->created,
				      json_string(rel));
	return rc;
}

/* Read rel under root; 1 if it exists, 0 if not, -1 on error. */
static int get_file(const char *root, const char *rel, struct buf *b, char **cause)
{
	char *path = path_join(root, rel);
	int err, rc = read_file(path, 8 << 20, b, &err, cause);

	free(path);
	if (rc == 0)
		return 1;
	if (err == ENOENT) {
		FREE_AND_NULL(*cause);
		return 0;
	}
	return -1;
}

/* The AGENTS.md text with our section added or brought up to date. */
static char *agents_text(const char *old, int exists)
{
	const char *b = exists ? strstr(old, AGENTS_BEGIN) : NULL;
	const char *e = b ? strstr(b, AGENTS_END) : NULL;
	struct buf out = BUF_INIT;

	if (b && e) {
		e += strlen(AGENTS_END);
		if (*e == '\n')
			e++;
		buf_add(&out, old, (size_t)(b - old));
		buf_adds(&out, agents_section);
		buf_adds(&out, e);
	} else if (exists && *old) {
		buf_adds(&out, old);
		if (old[strlen(old) - 1] != '\n')
			buf_addc(&out, '\n');
		buf_addf(&out, "\n%s", agents_section);
	} else {
		buf_addf(&out, "# AGENTS.md\n\n%s", agents_section);
	}
	return buf_detach(&out, NULL);
}

/*
 * What the .gitignore init writes holds, so that `git status` shows
 * nothing of xloop's after a study: its state, the attempts' logs (and
 * memory samples) and the report. Each line, then the spellings that count
 * as having it.
 */
static const char *const ignored[][4] = {
	{ ".xloop/", ".xloop", "/.xloop/", "/.xloop" },
	{ "/runs/*/*/slurm/", "runs/*/*/slurm/", "/runs/*/*/slurm", "runs/*/*/slurm" },
	{ "/report.html", "report.html", NULL, NULL },
	{ "/runs/*/*/checkpoint", "runs/*/*/checkpoint", NULL, NULL },	/* segments */
	/* the progress a job reports and its stop watcher's files (issue 45) */
	{ "/runs/*/*/progress", "runs/*/*/progress", NULL, NULL },
	{ "/runs/*/*/stopped", "runs/*/*/stopped", NULL, NULL },
	{ "/runs/*/*/stop-request", "runs/*/*/stop-request", NULL, NULL },
	/* the values to beat, written at submit (issue 46) */
	{ "/runs/*/*/stop-bar", "runs/*/*/stop-bar", NULL, NULL },
};

/* True when text has line (exactly, as its own line). */
static int has_line(const char *text, const char *line)
{
	const char *p = text;
	size_t len = strlen(line);

	while (*p) {
		size_t n = strcspn(p, "\n");

		if (n == len && strncmp(p, line, n) == 0)
			return 1;
		p += n;
		if (*p == '\n')
			p++;
	}
	return 0;
}

/* Add to b the lines of ignored[] that it lacks; 1 when it added any. */
static int add_ignores(struct buf *b)
{
	size_t i, j;
	int added = 0;

	for (i = 0; i < ARRAY_SIZE(ignored); i++) {
		int have = 0;

		for (j = 0; j < ARRAY_SIZE(ignored[i]) && ignored[i][j] && !have; j++)
			have = has_line(b->s, ignored[i][j]);
		if (have)
			continue;
		if (b->len && b->s[b->len - 1] != '\n')
			buf_addc(b, '\n');
		buf_addf(b, "%s\n", ignored[i][0]);
		added = 1;
	}
	return added;
}

/* What init will write, worked out (and checked) before anything is written. */
struct init_plan {
	char *config;		/* xloop.json, or NULL: it exists (the user's) */
	int decisions_missing;
	char *agents;		/* AGENTS.md, or NULL: up to date */
	int agents_existed;
	char *gitignore;	/* .gitignore, or NULL: it ignores all of ours already */
	int gitignore_existed;
	int agents_clean;	/* the existing AGENTS.md is as committed in HEAD */
	int gitignore_clean;	/* the same for .gitignore */
};

static void plan_release(struct init_plan *pl)
{
	free(pl->config);
	free(pl->agents);
	free(pl->gitignore);
}

/* rel under root, when it exists, must be a directory (not a symlink). */
static int check_dir(const char *root, const char *rel, char **cause)
{
	char *path = path_join(root, rel);
	int rc = path_exists(path) ? make_dir(path, 0755, cause) : 0;

	free(path);
	return rc;
}

/*
 * Read every file init touches first, so that a symlink or a directory in
 * the way refuses init before it has written anything.
 */
static int plan_files(struct xl_ctx *ctx, const char *root, const struct config *cfg,
		      struct init_plan *pl, char **cause)
{
	struct buf b = BUF_INIT;
	int ex, rc = -1;

	memset(pl, 0, sizeof(*pl));
	if (check_dir(root, "ops", cause) < 0 || check_dir(root, ".xloop", cause) < 0)
		goto out;
	/* xloop.json: only when missing; the user owns it afterwards */
	ex = get_file(root, CONFIG_FILE, &b, cause);
	if (ex < 0)
		goto out;
	if (!ex)
		pl->config = config_to_json(cfg);
	buf_reset(&b);
	ex = get_file(root, "ops/decisions.md", &b, cause);
	if (ex < 0)
		goto out;
	pl->decisions_missing = !ex;
	buf_reset(&b);
	ex = get_file(root, "AGENTS.md", &b, cause);
	if (ex < 0)
		goto out;
	pl->agents = agents_text(b.s, ex);
	pl->agents_existed = ex;
	if (ex && strcmp(pl->agents, b.s) == 0)
		FREE_AND_NULL(pl->agents);
	if (ex && pl->agents &&
	    (pl->agents_clean = loop_matches_head(ctx, "AGENTS.md", b.s, b.len, cause)) < 0)
		goto out;
	buf_reset(&b);
	ex = get_file(root, ".gitignore", &b, cause);
	if (ex < 0)
		goto out;
	if (ex && (pl->gitignore_clean = loop_matches_head(ctx, ".gitignore", b.s, b.len,
							   cause)) < 0)
		goto out;
	if (add_ignores(&b)) {
		pl->gitignore = buf_detach(&b, NULL);
		pl->gitignore_existed = ex;
	}
	rc = 0;
out:
	buf_release(&b);
	return rc;
}

/* Write what plan_files worked out. */
static int write_files(const char *root, const struct init_plan *pl, struct change *ch,
		       char **cause)
{
	char *dir = path_join(root, "ops");
	int rc = make_dir(dir, 0755, cause);

	free(dir);
	if (rc < 0)
		return -1;
	if (pl->config && put_file(root, CONFIG_FILE, pl->config, 0, ch, cause) < 0)
		return -1;
	if (pl->decisions_missing &&
	    put_file(root, "ops/decisions.md", decisions_header, 0, ch, cause) < 0)
		return -1;
	if (pl->agents && put_file(root, "AGENTS.md", pl->agents, pl->agents_existed,
				   ch, cause) < 0)
		return -1;
	if (pl->gitignore && put_file(root, ".gitignore", pl->gitignore,
				      pl->gitignore_existed, ch, cause) < 0)
		return -1;
	return 0;
}

/* .xloop/ and the state DB; *created when the DB is new. */
static int init_state(const char *root, int *created, char **cause)
{
	char *dir = path_join(root, ".xloop");
	char *path = path_join(dir, "state.db");
	int had_db = path_exists(path), rc;
	struct db db;

	rc = make_dir(dir, 0700, cause);
	if (rc == 0)
		rc = db_open(&db, path, cause);
	if (rc == 0) {
		db_close(&db);
		*created = !had_db;
	}
	free(dir);
	free(path);
	return rc;
}

/*
 * Commit what init wrote, in one commit that leaves the user's staged
 * files alone: every file it created, and each one it changed that was as
 * committed before (a file with the user's own uncommitted edits is left
 * for the user, and noted in ch->not_committed).
 */
static void commit_files(struct xl_ctx *ctx, const struct config *cfg,
			 const struct init_plan *pl, struct change *ch)
{
	const char *paths[4];
	size_t n = 0, i;
	char oid[41], *cause = NULL, *msg;
	struct buf list = BUF_INIT;

	if (pl->config)
		paths[n++] = CONFIG_FILE;
	if (pl->decisions_missing)
		paths[n++] = "ops/decisions.md";
	if (pl->gitignore) {
		if (!pl->gitignore_existed || pl->gitignore_clean)
			paths[n++] = ".gitignore";
		else
			json_array_append_new(ch->not_committed, json_string(".gitignore"));
	}
	if (pl->agents) {
		if (!pl->agents_existed || pl->agents_clean)
			paths[n++] = "AGENTS.md";
		else
			json_array_append_new(ch->not_committed, json_string("AGENTS.md"));
	}
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		buf_addf(&list, "%s%s", i ? ", " : "", paths[i]);
	msg = xasprintf("xloop: init study %s\n\n%s, written by xloop init.\n", cfg->study,
			list.s);
	if (loop_commit(ctx, paths, n, msg, oid, &cause) < 0) {
		warning("the study's files were written but not committed: %s", cause);
		free(cause);
	} else if (*oid) {
		ch->commit = xstrdup(oid);
		for (i = 0; i < n; i++)
			json_array_append_new(ch->committed, json_string(paths[i]));
	}
	free(msg);
	buf_release(&list);
}

/* Print what init did. */
static void report(struct xl_ctx *ctx, const char *root, const struct config *cfg,
		   struct change *ch)
{
	size_t i;
	json_t *v;

	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:s, s:O, s:O, s:b, s:o}",
			"root", root, "study", cfg->study, "partition", cfg->partition,
			"created", ch->created, "updated", ch->updated, "fitted", ch->fitted,
			"commit", ch->commit ? ch->commit : "", "committed", ch->committed,
			"not_committed", ch->not_committed, "slurm", ch->slurm,
			"doctor", doctor_checks_json(ch->checks)));
		return;
	}
	if (json_array_size(ch->created) + json_array_size(ch->updated) == 0) {
		printf("xloop study '%s' in %s is already initialised; nothing to do\n",
		       cfg->study, root);
		printf("doctor:\n");
		doctor_print(ch->checks, "  ");
		return;
	}
	printf("initialised xloop study '%s' (partition '%s') in %s\n", cfg->study,
	       cfg->partition, root);
	json_array_foreach(ch->created, i, v)
		printf("  created %s\n", json_string_value(v));
	json_array_foreach(ch->updated, i, v)
		printf("  updated %s\n", json_string_value(v));
	json_array_foreach(ch->fitted, i, v)
		printf("  fitted %s: %s -> %s (%s)\n", json_string_value(json_object_get(v, "key")),
		       json_string_value(json_object_get(v, "from")),
		       json_string_value(json_object_get(v, "to")),
		       json_string_value(json_object_get(v, "why")));
	if (ch->commit) {
		printf("  committed ");
		json_array_foreach(ch->committed, i, v)
			printf("%s%s", i ? ", " : "", json_string_value(v));
		printf(" as %.12s (what you had staged stays staged)\n", ch->commit);
	}
	json_array_foreach(ch->not_committed, i, v)
		printf("  not committed: %s had edits of yours that were not committed; "
		       "review and commit it yourself\n", json_string_value(v));
	printf("the job's output: it writes \"$XLOOP_RUN_DIR/cv.json\" with its score under "
	       "the key \"%s\" (metric.name in %s; goal %s)\n", cfg->metric, CONFIG_FILE,
	       cfg->goal_max ? "max" : "min");
	printf("doctor:\n");
	doctor_print(ch->checks, "  ");
	printf("next: adopt a proven job script with 'xloop adopt PATH --tag TAG'\n");
}

/*
 * Where Slurm answers, Slurm drives the loop (driver.mode slurm); on a
 * network filesystem the feeder forwards its tick to this host.
 */
static void fit_driver(struct config *cfg)
{
	char host[256], *t = NULL;

	free(cfg->driver.mode);
	cfg->driver.mode = xstrdup("slurm");
	if (cfg->remote_host[0] == '\0' && gethostname(host, sizeof(host)) == 0 &&
	    (host[sizeof(host) - 1] = '\0', *host) && host[0] != '-') {
		char *cwd = realpath(".", NULL);

		t = driver_fstype(cwd ? cwd : ".");
		if (driver_fs_is_network(t)) {
			free(cfg->driver.host);
			cfg->driver.host = xstrdup(host);
		}
		free(cwd);
	}
	free(t);
}

/*
 * Ask Slurm about the partition and, for a new xloop.json, fit the
 * defaults to it: Slurm's default partition when the one asked for by
 * default does not exist, resources lowered to what it has.
 */
static void fit_config(struct doctor_facts *f, struct config *cfg, int new_cfg,
		       int partition_given, struct change *ch)
{
	doctor_gather(f, cfg->partition);
	ch->slurm = f->up;
	if (!f->up) {
		char *why = xstrndup(f->ping_cause ? f->ping_cause : "no controller answers",
				     f->ping_cause ? strcspn(f->ping_cause, "\n") : 21);

		warning("Slurm does not answer here (%s): xloop.json keeps the defaults "
			"(partition %s, gres %s, cpus %lld, mem %s, time %s); where Slurm runs, "
			"`xloop doctor` checks them and `xloop doctor --fix` fits them to the "
			"partition", why, cfg->partition, *cfg->res.gres ?
			cfg->res.gres : "none", cfg->res.cpus, cfg->res.mem, cfg->res.time);
		free(why);
		return;
	}
	if (!new_cfg)
		return;
	fit_driver(cfg);
	if (!partition_given && f->part_rc == 0 && f->part_unknown) {
		char *def = doctor_default_partition(f);

		if (def) {
			json_array_append_new(ch->fitted, json_pack("{s:s, s:s, s:s, s:s}",
				"key", "slurm.partition", "from", cfg->partition, "to", def,
				"why", "there is no such partition; this is Slurm's default"));
			free(cfg->partition);
			cfg->partition = def;
		}
	}
	doctor_fit(f, cfg, ch->fitted);
}

/* Create or check the study files in the chosen directory. */
static int cmd_init(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	const char *study = args_get(args, "study"), *partition = args_get(args, "partition");
	const char *metric = args_get(args, "metric"), *goal = args_get(args, "goal");
	static const char word[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
	struct config cfg;
	struct change ch;
	struct doctor_facts facts;
	struct doctor_checks checks;
	struct init_plan plan;
	char *root, *cause = NULL;
	int rc, have_cfg = 0, new_db = 0;

	if (study && !valid_name(study))
		return cmd_usage_error(self, "invalid study name '%s': use letters, digits, "
				       "'.', '_' and '-' (at most 64, starting with a "
				       "letter or digit)", study), XL_USAGE;
	if (partition && (!*partition || strspn(partition,
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		strlen(partition)))
		return cmd_usage_error(self, "invalid partition name '%s'", partition),
		       XL_USAGE;
	if (metric && (!*metric || strspn(metric, word) != strlen(metric)))
		return cmd_usage_error(self, "invalid metric name '%s': use letters, digits, "
				       "'.', '_' and '-'", metric), XL_USAGE;
	if (goal && strcmp(goal, "max") != 0 && strcmp(goal, "min") != 0)
		return cmd_usage_error(self, "--goal takes \"max\" or \"min\", not '%s'", goal),
		       XL_USAGE;

	root = realpath(ctx->dir, NULL);
	if (root == NULL) {
		error("cannot use directory '%s': %s", ctx->dir, strerror(errno));
		return XL_NOINPUT;
	}
	/* an existing config must be valid and agree with the options */
	{
		char *path = path_join(root, CONFIG_FILE);

		have_cfg = path_exists(path);
		free(path);
	}
	if (have_cfg) {
		if (config_load(&cfg, root, &cause) < 0) {
			error("%s", cause);
			rc = XL_CONFIG;
			goto out;
		}
		if ((study && strcmp(study, cfg.study) != 0) ||
		    (partition && strcmp(partition, cfg.partition) != 0)) {
			error("%s already sets study '%s' and partition '%s'; edit it to "
			      "change them", CONFIG_FILE, cfg.study, cfg.partition);
			config_release(&cfg);
			rc = XL_CONFIG;
			goto out;
		}
		if ((metric && strcmp(metric, cfg.metric) != 0) ||
		    (goal && (strcmp(goal, "max") == 0) != cfg.goal_max)) {
			error("%s already sets metric '%s' (goal %s); `xloop config set "
			      "metric.name NAME` (and metric.goal) changes it", CONFIG_FILE,
			      cfg.metric, cfg.goal_max ? "max" : "min");
			config_release(&cfg);
			rc = XL_CONFIG;
			goto out;
		}
	} else {
		config_defaults(&cfg, study, partition);
		if (metric) {
			free(cfg.metric);
			cfg.metric = xstrdup(metric);
		}
		if (goal)
			cfg.goal_max = strcmp(goal, "max") == 0;
	}

	memset(&ch, 0, sizeof(ch));
	memset(&plan, 0, sizeof(plan));
	memset(&checks, 0, sizeof(checks));
	ch.created = json_array();
	ch.updated = json_array();
	ch.fitted = json_array();
	ch.committed = json_array();
	ch.not_committed = json_array();
	ch.checks = &checks;
	/* init makes the study: the root is its to set (main frees it; the
	 * remote check may have found the study already) */
	free(ctx->root);
	ctx->root = xstrdup(root);
	fit_config(&facts, &cfg, !have_cfg, partition != NULL, &ch);
	/* check everything, then the DB, then the files: a refusal writes nothing */
	if (plan_files(ctx, root, &cfg, &plan, &cause) < 0 ||
	    init_state(root, &new_db, &cause) < 0 ||
	    write_files(root, &plan, &ch, &cause) < 0) {
		error("%s", cause);
		rc = XL_ERR;
	} else {
		if (new_db)
			json_array_append_new(ch.created, json_string(".xloop/state.db"));
		commit_files(ctx, &cfg, &plan, &ch);
		doctor_check_all(&facts, &cfg, root, &checks);
		report(ctx, root, &cfg, &ch);
		rc = XL_OK;
	}
	doctor_checks_release(&checks);
	doctor_facts_release(&facts);
	plan_release(&plan);
	config_release(&cfg);
	json_decref(ch.created);
	json_decref(ch.updated);
	json_decref(ch.fitted);
	json_decref(ch.committed);
	json_decref(ch.not_committed);
	free(ch.commit);
out:
	free(cause);
	free(root);
	return rc;
}

const struct cmd_entry cmd_init_entry = {
	.name = "init", .opts = init_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_START,
	.target = CMD_TARGET_NONE,
	.summary = "make this directory an xloop study (idempotent)",
	.help = "Creates, where missing: xloop.json (the configuration), .xloop/ (mode\n"
	"0700) with the state database, ops/decisions.md, an xloop section in\n"
	"AGENTS.md (kept up to date between its markers) and .gitignore lines for\n"
	".xloop/, the attempts' logs (runs/*/*/slurm/) and report.html. An\n"
	"existing xloop.json is validated and kept.\n"
	"\n"
	"A new xloop.json is fitted to the cluster: when Slurm answers, the\n"
	"partition (Slurm's default one when the default \"gpu\" does not exist and\n"
	"--partition was not given) and resources.time/cpus/mem/gres lowered to\n"
	"its MaxTime and largest node, each change printed. Without Slurm (a\n"
	"laptop) the defaults stay, with a warning: `xloop doctor --fix` fits them\n"
	"later. Where Slurm answers, driver.mode is slurm (a feeder job keeps the\n"
	"loop going without cron: `xloop help driver`), and on a network filesystem\n"
	"driver.host is this host; without Slurm it is none. Then doctor's checks\n"
	"run and are printed.\n"
	"\n"
	"The files init creates, and those it changes that had no uncommitted edits,\n"
	"are committed in one commit; what you had staged stays staged. A file with\n"
	"edits of yours that were not committed is left for you, and init says so.\n"
	"The job's output contract: it writes \"$XLOOP_RUN_DIR/cv.json\" with the\n"
	"score under the key metric.name names (default \"score\"; --metric NAME\n"
	"sets it, --goal min when a lower score is better). An existing\n"
	"xloop.json keeps its own: `xloop config set metric.name NAME` changes it.\n",
	.flags = CMD_NOROOT, .exec = cmd_init,
};
