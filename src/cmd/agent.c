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
#include "lib/fsutil.h"
#include "mcp/mcp.h"

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

/*
 * .mcp.json (Claude Code's project servers) with the xloop server in it,
 * the rest kept, into *mcp; the file is not written here. 0, or an exit
 * code with *cause.
 */
static int load_mcp_json(struct xl_ctx *ctx, char **path, json_t **mcp, int *added,
			 char **cause)
{
	struct buf b = BUF_INIT;
	json_error_t jerr;
	json_t *servers;
	int err;

	*path = path_join(ctx->root, ".mcp.json");
	*mcp = NULL;
	if (read_file(*path, 4 << 20, &b, &err, cause) == 0) {
		*mcp = json_loadb(b.s, b.len, 0, &jerr);
	} else if (err == ENOENT) {
		FREE_AND_NULL(*cause);
		*mcp = json_object();
	} else {
		buf_release(&b);
		return XL_DATAERR;
	}
	buf_release(&b);
	servers = json_object_get(*mcp, "mcpServers");
	if (json_is_object(*mcp) && !servers) {
		servers = json_object();
		json_object_set_new(*mcp, "mcpServers", servers);
	}
	if (!json_is_object(*mcp) || !json_is_object(servers)) {
		*cause = xasprintf("%s must be a JSON object with an object \"mcpServers\"; "
				   "fix it first: nothing was changed", *path);
		return XL_DATAERR;
	}
	if (!json_object_get(servers, "xloop")) {
		json_object_set_new(servers, "xloop", json_pack("{s:s, s:s, s:[s]}", "type",
			"stdio", "command", "xloop", "args", "mcp"));
		(*added)++;
	}
	return 0;
}

/* .claude/settings.json: our rules merged into permissions.allow/ask/deny; .mcp.json. */
static int setup_claude(struct xl_ctx *ctx, char **path, char **mcp_path, int *added,
			char **cause)
{
	static const char *const keys[] = { "allow", "ask", "deny" };
	char *dir = path_join(ctx->root, ".claude"), *text;
	struct buf b = BUF_INIT;
	json_t *doc = NULL, *perm, *enabled, *mcp = NULL;
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
	/* the MCP server's tools, in the classes of their commands */
	for (i = 0; i < mcp_ntools(); i++) {
		char *r = xasprintf("mcp__xloop__%s", mcp_tool_name(i));

		*added += add_unique(json_object_get(perm, keys[mcp_tool_class(i)]), r);
		free(r);
	}
	enabled = json_object_get(doc, "enabledMcpjsonServers");
	if (!enabled) {
		enabled = json_array();
		json_object_set_new(doc, "enabledMcpjsonServers", enabled);
	}
	if (!json_is_array(enabled)) {
		*cause = xasprintf("%s: \"enabledMcpjsonServers\" must be an array; nothing was "
				   "changed", *path);
		rc = XL_DATAERR;
		goto out;
	}
	*added += add_unique(enabled, "xloop");
	if ((rc = load_mcp_json(ctx, mcp_path, &mcp, added, cause)) != 0)
		goto out;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (make_dir(dir, 0755, cause) < 0 ||
	    write_file_atomic(*path, text, strlen(text), 0644, cause) < 0)
		rc = XL_ERR;
	free(text);
	if (rc == 0) {
		text = json_dumps(mcp, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (write_file_atomic(*mcp_path, text, strlen(text), 0644, cause) < 0)
			rc = XL_ERR;
		free(text);
	}
out:
	json_decref(doc);
	json_decref(mcp);
	buf_release(&b);
	free(dir);
	return rc;
}

/*
 * .codex/config.toml (a trusted project's Codex settings): the xloop
 * server's table appended unless the file has one (the user's own text is
 * never rewritten). 0 or an exit code with *cause.
 */
static int register_codex(const char *dir, char **path, int *added, char **cause)
{
	struct buf b = BUF_INIT, t = BUF_INIT;
	size_t i;
	int err, rc = 0;

	*path = path_join(dir, "config.toml");
	if (read_file(*path, 4 << 20, &b, &err, cause) < 0) {
		if (err != ENOENT) {
			buf_release(&b);
			return XL_DATAERR;
		}
		FREE_AND_NULL(*cause);
	}
	if (strstr(b.s, "\n[mcp_servers.xloop]") || strncmp(b.s, "[mcp_servers.xloop]", 19) == 0) {
		buf_release(&b);
		return 0;
	}
	buf_add(&t, b.s, b.len);
	if (t.len && t.s[t.len - 1] != '\n')
		buf_addc(&t, '\n');
	buf_adds(&t, t.len ? "\n" : "");
	buf_adds(&t, "# Written by `xloop agent-setup codex`: the study's MCP server (`xloop help\n"
		 "# mcp`). Its cancel tool is off, as rules/xloop.rules forbids `xloop cancel`.\n"
		 "[mcp_servers.xloop]\ncommand = \"xloop\"\nargs = [\"mcp\"]\n"
		 "tool_timeout_sec = 600\ndisabled_tools = [");
	for (i = 0; i < mcp_ntools(); i++)
		if (mcp_tool_class(i) == AGENT_DENY)
			buf_addf(&t, "%s\"%s\"", t.s[t.len - 1] == '[' ? "" : ", ", mcp_tool_name(i));
	buf_adds(&t, "]\n");
	if (write_file_atomic(*path, t.s, t.len, 0644, cause) < 0)
		rc = XL_ERR;
	else
		(*added)++;
	buf_release(&b);
	buf_release(&t);
	return rc;
}

/* .codex/rules/xloop.rules: ours alone, rewritten whole; then the MCP server. */
static int setup_codex(struct xl_ctx *ctx, char **path, char **mcp_path, int *added,
		       char **cause)
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
	else
		rc = register_codex(dir, mcp_path, added, cause);
	buf_release(&b);
	free(dir);
	free(rdir);
	return rc;
}

