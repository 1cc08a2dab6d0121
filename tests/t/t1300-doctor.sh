#!/usr/bin/env bash
# xloop doctor against the real cluster: a healthy study passes (accounting
# said as it is in each profile), and each broken thing (unknown partition,
# --time over MaxTime, too many GPUs/CPUs, a drained node, an unreachable
# controller, no Slurm at all, a stray GPU process, little disk) fails or
# warns with its fix; --json validates; five Slurm calls, no more.
. "$(dirname "$0")/lib.sh"
: "${T_TMP:?lib.sh was not loaded}"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
OUT=$T_TMP/out
NODE=$(hostname -s)

# doctor as the test user; output in $OUT, exit code returned
doc() { as_user "$X" -C "$d" doctor "$@" >"$OUT" 2>&1; }
# the line of one check in $OUT, e.g. line partition
line() { grep -E "^(ok|warn|fail) +$1 " "$OUT"; }
# the fix line right under a check's line
fix_of() { grep -A1 -E "^(ok|warn|fail) +$1 " "$OUT" | sed -n '2s/^ *fix: //p'; }
# assert: check NAME has STATUS in $OUT (shown when not)
has() { if grep -qE "^$2 +$1 " "$OUT"; then ok "$3"; else not_ok "$3" "$(cat "$OUT")"; fi; }
# assert: exit code GOT is WANT (the output shown when not)
rc_is() { if [ "$1" -eq "$2" ]; then ok "$3"; else not_ok "$3 (exit $1, want $2)" "$(cat "$OUT")"; fi; }

step "init --study dino" as_user "$X" -C "$d" init --study dino >/dev/null
set_config() {
	/usr/bin/python3 - "$d/xloop.json" "$@" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    sec, key = k.split(".")
    c.setdefault(sec, {})[key] = json.loads(v)
json.dump(c, open(p, "w"), indent=2)
PY
}
# a study that fits the test cluster (2 CPUs, one GRES gpu, MaxTime 04:00:00)
# (driver.mode none: its probe job is t1960's; here the five calls are counted)
healthy() {
	set_config 'slurm.partition="gpu"' 'resources.gres="gpu:1"' resources.cpus=1 \
		'resources.mem="200M"' 'resources.time="00:05:00"' 'driver.mode="none"'
}
healthy

# --- a healthy cluster: exit 0, nothing fails
SECONDS=0
doc
rc=$?
t_healthy=$SECONDS
rc_is "$rc" 0 "healthy: exit 0 (took ${t_healthy}s)"
check "healthy: no check fails" sh -c "! grep -q '^fail' '$OUT'"
check "healthy: every line is ok, warn or a fix" sh -c \
	"! grep -vE '^(ok   |warn |fail ) [a-z-]+ +[^ ]|^ {19}fix: ' '$OUT'"
for c in config controller partition time nodes gres resources accounting disk gpu-procs notify; do
	check "healthy: check $c is reported" line "$c"
done
has controller ok "healthy: the controller answers"
check "healthy: the controller line says who answers" grep -qE '^ok +controller +slurmctld on [^ ]+ answers \(scontrol ping\)' "$OUT"
has partition ok "healthy: partition gpu exists"
check "healthy: partition shows its MaxTime" grep -qE '^ok +partition .*MaxTime=04:00:00' "$OUT"
has time ok "healthy: 00:05:00 fits MaxTime"
has gres ok "healthy: gpu:1 is configured"
has resources ok "healthy: 1 CPU and 200M fit"
has config ok "healthy: the config is valid"
check "healthy: ok/warn column layout" grep -qE '^ok    controller   slurmctld' "$OUT"
if [ "$XLOOP_PROFILE" = accounting ]; then
	has accounting ok "accounting profile: accounting is ok"
	check "accounting profile: says sacct" grep -qE '^ok +accounting +accounting on .*sacct' "$OUT"
