#!/usr/bin/env bash
# Slurm drives the loop (issue 20, driver.mode slurm): init, adopt, plan add
# with 5 changes, one `next`, and then nothing else runs xloop: the feeder
# job behind the running run judges, feeds and queues the next feeder, so
# all 5 runs are submitted, judged and committed in ops/decisions.md, the
# each run in a lane was queued before the one before it ended (scontrol's
# submit and end times: the GPU waits for Slurm, never for the loop), and
# once the last verdict is in no job of xloop's is queued.
# Then: a feeder cancelled by hand is replaced by the next `next`, two ticks
# never leave two feeders, a chain never targets a feeder (also with
# slurm.chain any-user), a bare submit leaves a feeder, a feeder waits out a
# long holder of the lock, the whole loop again with slurmctld restarted in
# the middle, a feeder whose tick dies, a successor that vanishes right after
# its sbatch, and two lanes with a segmented run.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "Slurm drives the loop" "run once, without accounting (slow)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
TC=$XLOOP_ROOT_DIR/ops/slurm/testcluster.sh

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=6
echo "START x=$X device=cpu"
#GATE
sleep "$SLEEP"
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
# shorter runs; X=3 checkpoints and asks for a second segment (exit 85) once
cat >"$T_TMP/job2.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=3
echo "START x=$X device=cpu"
#GATE
sleep "$SLEEP"
ck="$XLOOP_RUN_DIR/checkpoint"
if [ "$X" = 3 ] && [ ! -e "$ck" ]; then echo 1 >"$ck"; echo "checkpointed"; exit 85; fi
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
# drive's first runs wait at a gate until the feeder was seen pending (on a
# busy machine a 3 s run had ended and the feeder was running already)
step "gate job.sh" gate_job "$T_TMP/job.sh"
step "gate job2.sh" gate_job "$T_TMP/job2.sh"
step "chmod 644 job.sh job2.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/job2.sh" "$T_TMP/cv.json"

# feeders of the user in squeue (any state but completing): "ID STATE" lines
feeders() { as_user squeue -h -u "$U" -n xloop-feed -t PD,R,CF -o '%i %T'; }
pending_feeders() { as_user squeue -h -u "$U" -n xloop-feed -t PD -o %i | grep -c .; }
ours_queued() { as_user squeue -h -u "$U" -t PD,R,CF -o %i | grep -c .; }

