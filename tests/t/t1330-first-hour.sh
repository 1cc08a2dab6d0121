#!/usr/bin/env bash
# The first hour on the real cluster (issue 16): init fits xloop.json to the
# partition it runs on and doctor agrees; doctor --fix fits a config made on
# a laptop; a verdict commits the run's cv.json (read under metric.name)
# with its ops/decisions.md entry, and git status is clean after a study.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "the first hour" "runs in the plain profile"
	finish
	exit
fi
ncpu=$(scontrol show node -o | sed -n 's/.*CPUTot=\([0-9]*\).*/\1/p' | head -n1)

# 2. init on the test cluster: its node has $ncpu CPUs, 'short' MaxTime=00:10:00
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
step "git init -q -b main" as_user git -C "$d" init -q -b main
step "git config user.name Test User" as_user git -C "$d" config user.name "Test User"
step "git config user.email test@example.com" as_user git -C "$d" config user.email test@example.com
step "init --study s --partition short" u init --study s --partition short --json >"$T_TMP/init.json" 2>"$T_TMP/init.err"
validates "init --json validates" init "$T_TMP/init.json"
c() { /usr/bin/python3 -c "import json; c=json.load(open('$d/xloop.json')); print($1)"; }
check "resources.time fitted to short's MaxTime" test "$(c "c['resources']['time']")" = 00:10:00
if [ "${ncpu:-4}" -lt 4 ]; then
	# driver.mode slurm: one CPU stays free for the feeder, so doctor does
	# not warn that runs take every CPU of the node (issue 35)
	want=$((ncpu > 1 ? ncpu - 1 : 1))
	check "resources.cpus fitted to the node, one left for the feeder ($want of $ncpu)" test "$(c "c['resources']['cpus']")" = "$want"
	check "and init does not warn that runs take every CPU" sh -c "! grep -q 'every CPU of their node' '$T_TMP/init.err' '$T_TMP/init.json'"
fi
check "init says what it fitted" sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/init.json\")); k=[x[\"key\"] for x in d[\"fitted\"]]; assert \"resources.time\" in k and d[\"slurm\"] is True, d'"
check "init's doctor checks: nothing about resources fails" sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/init.json\")); bad=[x for x in d[\"doctor\"] if x[\"status\"]==\"fail\"]; assert not bad, bad'"
expect_rc 0 "doctor agrees with what init wrote" u doctor
as_user "$X" -C "$d" init >"$T_TMP/init-again.out" 2>&1
check "init again prints doctor's checks too" grep -q '^  ok    time ' "$T_TMP/init-again.out"

# a config made on a laptop: doctor says exactly what to set, --fix sets it
step "edit xloop.json" /usr/bin/python3 - "$d/xloop.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["resources"].update(cpus=4096, time="08:00:00")
json.dump(c, open(p, "w"), indent=2)
PY
step "git commit -qam the laptop's config" as_user git -C "$d" commit -qam "the laptop's config"
expect_rc 1 "doctor fails the laptop's config" u doctor
u doctor >"$T_TMP/doc.out" 2>&1
check "the time fix names the value and --fix" grep -q 'fix: lower resources.time in xloop.json to at most 00:10:00, or run `xloop doctor --fix`' "$T_TMP/doc.out"
check "the cpus fix names --fix" grep -q 'fix: lower resources.cpus to at most [0-9]* in xloop.json, or run `xloop doctor --fix`' "$T_TMP/doc.out"
u doctor --fix --json >"$T_TMP/fix.json" 2>&1
validates "doctor --fix --json validates" doctor "$T_TMP/fix.json"
check "doctor --fix fixed time and cpus" sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/fix.json\")); assert sorted(x[\"key\"] for x in d[\"fixed\"])==[\"resources.cpus\",\"resources.time\"] and d[\"ok\"], d'"
check "xloop.json has the fitted values" test "$(c "c['resources']['time'], c['resources']['cpus'] <= 64")" = "00:10:00 True"
check "and --fix committed it (it was clean)" sh -c "runuser -u '$XLOOP_TEST_USER' -- git -C '$d' log -1 --format=%s | grep -q 'doctor --fix' && [ -z \"\$(runuser -u '$XLOOP_TEST_USER' -- git -C '$d' status --porcelain xloop.json)\" ]"
expect_rc 0 "doctor passes now" u doctor

# 4 and 12: a job that reports accuracy; its verdict commits its cv.json
step "edit xloop.json" /usr/bin/python3 - "$d/xloop.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["resources"].update(cpus=1, mem="200M", time="00:02:00")
c["metric"]["name"] = "accuracy"
c["breaker"]["no_gpu"] = False
json.dump(c, open(p, "w"), indent=2)
PY
step "git commit -qam study settings" as_user git -C "$d" commit -qam "study settings"
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --time=00:05:00
LR=1
echo "START lr=$LR device=cpu"
echo "{\"accuracy\": 0.75, \"lr\": $LR}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"
step "adopt job.sh --tag base" u adopt "$T_TMP/job.sh" --tag base >"$T_TMP/adopt.out" 2>&1
check "adopt warns that Slurm gets xloop.json's --time" grep -q "line 2: '#SBATCH --time=00:05:00' differs from what xloop passes: Slurm gets --time=00:02:00" "$T_TMP/adopt.out"
expect_rc 0 "submit the baseline" u submit base
for i in $(seq 1 90); do
	u next >"$T_TMP/brief.txt" 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u next >"$T_TMP/brief.txt" 2>&1
u status base --json >"$T_TMP/st.json" 2>&1
check "judged a success with the accuracy as its score" sh -c "grep -q '\"verdict\": \"success\"' '$T_TMP/st.json' && grep -q '0.75' '$T_TMP/st.json'"
vc=$(as_user git -C "$d" log --format=%H --grep '^xloop: verdict s/base' | head -n1)
check "the verdict commit holds decisions.md and the run's cv.json" test \
	"$(as_user git -C "$d" show --name-only --format= "$vc" | sort | tr '\n' ' ')" = "ops/decisions.md runs/s/base/cv.json "
u report >/dev/null 2>&1
check "the report is at the study root" test -s "$d/report.html"
check "after a study, git status shows nothing of xloop's" \
	test -z "$(as_user git -C "$d" status --porcelain --untracked-files=all)"

finish
