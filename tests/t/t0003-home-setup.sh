#!/usr/bin/env bash
# ops/slurm/home/setup.sh: the one-GPU home box configs, written into a
# scratch directory (--dry-run): filled from the machine, accepted by
# slurmd -G, idempotent, never overwriting a differing file, root only.
. "$(dirname "$0")/lib.sh"

S=${XLOOP_ROOT_DIR:?}/ops/slurm/home/setup.sh
if [ "$(id -u)" -ne 0 ]; then
	skip "home-box setup" "needs root"
	finish
	exit
fi
out=$T_TMP/etc
mkdir -p "$out"
expect_rc 0 "writes the three configs" "$S" --dry-run "$out" --gpu-device /dev/null
for f in slurm.conf gres.conf cgroup.conf; do
	check "$f written" test -s "$out/$f"
done
check "slurm.conf names this host" grep -q "NodeName=$(hostname -s)" "$out/slurm.conf"
check "gres.conf names the GPU device" grep -q 'File=/dev/null' "$out/gres.conf"
check "the gpu partition is the default" grep -Eq 'PartitionName=gpu .*Default=YES' "$out/slurm.conf"
check "no template placeholder is left" sh -c "! grep -q '@[A-Z_]*@' '$out'/*.conf"
h=$(tree_hash "$out")
expect_rc 0 "running it again is fine" "$S" --dry-run "$out" --gpu-device /dev/null
check "and changes nothing" test "$h" = "$(tree_hash "$out")"
echo "# my own change" >>"$out/slurm.conf"
h=$(tree_hash "$out")
expect_rc 1 "a differing file is not overwritten" "$S" --dry-run "$out" --gpu-device /dev/null
check "nothing was written" test "$h" = "$(tree_hash "$out")"
check "the refusal shows the diff" sh -c "'$S' --dry-run '$out' --gpu-device /dev/null 2>&1 | grep -q 'my own change'"
expect_rc 1 "non-root is refused" runuser -u "$XLOOP_TEST_USER" -- "$S" --dry-run "$T_TMP/x" --gpu-device /dev/null

finish
