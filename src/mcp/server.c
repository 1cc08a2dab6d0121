/*
 * The MCP server's protocol: JSON-RPC 2.0 messages, one a line, on stdin
 * and stdout (MCP's stdio transport); requests are answered in order. A
 * tool runs as `/proc/self/exe -C ROOT --json COMMAND ...`, so a call
 * that is killed leaves the study as the same command killed in a shell.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "briefing/briefing.h"
#include "lib/fsutil.h"
#include "mcp/mcp.h"
#include "lib/proc.h"
#include "lib/util.h"

#define LINE_MAX_BYTES (16 << 20)

/* JSON-RPC's error codes, and MCP's for an unknown resource. */
enum {
	RPC_PARSE = -32700,
	RPC_INVALID = -32600,
	RPC_METHOD = -32601,
	RPC_PARAMS = -32602,
	RPC_INTERNAL = -32603,
	MCP_NO_RESOURCE = -32002,
};

static const char *const versions[] = {
	MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05",
};

/* One server: where it serves and what. */
struct server {
	struct xl_ctx *ctx;
	int read_only;
	FILE *out;
};

/* Write one message as a line and flush it. */
static void send_msg(struct server *sv, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);

	if (s == NULL)
		BUG("unable to encode a message");
	fputs(s, sv->out);
	fputc('\n', sv->out);
	fflush(sv->out);
	free(s);
	json_decref(msg);
}

/* A response carrying result (its reference taken) for id. */
static json_t *reply(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "result", result);
}

/* An error response for id (NULL: null), with xloop's message. */
static json_t *fail(json_t *id, int code, const char *fmt, ...) XL_PRINTF(3, 4);
static json_t *fail(json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	json_t *r;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	r = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
		      "error", "code", code, "message", msg);
	free(msg);
	return r;
}

/* Run xloop's COMMAND argv (after the global options) with --json as a child. */
static int run_xloop(struct server *sv, char *const *cmd, int json, struct proc *p)
{
	const char **argv;
	size_t n = 0, i = 0;
	int rc;

	while (cmd[n])
		n++;
	argv = xcalloc(n + 8, sizeof(*argv));
	argv[i++] = "/proc/self/exe";	/* this very binary, even if replaced since */
	argv[i++] = "-C";
	argv[i++] = sv->ctx->root;
	if (sv->ctx->allow_root)
		argv[i++] = "--allow-root";
	if (json)
		argv[i++] = "--json";
	memcpy(argv + i, cmd, n * sizeof(*argv));
	argv[i + n] = NULL;
	p->argv = argv;
	rc = proc_run(p);
	free(argv);
	return rc;
}

/* xloop's message from a child's stderr: its lines, trimmed, or how it ended. */
static char *child_message(const struct proc *p)
{
	struct buf b = BUF_INIT;

	buf_add(&b, p->err.s, p->err.len);
	buf_rtrim(&b);
	if (b.len == 0)
		proc_describe(p, &b);
	return buf_detach(&b, NULL);
}

/* The end of an attempt's log, from `status TAG --json` in p. */
static json_t *log_result(const struct proc *p, const json_t *args, char **cause)
{
	json_t *doc = json_loadb(p->out.s, p->out.len, 0, NULL), *run, *att, *pick = NULL, *tail;
	json_t *want = json_object_get(args, "attempt"), *lines = json_object_get(args, "lines");
	long long n = json_is_integer(lines) ? json_integer_value(lines) : 40;
	size_t i;
	json_t *out = NULL;

	run = json_array_get(json_object_get(doc, "runs"), 0);
	json_array_foreach(json_object_get(run, "attempts"), i, att) {
		json_int_t k = json_integer_value(json_object_get(att, "n"));

		if (json_is_integer(want) ? k == json_integer_value(want) :
		    !pick || k > json_integer_value(json_object_get(pick, "n")))
			pick = att;
	}
	if (!run) {
		*cause = xstrdup("status did not describe the run");
	} else if (!pick) {
		*cause = json_is_integer(want) ?
			xasprintf("%s has no attempt %lld", json_string_value(json_object_get(run,
			"tag")), (long long)json_integer_value(want)) :
			xasprintf("%s has no attempt yet", json_string_value(json_object_get(run,
			"tag")));
	} else {
		const char *log = json_string_value(json_object_get(pick, "log"));

		int more;

		tail = briefing_log_tail(log ? log : "", (int)n + 1);
		more = json_array_size(tail) > (size_t)n;
		if (more)
			json_array_remove(tail, 0);
		out = json_pack("{s:O, s:O, s:s, s:o, s:b}", "tag", json_object_get(run, "tag"),
				"attempt", json_object_get(pick, "n"), "log", log ? log : "",
				"lines", tail, "truncated", more);
	}
	json_decref(doc);
	return out;
}

