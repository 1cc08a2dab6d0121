# Helpers for the integration tests; source it first.
#   check NAME CMD...          CMD must succeed
#   expect_rc RC NAME CMD...   CMD must exit RC
#   step NAME CMD...           setup: run CMD (its stdout and stderr are
#                              passed on when it ends); when it fails, "not
#                              ok - T: setup: NAME" with its output, and the
#                              test ends there (RESULT line, exit 1), so no
#                              later check fails for a reason it does not
#                              name. For every command the test relies on,
#                              not for one whose failure is expected or is
#                              what a check looks at. At the test's top level
#                              or in its functions, not in $(...) or a
#                              pipeline (a subshell cannot end the test; the
#                              failure still counts, in finish)
#   as_user CMD...             run CMD as the unprivileged test user
#   finish                     print the RESULT line (last line of every test)
# Output of a failing command is shown indented under "not ok".
set -u

T_NAME=$(basename "$0" .sh)
T_PASS=0 T_FAIL=0 T_SKIP=0
XLOOP_BIN=${XLOOP_BIN:?run through tests/run.sh}
XLOOP_TEST_USER=${XLOOP_TEST_USER:-xloopt}
XLOOP_PROFILE=${XLOOP_PROFILE:-none}

T_TMP=$(mktemp -d "/tmp/xloop-$T_NAME-XXXXXX")
chmod 755 "$T_TMP"
# XLOOP_KEEP_TMP=1 keeps the test's files for debugging
[ -n "${XLOOP_KEEP_TMP:-}" ] || trap 'rm -rf "$T_TMP"' EXIT

ok() { T_PASS=$((T_PASS + 1)); echo "ok - $T_NAME: $1"; }
not_ok() {
	T_FAIL=$((T_FAIL + 1))
	echo "not ok - $T_NAME: $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/    /' | head -n 40
	return 0
}
skip() { T_SKIP=$((T_SKIP + 1)); echo "ok - $T_NAME: $1 # skip ${2:-}"; }

# The test's own stdout, for step's report when CMD's output is redirected
# (closed for the commands step and as_user run: a daemon must not hold it)
exec {T_OUT}>&1

step() {
	local name=$1 rc o=$T_TMP/.step-out e=$T_TMP/.step-err
	shift
	"$@" >"$o" 2>"$e" {T_OUT}>&-
	rc=$?
	if [ "$rc" -eq 0 ]; then
		cat "$o"
		cat "$e" >&2
		rm -f "$o" "$e"
		return 0
	fi
	not_ok "setup: $name (exit $rc)" "$(cat "$e" "$o" 2>&1)" >&"$T_OUT"
	# a subshell cannot end the test: the test's finish counts it then
	if [ "$BASH_SUBSHELL" -ne 0 ]; then
		echo "$name" >>"$T_TMP/.step-failed"
		exit 1
	fi
	finish >&"$T_OUT"
	exit 1
}

check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
}

expect_rc() {
	local want=$1 name=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$name"; else not_ok "$name (exit $rc, want $want)" "$out"; fi
}

# Run as the unprivileged user, keeping the Slurm client configuration.
# As root: setpriv, with the environment runuser would give (HOME, USER,
# LOGNAME, SHELL from the user's passwd line), without a PAM session per
# call (runuser's was a tenth of the suite's CPU, issue 32).
if [ "$EUID" -eq 0 ] && T_PW=$(getent passwd "$XLOOP_TEST_USER"); then
	IFS=: read -r _ _ T_UID T_GID _ T_HOME T_SHELL <<<"$T_PW"
fi
as_user() {
	if [ "$EUID" -ne 0 ]; then
		"$@" {T_OUT}>&-
	else
		setpriv --reuid="$T_UID" --regid="$T_GID" --init-groups -- \
			env HOME="$T_HOME" USER="$XLOOP_TEST_USER" LOGNAME="$XLOOP_TEST_USER" \
			SHELL="$T_SHELL" PATH="$PATH" ${SLURM_CONF:+SLURM_CONF="$SLURM_CONF"} \
			"$@" {T_OUT}>&-
	fi
}

