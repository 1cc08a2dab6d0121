#!/usr/bin/env bash
# Remote clusters: a real OpenSSH server on a loopback port (its own host
# key, an authorized key for the test user) in front of the test cluster.
# xloop missing on the host (69 with the install hint), `remote install`, a
# full loop over ssh with --json byte for byte, arguments with hostile
# quoting, a refused key and an unknown host key (77), and the remote
# xloop killed right after sbatch (the connection dropped at the worst
# moment) followed by a `next` that adopts the job by its token.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "remote over ssh" "run once, without accounting"
	finish
	exit
fi
if [ ! -x /usr/sbin/sshd ] || [ "$(id -u)" -ne 0 ]; then
	not_ok "sshd is installed and the test runs as root (./build.sh test does both)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
uhome=$(getent passwd "$U" | cut -d: -f6)
port=$((16822 + ${XLOOP_TESTCLUSTER_PORT_OFFSET:-0}))
sd=$(mktemp -d "$T_TMP/sshd-XXXXXX")
sshd_setup "$sd" "$port"
ssh-keygen -q -t ed25519 -N '' -f "$sd/other_key"
chown "$U" "$sd/other_key"
/usr/sbin/sshd -f "$sd/sshd_config" -E "$sd/sshd.log" || not_ok "sshd started" "$(cat "$sd/sshd.log")"
: >"$sd/empty_known_hosts"
step "chmod 644 known_hosts empty_known_hosts" chmod 644 "$sd/known_hosts" "$sd/empty_known_hosts"
# the test user's ssh client: three aliases for the one server
step "mkdir -p .ssh" mkdir -p "$uhome/.ssh"
[ -e "$uhome/.ssh/config" ] && cp "$uhome/.ssh/config" "$sd/config.saved"
cat >"$uhome/.ssh/config" <<EOF
Host xl-host xl-badkey xl-unknown
  HostName 127.0.0.1
  Port $port
  User $U
  IdentitiesOnly yes
Host xl-host
  IdentityFile $sd/user_key
  UserKnownHostsFile $sd/known_hosts
Host xl-badkey
  IdentityFile $sd/other_key
  UserKnownHostsFile $sd/known_hosts
Host xl-unknown
  IdentityFile $sd/user_key
  UserKnownHostsFile $sd/empty_known_hosts
  StrictHostKeyChecking yes
EOF
chown -R "$U" "$uhome/.ssh"
step "chmod 600 config" chmod 600 "$uhome/.ssh/config"
cleanup() {
	[ -s "$sd/sshd.pid" ] && kill "$(cat "$sd/sshd.pid")" 2>/dev/null
	rm -f "$uhome/.ssh/config" "$uhome/.local/bin/xloop"
	[ -e "$sd/config.saved" ] && cp "$sd/config.saved" "$uhome/.ssh/config"
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"
}
trap cleanup EXIT
rm -f "$uhome/.local/bin/xloop"
# as the user, locally: no SLURM_CONF needed on this side
r() { runuser -u "$U" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME="$uhome" "$X" "$@"; }

d=$(user_dir)
new_study "$d" rem 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
MODE=ok
echo "START mode=$MODE device=cpu"
sleep 1
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"; echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"

r --host xl-host -C "$d" status >"$T_TMP/missing.out" 2>&1
check "xloop missing on the host: exit 69" test $? = 69
check "with the install hint" grep -q 'xloop remote install xl-host' "$T_TMP/missing.out"

r remote install xl-host >"$T_TMP/install.out" 2>&1
check "remote install" sh -c "[ $? = 0 ] || { cat '$T_TMP/install.out'; exit 1; }"
check "the binary is there" test -x "$uhome/.local/bin/xloop"
check "it runs there" grep -q '^installed on xl-host: xloop ' "$T_TMP/install.out"
check "and Slurm answers it" grep -q '^slurm there: answers' "$T_TMP/install.out"
check "it says what to put in PATH" grep -q 'export PATH="$HOME/.local/bin:$PATH"' "$T_TMP/install.out"
# --path quoted for the login shell there, which is dash: no bash-only $'...'
tabdir=$(printf 'opt\tx')
r remote install xl-host --path "~/$tabdir" --json >"$T_TMP/install2.out" 2>"$T_TMP/install2.err"
check "remote install --json validates" sh -c "/usr/bin/python3 '$(dirname "$0")/validate.py' '${XLOOP_ROOT_DIR:?}/schemas/remote.schema.json' <'$T_TMP/install2.out'"
check "remote install --path with a tab (the login shell is $(getent passwd "$U" | cut -d: -f7))" \
	sh -c "[ -x '$uhome/$tabdir/xloop' ] || { cat '$T_TMP/install2.out'; exit 1; }"
rm -rf "${uhome:?}/$tabdir"

