#!/usr/bin/env bash
# The Slurm driver without Slurm (issue 20): driver.* in xloop.json is
# validated; init without a controller writes driver.mode none; a feeder
# that finds the study's lock held waits for it (3 min, XLOOP_DRIVER_LOCK_SECS),
# then exits 75 with a line (a cron tick exits 75 at once);
# on a network filesystem (a mountinfo naming nfs4, test build) a feeder
# forwards its tick to driver.host with its job id and token, never opening
# the DB; `driver install` for cron prints the crontab line.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
XA=${XLOOP_ASAN_BIN:?}
d=$(user_dir)
# no Slurm: an empty slurm.conf makes every Slurm command fail at once (a
# SLURM_CONF naming a missing file makes each one retry for 60 s)
: >"$T_TMP/no-slurm.conf"
chmod 644 "$T_TMP/no-slurm.conf"
u() { as_user env SLURM_CONF="$T_TMP/no-slurm.conf" "$X" -C "$d" "$@"; }
step "git init" as_user git -C "$d" init -q -b main
step "init --study drv" u init --study drv >/dev/null 2>&1
check "init without Slurm writes driver.mode none" sh -c \
	"python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); sys.exit(0 if c[\"driver\"] == {\"mode\": \"none\", \"partition\": \"\", \"host\": \"\"} else 1)' '$d/xloop.json'"
setc() { python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); $1; json.dump(c, open(p,'w'), indent=2)" "$d/xloop.json"; }
step "keep the good xloop.json" cp "$d/xloop.json" "$T_TMP/good.json"
step "driver.mode daemon" setc 'c["driver"]["mode"] = "daemon"'
expect_rc 78 "driver.mode daemon is refused" u status
u status >"$T_TMP/bad.out" 2>&1
check "naming the key and the values" grep -q "'driver.mode' must be \"slurm\", \"scrontab\", \"cron\" or \"none\"" "$T_TMP/bad.out"
step "the good xloop.json back" cp "$T_TMP/good.json" "$d/xloop.json"
step "driver.host an option" setc 'c["driver"]["host"] = "-oProxyCommand=x"'
expect_rc 78 "a driver.host that ssh would read as an option is refused" u status
step "the good xloop.json back" cp "$T_TMP/good.json" "$d/xloop.json"
step "driver.extra" setc 'c["driver"]["extra"] = 1'
expect_rc 78 "an unknown driver key is refused" u status
step "the good xloop.json back" cp "$T_TMP/good.json" "$d/xloop.json"
for m in slurm scrontab cron none; do
	step "driver.mode $m" setc "c['driver']['mode'] = '$m'"
	expect_rc 0 "driver.mode $m is accepted" u driver status
done

# the lock held by another xloop
step "driver.mode slurm" setc 'c["driver"]["mode"] = "slurm"'
# (held while $T_TMP/hold exists; taken before the feeder starts)
step "a lock holder's file" touch "$T_TMP/hold"
as_user flock "$d/.xloop/lock" sh -c 'while [ -e "$1" ]; do sleep 0.1; done' sh "$T_TMP/hold" &
holder=$!
for _ in $(seq 100); do as_user flock -n "$d/.xloop/lock" true || break; sleep 0.1; done
t0=$SECONDS
as_user env XLOOP_DRIVER_LOCK_SECS=3 "$X" -C "$d" tick --feeder >"$T_TMP/feeder.out" 2>&1
rc=$?
check "a feeder that finds the lock held too long exits 75 (exit $rc)" test "$rc" = 75
check "with one line saying so" grep -q "another xloop held the study's lock for 3 s" "$T_TMP/feeder.out"
check "after waiting for it (XLOOP_DRIVER_LOCK_SECS, $((SECONDS - t0)) s)" test $((SECONDS - t0)) -ge 3
expect_rc 75 "a cron tick exits 75 at once" as_user "$X" -C "$d" tick
rm -f "$T_TMP/hold"
wait "$holder"

# a network filesystem: the feeder forwards, with its job and token
step "mkdir bin" mkdir -p "$T_TMP/bin"
w=$(user_dir)
cat >"$T_TMP/bin/ssh" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$w/ssh.argv"
exit 0
EOF
step "a fake ssh" chmod 755 "$T_TMP/bin/ssh"
step "T_TMP traversable" chmod 755 "$T_TMP"
printf '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n60 27 0:51 / %s rw,relatime - nfs4 fs1:/export rw,vers=4.2\n' "$d" >"$T_TMP/mountinfo"
step "mountinfo readable" chmod 644 "$T_TMP/mountinfo"
step "driver.host login1" setc 'c["driver"]["host"] = "login1"'
fwd() { as_user env PATH="$T_TMP/bin:$PATH" XLOOP_TEST_MOUNTINFO="$T_TMP/mountinfo" SLURM_JOB_ID=77 XLOOP_FEEDER_TOKEN=xlT "$XA" -C "$d" "$@"; }
step "no WAL file" rm -f "$d/.xloop/state.db-wal"
before=$(stat -c %Y "$d/.xloop/state.db")
fwd tick --feeder >"$T_TMP/fwd.out" 2>&1
check "a feeder on nfs4 runs ssh to driver.host" sh -c "grep -qx login1 '$w/ssh.argv'"
check "with tick --feeder, its job id and token, in the study there" sh -c \
	"tail -n1 '$w/ssh.argv' | grep -q \"exec \\\"\\\$x\\\" --here -C '$d' 'tick' '--feeder' '--feeder-job' '77' '--feeder-token' 'xlT'\""
