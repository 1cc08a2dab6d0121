#!/usr/bin/env bash
# The watchdog (issue 27): with driver.mode slurm a second small job
# (xloop-watch, --begin=now+XLOOP_DRIVER_WATCH_SECS, here 12 s) waits beside
# the feeder while there is work. A feeder cancelled by hand (scancel),
# held (scontrol hold) or failed at launch (its log unwritable for that one
# job: JobLaunchFailure) stops the loop only until the watchdog starts: it
# finds no live feeder, ticks as the feeder would and leaves a new one. With
# a feeder alive it only queues the next watchdog. No xloop call but the
# first `next` and Slurm's jobs; never two feeders or two watchdogs
# pending; once the study is done none of them is left. `driver status`
# (text and --json) shows the watchdog: pending until its start time, and
# none once the study is done.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "the driver's watchdog" "run once, without accounting (slow)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
# every run waits at its gate until the test opens it (lib.sh's gate_job), so
# a feeder seen pending stays pending until the test lets it go, however
# busy the machine
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=0
echo "START x=$X device=cpu"
#GATE
sleep "$SLEEP"
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "gate_job job.sh" gate_job "$T_TMP/job.sh"

d=$(user_dir)
u() { as_user env XLOOP_DRIVER_WATCH_SECS=12 "$X" -C "$d" "$@"; }
pending() { as_user squeue -h -u "$U" -n "$1" -t PD -o %i | grep -c .; }
a_feeder() { as_user squeue -h -u "$U" -n xloop-feed -t PD -o '%i %r' | awk '$2 !~ /Held/ { print $1; exit }'; }
listed() { as_user squeue -h -u "$U" -o %i | grep -qx "$1"; }
unlisted() { ! listed "$1"; }
gone() { wait_for 120 unlisted "$1"; }
queued() { as_user squeue -h -u "$U" -t PD,R,CF -o %i | grep -c .; }
verdicts() { as_user git -C "$d" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict'; }
judged() { [ "$(verdicts)" -ge "$1" ]; }
wait_verdicts() { wait_for "$2" judged "$1"; }
has_feeder() { [ -n "$(a_feeder)" ]; }
wait_feeder() { wait_for "$1" has_feeder && a_feeder; }

new_study "$d" wd 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["driver"]["mode"] = "slurm"'
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "plan add with 6 changes" u plan add X=1 X=2 X=3 X=4 X=5 X=6
# every half second: the most feeders and watchdogs pending at once
# (its output goes nowhere: the test's must close when it ends; it stops
# by itself after 10 minutes or when the test's directory is gone)
(
	mf=0 mw=0 i=0
	while [ -d "$T_TMP" ] && [ ! -e "$T_TMP/stop" ] && [ "$i" -lt 1200 ]; do
		i=$((i + 1))
		f=$(pending xloop-feed) w=$(pending xloop-watch)
		[ "$f" -gt "$mf" ] && mf=$f
		[ "$w" -gt "$mw" ] && mw=$w
		echo "$mf $mw" >"$T_TMP/most"
		sleep 0.5
	done
) >/dev/null 2>&1 &
mon=$!
expect_rc 0 "one next" u next
step "X-1 waits at its gate" wait_for 240 at_gate X-1
check "a feeder and a watchdog wait" sh -c "[ $(pending xloop-feed) = 1 ] && [ $(pending xloop-watch) = 1 ]"
w0=$(as_user squeue -h -u "$U" -n xloop-watch -t PD -o '%i %r')
check "the watchdog waits for its time ($w0)" sh -c "echo '$w0' | grep -q BeginTime"
w0=${w0%% *}
u driver status >"$T_TMP/ds.txt" 2>&1
check "driver status shows the watchdog ($w0) pending until its start time" sh -c \
	"grep -Eq '^watchdog job $w0 pending until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+ \(--begin\)' '$T_TMP/ds.txt' || { cat '$T_TMP/ds.txt'; exit 1; }"
u driver status --json >"$T_TMP/ds.json" 2>/dev/null
V="/usr/bin/python3 $(dirname "$0")/validate.py"
wj=$(jget .watchdog.job_id <"$T_TMP/ds.json")/$(jget .watchdog.reason <"$T_TMP/ds.json")
check "driver status --json: the watchdog's job and Reason ($wj), and it validates" sh -c \
	"[ '$wj' = '$w0/BeginTime' ] && $V '$XLOOP_ROOT_DIR/schemas/driver.schema.json' <'$T_TMP/ds.json'"

# cancelled
f=$(a_feeder)
as_user scancel "$f"
step "open X-1" open_gate X-1
step "open X-2" open_gate X-2
wait_verdicts 2 240
check "feeder $f cancelled: the watchdog ticked and the loop went on ($(verdicts) judged)" \
	test "$(verdicts)" -ge 2
check "tick.log: the watchdog found no feeder" \
	grep -q "watchdog: no feeder of the study is queued" "$d/.xloop/tick.log"

# held
step "X-3 waits at its gate" wait_for 240 at_gate X-3
f=$(wait_feeder 120)
check "a feeder waits again ($f)" test -n "$f"
n=$(verdicts)
as_user scontrol hold "$f"
step "open X-3" open_gate X-3
step "open X-4" open_gate X-4
wait_verdicts $((n + 2)) 240
check "feeder $f held: the loop went on ($(verdicts) judged)" test "$(verdicts)" -ge $((n + 2))
check "tick.log: the watchdog found it held" grep -q "watchdog: feeder job $f is held" "$d/.xloop/tick.log"
check "the held feeder was cancelled, not left behind" gone "$f"

# failed at launch: its log cannot be opened (for that one job)
step "X-5 waits at its gate" wait_for 240 at_gate X-5
f=$(wait_feeder 120)
check "a feeder waits again ($f)" test -n "$f"
n=$(verdicts)
step "feeder.log unwritable" as_user sh -c "touch '$d/.xloop/driver/feeder.log' && chmod 000 '$d/.xloop/driver/feeder.log'"
step "open X-5" open_gate X-5
step "open X-6" open_gate X-6
wait_for 240 unlisted "$f"
st=$([ -n "$f" ] && scontrol show job -o "$f" 2>/dev/null | grep -o 'JobState=[A-Z]* Reason=[A-Za-z]*')
step "feeder.log writable again" as_user chmod 600 "$d/.xloop/driver/feeder.log"
check "feeder $f failed at launch ($st)" sh -c "[ -n '$f' ] && echo '$st' | grep -q 'JobState=FAILED'"
wait_verdicts 6 300
check "the loop went on: all 6 runs judged with no xloop call ($(verdicts))" test "$(verdicts)" -ge 6

# a feeder alive: the watchdog only queues the next one
n=$(verdicts)
alive() { grep -c "watchdog: a feeder waits, nothing to do" "$d/.xloop/tick.log"; }
seen=$(alive)
expect_rc 0 "a run held at its gate until the watchdog has looked" u next --set SLEEP=1 --from base
more_alive() { [ "$(alive)" -gt "$seen" ]; }
check "the watchdog found a feeder alive and did nothing else" wait_for 240 more_alive
check "still one feeder and one watchdog" sh -c "[ $(pending xloop-feed) = 1 ] && [ $(pending xloop-watch) = 1 ]"
step "open every gate" open_gate all
wait_verdicts $((n + 1)) 240
none_queued() { [ "$(queued)" = 0 ]; }
wait_for 240 none_queued
check "done: no feeder and no watchdog left" test "$(queued)" = 0
u driver status >"$T_TMP/ds2.txt" 2>&1
u driver status --json >"$T_TMP/ds2.json" 2>/dev/null
wj=$(jget .watchdog <"$T_TMP/ds2.json")
check "driver status: no watchdog queued (text and --json: $wj)" sh -c \
	"grep -q '^no watchdog queued' '$T_TMP/ds2.txt' && [ '$wj' = None ] && $V '$XLOOP_ROOT_DIR/schemas/driver.schema.json' <'$T_TMP/ds2.json'"
touch "$T_TMP/stop"
wait "$mon"
read -r mf mw <"$T_TMP/most"
check "never two feeders pending at once (most: $mf)" test "$mf" -le 1
check "never two watchdogs pending at once (most: $mw)" test "$mw" -le 1
finish
