/* xloop help [COMMAND], xloop version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <git2.h>
#include <jansson.h>
#include <sqlite3.h>

#include "cmd/cmd.h"
#include "glossary.h"
#include "lib/fsutil.h"
#include "search/best.h"
#include "tags.h"

static const struct opt help_opts[] = {
	{ "all", OPT_FLAG, NULL, "every option of every command, one a line, with its help" },
	{ "man", OPT_FLAG, NULL, "the manual page in roff: xloop(1), or COMMAND's xloop-COMMAND(1)" },
	{ "man-dir", OPT_STRING, "DIR", "write xloop.1 and every command's page into DIR" },
	OPT_END,
};

/* Write one page, dir/name, from b. */
static int write_page(const char *dir, const char *name, const struct buf *b, char **cause)
{
	char *path = path_join(dir, name);
	int rc = write_file_atomic(path, b->s, b->len, 0644, cause);

	free(path);
	return rc;
}

/* Write xloop.1 and xloop-NAME.1 of every listed command into dir. */
static int write_man_dir(const char *dir)
{
	const struct cmd_entry *const *c;
	char *cause = NULL, *name;
	struct buf b;
	int rc;

	buf_init(&b);
	rc = make_dir(dir, 0755, &cause);
	if (rc == 0) {
		cmd_man_index(&b);
		rc = write_page(dir, "xloop.1", &b, &cause);
	}
	for (c = cmd_table; rc == 0 && *c; c++) {
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		buf_reset(&b);
		cmd_man_page(&b, *c);
		name = xasprintf("xloop-%s.1", (*c)->name);
		rc = write_page(dir, name, &b, &cause);
		free(name);
	}
	buf_release(&b);
	if (rc < 0) {
		error("%s", cause);
		free(cause);
		return XL_ERR;
	}
	return XL_OK;
}

/* Print the manual page of pos[0] (NULL: xloop(1)). */
static int print_man(const char *name)
{
	const struct cmd_entry *cmd = NULL;
	struct buf b;

	if (name && (cmd = cmd_find(name)) == NULL) {
		error("no manual page for '%s'; 'xloop help' lists the commands", name);
		return XL_USAGE;
	}
	buf_init(&b);
	if (cmd)
		cmd_man_page(&b, cmd);
	else
		cmd_man_index(&b);
	fwrite(b.s, 1, b.len, stdout);
	buf_release(&b);
	return XL_OK;
}

#ifndef XLOOP_VERSION
#define XLOOP_VERSION "0.1.0-dev"
#endif

/* `xloop help logs`: the job log contract and what xloop reads from it. */
static const char logs_help[] =
	"The job's log (runs/<study>/<tag>/slurm/attemptN.out, one per attempt,\n"
	"never overwritten; `xloop log T` prints its path and last line):\n"
	"\n"
	"  first line   START and the configuration and device the job really uses:\n"
	"               START lr=0.1 depth=4 device=cuda:0 (NVIDIA A100)\n"
	"  every 30-60 s a progress line: loss, speed, memory, time left\n"
	"  last line    FINISHED, or FAILED and why\n"
	"  no tqdm or carriage returns (one line per update)\n"
	"\n"
	"Why the START line matters: for a job that asks for a GPU (resources.gres),\n"
	"the verdict reads it to tell whether the job saw the GPU. \"START names a\n"
	"GPU\" is good; \"START line shows no GPU\" (no 'cuda' or 'gpu' in it, or\n"
	"device=cpu) opens the breaker (breaker.no_gpu): every job behind it would\n"
	"run on the CPU too. \"no START line\" means the log has none, so xloop\n"
	"cannot check the device: print one first thing, from the program, with\n"
	"the device it really uses (device=cuda:0, or device=cpu when it fell back):\n"
	"  print(f\"START lr={lr} device={device}\", flush=True)\n"
	"The verdict itself (COMPLETED, ExitCode 0:0, a fresh cv.json) does not\n"
	"need it.\n"
	"\n"
	"`xloop watch` and `xloop log T` show the latest progress line; a RUNNING\n"
	"job whose log stays silent for queue.stale_after minutes is flagged as\n"
	"stale (the node may have frozen). The last lines of a failed attempt's\n"
	"log are its evidence in the briefing.\n";

/* `xloop help glossary`: each term, its text indented under it. */
static void print_glossary(void)
{
	size_t i;

	printf("The words xloop's output uses, each in one sense (as git's gitglossary):\n");
	for (i = 0; i < glossary_n; i++) {
		const char *p = glossary[i].text, *nl;

		printf("\n%s\n", glossary[i].term);
		for (; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (nl == NULL)
				nl = p + strlen(p) - 1;
			printf("    %.*s\n", (int)(nl - p), p);
		}
	}
}