else
	has accounting warn "plain profile: accounting warns"
	check "plain profile: says no accounting" grep -qE '^warn +accounting +no accounting: verdicts rely on scontrol' "$OUT"
	check "plain profile: shows MinJobAge" grep -qE '^warn +accounting .*MinJobAge=[0-9]+ s' "$OUT"
	check "plain profile: the fix says how often to tick" sh -c \
		"grep -A1 -E '^warn +accounting' '$OUT' | grep -qE 'fix: run .xloop tick. from cron at least every [0-9]+ min'"
	# issue 44: a feeder ticks as each run ends; cron is no advice for driver.mode slurm
	step "driver.mode slurm" set_config 'driver.mode="slurm"'
	doc --no-probe
	check "driver.mode slurm: the accounting check advises no cron" sh -c \
		"grep -A1 -E '^(ok|warn) +accounting' '$OUT' | grep -q . && ! grep -A1 -E '^(ok|warn) +accounting' '$OUT' | grep -q cron"
	check "driver.mode slurm: it says the feeder ticks as each run ends" \
		grep -qE '^(ok|warn) +accounting .*driver.mode slurm ticks as each run ends' "$OUT"
	check "driver.mode slurm: the fix is the admin's (MinJobAge=300 here)" sh -c \
		"grep -A1 -E '^warn +accounting' '$OUT' | grep -qE 'fix: have the admin set up slurmdbd .* raise MinJobAge above 600 s'"
	healthy
fi

doc --json
rc_is $? 0 "healthy: --json exit 0"
validates "healthy: --json validates" doctor "$OUT"
check "healthy: --json ok is true" test "$(jget .ok <"$OUT")" = True
check "healthy: --json has 12 checks" test "$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["checks"]))' <"$OUT")" = 12

