// The MCP client side of tests/t/t0380-mcp.sh: the official TypeScript
// SDK's client drives `xloop mcp` over stdio and prints one TAP line per
// check ("ok - NAME" or "not ok - NAME" and indented details).
//   node client.mjs XLOOP STUDY SCHEMAS main|readonly|kill [PATH-for-the-server]
import { readFileSync, existsSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const [xloop, study, schemas, mode, serverPath] = process.argv.slice(2);
let failed = 0;

function ok(name) {
	console.log(`ok - ${name}`);
}
function notOk(name, detail) {
	failed++;
	console.log(`not ok - ${name}`);
	if (detail !== undefined)
		console.log(String(detail).split("\n").slice(0, 30).map((l) => "    " + l).join("\n"));
}
function check(name, cond, detail) {
	if (cond)
		ok(name);
	else
		notOk(name, detail);
}

// The repository's own schema of a tool's output (draft 2020-12).
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = {};
function validator(file) {
	if (!validators[file]) {
		const s = JSON.parse(readFileSync(`${schemas}/${file}.schema.json`, "utf8"));
		delete s.$id;
		validators[file] = ajv.compile(s);
	}
	return validators[file];
}
const outputOf = {
	next: "next", resume: "next", status: "status", show: "show", why: "why",
	plan_ls: "plan", plan_add: "plan", plan_rm: "plan", space_ls: "space", space_set: "space",
	space_rm: "space", space_seed: "space", auto_status: "auto", auto_on: "auto",
	auto_off: "auto", replicate: "replicate", retry: "retry", cancel: "cancel", stop: "stop",
	log: "mcp-log",
};

async function connect(args, env) {
	const transport = new StdioClientTransport({
		command: xloop,
		args: ["-C", study, "mcp", ...args],
		env: {
			PATH: env ?? process.env.PATH, HOME: process.env.HOME ?? "/tmp",
			...(process.env.SLURM_CONF ? { SLURM_CONF: process.env.SLURM_CONF } : {}),
		},
		stderr: "pipe",
	});
	const client = new Client({ name: "xloop-test", version: "1.0.0" });
	let agreed = null;
	transport.setProtocolVersion = (v) => { agreed = v; };
	await client.connect(transport);
	return { client, transport, agreed: () => agreed };
}

// Call a tool; the SDK checks structuredContent against the tool's output schema.
async function call(client, name, args) {
	try {
		const r = await client.callTool({ name, arguments: args });
		return { r };
	} catch (e) {
		return { e };
	}
}

function text(r) {
	return (r.content ?? []).map((c) => c.text ?? "").join("\n");
}

// A successful result: structured, valid against the repository's schema.
function valid(name, res, what) {
	if (res.e) {
		notOk(`${what}: no exception`, res.e.message);
		return false;
	}
	if (res.r.isError) {
		notOk(`${what}: succeeds`, text(res.r));
		return false;
	}
	const v = validator(outputOf[name]);
	check(`${what}: its structuredContent validates against schemas/${outputOf[name]}.schema.json`,
	      v(res.r.structuredContent), JSON.stringify(v.errors));
	return true;
}

// A failed command: a result with isError and xloop's message, not an exception.
function toolError(res, what, pattern) {
	if (res.e)
		return notOk(`${what}: a tool result, not an exception`, res.e.message);
	check(`${what}: isError with xloop's message`,
	      res.r.isError === true && pattern.test(text(res.r)) && !res.r.structuredContent,
	      JSON.stringify(res.r));
}

// A protocol error (-32602) naming the problem.
function protocolError(res, what, pattern) {
	check(`${what}: a protocol error -32602 naming it`,
	      res.e instanceof McpError && res.e.code === -32602 && pattern.test(res.e.message),
	      res.e ? `${res.e.code} ${res.e.message}` : JSON.stringify(res.r));
}

async function main() {
	const { client, agreed } = await connect([], serverPath);
	const info = client.getServerVersion();
	check("initialize: the server is xloop", info?.name === "xloop", JSON.stringify(info));
	const caps = client.getServerCapabilities();
	check("  it offers tools and resources", caps?.tools && caps?.resources, JSON.stringify(caps));
	check(`  the SDK's newest revision (${LATEST_PROTOCOL_VERSION}) is the one agreed`,
	      agreed() === LATEST_PROTOCOL_VERSION, agreed());

	const { tools } = await client.listTools();
	const names = tools.map((t) => t.name).sort();
	check("tools/list: every tool", JSON.stringify(names) === JSON.stringify(Object.keys(outputOf).sort()),
	      names.join(" "));
	check("  each with an object input schema and an object output schema",
	      tools.every((t) => t.inputSchema?.type === "object" && t.outputSchema?.type === "object"));

	// the classes agent-setup wrote (.claude/settings.json) are the annotations
	const perm = JSON.parse(readFileSync(`${study}/.claude/settings.json`, "utf8")).permissions;
	const cls = (n) => ["allow", "ask", "deny"].find((k) => perm[k].includes(`mcp__xloop__${n}`));
	const bad = tools.filter((t) => {
		const c = cls(t.name);
		const a = t.annotations ?? {};
		return !c || a.readOnlyHint !== (c === "allow") || a.destructiveHint !== (c === "deny");
	});
	check("annotations: readOnlyHint exactly for agent-setup's allowed tools, destructiveHint for its denied",
	      bad.length === 0, bad.map((t) => `${t.name}: ${cls(t.name)} ${JSON.stringify(t.annotations)}`).join("\n"));
	const submitting = ["next", "plan_add", "plan_rm", "retry", "replicate", "auto_on", "space_set", "cancel", "stop"];
	check("  no tool that submits or changes the study is in the allowed (read-only) class",
	      submitting.every((n) => cls(n) !== "allow"), submitting.map((n) => `${n}: ${cls(n)}`).join(" "));

	// call each tool
	const called = new Set();
	const run = async (name, args, expect, what) => {
		called.add(name);
		const res = await call(client, name, args);
		if (expect === "ok")
			valid(name, res, what ?? `${name}`);
		else
			toolError(res, what ?? `${name}`, expect);
		return res;
	};
	await run("resume", {}, "ok");
	await run("status", {}, "ok");
	await run("status", { sort: "score" }, "ok", "status sorted by score");
	await run("status", { tag: "base" }, "ok", "status of one run");
	await run("show", { tag: "base" }, "ok");
	await run("why", { tag: "base" }, /not in the queue/, "why of a run not in the queue");
	await run("plan_ls", { all: true }, "ok");
	const added = await run("plan_add", { changes: ["LR=2", "LR=3"], from: "base" }, "ok");
	const ids = added.r?.structuredContent?.added ?? [];
	check("  plan_add added two entries", ids.length === 2, JSON.stringify(added.r?.structuredContent));
	await run("plan_rm", { id: ids[0] ?? 1 }, "ok");
	await run("space_seed", { var: "SEED" }, "ok");
	await run("space_set", { spec: "LR=1,2,3" }, "ok");
	await run("space_ls", {}, "ok");
	await run("space_rm", { var: "LR" }, "ok");
	await run("auto_status", {}, "ok");
	await run("auto_on", { budget_runs: 2, budget_hours: 1.5 }, "ok");
	await run("auto_off", {}, "ok");
	await run("replicate", { tag: "base", n: 1 }, "ok");
	await run("log", { tag: "base", lines: 5 }, "ok");
	// no Slurm here: what needs it fails with xloop's message
	await run("retry", { tag: "base", no_chain: true }, /Slurm|scontrol|squeue|sbatch/, "retry without Slurm");
	await run("cancel", { tag: "base" }, /no queued or running job/, "cancel of a run with no job");
	await run("stop", { tag: "base" }, /no queued or running job/, "stop of a run with no job");
	{
		called.add("next");
		const res = await call(client, "next", {});
		if (!res.e && !res.r.isError)
			valid("next", res, "next");
		else
			toolError(res, "next without Slurm", /Slurm|squeue|sbatch|scontrol/);
	}
	check("every tool was called", Object.keys(outputOf).every((n) => called.has(n)),
	      Object.keys(outputOf).filter((n) => !called.has(n)).join(" "));

	// bad arguments and unknown things are protocol errors
	protocolError(await call(client, "show", { tag: 5 }), "a tag that is not a string", /'tag' must be/);
	protocolError(await call(client, "show", {}), "a missing tag", /needs 'tag'/);
	protocolError(await call(client, "show", { tag: "base", colour: "red" }), "an unknown argument", /no argument 'colour'/);
	protocolError(await call(client, "status", { sort: "size" }), "a value outside the enum", /score\|created/);
	protocolError(await call(client, "frobnicate", {}), "an unknown tool", /unknown tool 'frobnicate'/);
	toolError(await call(client, "show", { tag: "nope" }), "a run that does not exist", /no run 'nope'/);

	// resources
	const { resources } = await client.listResources();
	const uris = resources.map((r) => r.uri).sort();
	check("resources/list: the decisions log and the briefing",
	      JSON.stringify(uris) === JSON.stringify(["xloop://briefing", "xloop://decisions"]), uris.join(" "));
	const dec = await client.readResource({ uri: "xloop://decisions" });
	check("  the decisions log is ops/decisions.md",
	      dec.contents[0].text === readFileSync(`${study}/ops/decisions.md`, "utf8"));
	const brief = await client.readResource({ uri: "xloop://briefing" });
	check("  the briefing is resume's", /best/i.test(brief.contents[0].text), brief.contents[0].text);
	try {
		await client.readResource({ uri: "xloop://nothing" });
		notOk("an unknown resource is an error");
	} catch (e) {
		check("an unknown resource is an error", e instanceof McpError && e.code === -32002, e.message);
	}
	await client.close();
}

async function readonly() {
	const { client } = await connect(["--read-only"], serverPath);
	const { tools } = await client.listTools();
	check("--read-only: only read-only tools are listed",
	      tools.length > 0 && tools.every((t) => t.annotations?.readOnlyHint === true),
	      tools.map((t) => t.name).join(" "));
	const before = (await call(client, "plan_ls", {})).r?.structuredContent;
	protocolError(await call(client, "plan_add", { changes: ["LR=9"] }), "--read-only refuses a tool that changes the study", /read-only/);
	protocolError(await call(client, "next", {}), "--read-only refuses a tool that submits", /read-only/);
	const after = (await call(client, "plan_ls", {})).r?.structuredContent;
	check("  and the plan is as it was", JSON.stringify(before) === JSON.stringify(after));
	await client.close();
}

// The server killed while a tool runs: the command goes on or dies as it
// would from a shell; the study stays whole and the next server serves it.
async function kill() {
	const gate = `${study}/.gate`, pidFile = `${study}/.child`;
	const { client, transport } = await connect([], serverPath);
	const pending = call(client, "plan_add", { changes: ["LR=7", "LR=8", "LR=9"] });
	const t0 = Date.now();
	while (!existsSync(pidFile) && Date.now() - t0 < 20000)
		await new Promise((r) => setTimeout(r, 50));
	check("the call is under way (the command waits on Slurm)", existsSync(pidFile));
	process.kill(transport.pid, "SIGKILL");
	const res = await pending;
	check("  killing the server ends the call with an error", !!res.e || res.r?.isError, JSON.stringify(res.r));
	writeFileSync(gate, "");
	const child = Number(readFileSync(pidFile, "utf8").trim());
	const t1 = Date.now();
	while (existsSync(`/proc/${child}`) && Date.now() - t1 < 20000)
		await new Promise((r) => setTimeout(r, 50));
	check("  the command it ran ended on its own", !existsSync(`/proc/${child}`));
	const again = await connect([], serverPath);
	const ls = await call(again.client, "plan_ls", {});
	valid("plan_ls", ls, "a new server serves the study (the lock is free)");
	const mine = (ls.r?.structuredContent?.plan ?? []).filter((e) => /^LR=[789]$/.test(`${e.var}=${e.value}`));
	check("  the killed call's entries are all there or none (nothing half-done)",
	      mine.length === 0 || mine.length === 3, JSON.stringify(ls.r?.structuredContent));
	await again.client.close();
}

// On a real cluster: the tools that submit and cancel, their results valid.
async function slurm() {
	const { client } = await connect([], serverPath);
	const one = async (name, args, what) => {
		const res = await call(client, name, args);
		valid(name, res, what ?? name);
		return res.r?.structuredContent;
	};
	const next = await one("next", { set: "LR=2", tag: "k" }, "next submits a run");
	check("  k was submitted", JSON.stringify(next?.submitted ?? []).includes('"k"'), JSON.stringify(next?.submitted));
	const why = await call(client, "why", { tag: "k" });
	if (why.r && !why.r.isError)
		valid("why", why, "why of the queued run");
	else
		toolError(why, "why of a run that already runs", /running|started|not pending|RUNNING/);
	await one("status", { tag: "k" }, "status of the submitted run");
	const stop = await one("stop", { tag: "k" }, "stop its job (a request its watcher sees)");
	check("  stop names attempt 1 of k", stop?.tag === "k" && stop?.attempt === 1, JSON.stringify(stop));
	await one("cancel", { tag: "k" }, "cancel its job");
	// the cancelled job leaves Slurm's queue a moment later (later still on a
	// busy machine): until then retry refuses; wait for it, with a deadline
	let retry;
	for (let end = Date.now() + 120000; ; ) {
		retry = await call(client, "retry", { tag: "k", no_chain: true });
		if (!(retry.r?.isError && /still queued or running/.test(text(retry.r))) || Date.now() > end)
			break;
		await new Promise((ok) => setTimeout(ok, 500));
	}
	valid("retry", retry, "retry it as attempt 2");
	const log = await one("log", { tag: "k", attempt: 2 }, "log of attempt 2");
	check("  the log tool names attempt 2's log", /attempt2\.out$/.test(log?.log ?? ""), JSON.stringify(log));
	await one("cancel", { tag: "k" }, "cancel attempt 2");
	await client.close();
}

try {
	await ({ main, readonly, kill, slurm })[mode]();
} catch (e) {
	notOk(`${mode}: no exception`, e.stack ?? e);
}
process.exit(failed ? 1 : 0);
