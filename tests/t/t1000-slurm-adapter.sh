#!/usr/bin/env bash
# The Slurm adapter against the real local test cluster, as an unprivileged
# user: submit through sbatch --parsable, read the final state back through
# scontrol and (with accounting) through sacct.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
d=$(user_dir)

# Wait until scontrol reports a final state; print the job's JSON.
wait_final() {
	local id=$1 i out st
	for i in $(seq 1 120); do
		out=$(as_user "$X" test-slurm job "$id" 2>&1) || { echo "$out"; return 1; }
		st=$(printf '%s' "$out" | jget '.jobs[0].state' 2>/dev/null)
		case $st in
		COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) printf '%s\n' "$out"; return 0 ;;
		esac
		sleep 0.5
	done
	echo "job $id not final after 60 s: $out"
	return 1
}

# sacct lags a little behind the end of a job: wait for the allocation row.
wait_acct() {
	local id=$1 i out st
	for i in $(seq 1 60); do
		out=$(as_user "$X" test-slurm acct "$id" 2>&1) || { echo "$out"; return 1; }
		st=$(printf '%s' "$out" | jget '.summary.state' 2>/dev/null)
		case $st in
		COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY) printf '%s\n' "$out"; return 0 ;;
		esac
		sleep 0.5
	done
	echo "job $id has no final sacct row: $out"
	return 1
}

printf '#!/bin/bash\necho START on $(hostname)\necho FINISHED\n' >"$d/ok.sh"
printf '#!/bin/bash\necho START\necho FAILED\nexit 3\n' >"$d/fail.sh"
step "chmod 755 *.sh" chmod 755 "$d"/*.sh
chown "$XLOOP_TEST_USER" "$d"/*.sh 2>/dev/null

ok_id=$(as_user "$X" test-slurm submit "$d/ok.sh" --name "xl ok" --output "$d/ok.out" \
	--comment "xloop:tok-ok" --partition gpu --gres gpu:1 --cpus 1 --mem 100M --time 1)
if [[ $ok_id =~ ^[0-9]+$ ]]; then ok "sbatch --parsable gave job id $ok_id"; else not_ok "sbatch gave an id" "$ok_id"; fi
fail_id=$(as_user "$X" test-slurm submit "$d/fail.sh" --name fail --output "$d/fail.out" \
	--partition short --cpus 1 --mem 100M --time 1 --dependency "afterany:$ok_id")
if [[ $fail_id =~ ^[0-9]+$ ]]; then ok "chained submission gave job id $fail_id"; else not_ok "chained sbatch gave an id" "$fail_id"; fi

if j=$(wait_final "$ok_id"); then
	check "scontrol: exit-0 job COMPLETED" test "$(printf '%s' "$j" | jget '.jobs[0].state')" = COMPLETED
	check "scontrol: exit-0 job ExitCode 0:0" test "$(printf '%s' "$j" | jget '.jobs[0].exit_code')" = 0:0
	check "scontrol: job name with a space" test "$(printf '%s' "$j" | jget '.jobs[0].name')" = "xl ok"
	check "scontrol: comment carries the token" test "$(printf '%s' "$j" | jget '.jobs[0].comment')" = "xloop:tok-ok"
	check "scontrol: StdOut is the absolute log" test "$(printf '%s' "$j" | jget '.jobs[0].std_out')" = "$d/ok.out"
	check "the log was written where asked" grep -q '^FINISHED$' "$d/ok.out"
else
	not_ok "exit-0 job reached a final state" "$j"
fi
if j=$(wait_final "$fail_id"); then
	check "scontrol: exit-3 job FAILED" test "$(printf '%s' "$j" | jget '.jobs[0].state')" = FAILED
	check "scontrol: exit-3 job ExitCode 3:0" test "$(printf '%s' "$j" | jget '.jobs[0].exit_code')" = 3:0
	check "scontrol: partition short" test "$(printf '%s' "$j" | jget '.jobs[0].partition')" = short
else
	not_ok "exit-3 job reached a final state" "$j"
fi

if [ "$XLOOP_PROFILE" = accounting ]; then
	if a=$(wait_acct "$ok_id"); then
		check "sacct: exit-0 job COMPLETED" test "$(printf '%s' "$a" | jget '.summary.state')" = COMPLETED
		check "sacct: exit-0 job 0:0" test "$(printf '%s' "$a" | jget '.summary.exit_code')" = 0:0
		check "sacct: has the batch step row" sh -c "printf '%s' '$a' | grep -q '\"step\": \"batch\"'"
	else
		not_ok "sacct knows the exit-0 job" "$a"
	fi
	if a=$(wait_acct "$fail_id"); then
		check "sacct: exit-3 job FAILED" test "$(printf '%s' "$a" | jget '.summary.state')" = FAILED
		check "sacct: exit-3 job 3:0" test "$(printf '%s' "$a" | jget '.summary.exit_code')" = 3:0
	else
		not_ok "sacct knows the exit-3 job" "$a"
	fi
else
	a=$(as_user "$X" test-slurm acct "$ok_id" 2>&1)
	check "sacct without accounting says so" test "$(printf '%s' "$a" | jget '.no_accounting')" = True
fi

# a job id Slurm never had
u=$(as_user "$X" test-slurm job 99999999 2>&1)
check "scontrol: unknown job is reported as unknown" test "$(printf '%s' "$u" | jget '.unknown_job')" = True

# a refused submission: the partition does not exist
expect_rc 1 "sbatch refusal is an error" as_user "$X" test-slurm submit "$d/ok.sh" --partition nosuch --output "$d/x.out"
check "sbatch refusal names the reason" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' test-slurm submit '$d/ok.sh' --partition nosuch 2>&1 | grep -qi 'partition'"

# the controller is unreachable: a temporary failure (75), cron may retry
if [ -n "${SLURM_CONF:-}" ]; then
	# (the client gives up after MessageTimeout, 2 s here, not 10: the same
	# "connect failure", sooner)
	step "down.conf" sed -e 's/^SlurmctldPort=.*/SlurmctldPort=1/' -e '/^MessageTimeout=/d' "$SLURM_CONF" >"$T_TMP/down.conf"
	step "down.conf: MessageTimeout" sh -c "echo MessageTimeout=2 >>'$T_TMP/down.conf'"
	step "down.conf readable" chmod 644 "$T_TMP/down.conf"
	expect_rc 75 "unreachable controller is temporary" env SLURM_CONF="$T_TMP/down.conf" \
		runuser -u "$XLOOP_TEST_USER" -- env SLURM_CONF="$T_TMP/down.conf" "$X" test-slurm queue
fi

# no Slurm on PATH: 69
expect_rc 69 "missing Slurm commands" env PATH=/nonexistent "$X" test-slurm queue

finish