check "and says so on stderr (the feeder's log)" grep -q 'its tick runs on login1 over ssh' "$T_TMP/fwd.out"
check "it opened no DB here" sh -c "[ ! -e '$d/.xloop/state.db-wal' ] && [ \$(stat -c %Y '$d/.xloop/state.db') = $before ]"
fwd driver status >"$T_TMP/st.out" 2>&1
check "driver status says which way the feeder works" grep -q 'network filesystem (nfs4): a feeder forwards its tick over ssh to login1' "$T_TMP/st.out"
step "rm ssh.argv" rm -f "$w/ssh.argv"
as_user env PATH="$T_TMP/bin:$PATH" XLOOP_TEST_MOUNTINFO="$T_TMP/mountinfo" "$XA" -C "$d" tick >/dev/null 2>&1
check "a plain tick is not forwarded (only feeders are)" test ! -e "$w/ssh.argv"
step "driver.host empty" setc 'c["driver"]["host"] = ""'
as_user env XLOOP_TEST_MOUNTINFO="$T_TMP/mountinfo" "$XA" -C "$d" driver status >"$T_TMP/st2.out" 2>&1
check "on nfs4 without driver.host, status says to set it" grep -q 'set driver.host to the login node' "$T_TMP/st2.out"

step "driver.mode cron" setc 'c["driver"]["mode"] = "cron"'
u driver install >"$T_TMP/cron.out" 2>&1
check "driver install for cron prints the crontab line" grep -q "^\*/5 \* \* \* \* '.*' -C '$d' tick$" "$T_TMP/cron.out"
step "driver.mode slurm" setc 'c["driver"]["mode"] = "slurm"'
expect_rc 78 "driver install for slurm: nothing to install" u driver install

# scrontab (a stand-in on PATH: the test cluster does not enable scrontab)
cat >"$T_TMP/bin/scrontab" <<SCRON
#!/bin/sh
if [ "\$1" = -l ]; then
	[ -f "$w/crontab" ] && exec cat "$w/crontab"
	echo "scrontab: error: no crontab for \$(id -un)" >&2; exit 1
fi
cp "\$1" "$w/crontab"
SCRON
step "a fake scrontab" chmod 755 "$T_TMP/bin/scrontab"
step "driver.mode scrontab" setc 'c["driver"]["mode"] = "scrontab"'
sc() { as_user env PATH="$T_TMP/bin:$PATH" "$X" -C "$d" driver install; }
expect_rc 0 "driver install writes the scrontab entry (none before)" sc
step "an entry of the user's" as_user sh -c "printf '0 3 * * * /usr/bin/true mine\n' >>'$w/crontab'"
expect_rc 0 "and again (it updates, never duplicates)" sc
check "the user's own line is kept" grep -qx '0 3 \* \* \* /usr/bin/true mine' "$w/crontab"
check "one block for the study" test "$(grep -c "^# xloop driver: $d\$" "$w/crontab")" = 1
check "its entry runs tick --feeder every 5 minutes as a small job" sh -c \
	"grep -q '^#SCRON --job-name=xloop-feed --cpus-per-task=1 ' '$w/crontab' && grep -q \"^\*/5 \* \* \* \* '.*' -C '$d' tick --feeder\\\$\" '$w/crontab'"
# the filesystem type without mountinfo (a chroot with no /proc, issue 27):
# statfs names it, never "?"
step "driver.mode slurm" setc 'c["driver"]["mode"] = "slurm"'
as_user env SLURM_CONF="$T_TMP/no-slurm.conf" XLOOP_TEST_MOUNTINFO="$T_TMP/no-such-mountinfo" "$XA" -C "$d" driver status >"$T_TMP/fs.out" 2>&1
check "driver status: the filesystem from statfs when mountinfo cannot be read" sh -c \
	"grep -Eq '^the study is on [a-z0-9]+: a feeder opens the state DB itself\$' '$T_TMP/fs.out' || { cat '$T_TMP/fs.out'; exit 1; }"
as_user env SLURM_CONF="$T_TMP/no-slurm.conf" XLOOP_TEST_MOUNTINFO="$T_TMP/no-such-mountinfo" "$XA" -C "$d" doctor >"$T_TMP/fsd.out" 2>&1
check "doctor: the same, never (?)" sh -c \
	"grep -Eq 'driver +driver.mode slurm: a feeder opens the state DB itself \([a-z0-9]+\)' '$T_TMP/fsd.out' && ! grep -q '(?)' '$T_TMP/fsd.out' || { cat '$T_TMP/fsd.out'; exit 1; }"
check "doctor without Slurm submits no probe, and says none" sh -c "! grep -q 'probe job' '$T_TMP/fsd.out'"
finish
