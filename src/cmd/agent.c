/*
 * xloop agent-setup claude|codex: the command permissions seed 002
 * recommends for a coding agent in this repository: read-only xloop and
 * Slurm queries run freely, anything that submits asks first, cancelling
 * and hand-written sbatch are refused. Deny rules match spellings, not
 * intent, so xloop remains the guard: it only ever cancels jobs it
 * submitted itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "agent-rules.h"
#include "fsutil.h"

static const char bypass_note[] =
	"Deny rules match how a command is spelled, not what it does: `env scancel`,\n"
	"`/usr/bin/scancel` or `bash -c 'scancel ...'` get past them. They are a\n"
	"speed bump; xloop itself is the guard: `xloop cancel` only cancels the job\n"
	"of an attempt xloop submitted, and submits only through its own checks.\n";

/* Add s to array a unless it is there. Returns 1 when added. */
static int add_unique(json_t *a, const char *s)
{
	size_t i;

	for (i = 0; i < json_array_size(a); i++)
		if (json_is_string(json_array_get(a, i)) &&
		    strcmp(json_string_value(json_array_get(a, i)), s) == 0)
			return 0;
	json_array_append_new(a, json_string(s));
	return 1;
}

/* .claude/settings.json: our rules merged into permissions.allow/ask/deny. */
static int setup_claude(struct xl_ctx *ctx, char **path, int *added, char **cause)
{
	static const char *const keys[] = { "allow", "ask", "deny" };
	char *dir = path_join(ctx->root, ".claude"), *text;
	struct buf b = BUF_INIT;
	json_t *doc = NULL, *perm;
	json_error_t jerr;
	size_t i;
	int err, rc = 0;

	*path = path_join(dir, "settings.json");
	if (read_file(*path, 4 << 20, &b, &err, cause) == 0) {
		doc = json_loadb(b.s, b.len, 0, &jerr);
		if (!json_is_object(doc)) {
			*cause = xasprintf("%s is not a JSON object (%s): fix it first; "
					   "nothing was changed", *path,
					   doc ? "another type" : jerr.text);
			rc = XL_DATAERR;
			goto out;
		}
	} else if (err != ENOENT) {
		rc = XL_DATAERR;
		goto out;
	} else {
		FREE_AND_NULL(*cause);
		doc = json_object();
	}
	perm = json_object_get(doc, "permissions");
	if (!perm) {
		perm = json_object();
		json_object_set_new(doc, "permissions", perm);
	}
	for (i = 0; i < ARRAY_SIZE(keys) && json_is_object(perm); i++) {
		json_t *a = json_object_get(perm, keys[i]);

		if (!a) {
			a = json_array();
			json_object_set_new(perm, keys[i], a);
		}
		if (!json_is_array(a))
			break;
	}
	if (!json_is_object(perm) || i < ARRAY_SIZE(keys)) {
		*cause = xasprintf("%s: \"permissions\" (and its allow, ask, deny) must be "
				   "an object of arrays; nothing was changed", *path);
		rc = XL_DATAERR;
		goto out;
	}
	for (i = 0; i < agent_nrules; i++) {
		char *r = xasprintf("Bash(%s:*)", agent_rules[i].cmd);

		*added += add_unique(json_object_get(perm, keys[agent_rules[i].kind]), r);
		free(r);
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (make_dir(dir, 0755, cause) < 0 ||
	    write_file_atomic(*path, text, strlen(text), 0644, cause) < 0)
		rc = XL_ERR;
	free(text);
out:
	json_decref(doc);
	buf_release(&b);
	free(dir);
	return rc;
}

/* .codex/rules/xloop.rules: ours alone, rewritten whole. */
static int setup_codex(struct xl_ctx *ctx, char **path, int *added, char **cause)
{
	static const char *const decision[] = { "allow", "prompt", "forbidden" };
	char *dir = path_join(ctx->root, ".codex"), *rdir = path_join(dir, "rules");
	struct buf b = BUF_INIT;
	size_t i;
	int rc = 0;

	*path = path_join(rdir, "xloop.rules");
	buf_adds(&b, "# Written by `xloop agent-setup codex`; rewritten when it runs again.\n"
		 "# Read-only queries run, submissions ask first, cancelling is refused.\n");
	for (i = 0; i < agent_nrules; i++) {
		const char *w = agent_rules[i].cmd;

		buf_adds(&b, "prefix_rule(\n    pattern = [");
		while (*w) {
			size_t len = strcspn(w, " ");

			buf_addf(&b, "\"%.*s\"%s", (int)len, w, w[len] ? ", " : "");
			w += len + (w[len] == ' ');
		}
		buf_addf(&b, "],\n    decision = \"%s\",\n", decision[agent_rules[i].kind]);
		if (agent_rules[i].kind == AGENT_DENY)
			buf_adds(&b, "    justification = \"xloop submits and cancels its own "
				 "jobs: use `xloop next`, `xloop retry` or ask the user\",\n");
		buf_adds(&b, ")\n");
		(*added)++;
	}
	if (make_dir(dir, 0755, cause) < 0 || make_dir(rdir, 0755, cause) < 0 ||
	    write_file_atomic(*path, b.s, b.len, 0644, cause) < 0)
		rc = XL_ERR;
	buf_release(&b);
	free(dir);
	free(rdir);
	return rc;
}

/* Write one agent's permission rules. */
static int cmd_agent_setup(struct xl_ctx *ctx, const struct cmd_entry *self,
			   struct cmd_args *args)
{
	char **pos = args->pos, *path = NULL, *cause = NULL;
	int rc, added = 0;

	if (strcmp(pos[0], "claude") != 0 && strcmp(pos[0], "codex") != 0)
		return cmd_usage_error(self, "the agent is 'claude' or 'codex'"), XL_USAGE;
	rc = strcmp(pos[0], "claude") == 0 ? setup_claude(ctx, &path, &added, &cause) :
		setup_codex(ctx, &path, &added, &cause);
	if (rc)
		error("%s", cause ? cause : "unable to write the rules");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:i, s:s}", "agent", pos[0], "file", path,
					"rules_added", added, "note", bypass_note));
	else
		printf("%s: %d rule%s added (read-only queries allowed, submissions ask, "
		       "cancelling denied)\n\n%s", path, added, added == 1 ? "" : "s",
		       bypass_note);
	free(path);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_agent_setup_entry = {
	.name = "agent-setup", .opts = NULL, .args = "claude|codex", .min = 1, .max = 1,
	.target = CMD_TARGET_NONE,
	.summary = "write the coding agent's command permissions for this repository",
	.help = "claude: merges rules into .claude/settings.json (permissions.allow, ask,\n"
	"deny; other settings and rules are kept). codex: writes\n"
	".codex/rules/xloop.rules (prefix_rule entries). Read-only xloop and Slurm\n"
	"queries are allowed; xloop commands that submit or change the study ask\n"
	"first; scancel, xloop cancel, scontrol update/requeue/hold and a\n"
	"hand-written sbatch are denied. Running it again adds nothing twice.\n",
	.flags = CMD_REPO | CMD_NOROOT, .exec = cmd_agent_setup,
};