/* Write one agent's permission rules. */
static int cmd_agent_setup(struct xl_ctx *ctx, const struct cmd_entry *self,
			   struct cmd_args *args)
{
	char **pos = args->pos, *path = NULL, *mcp_path = NULL, *cause = NULL;
	int rc, added = 0;

	if (strcmp(pos[0], "claude") != 0 && strcmp(pos[0], "codex") != 0)
		return cmd_usage_error(self, "the agent is 'claude' or 'codex'"), XL_USAGE;
	rc = strcmp(pos[0], "claude") == 0 ? setup_claude(ctx, &path, &mcp_path, &added, &cause) :
		setup_codex(ctx, &path, &mcp_path, &added, &cause);
	if (rc)
		error("%s", cause ? cause : "unable to write the rules");
	else if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:i, s:s}", "agent", pos[0], "file", path,
					"mcp_file", mcp_path, "rules_added", added,
					"note", bypass_note));
	else
		printf("%s: %d rule%s added (read-only queries allowed, submissions ask, "
		       "cancelling denied); the MCP server `xloop mcp` is registered in %s\n\n%s",
		       path, added, added == 1 ? "" : "s", mcp_path, bypass_note);
	free(path);
	free(mcp_path);
	free(cause);
	return rc;
}

const struct cmd_entry cmd_agent_setup_entry = {
	.name = "agent-setup", .opts = NULL, .args = "claude|codex", .min = 1, .max = 1,
	.group = CMD_GROUP_AGENTS,
	.target = CMD_TARGET_NONE,
	.summary = "write the coding agent's command permissions for this repository",
	.help = "claude: merges rules into .claude/settings.json (permissions.allow, ask,\n"
	"deny; other settings and rules are kept). codex: writes\n"
	".codex/rules/xloop.rules (prefix_rule entries). Read-only xloop and Slurm\n"
	"queries are allowed; xloop commands that submit or change the study ask\n"
	"first; scancel, xloop cancel, scontrol update/requeue/hold and a\n"
	"hand-written sbatch are denied. Running it again adds nothing twice.\n"
	"It also registers the study's MCP server (`xloop mcp`): claude in .mcp.json\n"
	"(enabled in settings.json, its tools mcp__xloop__NAME in the same classes:\n"
	"read-only tools allowed, those that submit or change the study ask,\n"
	"cancel denied); codex as [mcp_servers.xloop] in .codex/config.toml (kept\n"
	"when there; its cancel tool disabled).\n",
	.flags = CMD_REPO | CMD_NOROOT, .exec = cmd_agent_setup,
};
