/* xloop mcp: the study in the current directory as an MCP server on stdio. */
#include <stdio.h>

#include "cmd/cmd.h"
#include "mcp/mcp.h"

static const struct opt mcp_opts[] = {
	{ "read-only", OPT_FLAG, NULL, "serve only the tools that only read (the ones "
	  "agent-setup allows without asking); the others are refused" },
	OPT_END,
};

/* Serve until stdin ends. */
static int cmd_mcp(struct xl_ctx *ctx, const struct cmd_entry *self, struct cmd_args *args)
{
	(void)self;
	return mcp_serve(ctx, args_flag(args, "read-only"), stdin, stdout);
}

const struct cmd_entry cmd_mcp_entry = {
	.name = "mcp", .opts = mcp_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_AGENTS,
	.target = CMD_TARGET_NONE,
	.summary = "serve the study to an AI agent over the Model Context Protocol (stdio)",
	.help = "A Model Context Protocol server (JSON-RPC 2.0 over stdin and stdout, one\n"
	"message a line; protocol revisions 2025-11-25, 2025-06-18, 2025-03-26 and\n"
	"2024-11-05) for the study in the current directory (or -C DIR). Tools:\n"
	"next, resume, status, show, why, plan_ls, plan_add, plan_rm, space_ls,\n"
	"space_set, space_rm, space_seed, auto_status, auto_on, auto_off,\n"
	"replicate, retry, cancel, stop (early: `xloop help stop`), log (the end\n"
	"of an attempt's log). Each runs\n"
	"the xloop command of that name as a child of this binary with --json: its\n"
	"input schema is the command's arguments, its output schema the command's\n"
	"(schemas/), and a call killed half-way leaves the study as the command\n"
	"killed in a shell would. A command that fails is a result with isError\n"
	"and xloop's message; a bad argument or an unknown tool is a protocol error\n"
	"(-32602). Annotations follow `agent-setup`: readOnlyHint for what it\n"
	"allows, destructiveHint for what it denies (cancel), neither for what asks\n"
	"first. Resources: xloop://decisions (ops/decisions.md) and\n"
	"xloop://briefing (`xloop resume`). `xloop agent-setup claude|codex`\n"
	"registers this server for the agent.\n",
	.flags = CMD_REPO | CMD_NOROOT, .exec = cmd_mcp,
};