# True when the cluster ends a job over its --mem OUT_OF_MEMORY (cgroups);
# the chroot clusters of the version matrix (ops/slurm/chroot-cluster.sh)
# run without cgroups, so a test skips its OOM checks there.
mem_enforced() {
	scontrol show config 2>/dev/null | grep -Eq '^TaskPlugin +=.*task/cgroup'
}

# check NAME CMD... when memory is enforced, else a skip saying why
check_oom() {
	if mem_enforced; then
		check "$@"
	else
		skip "$1" "no memory enforcement (no cgroups) on this cluster"
	fi
}

# A directory the test user owns.
user_dir() {
	local d
	d=$(mktemp -d "$T_TMP/u-XXXXXX")
	[ "$EUID" -eq 0 ] && chown "$XLOOP_TEST_USER" "$d"
	echo "$d"
}

# A git repository the test user owns in DIR, `xloop init --study S` done,
# then xloop.json changed by the Python statements PY (the config is c):
#   new_study "$d" s 'c["queue"]["depth"] = 0'
# The test cluster's GPU is a device node and test jobs compute on the CPU,
# so the breaker's no-GPU check is off unless PY turns it on. Slurm does
# not drive the loop (driver.mode none: no feeder jobs to count) unless PY
# sets c["driver"]["mode"] = "slurm".
# XLOOP_TEST_LANES=N gives every study N lanes (queue.lanes) unless PY sets them.
# Each part is a step: a study that could not be made ends the test.
new_study() {
	step "git init $1" as_user git -C "$1" init -q -b main
	step "git config $1" as_user git -C "$1" config user.name "Test User"
	step "git config $1" as_user git -C "$1" config user.email test@example.com
	step "xloop init --study $2" as_user "$XLOOP_BIN" -C "$1" init --study "$2" >/dev/null
	step "new_study $2: xloop.json" /usr/bin/python3 -c "import json, os, sys
p = sys.argv[1]
c = json.load(open(p))
c['breaker']['no_gpu'] = False
c.setdefault('driver', {})['mode'] = 'none'
$3
# XLOOP_TEST_LANES=N runs a test's studies with N lanes (unless PY names
# lanes itself: init writes queue.lanes 1, so the file cannot tell)
if os.environ.get('XLOOP_TEST_LANES') and 'lanes' not in sys.argv[2]:
    c.setdefault('queue', {})['lanes'] = int(os.environ['XLOOP_TEST_LANES'])
json.dump(c, open(p, 'w'), indent=2)" "$1/xloop.json" "$3"
}

# --- The study's state and jobs, for tests that drive a study (t2000-t2030):
# these work on the study in $d with the xloop in $X, as those tests set them
# (a test that defines its own keeps its own).

