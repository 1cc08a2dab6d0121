#!/usr/bin/env bash
# Autopilot on the real cluster: with an empty plan and `auto on
# --budget-runs 8`, nothing but tick makes exactly 8 runs, each a one-
# variable change of a proven configuration inside the space or a
# replicate, then stops and says so once. On a flat objective (every value
# scores the same plus seed noise, fixed seeds) the best stays the
# baseline's configuration. The space and the switch are committed.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
[ "$XLOOP_PROFILE" = accounting ] && { skip "autopilot" "runs in the plain profile"; finish; exit 0; }

# OBJ=peak: a peak at X=5, Y=5 where the variables interact; OBJ=flat: 0.5.
# Both plus noise that depends on the whole configuration and the seed.
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
OBJ=peak
X=3
Y=2
SEED=1
echo "START x=$X y=$Y seed=$SEED device=cpu"
/usr/bin/python3 - "$OBJ" "$X" "$Y" "$SEED" "$XLOOP_RUN_DIR/cv.json" <<'PY'
import hashlib, json, sys
obj, x, y, seed, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
h = int(hashlib.sha256(f"{x:g},{y:g},{seed}".encode()).hexdigest()[:8], 16) / 2**32
base = 0.5 if obj == "flat" else 1 - ((x - 5) ** 2 + (y - 5) ** 2 + 0.5 * (x - 5) * (y - 5)) / 40
json.dump({"score": base + 0.02 * (h - 0.5)}, open(out, "w"))
PY
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"

# a study whose baseline ran by hand (its cv.json computed the same way)
study() {	# dir obj
	local d=$1 obj=$2
	new_study "$d" s 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="")
c["queue"]["depth"] = 1'
	step "job.sh of the study" sed "s/^OBJ=peak/OBJ=$obj/" "$T_TMP/job.sh" >"$d/job.sh"
	step "the baseline run by hand" as_user env XLOOP_RUN_DIR="$d" bash "$d/job.sh" >/dev/null
	step "adopt base" as_user "$X" -C "$d" adopt "$d/job.sh" --tag base --cv "$d/cv.json" >/dev/null
}
drive() {	# dir: tick until autopilot stopped and nothing is left in Slurm
	local d=$1 i
	for i in $(seq 1 150); do
		as_user "$X" -C "$d" tick >>"$d/ticks.txt" 2>&1
		if grep -qiE 'autopilot stopped|feeding stopped' "$d/ticks.txt" &&
			[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z' | grep -F " $d")" ]; then
			as_user "$X" -C "$d" tick >>"$d/ticks.txt" 2>&1
			return 0
		fi
		sleep 1
	done
	return 1
}

d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
study "$d" peak
expect_rc 65 "space set refuses a variable the baseline does not assign" u space set NOPE=1,2
expect_rc 0 "space set X (integers)" u space set X=1..7:int
expect_rc 0 "space set Y (choices)" u space set Y=1,2,3,4,5,6,7
expect_rc 0 "space seed SEED" u space seed SEED
expect_rc 2 "auto on refuses a bad budget" u auto on --budget-runs lots
expect_rc 0 "auto on --budget-runs 8" u auto on --budget-runs 8
check "the space and the switch are committed in xloop.json" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- git -C '$d' show HEAD:xloop.json | grep -q '\"budget_runs\": 8'"
check "the decisions say so" grep -q 'autopilot on (budget: 8 runs)' "$d/ops/decisions.md"
check "drive with tick until autopilot stops" drive "$d"
u status --json >"$T_TMP/status.json"
check "exactly 8 runs beside the baseline" test "$($PY -c "import json; print(len(json.load(open('$T_TMP/status.json'))['runs']))")" = 9
check "every run is one change of a proven configuration inside the space, or a replicate" \
	$PY - "$T_TMP/status.json" <<'PY'
import json, sys
runs = {r["tag"]: r for r in json.load(open(sys.argv[1]))["runs"]}
space = {"X": set(map(str, range(1, 8))), "Y": set(map(str, range(1, 8)))}
for tag, r in runs.items():
    if tag == "base":
        continue
    p = runs[r["parent"]]
    assert p["attempts"][-1]["verdict"] == "success", (tag, "parent not proven")
    var, val = r["change"]["var"], r["change"]["new"]
    if var == "SEED":
        assert "--r" in tag, (tag, "a replicate's tag")
        continue
    assert val in space[var], (tag, var, val)
print("ok")
PY
check "no configuration was made twice (replicates aside)" $PY - "$d" <<'PY'
import os, re, sys
d = os.path.join(sys.argv[1], "runs", "s")
seen = {}
for tag in sorted(os.listdir(d)):
    if "--r" in tag:
        continue
    text = open(os.path.join(d, tag, "job.sh")).read()
    cfg = tuple(re.findall(r"^(X|Y)=(\S+)$", text, re.M))
    assert cfg not in seen, (tag, seen.get(cfg))
    seen[cfg] = tag
PY
check "autopilot's tags tell the configuration: each space value not the baseline's" $PY - "$d" <<'PY'
import os, re, sys
d = os.path.join(sys.argv[1], "runs", "s")
def cfg(tag):
    return dict(re.findall(r"^(X|Y)=(\S+)$", open(os.path.join(d, tag, "job.sh")).read(), re.M))
base = cfg("base")
n = 0
for tag in sorted(os.listdir(d)):
    if tag == "base" or "--r" in tag:
        continue
    c = cfg(tag)
    want = "_".join("%s-%s" % (k, c[k]) for k in ("X", "Y") if c.get(k) != base.get(k))
    assert tag.split("--")[0] == want, (tag, want)
    n += 1
assert n > 0
print(n, "tags")
PY
# two baseline runs measure the noise first; a third comes only when a
# candidate is ahead of it and one more candidate run would not settle it
check "the baseline got its replicate first" sh -c "ls '$d/runs/s' | grep -c -- '^base--r' | grep -qx '[12]'"
check "the first run autopilot made is the baseline's replicate" $PY - "$T_TMP/status.json" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r["tag"] != "base"]
first = runs[0]   # status lists runs in creation order
assert first["tag"] == "base--r2", first["tag"]
print("ok")
PY
check "8 proposals in ops/decisions.md, each with its reason" test \
	"$(grep -c '^## .* · autopilot proposes' "$d/ops/decisions.md")" = 8
