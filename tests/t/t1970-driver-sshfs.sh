#!/usr/bin/env bash
# A feeder on a network filesystem never opens the state DB itself (issue
# 20): the "login node" is an OpenSSH server on a loopback port in a mount
# namespace of its own, where the study's path M is a bind mount of the
# local study; everywhere else (where Slurm runs jobs and feeders) M is an
# sshfs mount of it. The agent's calls go to the login node (--host); each
# feeder finds M on fuse.sshfs and forwards its tick over ssh to
# driver.host, so the loop runs 3 plan entries to the end with no other
# xloop call.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "feeder forwarding over sshfs" "run once, without accounting"
	finish
	exit
fi
if [ ! -x /usr/sbin/sshd ] || ! command -v sshfs >/dev/null || [ ! -c /dev/fuse ] ||
	[ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
	not_ok "sshd, sshfs, /dev/fuse, unshare and root (./build.sh test installs them)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
uhome=$(getent passwd "$U" | cut -d: -f6)
port=$((16823 + ${XLOOP_TESTCLUSTER_PORT_OFFSET:-0}))
sd=$(mktemp -d "$T_TMP/sshd-XXXXXX")
sshd_setup "$sd" "$port"
step "cp xloop" cp "$X" "$sd/bin/xloop"
step "chmod 755 xloop" chmod 755 "$sd/bin/xloop"
d=$(user_dir)
M=$T_TMP/study
step "mkdir -p" mkdir -p "$M"
chown "$U" "$M"
# the login node: M is the local study there
unshare -m --propagation private sh -c \
	"mount --bind '$d' '$M' && exec /usr/sbin/sshd -f '$sd/sshd_config' -E '$sd/sshd.log'" ||
	not_ok "sshd started in its own mount namespace" "$(cat "$sd/sshd.log")"
step "mkdir -p .ssh" mkdir -p "$uhome/.ssh"
[ -e "$uhome/.ssh/config" ] && cp "$uhome/.ssh/config" "$sd/config.saved"
cat >"$uhome/.ssh/config" <<EOF
Host xl-login
  HostName 127.0.0.1
  Port $port
  User $U
  IdentitiesOnly yes
  IdentityFile $sd/user_key
  UserKnownHostsFile $sd/known_hosts
EOF
chown -R "$U" "$uhome/.ssh"
step "chmod 600 config" chmod 600 "$uhome/.ssh/config"
cleanup() {
	umount -l "$M" 2>/dev/null
	[ -s "$sd/sshd.pid" ] && kill "$(cat "$sd/sshd.pid")" 2>/dev/null
	rm -f "$uhome/.ssh/config"
	[ -e "$sd/config.saved" ] && cp "$sd/config.saved" "$uhome/.ssh/config"
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"
}
trap cleanup EXIT

new_study "$d" nfs 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["driver"].update(mode="slurm", host="xl-login")'
# everywhere but the login node, M is the study over sshfs
sshfs -o allow_other,IdentityFile="$sd/user_key",UserKnownHostsFile="$sd/known_hosts",IdentitiesOnly=yes,port=$port \
	"$U@127.0.0.1:$d" "$M"
check "M is on fuse.sshfs here" sh -c "findmnt -n -o FSTYPE '$M' | grep -qx fuse.sshfs"
check "the study is visible through it" test -f "$M/xloop.json"

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
echo "START x=$X device=cpu"
sleep 4
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "cp job.sh cv.json" cp "$T_TMP/job.sh" "$T_TMP/cv.json" "$d/"
chown "$U" "$d/job.sh" "$d/cv.json"
r() { runuser -u "$U" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME="$uhome" "$X" "$@"; }

check "status here says a feeder would forward to xl-login" sh -c \
	"runuser -u '$U' -- env HOME='$uhome' SLURM_CONF='$SLURM_CONF' '$X' -C '$M' driver status | grep -q 'forwards its tick over ssh to xl-login'"
expect_rc 0 "adopt on the login node" r --host xl-login -C "$M" adopt "$M/job.sh" --tag base --cv "$M/cv.json"
expect_rc 0 "plan add 3 changes there" r --host xl-login -C "$M" plan add X=1 X=2 X=3
expect_rc 0 "one next there" r --host xl-login -C "$M" next
for i in $(seq 1 150); do
	n=$(as_user git -C "$d" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict')
	[ "$n" -ge 3 ] && break
	sleep 1
done
check "all 3 runs judged by forwarded feeders alone ($n)" test "$n" -ge 3
check "each feeder said it forwarded its tick" grep -q 'its tick runs on xl-login over ssh' \
	"$d/.xloop/driver/feeder.log"
check "no feeder opened the DB here (every tick.log line came from the login node's xloop)" \
	sh -c "! grep -q 'feeder: skipped' '$d/.xloop/tick.log'"
for i in $(seq 1 60); do
	[ -z "$(as_user squeue -h -u "$U" -o %i)" ] && break
	sleep 1
done
check "then no job of xloop's is queued" test -z "$(as_user squeue -h -u "$U" -o %i)"

finish