# sql [--rw] [--user] FILE SQL [ARG...]: each row of SQL on the SQLite file
# FILE, its columns joined by | (NULL as nothing); ARGs bind ?1, ?2, ... as
# text. Read-only unless --rw; as the test user with --user (a write as
# root could leave files the user cannot open). The sqlite3 shell, not
# python3: it starts in a tenth of the time, and the suite runs it often.
sql() {
	local ro=-readonly as= i=1 a
	[ "$1" = --rw ] && { ro=; shift; }
	[ "$1" = --user ] && { as=as_user; shift; }
	local f=$1 q=$2
	shift 2
	{
		echo ".timeout 30000"
		for a in "$@"; do
			a=${a//\'/\'\'}
			a=${a//\\/\\\\}
			a=${a//\"/\\\"}
			printf ".parameter set ?%d \"'%s'\"\n" "$i" "$a"
			i=$((i + 1))
		done
		printf '%s;\n' "$q"
	} | $as sqlite3 -batch -bail $ro "$f"
}

# db SQL [ARG...]: sql on $d's state DB, read-only
db() { sql "$d/.xloop/state.db" "$@"; }

# live: the study's queued and running jobs, "ID DIR" a line (jobs whose
# WorkDir is $d or under it); squeue's error when it fails
live() {
	local q
	q=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z' 2>&1) || { echo "squeue failed: $q"; return; }
	printf '%s\n' "$q" | awk -v d="$d" '$2 == d || index($2, d "/") == 1'
}

# ended NAME: no job of the study named NAME or NAME.<step> is queued or
# running (a barrier: the jobs a crash left run and end before the next tick)
ended() {
	! as_user squeue -h -u "$XLOOP_TEST_USER" -o '%j %Z' 2>/dev/null |
		awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print $1 }' | grep -qxF -e "$1" -e "$1.eval" -e "$1.then"
}

# att TAG FIELD: FIELD of the latest attempt of run TAG (status --json)
att() {
	as_user "$X" -C "$d" status "$1" --json | /usr/bin/python3 -c "import json,sys
print(json.load(sys.stdin)['runs'][0]['attempts'][-1][sys.argv[1]])" "$2"
}

# some_leaks I CMD...: CMD, with the ASan build's leak check (LeakSanitizer,
# about 45 ms of CPU at each exit) on round I = 1 and every 4th only: the
# rounds of a polling loop between mostly see the code the others saw
some_leaks() {
	local i=$1
	shift
	if [ "$i" -eq 1 ] || [ $((i % 4)) -eq 0 ]; then
		"$@"
	else
		ASAN_OPTIONS=${ASAN_OPTIONS//detect_leaks=1/detect_leaks=0} "$@"
	fi
}

# drive [ROUNDS]: `xloop next` once a second until the test user has no
# job left, one more next submitted none and every attempt that reached
# Slurm has its verdict (ROUNDS at most, 120 by default); the briefings
# are appended to $T_TMP/brief.txt
drive() {
	local i
	for i in $(seq 1 "${1:-120}"); do
		some_leaks "$i" as_user "$X" -C "$d" next >>"$T_TMP/brief.txt" 2>&1
		# done once a next with the queue empty submits nothing more (it
		# may judge the last tasks and only then submit a sweep's summary)
		# and nothing waits for a verdict (a step it submitted may have run
		# and ended before squeue looked: a busy machine)
		if [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; then
			as_user "$X" -C "$d" next >>"$T_TMP/brief.txt" 2>&1
			[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] &&
				[ "$(db "SELECT count(*) FROM attempt WHERE verdict IS NULL
					AND phase IN ('submitted', 'adopted')")" = 0 ] && break
		fi
		sleep 1
	done
}

# drive_ticks SECS: `xloop tick` every SECS s until none of the study's jobs
# is live (150 rounds at most), then twice more; output appended to
# $T_TMP/ticks.txt; says how many rounds it took and what was left
drive_ticks() {
	local i
	for i in $(seq 1 150); do
		some_leaks "$i" as_user "$X" -C "$d" tick >>"$T_TMP/ticks.txt" 2>&1
		# done once a tick with nothing live leaves nothing live (it may
		# judge a segment and only then submit a step Slurm dropped)
		if [ -z "$(live)" ]; then
			as_user "$X" -C "$d" tick >>"$T_TMP/ticks.txt" 2>&1
			[ -z "$(live)" ] && break
		fi
		sleep "$1"
	done
	as_user "$X" -C "$d" tick >>"$T_TMP/ticks.txt" 2>&1
	as_user "$X" -C "$d" tick >>"$T_TMP/ticks.txt" 2>&1
	echo "# drive: $i rounds, left: $(live | tr '\n' ' ')"
}
# --- end of the study helpers

# An OpenSSH server for the test user on 127.0.0.1:PORT, all in DIR: fresh
# host and user keys (DIR/user_key, the user's), DIR/sshd_config (PATH there
# starts with DIR/bin; SLURM_CONF kept; sftp served), DIR/known_hosts. The
# caller starts it: /usr/sbin/sshd -f DIR/sshd_config -E DIR/sshd.log
sshd_setup() {
	local sd=$1 port=$2 u=$XLOOP_TEST_USER
	# sshd refuses keys for a locked account ("!" as its password): make it
	# "no password can match" instead, which still allows keys
	case $(getent shadow "$u" | cut -d: -f2) in '!'*) usermod -p '*' "$u" ;; esac
	chmod 755 "$sd"
	ssh-keygen -q -t ed25519 -N '' -f "$sd/host_key"
	ssh-keygen -q -t ed25519 -N '' -f "$sd/user_key"
	cp "$sd/user_key.pub" "$sd/authorized_keys"
	chown "$u" "$sd/user_key"
	mkdir -p "$sd/bin" /run/sshd
	cat >"$sd/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $sd/host_key
PidFile $sd/sshd.pid
AuthorizedKeysFile $sd/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowUsers $u
Subsystem sftp internal-sftp
SetEnv SLURM_CONF=${SLURM_CONF:-} PATH=$sd/bin:/usr/local/bin:/usr/bin:/bin
LogLevel ERROR
EOF
	echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$sd/host_key.pub")" >"$sd/known_hosts"
	chmod 644 "$sd/known_hosts"
}

# One JSON value out of a document on stdin: jget '.jobs[0].state'
jget() {
	python3 -c 'import json,sys
v=json.load(sys.stdin)
for k in sys.argv[1].strip(".").replace("[",".").replace("]","").split("."):
    if k=="": continue
    v=v[int(k)] if isinstance(v,list) else v[k]
print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1"
}

# A hash of everything under a directory (names, modes, contents).
tree_hash() {
	tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . | sha256sum
}

# tap OUT: another program's "ok - " and "not ok - " lines in OUT counted as
# this test's own checks; its indented lines (a failure's detail) shown
tap() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		"    "*) printf '%s\n' "$line" ;;
		esac
	done <<<"$1"
}

# Barriers the test controls, never a sleep or a slow job (issue 32). A job
# script holds a line "#GATE" where it must wait; gate_job FILE turns it into
# a wait for the test's word: the job goes on once the test said
# open_gate all, open_gate TAG (its run) or open_gate TAG.N (its attempt N).
# While it waits it says so: at_gate TAG is true from then on. The gates
# live in the test's directory (sticky, world-writable: jobs run as the
# test user).
T_GATES=$T_TMP/gates
gate_job() {
	mkdir -p "$T_GATES" && chmod 1777 "$T_GATES" || return 1
	local g=$T_GATES
	sed -i "s|^#GATE\$|touch \"$g/at-\$XLOOP_TAG\"; while ! [ -e $g/all -o -e \"$g/\$XLOOP_TAG\" -o -e \"$g/\$XLOOP_TAG.\$XLOOP_ATTEMPT\" ]; do sleep 0.5; done|" "$1"
	grep -q "$T_GATES" "$1"
}
open_gate() { mkdir -p "$T_GATES" && touch "$T_GATES/$1"; }
at_gate() { test -e "$T_GATES/at-$1"; }

# wait_for SECONDS CMD...: poll CMD (every 0.2 s) until it succeeds, at most
# SECONDS; its status is CMD's last. A deadline, not a duration: generous,
# since a busy machine is slow, and nothing waits for it when all is well.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# validates NAME SCHEMA [FILE]: the check NAME, that FILE (stdin when none)
# validates against schemas/SCHEMA.schema.json; a copy is taken now and
# checked at finish, with every other, in one python3 (validate.py --batch:
# importing jsonschema costs 0.2 CPU-s a process)
T_VALIDATE=()
validates() {
	local n=$((${#T_VALIDATE[@]} + 1))
	if [ $# -ge 3 ]; then
		cp "$3" "$T_TMP/.validate-$n.json" 2>/dev/null || : >"$T_TMP/.validate-$n.json"
	else
		cat >"$T_TMP/.validate-$n.json"
	fi
	T_VALIDATE+=("$1")
	printf '%s\t%s\t%s\n' "$n" "$XLOOP_ROOT_DIR/schemas/$2.schema.json" \
		"$T_TMP/.validate-$n.json" >>"$T_TMP/.validate.list"
}
validates_run() {
	local n msg
	[ ${#T_VALIDATE[@]} -gt 0 ] || return 0
	while IFS=$'\t' read -r n msg; do
		if [ "$msg" = ok ]; then
			ok "${T_VALIDATE[$((n - 1))]}"
		else
			not_ok "${T_VALIDATE[$((n - 1))]}" "$msg"
		fi
		unset 'T_VALIDATE[$((n - 1))]'
	done < <(/usr/bin/python3 "$XLOOP_ROOT_DIR/tests/t/validate.py" --batch "$T_TMP/.validate.list" 2>&1)
	for n in "${!T_VALIDATE[@]}"; do not_ok "${T_VALIDATE[$n]}" "validate.py gave no answer"; done
	T_VALIDATE=()
	rm -f "$T_TMP/.validate.list"
}

finish() {
	validates_run
	# leave no job of this test behind for the next one
	if [ -n "${SLURM_CONF:-}" ] && command -v scancel >/dev/null; then
		scancel -u "$XLOOP_TEST_USER" >/dev/null 2>&1 || true
	fi
	# a step that failed in a subshell (it could not end the test)
	if [ "$BASH_SUBSHELL" -eq 0 ] && [ -s "$T_TMP/.step-failed" ]; then
		not_ok "setup failed in a subshell: $(paste -sd, "$T_TMP/.step-failed")"
		rm -f "$T_TMP/.step-failed"
	fi
	echo "RESULT pass=$T_PASS fail=$T_FAIL skip=$T_SKIP"
	[ "$T_FAIL" -eq 0 ]
}

# The multi-node profile (tests/one.sh --nodes N; a test marked "# nodes: N"):
#   need_nodes N          skip the whole test (and end it) on fewer nodes
#   kill_node NAME        lose node NAME: its slurmd and its jobs' processes
#                         (everything in its namespace) die by SIGKILL
#   start_node NAME       bring it back (waits until it is in service)
#   node_state NAME       its state as sinfo prints it ("down*", "idle", ...)
need_nodes() {
	if [ "${XLOOP_NODES:-1}" -lt "$1" ]; then
		skip "$T_NAME" "needs the $1-node test cluster (tests/one.sh --nodes $1)"
		finish
		exit 0
	fi
}
kill_node() { "$XLOOP_ROOT_DIR/ops/slurm/testcluster.sh" kill-node "$1"; }
# job_on DIR: "JOBID NODE" of the running job whose WorkDir is DIR, if one runs
job_on() { squeue -h -t RUNNING -u "$XLOOP_TEST_USER" -o '%i %N %Z' | awk -v d="$1" '$3 == d { print $1, $2 }'; }
# preempt_pair PREFIX [PY]: the preemption tests' two studies (t1871,
# t1873), each with run r1 of $T_TMP/job.sh (baseline $T_TMP/cv.json)
# submitted: $rq in partition low (PreemptMode REQUEUE), $cn in lowcancel
# (CANCEL), named PREFIXrq and PREFIXcn; PY: more lines for xloop.json
preempt_pair() {
	local s d part
	# shellcheck disable=SC2034 # the caller's
	rq=$(user_dir) cn=$(user_dir)
	for s in rq cn; do
		d=${!s} part=low
		[ $s = cn ] && part=lowcancel
		new_study "$d" "$1$s" "c['slurm']['partition'] = '$part'
c['resources'].update(cpus=1, mem='100M', time='00:05:00', gres='gpu:1')
c['queue']['depth'] = 0
c['retry'].update(infra_max=1)
c['breaker'] = {'program': 0, 'no_gpu': False}
${2:-}"
		step "adopt a baseline ($s)" as_user "$XLOOP_BIN" -C "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
		step "a run ($s)" as_user "$XLOOP_BIN" -C "$d" new r1 --from base --set X=1
		step "submit it ($s)" as_user "$XLOOP_BIN" -C "$d" submit r1 --no-chain
	done
}
# preempt_nodes NODE...: a job of partition gpu on each node, every GPU of
# it, until $T_TMP/hold goes: it preempts what runs there; their ids
preempt_nodes() {
	local n
	touch "$T_TMP/hold"
	for n in $(printf '%s\n' "$@" | sort -u); do
		sbatch --parsable -p gpu -w "$n" --gres="gpu:$XLOOP_GPUS" -o /dev/null \
			--wrap "while [ -e '$T_TMP/hold' ]; do sleep 0.5; done"
	done
}
# attempt_of DIR N FIELD: FIELD of attempt N of run r1 in study DIR, as
# status --json says it ("none": no attempt N)
attempt_of() {
	as_user "$XLOOP_BIN" -C "$1" status --json | /usr/bin/python3 -c 'import json, sys
r = [x for x in json.load(sys.stdin)["runs"] if x["tag"] == "r1"][0]
a = [x for x in r["attempts"] if x["n"] == int(sys.argv[1])]
print(a[0].get(sys.argv[2]) if a else "none")' "$2" "$3"
}
start_node() { "$XLOOP_ROOT_DIR/ops/slurm/testcluster.sh" start-node "$1"; }
node_state() { sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1; }