check "autopilot said once that it stopped" test "$(grep -c 'autopilot stopped' "$d/ticks.txt")" = 1
out=$(u auto status)
check "auto status says the budget is spent" grep -q 'stopped: budget spent: 8 of 8 runs' <<<"$out"
check "the next tick makes nothing more" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' tick >/dev/null; ls '$d/runs/s' | wc -l | grep -qx 9"
out=$(u status)
check "status shows the best with its n" grep -qE 'best .*[(,] ?n=[0-9]+' <<<"$out"
u next --json >"$T_TMP/next.json" 2>/dev/null
check "next's best carries n and checked" $PY -c "
import json; b = json.load(open('$T_TMP/next.json'))['best']; assert b['n'] >= 1 and b['checked'] is True"

S=${XLOOP_ROOT_DIR:?}/schemas
V="$PY $(dirname "$0")/validate.py"
validates "next --json validates (best with n, autopilot)" next "$T_TMP/next.json"
validates "status --json validates" status "$T_TMP/status.json"
u auto status --json >"$T_TMP/auto.json"
validates "auto status --json validates" auto "$T_TMP/auto.json"
step "space ls --json" u space ls --json >"$T_TMP/space.json"
validates "space ls --json validates" space "$T_TMP/space.json"
step "replicate best -n 2 --json" u replicate best -n 2 --json >"$T_TMP/rep.json"
validates "replicate --json validates" replicate "$T_TMP/rep.json"
check "replicate queued two seeds in the plan (the baseline's first, else fresh)" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' plan ls | grep -c '^ *[0-9]*  SEED=' | grep -qx 2"
check "the verdict entries compare with the parent, better or worse by how much" grep -qE '^- vs parent .*: .*(better|worse) by [0-9]' "$d/ops/decisions.md"