# five Slurm calls, whatever the cluster holds
# (wrappers that log and exec the real command, in a directory of their own)
BIN=$(mktemp -d "$T_TMP/bin-XXXXXX")
step "fake bin dir" chmod 755 "$BIN"
: >"$T_TMP/calls"
step "chmod 666 calls" chmod 666 "$T_TMP/calls"
for p in scontrol sinfo squeue sacct sbatch scancel; do
	real=$(command -v "$p") || continue
	case $real in /*) ;; *) continue ;; esac
	printf '#!/bin/sh\necho "%s $*" >>%s\nexec %s "$@"\n' "$p" "$T_TMP/calls" "$real" >"$BIN/$p"
	step "a logging $p" chmod 755 "$BIN/$p"
done
PATH="$BIN:$PATH" doc
check "costs: exactly five Slurm calls" test "$(wc -l <"$T_TMP/calls")" -eq 5
check "costs: ping, partition, node, sinfo -R, config" test \
	"$(sort "$T_TMP/calls" | tr '\n' ';')" = \
	"scontrol ping;scontrol show config;scontrol show node -o;scontrol show partition -o gpu;sinfo -R -h -o %n|%E|%H;"

# --- the partition does not exist
step "set_config slurm.partition=nosuch" set_config 'slurm.partition="nosuch"'
doc
rc_is $? 1 "unknown partition: exit 1"
has partition fail "unknown partition: the partition check fails"
check "unknown partition: says which" grep -qE "^fail +partition +partition 'nosuch' does not exist" "$OUT"
check "unknown partition: lists what Slurm has" grep -qE "^fail +partition .*Slurm has: .*gpu" "$OUT"
check "unknown partition: the fix names xloop.json slurm.partition" sh -c \
	"grep -A1 -E '^fail +partition' '$OUT' | grep -qE 'fix: .*slurm\.partition in xloop\.json'"
check "unknown partition: no time/gres/resources verdict on a partition that is not there" \
	sh -c "! grep -qE '^(ok|warn|fail) +(time|gres|resources) ' '$OUT'"
doc --json
validates "unknown partition: --json validates" doctor "$OUT"
check "unknown partition: --json ok is false" test "$(jget .ok <"$OUT")" = False
healthy

# --- resources.time over MaxTime
step "set_config resources.time=05:00:00" set_config 'resources.time="05:00:00"'
doc
rc_is $? 1 "time over MaxTime: exit 1"
has time fail "time over MaxTime: the time check fails"
check "time over MaxTime: shows MaxTime" grep -qE '^fail +time +resources.time 05:00:00 .*MaxTime=04:00:00' "$OUT"
check "time over MaxTime: the fix gives the limit" sh -c \
	"grep -A1 -E '^fail +time' '$OUT' | grep -q 'fix: lower resources.time in xloop.json to at most 04:00:00'"
step "set_config resources.time=04:00:00" set_config 'resources.time="04:00:00"'
doc
rc_is $? 0 "time equal to MaxTime: exit 0"
has time ok "time equal to MaxTime: ok"
healthy

# --- more GPUs than the node has (one configured cannot satisfy gpu:2)
step "set_config resources.gres=gpu:2" set_config 'resources.gres="gpu:2"'
doc
rc_is $? 1 "gres gpu:2 on a one-GPU node: exit 1"
has gres fail "gres gpu:2: fails"
check "gres gpu:2: says what the node has" grep -qE '^fail +gres .*Gres=gpu:1 on ' "$OUT"
check "gres gpu:2: the fix offers gpu:1" sh -c "grep -A1 -E '^fail +gres' '$OUT' | grep -q 'resources.gres in xloop.json to gpu:1'"
step "set_config resources.gres=gpu:a100:1" set_config 'resources.gres="gpu:a100:1"'
doc
rc_is $? 1 "gres of a type no node has: exit 1"
has gres fail "gres gpu:a100:1 on an untyped GPU: fails"
step "set_config resources.gres=fpga:1" set_config 'resources.gres="fpga:1"'
doc
has gres fail "gres the cluster does not have at all: fails"
step "set_config resources.gres=" set_config 'resources.gres=""'
doc
rc_is $? 0 "no gres (CPU-only study): exit 0"
has gres ok "no gres: ok"
healthy

# --- more CPUs / memory than any node has
step "set_config resources.cpus=64 resources.mem=64T" set_config resources.cpus=64 'resources.mem="64T"'
doc
rc_is $? 1 "64 CPUs and 64T: exit 1"
has resources fail "64 CPUs and 64T: the resources check fails"
check "resources: names CPUTot and RealMemory" grep -qE '^fail +resources .*CPUTot=[0-9]+.*RealMemory=[0-9]+M' "$OUT"
check "resources: the fix names both keys" sh -c \
	"grep -A1 -E '^fail +resources' '$OUT' | grep -qE 'fix: lower resources.cpus to at most [0-9]+ and resources.mem to at most [0-9]+M in xloop.json'"
healthy

# --- a drained node: the reason is shown; the node is resumed whatever happens
if [ "$(id -u)" -eq 0 ]; then
	trap 'scontrol update nodename="$NODE" state=resume >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT
	scontrol update nodename="$NODE" state=drain reason='disk almost full'
	doc
	rc=$?
	step "keep the drained output" cp "$OUT" "$T_TMP/drained"
	doc --json
	step "keep the drained --json output" cp "$OUT" "$T_TMP/drained.json"
	scontrol update nodename="$NODE" state=resume
	trap 'rm -rf "$T_TMP"' EXIT
	OUT=$T_TMP/drained
	rc_is "$rc" 1 "drained node: exit 1 (the partition's only node takes no job)"
	has nodes fail "drained node: the nodes check fails"
	check "drained node: shows the reason text" grep -qE "^fail +nodes .*$NODE [A-Z+]*DRAIN[A-Z+]*: disk almost full" "$OUT"
	check "drained node: shows since when" grep -qE '^fail +nodes .*\(since [0-9]{4}-[0-9]{2}-[0-9]{2}T' "$OUT"
	check "drained node: the fix resumes that node" sh -c \
		"grep -A1 -E '^fail +nodes' '$OUT' | grep -q 'scontrol update nodename=$NODE state=resume'"
	validates "drained node: --json validates" doctor "$T_TMP/drained.json"
	OUT=$T_TMP/out
	# a resumed node is NOT_RESPONDING until slurmctld's next ping of slurmd
	for i in $(seq 1 60); do
		st=$(scontrol show node -o "$NODE" | grep -o 'State=[^ ]*')
		case $st in *DRAIN* | *DOWN* | *NOT_RESPONDING*) sleep 0.5 ;; *) break ;; esac
	done
	doc
	rc_is $? 0 "resumed node: exit 0 again"
	has nodes ok "resumed node: the nodes check is ok"
else
	skip "drained node" "needs root to drain the node"
fi

# --- the controller does not answer: the check fails fast, exit 1
if [ -n "${SLURM_CONF:-}" ]; then
	sed 's/^SlurmctldPort=.*/SlurmctldPort=1/' "$SLURM_CONF" >"$T_TMP/down.conf"
	step "down.conf readable" chmod 644 "$T_TMP/down.conf"
	: >"$T_TMP/calls"
	start=$(date +%s%N)
	SLURM_CONF="$T_TMP/down.conf" PATH="$BIN:$PATH" doc
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	rc_is "$rc" 1 "unreachable controller: exit 1"
	check "unreachable controller: answered in ${ms} ms (< 20 s)" test "$ms" -lt 20000
	has controller fail "unreachable controller: the controller check fails"
	check "unreachable controller: says it does not answer" grep -qE '^fail +controller +slurmctld on [^ ]+ does not answer' "$OUT"
	check "unreachable controller: the fix names slurm.conf" sh -c \
		"grep -A1 -E '^fail +controller' '$OUT' | grep -q 'SlurmctldHost/SlurmctldPort in $T_TMP/down.conf'"
	check "unreachable controller: only scontrol ping was run" test "$(cat "$T_TMP/calls")" = "scontrol ping"
	check "unreachable controller: local checks still run" sh -c "grep -qE '^(ok|warn|fail) +disk ' '$OUT'"
	SLURM_CONF="$T_TMP/down.conf" doc --json
	validates "unreachable controller: --json validates" doctor "$OUT"