/* A tool's result: its document, or xloop's message as an error the model sees. */
static json_t *tool_result(json_t *doc, const char *text, const char *warnings, int is_error)
{
	json_t *content = json_array(), *r;

	json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text", text));
	if (warnings && *warnings)
		json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text",
							 "text", warnings));
	r = json_pack("{s:o, s:b}", "content", content, "isError", is_error);
	if (doc)
		json_object_set_new(r, "structuredContent", doc);
	return r;
}

/* tools/call. */
static json_t *call_tool(struct server *sv, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *doc, *r;
	struct proc p = PROC_INIT;
	char **argv = NULL, *cause = NULL, *msg;
	long t;

	if (name == NULL)
		return fail(id, RPC_PARAMS, "tools/call needs a tool's name");
	t = mcp_tool_find(name);
	if (t < 0)
		return fail(id, RPC_PARAMS, "unknown tool '%s'", name);
	if (sv->read_only && mcp_tool_class((size_t)t) != AGENT_ALLOW)
		return fail(id, RPC_PARAMS, "tool '%s' is refused: this server is read-only "
			    "(xloop mcp --read-only runs only the tools agent-setup allows)", name);
	if (args && json_is_null(args))
		args = NULL;
	if (mcp_tool_argv((size_t)t, args, &argv, &cause) < 0) {
		r = fail(id, RPC_PARAMS, "%s", cause);
		free(cause);
		return r;
	}
	if (run_xloop(sv, argv, 1, &p) < 0) {
		r = fail(id, RPC_INTERNAL, "unable to run xloop: %s", strerror(p.exec_errno));
		goto out;
	}
	if (p.status != 0) {
		msg = child_message(&p);
		cause = xasprintf("%s (exit %d)", msg, p.status);
		r = reply(id, tool_result(NULL, cause, NULL, 1));
		free(msg);
		goto out;
	}
	if (mcp_tool_builtin((size_t)t)) {
		doc = log_result(&p, args, &cause);
		if (doc == NULL) {
			r = reply(id, tool_result(NULL, cause, NULL, 1));
			goto out;
		}
	} else {
		json_error_t jerr;

		doc = json_loadb(p.out.s, p.out.len, 0, &jerr);
		if (!json_is_object(doc)) {
			json_decref(doc);
			r = fail(id, RPC_INTERNAL, "xloop %s printed no JSON document: %s", name,
				 jerr.text);
			goto out;
		}
	}
	{
		char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		msg = child_message(&p);
		r = reply(id, tool_result(doc, text ? text : "{}", p.err.len ? msg : NULL, 0));
		free(text);
		free(msg);
	}
out:
	free(cause);
	proc_release(&p);
	{
		size_t i;

		for (i = 0; argv && argv[i]; i++)
			free(argv[i]);
		free(argv);
	}
	return r;
}

/* tools/list: every tool, or the read-only ones. */
static json_t *list_tools(struct server *sv)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < mcp_ntools(); i++)
		if (!sv->read_only || mcp_tool_class(i) == AGENT_ALLOW)
			json_array_append_new(a, mcp_tool_json(i));
	return json_pack("{s:o}", "tools", a);
}

/* resources/list. */
static json_t *list_resources(void)
{
	return json_pack("{s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}]}",
			 "resources",
			 "uri", "xloop://decisions", "name", "decisions",
			 "title", "The decisions log", "description",
			 "ops/decisions.md: every verdict, promotion and decision, as committed",
			 "mimeType", "text/markdown",
			 "uri", "xloop://briefing", "name", "briefing",
			 "title", "The briefing",
			 "description", "xloop resume: everything since the last briefing, and "
			 "what to do next", "mimeType", "text/plain");
}

