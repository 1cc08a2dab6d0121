#!/usr/bin/env bash
# xloop mcp on the real cluster (issue 36), with the official TypeScript
# SDK's client (tests/mcp/client.mjs slurm): the tools that submit, stop
# and cancel (next, why, status, stop, cancel, retry, log) succeed and each result
# validates against its output schema (the SDK's check and schemas/'s).
# The protocol, every other tool and the errors: t0380.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "mcp on Slurm" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
M=${XLOOP_ROOT_DIR:?}/tests/mcp
S=${XLOOP_ROOT_DIR:?}/schemas
if ! command -v node >/dev/null || [ ! -d "$M/node_modules/@modelcontextprotocol/sdk" ]; then
	skip "the MCP client" "node or tests/mcp/node_modules is missing (./build.sh test installs them)"
	finish
	exit
fi
d=$(user_dir)
new_study "$d" ms 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0'
printf '#!/bin/bash\nLR=1\necho START device=cpu\nsleep 60\n' >"$T_TMP/job.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt base" as_user "$X" -C "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
out=$(as_user timeout 120 node "$M/client.mjs" "$X" "$d" "$S" slurm "$PATH" 2>&1)
rc=$?
tap "$out"
[ "$rc" -eq 0 ] || grep -q '^not ok' <<<"$out" || not_ok "the client exited $rc" "$out"
left() {	# the study's jobs still in Slurm (WorkDir in it); fails when squeue does
	local q
	q=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z') || return 1
	[ -z "$(printf '%s\n' "$q" | awk -v d="$d" '$2 == d')" ]
}
# a job the client cancelled is listed (CG) until Slurm has ended it
check "no job of the study is left" wait_for 60 left
finish