else
	skip "unreachable controller" "no SLURM_CONF to copy"
fi

# --- no Slurm on PATH: 69
as_user env PATH=/nonexistent "$X" -C "$d" doctor >"$OUT" 2>&1
rc_is $? 69 "no Slurm commands: exit 69"
check "no Slurm commands: says scontrol is missing" grep -qE "^fail +controller +'scontrol' not found" "$OUT"

# --- GPU processes (a fake nvidia-smi: the box has no GPU)
GPU=$(mktemp -d "$T_TMP/gpu-XXXXXX")
step "fake GPU dir" chmod 755 "$GPU"
sleep 300 &
stray=$!
printf '#!/bin/sh\n[ "$1" = --query-compute-apps=pid,process_name ] || exit 9\necho "%s, /usr/bin/python3 train.py"\n' "$stray" >"$GPU/nvidia-smi"
step "chmod 755 nvidia-smi" chmod 755 "$GPU/nvidia-smi"
PATH="$GPU:$PATH" doc
rc_is $? 0 "a stray GPU process: still exit 0 (a warning)"
has gpu-procs warn "a stray GPU process: warns"
check "a stray GPU process: names its pid and program" grep -qE "^warn +gpu-procs .*$stray /usr/bin/python3 train.py" "$OUT"
kill "$stray" 2>/dev/null
wait "$stray" 2>/dev/null
printf '#!/bin/sh\nexit 0\n' >"$GPU/nvidia-smi"
PATH="$GPU:$PATH" doc
has gpu-procs ok "no GPU process: ok"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' >"$GPU/nvidia-smi"
PATH="$GPU:$PATH" doc
has gpu-procs warn "nvidia-smi failing: warns"
check "nvidia-smi failing: shows its message" grep -qE '^warn +gpu-procs .*could not communicate' "$OUT"
doc
has gpu-procs ok "no nvidia-smi: ok"

# a GPU process of a Slurm job is not stray; its sleep is this test's own
# (lanes and matrix suites run beside each other as the same test user)
naptime=60.$$
printf '#!/bin/bash\nsleep %s\n' "$naptime" >"$d/gpujob.sh"
step "chmod 755 gpujob.sh" chmod 755 "$d/gpujob.sh"
chown "$XLOOP_TEST_USER" "$d/gpujob.sh" 2>/dev/null
jid=$(as_user sbatch --parsable -p gpu -c 1 --mem 50M -t 2 -o /dev/null "$d/gpujob.sh" 2>&1)
jpid=
for i in $(seq 1 40); do
	jpid=$(pgrep -u "$XLOOP_TEST_USER" -f "^sleep $naptime$" | head -1)
	[ -n "$jpid" ] && break
	sleep 0.5