/* resources/read. */
static json_t *read_resource(struct server *sv, json_t *id, json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct buf b = BUF_INIT;
	char *text = NULL, *cause = NULL;
	const char *mime;
	json_t *r;
	int err;

	if (uri && strcmp(uri, "xloop://decisions") == 0) {
		char *path = path_join(sv->ctx->root, "ops/decisions.md");

		mime = "text/markdown";
		if (read_file(path, 64 << 20, &b, &err, &cause) < 0 && err != ENOENT) {
			r = fail(id, RPC_INTERNAL, "%s", cause);
			free(cause);
			free(path);
			buf_release(&b);
			return r;
		}
		free(cause);
		free(path);
		text = buf_detach(&b, NULL);
	} else if (uri && strcmp(uri, "xloop://briefing") == 0) {
		struct proc p = PROC_INIT;
		char *cmd[] = { "resume", NULL };

		mime = "text/plain";
		if (run_xloop(sv, cmd, 0, &p) < 0 || p.status != 0) {
			char *msg = child_message(&p);

			r = fail(id, RPC_INTERNAL, "%s", msg);
			free(msg);
			proc_release(&p);
			return r;
		}
		text = buf_detach(&p.out, NULL);
		proc_release(&p);
	} else {
		return fail(id, MCP_NO_RESOURCE, "resource not found: '%s'", uri ? uri : "");
	}
	r = reply(id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
				mime, "text", text));
	free(text);
	return r;
}

/* initialize: the revision both speak, what this server offers. */
static json_t *initialize(json_t *id, json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = MCP_PROTOCOL_LATEST;
	size_t i;

	for (i = 0; want && i < ARRAY_SIZE(versions); i++)
		if (strcmp(want, versions[i]) == 0)
			v = versions[i];
	return reply(id, json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:s}",
		"protocolVersion", v,
		"capabilities", "tools", "listChanged", 0, "resources", "listChanged", 0,
		"subscribe", 0,
		"serverInfo", "name", "xloop", "title", "xloop", "version", XLOOP_VERSION,
		"instructions",
		"xloop runs this study's experiment loop on Slurm. Start with `resume`, go on "
		"with `next`; queue changes with `plan_add`; each tool is the xloop command of "
		"the same name and returns its --json document. Never submit or cancel jobs "
		"any other way."));
}

/* One message in, its response (NULL for a notification). */
static json_t *handle(struct server *sv, json_t *msg)
{
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));

	if (!json_is_object(msg) || !method ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?
		   json_string_value(json_object_get(msg, "jsonrpc")) : "", "2.0") != 0) {
		/* a response to us (we send no requests) is ignored */
		if (json_is_object(msg) && !method &&
		    (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return NULL;
		return fail(id, RPC_INVALID, "not a JSON-RPC 2.0 request");
	}
	if (id == NULL)
		return NULL;	/* notifications: initialized, cancelled, ... */
	if (strcmp(method, "initialize") == 0)
		return initialize(id, params);
	if (strcmp(method, "ping") == 0)
		return reply(id, json_object());
	if (strcmp(method, "tools/list") == 0)
		return reply(id, list_tools(sv));
	if (strcmp(method, "tools/call") == 0)
		return call_tool(sv, id, params);
	if (strcmp(method, "resources/list") == 0)
		return reply(id, list_resources());
	if (strcmp(method, "resources/templates/list") == 0)
		return reply(id, json_pack("{s:[]}", "resourceTemplates"));
	if (strcmp(method, "resources/read") == 0)
		return read_resource(sv, id, params);
	return fail(id, RPC_METHOD, "method not found: '%s'", method);
}

/* Serve until the input ends. */
int mcp_serve(struct xl_ctx *ctx, int read_only, FILE *in, FILE *out)
{
	struct server sv = { ctx, read_only, out };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, in)) >= 0) {
		json_error_t jerr;
		json_t *msg, *r;

		if (len > LINE_MAX_BYTES) {
			send_msg(&sv, fail(NULL, RPC_INVALID, "message too long"));
			continue;
		}
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		msg = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &jerr);
		if (msg == NULL) {
			send_msg(&sv, fail(NULL, RPC_PARSE, "parse error: %s", jerr.text));
			continue;
		}
		r = handle(&sv, msg);
		if (r)
			send_msg(&sv, r);
		json_decref(msg);
	}
	free(line);
	return ferror(in) ? XL_ERR : XL_OK;
}