# the flat objective: nothing is better than the baseline, whatever one run says
f=$(user_dir)
study "$f" flat
v() { as_user "$X" -C "$f" "$@"; }
step "v space set X=1..7:int" v space set X=1..7:int >/dev/null
step "v space set Y=1,2,3,4,5,6,7" v space set Y=1,2,3,4,5,6,7 >/dev/null
step "v space seed SEED" v space seed SEED >/dev/null
step "v auto on --budget-runs 8" v auto on --budget-runs 8 >/dev/null
check "drive the flat study" drive "$f"
v status --json >"$T_TMP/flat.json"
check "on a flat objective the best stays the baseline's configuration" $PY -c "
import json; s = json.load(open('$T_TMP/flat.json')); assert s['best'] in ('base', None) and s['best'] == 'base', s['best']"
check "a single-run score above the baseline's mean exists (the trap is real)" $PY -c "
import json
s = json.load(open('$T_TMP/flat.json'))
sc = {r['tag']: r['attempts'][-1].get('score') for r in s['runs']}
base = [v for k, v in sc.items() if k.startswith('base') and v is not None]
others = [v for k, v in sc.items() if not k.startswith('base') and v is not None]
assert max(others) > sum(base) / len(base), (base, others)"

# proposals that fail for their value do not trip the breaker (2 program
# failures in a row would); failures that repeat the same way still do, and
# so does a GPU job that shows no GPU
cat >"$T_TMP/fail.sh" <<'JOB'
#!/bin/bash
MODE=value
X=3
Y=3
echo "START x=$X y=$Y device=cpu"
if [ "$X" -lt 3 ] || [ "$Y" -lt 3 ]; then
	if [ "$MODE" = value ]; then echo "FAILED bad value x=$X y=$Y"; else echo "FAILED disk full"; fi
	exit 1
fi
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 fail.sh" chmod 644 "$T_TMP/fail.sh"
printf '{"score": 0.5}\n' >"$T_TMP/cv5.json"
step "chmod 644 cv5.json" chmod 644 "$T_TMP/cv5.json"
for mode in value same; do
	g=$(user_dir)
	new_study "$g" s 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="")
c["queue"]["depth"] = 0'
	step "job.sh of the study" sed "s/^MODE=value/MODE=$mode/" "$T_TMP/fail.sh" >"$g/job.sh"
	step "adopt base" as_user "$X" -C "$g" adopt "$g/job.sh" --tag base --cv "$T_TMP/cv5.json" >/dev/null
	step "space set X" as_user "$X" -C "$g" space set X=1..3:int >/dev/null
	step "space set Y" as_user "$X" -C "$g" space set Y=1..3:int >/dev/null
	step "auto on --budget-runs 2" as_user "$X" -C "$g" auto on --budget-runs 2 >/dev/null
	drive "$g" >/dev/null
	as_user "$X" -C "$g" next --json >"$T_TMP/$mode.json" 2>/dev/null
	check "$mode: both proposals failed" test "$(grep -c 'attempt 1: failure' "$g/ticks.txt")" = 2
done
check "failures that differ with the value leave the breaker closed" $PY -c "
import json; assert json.load(open('$T_TMP/value.json'))['breaker'] is None"
check "the same failure twice opens it" $PY -c "
import json; b = json.load(open('$T_TMP/same.json'))['breaker']; assert b and 'program failures in a row' in b, b"
# a proposal whose GPU job shows no GPU stops the feeding at once, proposal or not
g=$(user_dir)
new_study "$g" s 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="gpu:1")
c["queue"]["depth"] = 0
c["breaker"]["no_gpu"] = True'
step "cp fail.sh job.sh" cp "$T_TMP/fail.sh" "$g/job.sh"
step "adopt job.sh --tag base --cv" as_user "$X" -C "$g" adopt "$g/job.sh" --tag base --cv "$T_TMP/cv5.json" >/dev/null
step "space set X=3..5:int" as_user "$X" -C "$g" space set X=3..5:int >/dev/null
step "auto on --budget-runs 3" as_user "$X" -C "$g" auto on --budget-runs 3 >/dev/null
drive "$g" >/dev/null
as_user "$X" -C "$g" next --json >"$T_TMP/nogpu.json" 2>/dev/null
check "a proposal that ran without its GPU opens the breaker after one run" $PY -c "
import json; d = json.load(open('$T_TMP/nogpu.json')); b = d['breaker']
assert b and 'shows no GPU' in b, b
assert len([l for l in open('$g/ticks.txt') if 'attempt 1: success' in l]) == 1"

finish
