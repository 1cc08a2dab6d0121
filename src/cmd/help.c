/* xloop help [COMMAND], xloop version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <git2.h>
#include <jansson.h>
#include <sqlite3.h>

#include "cmd/cmd.h"
#include "cmd/opts.h"
#include "tags.h"

#ifndef XLOOP_VERSION
#define XLOOP_VERSION "0.1.0-dev"
#endif

/* List the commands, or show one command's help. */
static int cmd_help(struct xl_ctx *ctx, const struct cmd_entry *self,
		    int argc, char **argv)
{
	const struct cmd_entry *const *c, *cmd;
	char **pos;
	int npos, rc;

	rc = opts_parse(ctx, self, NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 0, 1) < 0) {
		free(pos);
		return XL_USAGE;
	}
	if (npos == 1 && strcmp(pos[0], "tags") == 0) {
		free(pos);
		fputs(tag_help, stdout);
		return XL_OK;
	}
	if (npos == 1) {
		cmd = cmd_find(pos[0]);
		if (cmd == NULL) {
			error("unknown command '%s'; 'xloop help' lists them", pos[0]);
			free(pos);
			return XL_USAGE;
		}
		free(pos);
		cmd_print_help(cmd);
		return XL_OK;
	}
	free(pos);
	printf("xloop runs the experiment loop of an ML project on Slurm.\n\n"
	       "usage: xloop [--host HOST] [-C DIR] [--json] [--allow-root] [--allow-secret] COMMAND [ARGS]\n\n"
	       "commands:\n");
	for (c = cmd_table; *c; c++)
		if (!((*c)->flags & CMD_HIDDEN))
			printf("  %-10s %s\n", (*c)->name, (*c)->summary);
	printf("\n-C DIR runs as if xloop was started in DIR (as in git): relative paths\n"
	       "given after it are taken from DIR; -C A -C B is A/B.\n"
	       "\n'xloop help COMMAND' or 'xloop COMMAND --help' shows one command;\n"
	       "'xloop help tags' the names xloop gives the runs it makes.\n"
	       "exit codes: 0 ok, 2 usage, 65 bad input data, 66 unknown tag or missing\n"
	       "file, 69 Slurm not found, 75 try later, 77 refused (root), 78 bad config,\n"
	       "1 any other error.\n");
	return XL_OK;
}

const struct cmd_entry cmd_help_entry = {
	"help", "[COMMAND | tags]", "show the commands, or one command's help",
	"`xloop help tags` shows the grammar of the tags xloop gives runs.\n", CMD_LOCAL, cmd_help,
};

/* Print the version of xloop and of the libraries linked in. */
static int cmd_version(struct xl_ctx *ctx, const struct cmd_entry *self,
		       int argc, char **argv)
{
	int major, minor, rev, rc;
	char **pos, git[32];
	int npos;
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);

	rc = opts_parse(ctx, self, NULL, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	rc = opts_npos(self, pos, npos, 0, 0);
	free(pos);
	if (rc < 0)
		return XL_USAGE;
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
	"version", "", "print the version of xloop and its libraries", "", CMD_LOCAL, cmd_version,
};