# a full loop over ssh
expect_rc 0 "adopt over ssh" r --host xl-host -C "$d" adopt "$T_TMP/job.sh" --tag base
expect_rc 0 "submit over ssh" r --host xl-host -C "$d" submit base --no-chain
for i in $(seq 1 60); do
	r --host xl-host -C "$d" next >"$T_TMP/next.txt" 2>&1
	grep -q 'base attempt 1: success' "$T_TMP/next.txt" && break
	r --host xl-host -C "$d" status --json 2>/dev/null | grep -q '"verdict": "success"' && break
	sleep 1
done
check "judged a success over ssh" sh -c "runuser -u '$U' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status --json | grep -q '\"verdict\": \"success\"'"
r --host xl-host -C "$d" status --json >"$T_TMP/remote.json" 2>/dev/null
runuser -u "$U" -- env SLURM_CONF="${SLURM_CONF:-}" "$X" -C "$d" status --json >"$T_TMP/local.json" 2>/dev/null
check "--json arrives byte for byte" cmp "$T_TMP/remote.json" "$T_TMP/local.json"
expect_rc 2 "a usage error keeps its exit code" r --host xl-host -C "$d" status --frob
expect_rc 66 "an unknown tag keeps its exit code" r --host xl-host -C "$d" show nosuch
r --host xl-host -C "$d/nowhere" status >"$T_TMP/nodir.out" 2>&1
check "the repo dir missing there: a clear error" grep -q "cannot use directory '$d/nowhere': No such file" "$T_TMP/nodir.out"

# hostile quoting: every byte arrives
v="a b'c\"d \$(touch /tmp/xloop-pwned-remote) \`id\` ; | & * ~"
expect_rc 0 "a value with quotes, \$() and backquotes over ssh" r --host xl-host -C "$d" new q1 --from base --set "MODE=$v"
got=$(runuser -u "$U" -- "$X" -C "$d" show q1 --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["lineage"][0]["change"]["new"])')
check "the value arrived intact" test "$got" = "$v"
check "nothing was executed" test ! -e /tmp/xloop-pwned-remote
expect_rc 0 "a decision with a newline and a glob" r --host xl-host -C "$d" decide "keep * as it is
second line" --run base
check "the decision text arrived intact" sh -c "grep -q '^keep \* as it is' '$d/ops/decisions.md' && grep -q '^second line' '$d/ops/decisions.md'"

# what ssh cannot do becomes an error that says what to do
r --host xl-badkey -C "$d" status >"$T_TMP/badkey.out" 2>&1
check "a refused key: exit 77" test $? = 77
check "saying how to add the key" grep -q 'ssh-copy-id xl-badkey' "$T_TMP/badkey.out"
r --host xl-unknown -C "$d" status >"$T_TMP/unknown.out" 2>&1
check "an unknown host key: exit 77" test $? = 77
check "saying how to accept it" grep -q 'host key of xl-unknown is unknown' "$T_TMP/unknown.out"
runuser -u "$U" -- env HOME="$uhome" XLOOP_HOST=xl-host "$X" -C "$d" status --json >"$T_TMP/env.json" 2>/dev/null
runuser -u "$U" -- env SLURM_CONF="${SLURM_CONF:-}" "$X" -C "$d" status --json >"$T_TMP/local.json" 2>/dev/null
check "XLOOP_HOST works like --host" cmp "$T_TMP/env.json" "$T_TMP/local.json"

# the remote xloop killed right after sbatch answered: nothing recorded it
expect_rc 0 "a run to lose" r --host xl-host -C "$d" new lost --from base --set MODE=drop
printf '#!/bin/sh\nXLOOP_CRASH_AT=submit-after-sbatch exec %s "$@"\n' "$XLOOP_ASAN_BIN" >"$sd/bin/xloop"
step "chmod 755 xloop" chmod 755 "$sd/bin/xloop"
r --host xl-host -C "$d" submit lost --no-chain >"$T_TMP/drop.out" 2>&1
check "the submission died with the connection" sh -c "[ $? -ne 0 ]"
rm -f "$sd/bin/xloop"
njobs() { squeue -h -u "$U" -o '%k' | grep -c 'rem/lost#1' || true; }
check "Slurm got the job once" test "$(njobs)" = 1
for i in $(seq 1 60); do
	r --host xl-host -C "$d" next >>"$T_TMP/next2.txt" 2>&1
	runuser -u "$U" -- env SLURM_CONF="${SLURM_CONF:-}" "$X" -C "$d" status lost --json 2>/dev/null | grep -q '"verdict": "success"' && break
	sleep 1
done
check "the next remote next found it by its token" grep -q 'found its job .* by its token' "$T_TMP/next2.txt"
check "and judged it, with no second submission" sh -c "runuser -u '$U' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status lost --json | /usr/bin/python3 -c 'import json,sys; a=json.load(sys.stdin)[\"runs\"][0][\"attempts\"]; assert len(a)==1 and a[0][\"verdict\"]==\"success\", a'"
finish
