/*
 * `xloop mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0,
 * one message a line) serving the study it was started in. Each tool is
 * one xloop command run as a child of this very binary with --json
 * (/proc/self/exe): its input schema is the command's arguments, its
 * output schema the command's --json schema, and a call killed half-way
 * leaves the study as that command killed from a shell would. Resources:
 * the decisions log and the briefing.
 */
#ifndef XLOOP_MCP_H
#define XLOOP_MCP_H

#include <stddef.h>
#include <stdio.h>

#include "agent-rules.h"
#include "ctx.h"

/* The newest protocol revision served (server.c lists the older ones it speaks). */
#define MCP_PROTOCOL_LATEST "2025-11-25"

/* The text of schemas/NAME.schema.json built into the binary, or NULL. */
const char *mcp_schema_text(const char *name);

/* The tools: how many, each one's name and the agent-setup class it has. */
size_t mcp_ntools(void);
const char *mcp_tool_name(size_t i);
enum agent_class mcp_tool_class(size_t i);

/*
 * The tools/list entry of tool i: name, title, description, inputSchema,
 * outputSchema, annotations (a new reference).
 */
struct json_t *mcp_tool_json(size_t i);

/* The index of the tool named name, or -1. */
long mcp_tool_find(const char *name);

/*
 * The argv (after the binary and the global options) of tool i called
 * with args, into *argv (malloc'd strings, NULL-terminated: free each,
 * then the vector); -1 with *cause (an invalid argument) otherwise.
 */
int mcp_tool_argv(size_t i, const struct json_t *args, char ***argv, char **cause);

/* Whether tool i is answered by the server itself (`log`), not a command. */
int mcp_tool_builtin(size_t i);

/*
 * Serve MCP on in/out until in ends. read_only: only the tools whose class
 * is AGENT_ALLOW are listed or run. Returns an exit code.
 */
int mcp_serve(struct xl_ctx *ctx, int read_only, FILE *in, FILE *out);

#endif
