#!/usr/bin/python3
"""Wall time and peak RSS of commands, run interleaved.

    timeit.py OUT.json RUNS SPEC.json [--rss] [--warmup K]

SPEC.json maps a name to an argv: {"tick": ["xloop", "-C", "d", "tick"],
"squeue": ["squeue", "-u", "me"]}. Each round runs every command once, in
order, stdout and stderr to /dev/null (so drift hits all alike); K rounds
first are not counted. Wall time: time.perf_counter() around the process.
With --rss each command runs a second time per round, under
`/usr/bin/time -v`, whose "Maximum resident set size" is the peak RSS (the
timed run stays bare; wait4's own figure would count the Python parent the
child was forked from). Writes, per name:
{"argv", "wall_ms": [...], "median_ms", "max_ms", "min_ms", "rss_kb": [...],
 "max_rss_kb", "rss_from", "exit_codes": [...]}.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"


def run_once(argv, rss):
    use_time = rss and os.access(TIME, os.X_OK)
    with tempfile.TemporaryFile() as err:
        full = [TIME, "-v"] + argv if use_time else argv
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err if use_time else subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = (time.perf_counter() - t0) * 1000.0
        p.returncode = os.waitstatus_to_exitcode(status)
        rss_kb, src = ru.ru_maxrss, "wait4"
        if use_time:
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
            if m:
                rss_kb, src = int(m.group(1)), "/usr/bin/time -v"
            m = re.search(r"Command exited with non-zero status (\d+)", text)
            if m:
                p.returncode = int(m.group(1))
    return wall, rss_kb, src, p.returncode


def main():
    out, runs, spec = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
    rss = "--rss" in sys.argv
    warm = int(sys.argv[sys.argv.index("--warmup") + 1]) if "--warmup" in sys.argv else 1
    res = {k: {"argv": v, "wall_ms": [], "rss_kb": [], "exit_codes": []} for k, v in spec.items()}
    for i in range(warm + runs):
        for name, argv in spec.items():
            wall, kb, src, rc = run_once(argv, False)
            if rss and os.access(TIME, os.X_OK):
                _, kb, src, rc2 = run_once(argv, True)
                rc = rc or rc2
            else:
                src = "not measured (no /usr/bin/time)" if rss else "wait4 (includes the forking parent)"
            if i < warm:
                continue
            r = res[name]
            r["wall_ms"].append(round(wall, 3))
            r["rss_kb"].append(kb)
            r["rss_from"] = src
            r["exit_codes"].append(rc)
    for r in res.values():
        w = r["wall_ms"]
        r.update(median_ms=round(statistics.median(w), 3), max_ms=max(w), min_ms=min(w),
                 max_rss_kb=max(r["rss_kb"]), median_rss_kb=statistics.median(r["rss_kb"]))
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    for k, r in res.items():
        print("%s: median %.1f ms, max %.1f ms, peak RSS %d kB, exit %s" % (
            k, r["median_ms"], r["max_ms"], r["max_rss_kb"], sorted(set(r["exit_codes"]))),
            file=sys.stderr)


if __name__ == "__main__":
    main()
