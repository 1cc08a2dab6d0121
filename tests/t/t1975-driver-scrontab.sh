#!/usr/bin/env bash
# driver.mode scrontab (issue 20) where Slurm ships scrontab and the site
# sets ScronParameters=enable (the version matrix's 24.11 and 26.05; the
# host's 22.05 has none: skipped): `xloop driver install` puts the study's
# entry into the user's scrontab, replaces it in place when run again, keeps
# the user's own entries, and Slurm queues it as one xloop-feed job waiting
# for its time.
. "$(dirname "$0")/lib.sh"

if ! command -v scrontab >/dev/null 2>&1; then
	skip "driver.mode scrontab" "this Slurm has no scrontab"
	finish
	exit
fi
if [ "$XLOOP_PROFILE" != plain ]; then
	skip "driver.mode scrontab" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" scr 'c["driver"]["mode"] = "scrontab"'
as_user scrontab -r >/dev/null 2>&1
printf '#SCRON --job-name=mine --time=00:01:00\n0 3 * * * /bin/true\n' >"$T_TMP/mine"
step "chmod 644 mine" chmod 644 "$T_TMP/mine"
check "the user's own scrontab entry" as_user scrontab "$T_TMP/mine"
expect_rc 0 "driver install" u driver install
as_user scrontab -l >"$T_TMP/l1" 2>&1
check "the study's block is in the scrontab" grep -qxF "# xloop driver: $d" "$T_TMP/l1"
check "a feeder's tick every 5 minutes, as a small xloop-feed job" sh -c \
	"grep -q '^#SCRON --job-name=xloop-feed --cpus-per-task=1 ' '$T_TMP/l1' && grep -q '^\*/5 \* \* \* \* .* -C .* tick --feeder\$' '$T_TMP/l1'"
check "the user's own entry stays" grep -qx '0 3 \* \* \* /bin/true' "$T_TMP/l1"
expect_rc 0 "driver install again" u driver install
as_user scrontab -l >"$T_TMP/l2" 2>&1
check "still one block, replaced in place" test "$(grep -cxF "# xloop driver: $d" "$T_TMP/l2")" = 1
check "and the user's entry once" test "$(grep -cx '0 3 \* \* \* /bin/true' "$T_TMP/l2")" = 1
n=$(as_user squeue -h -u "$U" -n xloop-feed -o '%T %r' | grep -c '^PENDING BeginTime')
check "Slurm queues one xloop-feed job waiting for its time ($n)" test "$n" = 1
as_user scrontab -r >/dev/null 2>&1
finish
