#!/usr/bin/env bash
# Every schema is a valid JSON Schema, every --json output validates against
# its schema, and the defaults xloop writes validate against the config schema.
# Every output schema is closed (additionalProperties false) and describes
# each field, so a document that validates has no field its schema does not
# describe; every command whose code prints --json has a schema.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"

check "every schema is valid" $V --check-schemas "$S"
check "every output schema is closed and describes each field" $V --check-described "$S"
check "every command that prints --json has a schema" $V --check-commands "${XLOOP_ROOT_DIR:?}/src" "$S"
# doctor's checks are listed twice (doctor --json, and init --json's
# doctor): both lists the same, in doctor's order, and the names doctor makes
same_checks() {
	/usr/bin/python3 - "$S" "${XLOOP_ROOT_DIR:?}/src/doctor" <<'PY'
import glob, json, re, sys
d = json.load(open(sys.argv[1] + "/doctor.schema.json"))["properties"]["checks"]["items"]
i = json.load(open(sys.argv[1] + "/init.schema.json"))["properties"]["doctor"]["items"]
made = set()
for f in glob.glob(sys.argv[2] + "/*.c"):
    made |= set(re.findall(r'doctor_add\(\w+, "([a-z-]+)"', open(f).read()))
names = d["properties"]["name"]["enum"]
if d != i:
    sys.exit("init's doctor items differ from doctor's checks items")
if set(names) != made:
    sys.exit("schema names %s, doctor makes %s" % (sorted(set(names) - made), sorted(made - set(names))))
PY
}
check "doctor's check names: one list in both schemas, the names doctor makes" same_checks
step "mkdir ..." mkdir "$T_TMP/bad"
echo '{"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}}}' >"$T_TMP/bad/x.schema.json"
check "an undescribed field is found" sh -c "! $V --check-described '$T_TMP/bad' 2>/dev/null"
echo '{"type": "object", "properties": {"a": {"type": "string", "description": "a"}}}' >"$T_TMP/bad/x.schema.json"
check "an open object is found" sh -c "! $V --check-described '$T_TMP/bad' 2>/dev/null"

d=$(user_dir)
runuser -u "$XLOOP_TEST_USER" -- "$X" -C "$d" init --json >"$T_TMP/init1.json"
validates "init --json validates" init "$T_TMP/init1.json"
runuser -u "$XLOOP_TEST_USER" -- "$X" -C "$d" init --json >"$T_TMP/init2.json"
validates "init --json (again) validates" init "$T_TMP/init2.json"
"$X" version --json >"$T_TMP/version.json"
validates "version --json validates" version "$T_TMP/version.json"
validates "the written xloop.json validates" config "$d/xloop.json"

# the documents of the commands that need no Slurm, from a real study
xu() { runuser -u "$XLOOP_TEST_USER" -- "$X" -C "$d" "$@"; }
valid() { # SCHEMA NAME COMMAND...: the command's --json validates
	local schema=$1 name=$2
	shift 2
	xu "$@" --json >"$T_TMP/doc.json" 2>"$T_TMP/doc.err"
	validates "$name --json validates" "$schema" "$T_TMP/doc.json"
}
printf '#!/bin/bash\nLR=1\necho START\n' >"$T_TMP/job.sh"
step "chmod 644 ..." chmod 644 "$T_TMP/job.sh"
step "adopt base" xu adopt "$T_TMP/job.sh" --tag base >/dev/null 2>&1
valid plan "plan add" plan add LR=2 LR=3 --from base
valid plan "plan ls" plan ls
valid plan "plan rm" plan rm 1
valid decide decide decide "a decision" --run base
valid decide "decide without --run" decide "another"
valid breaker breaker breaker
valid breaker "breaker reset" breaker reset
valid judge "judge (nothing in flight)" judge
valid status "status (no Slurm)" status
valid next "resume (no Slurm)" resume

# the validator itself rejects what it must (the checks above can fail)
expect_rc 1 "a wrong document is rejected" sh -c "echo '{\"version\": 1}' | $V '$S/version.schema.json'"
check "a config with an unknown key is rejected by the schema too" sh -c \
	"! echo '{\"colour\": \"blue\"}' | $V '$S/config.schema.json' 2>/dev/null"
check "cv.json without a score is rejected" sh -c "! echo '{\"metric\": \"auc\"}' | $V '$S/cv.schema.json' 2>/dev/null"
printf '{"metric": "auc"}\n' >"$T_TMP/cv-bad.json"
printf '1\t%s\t%s\n' "$S/cv.schema.json" "$T_TMP/cv-bad.json" >"$T_TMP/batch.list"
check "validate.py --batch names a document that does not validate" sh -c \
	"$V --batch '$T_TMP/batch.list' | grep -q '^1	invalid against cv.schema.json'"
check "cv.json with a score validates" sh -c "echo '{\"score\": 0.91, \"fold\": 3}' | $V '$S/cv.schema.json'"
check "cv.json with the configured metric key (accuracy) validates" sh -c "echo '{\"accuracy\": 0.91}' | $V '$S/cv.schema.json'"

finish
