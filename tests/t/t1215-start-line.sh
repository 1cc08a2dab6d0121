#!/usr/bin/env bash
# The START line (issue 35): a GPU job whose log has no START line gets a
# verdict that says what that means and where it is explained
# (`xloop help logs`), and that help exists and says why it matters.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" sl 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=1
echo "training x=$X"
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "next --set X=2" u next --set X=2 --from base
for i in $(seq 1 120); do
	u next >"$T_TMP/b.txt" 2>&1
	grep -q "X-2.*success\|X-2.*failure" "$T_TMP/b.txt" && break
	sleep 0.5
done
check "the verdict says the log has no START line and points to help logs" sh -c "grep -q 'no START line, so the device is unchecked (\`xloop help logs\`)' '$T_TMP/b.txt' || { cat '$T_TMP/b.txt'; exit 1; }"
check "xloop help logs explains the START line and why it matters" sh -c "'$X' help logs | grep -q '^Why the START line matters'"
finish