# The median gap (s) between one GPU job's end and the next one's start
# (every run's job and every segment that ran).
median_gap() {	# DIR: "MEDIAN LATE GAP..." over the study's jobs, lane by lane
	local jobs
	jobs=$(sql --user "$1/.xloop/state.db" "SELECT a.job_id, a.lane FROM attempt a
		WHERE length(a.job_id) > 0 UNION SELECT s.job_id, a.lane FROM segment s
		JOIN attempt a ON a.id = s.attempt_id WHERE length(s.job_id) > 0
		AND s.state IN ('continued', 'last', 'current')")
	printf '%s\n' "$jobs" | while IFS='|' read -r id lane; do
		[ -n "$id" ] && echo "$lane $(scontrol show job -o "$id")"
	done | python3 -c '
import sys, datetime
p = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
lanes = {}
for line in sys.stdin:
    lane, rest = line.split(" ", 1)
    kv = dict(w.split("=", 1) for w in rest.split() if "=" in w)
    lanes.setdefault(lane, []).append((p(kv["StartTime"]), p(kv["EndTime"]), p(kv["SubmitTime"])))
gaps, late = [], 0
for t in lanes.values():
    t.sort()
    for a, b in zip(t, t[1:]):
        gaps.append(b[0] - a[1])
        late += b[2] > a[1]	# queued only after the one before it ended
gaps.sort()
print(gaps[len(gaps) // 2] if gaps else 99, late, " ".join("%g" % g for g in gaps))'
}

# sq DIR SQL: rows of the study's state DB, fields joined by "|"
sq() { as_user /usr/bin/python3 -c "import sqlite3,sys
c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True)
for r in c.execute(sys.argv[2]): print('|'.join('' if v is None else str(v) for v in r))" "$1/.xloop/state.db" "$2"; }

# Verdict commits in the study's ops/decisions.md.
verdicts() { as_user git -C "$1" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict'; }
# Wait until DIR has N verdicts, at most S seconds.
wait_verdicts() {
	local i
	for i in $(seq 1 "$3"); do
		[ "$(verdicts "$1")" -ge "$2" ] && return 0
		sleep 1
	done
	return 1
}

# A study of 5 plan entries; after one `next` only Slurm runs xloop.
# drive DIR NAME [restart|lanes]: restart: slurmctld restarted in the middle;
# lanes: two lanes, shorter runs, every run segmented and X-3 in two segments.
drive() {
	local d=$1 name=$2 mode=${3:-} i n py job=$T_TMP/job.sh
	u() { as_user "$X" -C "$d" "$@"; }
	py='c["resources"].update(cpus=1, mem="100M", time="00:10:00")
c["driver"]["mode"] = "slurm"'
	if [ "$mode" = lanes ]; then
		job=$T_TMP/job2.sh
		py="$py"'
c["queue"]["lanes"] = 2
c["segments"] = {"max": 2, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}'
	fi
	new_study "$d" "$name" "$py"
	expect_rc 0 "$name: adopt" u adopt "$job" --tag base --cv "$T_TMP/cv.json"
	expect_rc 0 "$name: plan add with 5 changes" u plan add X=1 X=2 X=3 X=4 X=5
	rm -f "$T_GATES/all"
	expect_rc 0 "$name: one next" u next
	check "$name: one feeder pending behind the work" test "$(pending_feeders)" = 1
	step "$name: open the gate" open_gate all
	if [ "$mode" = restart ]; then
		wait_verdicts "$d" 2 60	# in the middle: once the second run is judged
		check "$name: slurmctld restarted with runs and a feeder queued" \
			sh -c "'$TC' restart-ctld >/dev/null 2>&1"
	fi
	wait_verdicts "$d" 5 240
	n=$(verdicts "$d")
	check "$name: all 5 runs judged and committed in ops/decisions.md without any xloop call ($n)" \
		test "$n" -ge 5
	check "$name: every run a success" sh -c "runuser -u '$U' -- env PATH='$PATH' SLURM_CONF='$SLURM_CONF' \
		'$X' -C '$d' status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
r = [x for x in d[\"runs\"] if x[\"tag\"] != \"base\"]
sys.exit(0 if len(r) == 5 and all(x[\"state\"] == \"success\" for x in r) else 1)'"
	if [ "$mode" = lanes ]; then
		check "$name: the runs went to both lanes" test "$(sq "$d" \
			"SELECT count(DISTINCT a.lane) FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag != 'base'")" = 2
		check "$name: X-3 ran as two segments of one attempt, judged once" test "$(sq "$d" \
			"SELECT group_concat(s.k || ':' || s.state, ' ') FROM segment s JOIN attempt a ON a.id = s.attempt_id JOIN run r ON r.id = a.run_id WHERE r.tag = 'X-3' AND s.state != 'unneeded'")" = "1:continued 2:last"
	fi
	# the GPU never waits for the loop: each run is queued before the one
	# before it in its lane ends, so its start waits for Slurm alone (idle
	# gaps of 0-1 s on an idle machine, a median of 2 s under load; a run
	# queued only after, by the feeder, waits for its job and tick too)
	# (a controller restarted in the middle may cut one link: the run
	# behind it is queued by the feeder after it)
	set -- $(median_gap "$d")
	local late_ok=0
	[ "$mode" = restart ] && late_ok=1
	check "$name: every run was queued before the one before it in its lane ended (${2:-?} late, $late_ok allowed; idle gaps ${*:3} s, median ${1:-?})" \
		test "${2:-9}" -le "$late_ok"
	for i in $(seq 1 60); do
		[ "$(ours_queued)" = 0 ] && break
		sleep 1
	done
	check "$name: within a minute of the last verdict no job of xloop's is queued" \
		sh -c "[ \"\$(runuser -u '$U' -- env SLURM_CONF='$SLURM_CONF' squeue -h -u '$U' -o '%i %j %T')\" = '' ]"
	check "$name: feeder output in .xloop/driver/, never in a run's log" sh -c \
		"test -s '$d/.xloop/driver/feeder.log' && ! grep -rqs 'feeder' '$d'/runs/*/*/slurm/"
	check "$name: driver status names the last feeder and its result" sh -c \
		"runuser -u '$U' -- env PATH='$PATH' SLURM_CONF='$SLURM_CONF' '$X' -C '$d' driver status | grep -q 'last feeder: job [0-9]* .*done'"
}

d=$(user_dir)
drive "$d" drv

# a feeder cancelled by hand is replaced; two ticks never leave two
d2=$(user_dir)
u2() { as_user "$X" -C "$d2" "$@"; }
new_study "$d2" drv2 'c["resources"].update(cpus=1, mem="100M", time="00:10:00")
c["driver"]["mode"] = "slurm"
c["queue"]["depth"] = 0'
expect_rc 0 "adopt" u2 adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "next submits a long run" u2 next --set SLEEP=300
check "one feeder pending" test "$(pending_feeders)" = 1
f1=$(as_user squeue -h -u "$U" -n xloop-feed -t PD -o %i)
check "the feeder waits afterany on the run" sh -c \
	"scontrol show job -o '$f1' | grep -q 'Dependency=afterany:'"
check "the feeder is small: no GRES, 1 CPU, fixed name" sh -c \
	"scontrol show job -o '$f1' | grep -q 'NumCPUs=1 ' && ! scontrol show job -o '$f1' | grep -q 'TresPerNode=.*gpu' && scontrol show job -o '$f1' | grep -q 'JobName=xloop-feed '"
as_user scancel "$f1"
sleep 1
expect_rc 0 "next after the feeder was cancelled by hand" u2 next
check "a new feeder replaces it" sh -c "[ \"\$(runuser -u '$U' -- env SLURM_CONF='$SLURM_CONF' squeue -h -u '$U' -n xloop-feed -t PD -o %i)\" != '$f1' ] && [ $(pending_feeders) = 1 ]"
u2 tick >/dev/null 2>&1
u2 tick >/dev/null 2>&1
check "two ticks later still exactly one feeder" test "$(pending_feeders)" = 1
f2=$(as_user squeue -h -u "$U" -n xloop-feed -t PD -o %i)
u2 next >"$T_TMP/next2.txt" 2>&1
check "next says who feeds after this session: the feeder job by id" \
	grep -q "after this session: a Slurm feeder job (id $f2) waits behind the runs" "$T_TMP/next2.txt"
u2 status >"$T_TMP/status2.txt" 2>&1
check "status says the same" grep -q "a Slurm feeder job (id $f2)" "$T_TMP/status2.txt"
S=$XLOOP_ROOT_DIR/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
u2 next --json >"$T_TMP/next2.json" 2>/dev/null
u2 status --json >"$T_TMP/status2.json" 2>/dev/null
u2 driver status --json >"$T_TMP/driver2.json" 2>/dev/null
check "next --json, status --json and driver status --json validate (feeder kind slurm)" sh -c \
	"$V '$S/next.schema.json' <'$T_TMP/next2.json' && $V '$S/status.schema.json' <'$T_TMP/status2.json' && $V '$S/driver.schema.json' <'$T_TMP/driver2.json' && grep -q '\"kind\": \"slurm\"' '$T_TMP/next2.json'"
check "driver status names the pending feeder" sh -c \
	"runuser -u '$U' -- env PATH='$PATH' SLURM_CONF='$SLURM_CONF' '$X' -C '$d2' driver status | grep -q 'feeder job [0-9]* pending'"
u2 driver status >"$T_TMP/ds2.txt" 2>&1
check "driver status says what the feeder waits for in words: the run by job id and tag" sh -c \
	"grep -Eq '^feeder job $f2 pending: it waits for job [0-9]+ \(SLEEP-300\) to end' '$T_TMP/ds2.txt' && ! grep -q 'afterany:[0-9]' '$T_TMP/ds2.txt' || { cat '$T_TMP/ds2.txt'; exit 1; }"
check "and what Slurm says it waits on (its Reason, in words)" grep -Eq '^  Slurm says PENDING \(Dependency\): ' "$T_TMP/ds2.txt"
check "and the filesystem, never ?" sh -c "grep -Eq '^the study is on [a-z0-9.]+: ' '$T_TMP/ds2.txt'"
check "driver status --json: slurm_reason Dependency" test "$(jget .slurm_reason <"$T_TMP/driver2.json")" = Dependency
u2 resume >"$T_TMP/resume2.txt" 2>&1
check "resume says first who keeps the loop going and the next step" sh -c \
	"head -3 '$T_TMP/resume2.txt' | grep -q \"^  after this session: a Slurm feeder job (id $f2)\" && head -3 '$T_TMP/resume2.txt' | grep -q '^  next: ' || { cat '$T_TMP/resume2.txt'; exit 1; }"
u2 doctor >"$T_TMP/doctor2.txt" 2>&1
check "doctor says it submits a probe job before it does" sh -c \
	"grep -n 'doctor submits a probe job now' '$T_TMP/doctor2.txt' | cut -d: -f1 | { read a; b=\$(grep -n ' driver ' '$T_TMP/doctor2.txt' | cut -d: -f1); [ -n \"\$a\" ] && [ \"\$a\" -lt \"\$b\" ]; } || { cat '$T_TMP/doctor2.txt'; exit 1; }"
check "and names the way to skip it" grep -q 'xloop doctor --no-probe' "$T_TMP/doctor2.txt"
u2 doctor --no-probe >"$T_TMP/doctor3.txt" 2>&1
check "doctor --no-probe submits none" sh -c "! grep -q 'probe job' '$T_TMP/doctor3.txt'"
check "doctor's probe job ran where feeders run and says which way they work" \
	grep -qE '^ok +driver +driver.mode slurm: a feeder opens the state DB itself \([a-z0-9.]+\); probe job [0-9]+: ok on ' "$T_TMP/doctor2.txt"
# crash safety: the feeder's intent is in the DB before sbatch
XA=${XLOOP_ASAN_BIN:?}
crash() { as_user env XLOOP_CRASH_AT="$1" "$XA" -C "$d2" next; }
as_user scancel -n xloop-feed -u "$U"
sleep 1
expect_rc 137 "killed right after a feeder's sbatch" crash feeder-after-sbatch
f3=$(as_user squeue -h -u "$U" -n xloop-feed -t PD -o %i)
check "its feeder is queued ($f3)" test "$(pending_feeders)" = 1
expect_rc 0 "the next next" u2 next
check "finds that feeder by its token: still exactly one, the same" sh -c \
	"[ \"\$(runuser -u '$U' -- env SLURM_CONF='$SLURM_CONF' squeue -h -u '$U' -n xloop-feed -t PD -o %i)\" = '$f3' ]"
check "and records its job id" sh -c "runuser -u '$U' -- env PATH='$PATH' SLURM_CONF='$SLURM_CONF' \
	'$X' -C '$d2' driver status --json | grep -q '\"pending_job_id\": \"$f3\"'"
as_user scancel "$f3"
sleep 1
expect_rc 137 "killed after recording a feeder's intent" crash feeder-after-intent
check "no feeder was submitted" test "$(pending_feeders)" = 0
expect_rc 0 "the next next" u2 next
check "submits one (the intent is closed, not retried blindly)" test "$(pending_feeders)" = 1
# a chain never targets a feeder, also when chaining behind any job of the user
step "slurm.chain any-user" python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['slurm']['chain']='any-user'; json.dump(c, open(p,'w'), indent=2)" "$d2/xloop.json"
run=$(as_user squeue -h -u "$U" -t PD,R -o '%i %j' | awk '$2 != "xloop-feed" && $2 != "xloop-watch" { print $1 }' | sort -n | tail -n1)
expect_rc 0 "a second run with chain any-user" u2 new other --from base --set SLEEP=302
expect_rc 0 "submit it" u2 submit other
other=$(u2 status --json | python3 -c 'import json,sys; print([r["attempts"][-1]["job_id"] for r in json.load(sys.stdin)["runs"] if r["tag"]=="other"][0])')
check "it chains behind the run ($run), not the newer feeder or watchdog" sh -c \
	"[ -n '$other' ] && [ -n '$run' ] && scontrol show job -o '$other' | grep -q 'Dependency=afterany:$run('"
as_user scancel -u "$U"
sleep 2
expect_rc 0 "next with nothing left to do" u2 next
check "nothing left: no feeder queued" test "$(pending_feeders)" = 0

# a bare submit leaves a feeder too; feeder.log past 1 MiB is rotated; a
# feeder that starts while another xloop (no tick or next: it leaves no
# feeder) holds the lock longer than 15 s waits for it, then ticks
as_user sh -c "head -c 1100000 /dev/zero >'$d2/.xloop/driver/feeder.log'"
n0=$(verdicts "$d2")
expect_rc 0 "a short run" u2 new short --from base --set SLEEP=2
expect_rc 0 "a bare submit of it" u2 submit short
as_user flock "$d2/.xloop/lock" sleep 22 &
holder=$!
check "a bare submit leaves a feeder behind its run" test "$(pending_feeders)" = 1
check "feeder.log past 1 MiB became feeder.log.1" \
	test "$(stat -c %s "$d2/.xloop/driver/feeder.log.1")" -ge 1100000
wait_verdicts "$d2" $((n0 + 1)) 60
check "the feeder waited out a 22 s holder of the lock and judged the run" \
	test "$(verdicts "$d2")" -gt "$n0"
wait "$holder"

# the whole loop again, with the controller restarted in the middle
d3=$(user_dir)
drive "$d3" drv3 restart

# a feeder's tick that dies (here: killed after storing a verdict, before
# its decision commit) is a killed tick: one more tick in the same job
# repairs it and leaves the next feeder, so the loop goes on
d4=$(user_dir)
u4() { as_user "$X" -C "$d4" "$@"; }
new_study "$d4" drv4 'c["resources"].update(cpus=1, mem="100M", time="00:10:00")
c["driver"]["mode"] = "slurm"'
expect_rc 0 "drv4: adopt" u4 adopt "$T_TMP/job2.sh" --tag base --cv "$T_TMP/cv.json"
# plan add leaves a feeder too (driver.mode slurm), and it may run before
# next does: it carries the crash point as well
expect_rc 0 "drv4: plan add with 2 changes" \
	as_user env XLOOP_CRASH_AT=verdict-after-db "$XA" -C "$d4" plan add X=1 X=2
expect_rc 0 "drv4: one next, its feeders killed after each verdict" \
	as_user env XLOOP_CRASH_AT=verdict-after-db "$XA" -C "$d4" next
wait_verdicts "$d4" 2 90
check "drv4: both runs judged and committed without any xloop call" test "$(verdicts "$d4")" -ge 2
check "drv4: feeder.log says a tick died and one more ran" sh -c \
	"cat '$d4/.xloop/driver/'feeder.log* | grep -q 'its tick died (exit 137): one more tick' ||
	 { tail -n 30 '$d4/.xloop/driver/feeder.log' '$d4/.xloop/tick.log'; exit 1; }"
check "drv4: one decision entry per run" test \
	"$(grep -c '^## .* · X-[12] attempt' "$d4/ops/decisions.md")" = 2

# a successor that vanishes right after its sbatch (a slurmctld that dies
# without saving its state forgets the jobs of its last second) is replaced
# by the feeder that submitted it once XLOOP_DRIVER_SAVED_SECS have passed,
# so the study goes on. The job vanishes for real (scancel), inside that
# window by a barrier: the sbatch first on the feeders' PATH returns the
# first feeder a feeder submits only once the test has cancelled it.
check "drv4: no feeder left from before" wait_for 120 eval \
	'[ -z "$(as_user squeue -h -u "$U" -n xloop-feed -o %i)" ]'
fb=$(user_dir)
cat >"$fb/sbatch" <<'SB'
#!/bin/sh
dir=$(dirname "$0")
real=$(PATH=${PATH#*:} command -v sbatch)	# (the job gets this PATH)
out=$("$real" "$@") || exit
echo "$out"
case "$*" in *--job-name=xloop-feed\ *) ;; *) exit 0 ;; esac
# only in a job (slurmd sets SLURMD_NODENAME; a feeder's tick drops SLURM_*)
[ -n "${SLURMD_NODENAME:-}" ] && mkdir "$dir/held" 2>/dev/null || exit 0
echo "${out%%;*}" >"$dir/held/job"
i=0
while [ ! -e "$dir/held/cancelled" ] && [ "$i" -lt 1800 ]; do sleep 0.1; i=$((i + 1)); done
SB
step "drv4: the feeders' sbatch" chmod 755 "$fb/sbatch"
u4f() { as_user env PATH="$fb:$PATH" XLOOP_DRIVER_SAVED_SECS=6 "$X" -C "$d4" "$@"; }
# (plan add leaves the feeder that submits them; no `next`, which would
# wait on the study's lock while that feeder is held in its sbatch)
expect_rc 0 "drv4: two more changes, the second a longer run" u4f plan add X=5 SLEEP=12
check "drv4: the first feeder left a successor, held in its sbatch" wait_for 120 test -s "$fb/held/job"
f2=$(cat "$fb/held/job" 2>/dev/null)
step "drv4: that successor ($f2) vanishes" as_user scancel "$f2"
step "drv4: then its sbatch returns" as_user touch "$fb/held/cancelled"
wait_verdicts "$d4" 4 180
check "drv4: that feeder replaced its vanished successor: both runs judged" \
	test "$(verdicts "$d4")" -ge 4
gone_row() {
	[ "$(sq "$d4" "SELECT phase FROM feeder WHERE job_id = '$f2'")" = gone ] && return
	sq "$d4" "SELECT id, job_id, phase, result FROM feeder ORDER BY id" >&2
	return 1
}
check "drv4: the vanished one ($f2) is recorded as gone" gone_row

# two lanes with a segmented run among them
d5=$(user_dir)
drive "$d5" drv5 lanes

finish