/* List the commands, or show one command's help. */
static int cmd_help(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args)
{
	const struct cmd_entry *cmd;
	char **pos = args->pos;
	int at;

	(void)ctx;
	(void)self;
	if (args_flag(args, "all")) {
		cmd_print_all_options();
		return XL_OK;
	}
	if (args_get(args, "man-dir"))
		return write_man_dir(args_get(args, "man-dir"));
	if (args_flag(args, "man"))
		return print_man(args->npos ? pos[0] : NULL);
	if (args->npos == 1 && strcmp(pos[0], "tags") == 0) {
		fputs(tag_help, stdout);
		return XL_OK;
	}
	if (args->npos == 1 && strcmp(pos[0], "logs") == 0) {
		fputs(logs_help, stdout);
		return XL_OK;
	}
	if (args->npos == 1 && strcmp(pos[0], "glossary") == 0) {
		print_glossary();
		return XL_OK;
	}
	if (args->npos == 1 && strcmp(pos[0], "best") == 0) {
		fputs(BEST_HELP, stdout);
		return XL_OK;
	}
	if (args->npos >= 1) {
		cmd = cmd_find(pos[0]);
		if (cmd == NULL) {
			error("unknown command '%s'; 'xloop help' lists them", pos[0]);
			return XL_USAGE;
		}
		/* pos[0] stands where the command's name stands in its argv */
		if (args->npos == 2 && (!cmd->subs || !(cmd = cmd_sub(cmd, 2, pos, &at)) || !at)) {
			error("'%s' has no subcommand '%s'; 'xloop help %s' lists them",
			      pos[0], pos[1], pos[0]);
			return XL_USAGE;
		}
		cmd_print_help(cmd);
		return XL_OK;
	}
	printf("xloop runs the experiment loop of an ML project on Slurm.\n\n"
	       "usage: xloop [--host HOST] [-C DIR] [--json] [--allow-root] [--allow-secret] COMMAND [ARGS]\n");
	cmd_print_groups();
	printf("\n-C DIR runs as if xloop was started in DIR (as in git): relative paths\n"
	       "given after it are taken from DIR; -C A -C B is A/B.\n"
	       "\n'xloop help COMMAND' or 'xloop COMMAND --help' shows one command;\n"
	       "topics: 'xloop help tags' the names xloop gives the runs it makes;\n"
	       "'xloop help best' what \"best\" means (configurations, noise, the rule);\n"
	       "'xloop help logs' the job's log: its START line, progress, last line;\n"
	       "'xloop help glossary' each word xloop uses in its one sense (a proven run,\n"
	       "confirmed, ±, ...).\n"
	       "'xloop help --man COMMAND | man -l -' the manual page; 'xloop completion\n"
	       "bash' the shell completion; ./build.sh install PREFIX installs both.\n"
	       "exit codes: 0 ok, 2 usage, 65 bad input data, 66 unknown tag or missing\n"
	       "file, 69 Slurm not found, 70 a bug in xloop, 75 try later, 77 refused\n"
	       "(root), 78 bad config, 1 any other error.\n");
	return XL_OK;
}

const struct cmd_entry cmd_help_entry = {
	.name = "help", .opts = help_opts, .args = "[COMMAND [SUBCOMMAND] | tags | best | logs | glossary]", .min = 0, .max = 2,
	.group = CMD_GROUP_ABOUT,
	.target = CMD_TARGET_NONE,
	.summary = "show the commands, or one command's help",
	.help = "`xloop help tags` shows the grammar of the tags xloop gives runs;\n"
	"`xloop help best` what \"best\" means and the rule that makes a run it;\n"
	"`xloop help logs` the job's log: what its START line is and why it matters;\n"
	"`xloop help glossary` each word xloop's output uses, in its one sense\n"
	"(also the GLOSSARY section of xloop(1)).\n"
	"With --man, the manual page in roff (`xloop help --man next | man -l -`):\n"
	"xloop(1) without COMMAND; --man-dir DIR writes every page into DIR.\n",
	.flags = CMD_LOCAL, .exec = cmd_help,
};

/* Print the version of xloop and of the libraries linked in. */
static int cmd_version(struct xl_ctx *ctx, const struct cmd_entry *self,
		       struct cmd_args *args)
{
	int major, minor, rev;
	char git[32];
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);

	(void)self;
	(void)args;
	git_libgit2_version(&major, &minor, &rev);
	xsnprintf(git, sizeof(git), "%d.%d.%d", major, minor, rev);
	if (ctx->json) {
		json_t *doc = json_pack("{s:s, s:{s:s, s:s, s:s, s:s}}",
					"version", XLOOP_VERSION, "libraries",
					"sqlite", sqlite3_libversion(), "libgit2", git,
					"jansson", JANSSON_VERSION, "libcurl", cv->version);

		cmd_emit_json(doc);
		return XL_OK;
	}
	printf("xloop %s (sqlite %s, libgit2 %s, jansson %s, libcurl %s)\n",
	       XLOOP_VERSION, sqlite3_libversion(), git, JANSSON_VERSION, cv->version);
	return XL_OK;
}

const struct cmd_entry cmd_version_entry = {
	.name = "version", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_ABOUT,
	.target = CMD_TARGET_NONE,
	.summary = "print the version of xloop and its libraries",
	.help = "",
	.flags = CMD_LOCAL, .exec = cmd_version,
};
