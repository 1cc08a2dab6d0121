#!/usr/bin/env bash
# xloop mcp (issue 36) with the official MCP TypeScript SDK's client
# (tests/mcp/client.mjs, the SDK pinned in tests/mcp/package-lock.json and
# installed by `./build.sh test`), on a study with no Slurm: initialize
# (the SDK's newest revision), list the tools, call each one (results
# checked against the output schemas by the SDK and against schemas/ by
# Ajv's draft 2020-12), annotations equal to the classes agent-setup
# writes, a failing command as a tool error with xloop's message, bad
# arguments as protocol errors, the resources; --read-only refuses what
# submits; the server killed mid-call leaves the study whole.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
M=${XLOOP_ROOT_DIR:?}/tests/mcp
S=${XLOOP_ROOT_DIR:?}/schemas
if ! command -v node >/dev/null || [ ! -d "$M/node_modules/@modelcontextprotocol/sdk" ]; then
	skip "the MCP client" "node or tests/mcp/node_modules is missing (./build.sh test installs them)"
	finish
	exit
fi
# TAP lines from the client, counted as this test's own
client() {	# NAME ARGS...: the client's checks, each line ok/not ok
	local out rc
	out=$(as_user timeout 120 node "$M/client.mjs" "$@" 2>&1)
	rc=$?
	tap "$out"
	[ "$rc" -eq 0 ] || [ -n "$(grep '^not ok' <<<"$out")" ] || not_ok "client $4 exited $rc" "$out"
}

# a study, and a PATH without Slurm's commands: bash only
d=$(user_dir)
new_study "$d" mc ''
printf '#!/bin/bash\nLR=1\nSEED=0\necho START\n' >"$T_TMP/job.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt base" as_user "$X" -C "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
step "agent-setup claude" as_user "$X" -C "$d" agent-setup claude
check "agent-setup claude registers the server in .mcp.json" \
	test "$(jget .mcpServers.xloop.args <"$d/.mcp.json")" = '["mcp"]'
step "agent-setup codex" as_user "$X" -C "$d" agent-setup codex
check "agent-setup codex registers it in .codex/config.toml, cancel disabled" \
	sh -c "grep -qx '\[mcp_servers.xloop\]' '$d/.codex/config.toml' && grep -qx 'disabled_tools = \[\"cancel\"\]' '$d/.codex/config.toml'"
nobin=$T_TMP/nobin
step "mkdir nobin" mkdir -p "$nobin"
step "bash in nobin" ln -s "$(command -v bash)" "$nobin/bash"
t0=$SECONDS
client "$X" "$d" "$S" main "$nobin"
client "$X" "$d" "$S" readonly "$nobin"

# the server killed mid-call: plan add's driver check (driver.mode slurm)
# waits in a squeue that records its parent (the command) and waits for
# the test's gate; the server is killed there, then the gate opens
k=$(user_dir)
new_study "$k" mk 'c["driver"]["mode"] = "slurm"'
step "adopt base (kill study)" as_user "$X" -C "$k" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
kbin=$T_TMP/kbin
step "mkdir kbin" mkdir -p "$kbin"
cat >"$kbin/squeue" <<SQ
#!/bin/bash
echo "\$PPID" >"$k/.child"
while [ ! -e "$k/.gate" ]; do sleep 0.1; done
echo "squeue: the test's controller is gone" >&2
exit 1
SQ
step "chmod kbin/squeue" chmod 755 "$kbin/squeue"
step "bash in kbin" ln -s "$(command -v bash)" "$kbin/bash"
step "sleep in kbin" ln -s "$(command -v sleep)" "$kbin/sleep"
client "$X" "$k" "$S" kill "$kbin"
check "the state DB is whole" test "$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" "$k/.xloop/state.db")" = ok
echo "# the MCP client checks took $((SECONDS - t0)) s"
finish