done
if [ -n "$jpid" ]; then
	printf '#!/bin/sh\necho "%s, sleep"\n' "$jpid" >"$GPU/nvidia-smi"
	PATH="$GPU:$PATH" doc
	has gpu-procs ok "a GPU process inside a Slurm job: not stray"
	check "a GPU process inside a Slurm job: counted as such" grep -qE '^ok +gpu-procs .*1 in Slurm jobs' "$OUT"
else
	not_ok "a Slurm job's process appeared" "job $jid"
fi
as_user scancel "$jid" >/dev/null 2>&1

# --- the notifier: set or not, never printed
secret="https://hooks.example.com/T0/B0/s3cr3t-token"
as_user env XLOOP_NOTIFY_URL="$secret" "$X" -C "$d" doctor >"$OUT" 2>&1
has notify ok "notifier set: ok"
check "notifier set: its value is never printed" sh -c "! grep -q 's3cr3t' '$OUT'"
as_user env XLOOP_NOTIFY_URL="$secret" "$X" -C "$d" doctor --json >"$OUT" 2>&1
check "notifier set: its value is not in --json either" sh -c "! grep -q 's3cr3t' '$OUT'"
as_user env -u XLOOP_NOTIFY_URL "$X" -C "$d" doctor >"$OUT" 2>&1
has notify warn "notifier unset: warns"
check "notifier unset: names the variable" grep -qE '^warn +notify +XLOOP_NOTIFY_URL is not set' "$OUT"
as_user env XLOOP_NOTIFY_URL="not a url s3cr3t" "$X" -C "$d" doctor >"$OUT" 2>&1
has notify warn "notifier not a URL: warns"
check "notifier not a URL: value not printed" sh -c "! grep -q 's3cr3t' '$OUT'"
step "set_config notify.url_env=" set_config 'notify.url_env=""'
doc
has notify ok "notifications off: ok"
step "set_config notify.url_env=XLOOP_NOTIFY_URL" set_config 'notify.url_env="XLOOP_NOTIFY_URL"'

# --- free disk: a small filesystem under the study (needs root to mount)
if [ "$(id -u)" -eq 0 ] && mkdir -p "$T_TMP/small" && mount -t tmpfs -o size=100m,mode=0755 tmpfs "$T_TMP/small" 2>/dev/null; then
	s=$T_TMP/small/study
	mkdir "$s" && cp "$d/xloop.json" "$s/" && chown -R "$XLOOP_TEST_USER" "$s"
	as_user "$X" -C "$s" doctor >"$OUT" 2>&1
	rc_is $? 1 "under 500 MiB free: exit 1"
	has disk fail "under 500 MiB free: the disk check fails"
	check "under 500 MiB free: shows how much" grep -qE '^fail +disk +only [0-9]+ MiB free under ' "$OUT"
	umount "$T_TMP/small"
	mount -t tmpfs -o size=1g,mode=0755 tmpfs "$T_TMP/small"
	mkdir "$s" && cp "$d/xloop.json" "$s/" && chown -R "$XLOOP_TEST_USER" "$s"
	as_user "$X" -C "$s" doctor >"$OUT" 2>&1
	rc_is $? 0 "under 5 GiB free: exit 0"
	has disk warn "under 5 GiB free: the disk check warns"
	umount "$T_TMP/small"
else
	skip "free disk thresholds" "cannot mount a small tmpfs"
fi
has_big=$(doc; line disk)
check "the study's own disk is reported with its size" sh -c "echo '$has_big' | grep -qE '[0-9.]+ (GiB|MiB) free under $d'"

# --- refusals
expect_rc 2 "a stray argument" as_user "$X" -C "$d" doctor extra
expect_rc 66 "outside a study" as_user "$X" -C "$T_TMP" doctor
if [ "$(id -u)" -eq 0 ]; then
	expect_rc 77 "as root without --allow-root" "$X" -C "$d" doctor
fi

finish
