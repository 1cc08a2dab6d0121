#!/usr/bin/env python3
"""What each test of the suite cost in CPU, from process accounting.

    accton /var/log/account/pacct; ./build.sh test; accton off
    ops/check/suite-cpu.py /var/log/account/pacct build/t/pids.log [N]

Reads `dump-acct` (package acct) and the "PID TEST PROFILE" lines
tests/t/lib.sh writes to XLOOP_PIDLOG (tests/run.sh sets it), and adds up
the user and system seconds of every process below each test's shell (the
commands it ran, xloop, Slurm's clients; not the daemons, which are not its
descendants). Prints the N (default 40) dearest tests, the suite's total and
what no test accounts for (builds, daemons, lanes' own shells).
"""
import collections
import subprocess
import sys


def records(pacct):
    out = subprocess.run(["dump-acct", pacct], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    for line in out.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 11:
            continue
        yield f[0], float(f[2]) + float(f[3]), int(f[9]), int(f[10])


def main():
    pacct, pidlog = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    tests = {}
    for line in open(pidlog):
        p = line.split()
        if len(p) >= 3:
            tests[int(p[0])] = "%s (%s)" % (p[1], p[2])
    # pacct holds a record per process at its exit: a child ends before its
    # parent, so walking the file backwards meets each parent first; a pid
    # used again later belongs to whichever process held it last seen
    recs = list(records(pacct))
    owner = {}		# pid -> test of the live process holding it (walking back)
    cost = collections.Counter()
    total = 0.0
    for comm, cpu, pid, ppid in reversed(recs):
        total += cpu
        t = tests.get(pid) if comm == "bash" and pid in tests else owner.get(ppid)
        owner[pid] = t
        if t:
            cost[t] += cpu
    hz = 100.0	# dump-acct prints ticks (AHZ)
    print("%8s  %s" % ("CPU s", "test"))
    for t, c in cost.most_common(top):
        print("%8.1f  %s" % (c / hz, t))
    print("%8.1f  every test" % (sum(cost.values()) / hz))
    print("%8.1f  every process accounted (tests, builds, daemons)" % (total / hz))


if __name__ == "__main__":
    main()
