#!/usr/bin/python3
"""Write the chaos soak's figures into BENCHMARKS.md (its own section).

    bench.py CHECKS.json SOAK.json BENCHMARKS.md

Replaces the "## Chaos soak" section (up to the next "## " heading or the
end; its "### Other runs" subsection stays) or appends it; bench/report.py
keeps it when it rewrites the file.
"""
import datetime
import json
import sys


def section(c, s):
    faults = c.get("faults", {})
    lines = ["## Chaos soak", ""]
    when = datetime.datetime.utcfromtimestamp(s["t0"]).strftime("%Y-%m-%d %H:%M UTC")
    lines.append(
        "`./build.sh soak %g` (tests/soak; %s, seed %d): a study of runs of %d s on 2 lanes and "
        "2 GPUs, autopilot on over a space of 60^4 configurations; the first third driven by the "
        "Slurm driver alone, then by the driver and a tick every 5 s; `auto off` at the end and the "
        "queue drained (%s). Faults on the seed's schedule, each logged with its time; every figure "
        "below is checked against Slurm's own records (`sacct -D`) and git, and the run %s."
        % (s["minutes"], when, s["seed"], s["run_secs"],
           "in %.0f s" % (s["drained"] - s["auto_off"]) if s.get("drained") else "not drained",
           "passed every check" if c.get("failed") == 0 else "FAILED %d check(s)" % c.get("failed", 0)))
    lines.append("")
    lines.append("| | |")
    lines.append("|---|---|")
    lines.append("| runs (attempts) | %d (%d) |" % (c["runs"], c["attempts"]))
    lines.append("| run jobs, feeder jobs in sacct | %d, %d |" % (c["run jobs"], c["feeder jobs"]))
    lines.append("| verdicts | %s |" % ", ".join("%s %d" % kv for kv in sorted(c["verdicts"].items())))
    lines.append("| faults injected | %s |" % ", ".join("%s %d" % kv for kv in sorted(faults.items())))
    for k in ("duplicate submissions", "lost attempts", "wrong verdicts",
              "verdicts not committed once", "notifications not answered 2xx once",
              "integrity_check errors", "jobs left after the drain"):
        lines.append("| %s | %s |" % (k, c.get(k)))
    lines.append("| notifications (events) | %d |" % c["notifications"])
    lines.append("| GPU busy outside fault windows (goal 90%%) | %s%% of %d s |" %
                 (c["gpu busy outside faults"], c["seconds outside faults"]))
    for k in ("driver alone", "driver and ticks"):
        v = c.get("gpu busy outside faults, " + k)
        lines.append("| ... %s | %s |" % (k, "-" if v is None else "%s%%" % v))
    lines.append("")
    lines.append("A fault window runs from the fault's start to 30 s after its end (a run's length "
                 "and a scheduling cycle); busy is min(running run jobs, 2) / 2 per second from the "
                 "first run's start to `auto off` (or to the autopilot's own stop, converged, when "
                 "that came first: no work is left after it), from sacct's Start and End.%s"
                 % (" Here the autopilot stopped at %.0f s." % c["autopilot stopped"]
                    if c.get("autopilot stopped") is not None else ""))
    lines.append("")
    return "\n".join(lines)


def main():
    c = json.load(open(sys.argv[1]))
    s = json.load(open(sys.argv[2]))
    path = sys.argv[3]
    text = open(path).read()
    new = section(c, s)
    start = text.find("\n## Chaos soak")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + new
    else:
        end = text.find("\n## ", start + 1)
        old = text[start + 1:end + 1 if end >= 0 else len(text)]
        # a "### Other runs" subsection (written by hand) stays
        keep = old.find("### Other runs")
        if keep >= 0:
            new = new.rstrip("\n") + "\n\n" + old[keep:].rstrip("\n") + "\n"
        text = text[:start + 1] + new + (text[end:] if end >= 0 else "")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    import os
    os.rename(path + ".tmp", path)


if __name__ == "__main__":
    main()
