#!/usr/bin/python3
"""Write the chaos soak's figures into BENCHMARKS.md (its own section).

    bench.py CHECKS.json SOAK.json BENCHMARKS.md

Replaces the "## Chaos soak" section (up to the next "## " heading or the
end; its subsections, "### On many nodes" and "### Other runs", stay) or
appends it; bench/report.py keeps it when it rewrites the file. A soak on
many nodes (soak.json's "nodes", issue 34) writes its column of the table
in "### On many nodes" instead (one column per number of nodes and
minutes: the 10- and 30-minute runs side by side), the rest untouched.
"""
import datetime
import json
import sys


def put_single(text, new):
    """text with the single-node part of its "## Chaos soak" section
    replaced by new (its "###" subsections stay)."""
    start = text.find("\n## Chaos soak")
    if start < 0:
        return text.rstrip("\n") + "\n\n" + new
    end = text.find("\n## ", start + 1)
    old = text[start + 1:end + 1 if end >= 0 else len(text)]
    # the subsections ("On many nodes", "Other runs" written by hand) stay
    keep = old.find("\n### ")
    if keep >= 0:
        new = new.rstrip("\n") + "\n\n" + old[keep + 1:]
    return text[:start + 1] + new + (text[end:] if end >= 0 else "")


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


NODES_HEAD = "### On many nodes"
NODES_ROWS = [
    "when, seed", "checks", "runs (attempts)", "run jobs (requeued by Slurm), feeder jobs",
    "verdicts", "faults injected", "duplicate submissions", "lost attempts", "wrong verdicts",
    "verdicts not committed once", "notifications not answered 2xx once",
    "integrity_check errors", "jobs left after the drain", "attempts with two live jobs",
    "retries on the lost node (retries checked)", "lost node back at work (its run jobs after)",
    "plan entries after the autopilot converged", "drained after auto off",
    "GPU busy outside fault windows (goal 90%)", "... driver alone", "... driver and ticks",
]


def nodes_column(c, s):
    """One run's figures, by row."""
    faults = c.get("faults", {})
    when = datetime.datetime.utcfromtimestamp(s["t0"]).strftime("%Y-%m-%d %H:%M UTC")
    nl = s.get("node_loss") or [{}]
    v = {
        "when, seed": "%s, %d" % (when, s["seed"]),
        "checks": "%d passed, %d failed" % (c["passed"], c["failed"]),
        "runs (attempts)": "%d (%d)" % (c["runs"], c["attempts"]),
        "run jobs (requeued by Slurm), feeder jobs": "%d (%d), %d" %
        (c["run jobs"], c.get("requeued jobs", 0), c["feeder jobs"]),
        "verdicts": ", ".join("%s %d" % kv for kv in sorted(c["verdicts"].items())),
        "faults injected": ", ".join("%s %d" % kv for kv in sorted(faults.items())),
        "retries on the lost node (retries checked)": "%s (%d)" %
        ("-" if c.get("retries on the lost node") is None else c["retries on the lost node"],
         c.get("retries after a node loss", 0)),
        "lost node back at work (its run jobs after)": "%s, %s (%d)" %
        (nl[0].get("node", "-"), nl[0].get("state", "-").split("\n")[0],
         c.get("lost node's run jobs after its return", 0)),
        "plan entries after the autopilot converged": str(s.get("plan_added", 0)),
        "drained after auto off": "%.0f s" % (s["drained"] - s["auto_off"]) if s.get("drained")
        else "not drained",
        "GPU busy outside fault windows (goal 90%)": "%s%% of %d s" %
        (c["gpu busy outside faults"], c["seconds outside faults"]),
    }
    for k in ("duplicate submissions", "lost attempts", "wrong verdicts",
              "verdicts not committed once", "notifications not answered 2xx once",
              "integrity_check errors", "jobs left after the drain", "attempts with two live jobs"):
        v[k] = str(c.get(k, "-"))
    for k in ("driver alone", "driver and ticks"):
        x = c.get("gpu busy outside faults, " + k)
        v["... " + k] = "-" if x is None else "%s%%" % x
    return v


def nodes_subsection(c, s, old):
    """The "On many nodes" subsection with this run's column put in the
    table of old (the subsection as it was, or "")."""
    cols = {}	# column name -> {row: value}
    rows = [line for line in old.splitlines() if line.startswith("| ")]
    if rows:
        names = [x.strip() for x in rows[0].strip("|").split("|")][1:]
        for line in rows[1:]:
            v = [x.strip() for x in line.strip().strip("|").split("|")]
            for name, x in zip(names, v[1:]):
                cols.setdefault(name, {})[v[0]] = x
    name = "%d nodes, %g min" % (s["nodes"], s["minutes"])
    cols[name] = nodes_column(c, s)

    def order(n):
        w = n.replace(",", "").split()
        try:
            return (int(w[0]), float(w[2]))
        except (ValueError, IndexError):
            return (99, 0.0)
    names = sorted(cols, key=order)
    lines = [NODES_HEAD, ""]
    lines.append(
        "`./build.sh soak --nodes N M` (issue 34): the same study and checks on the multi-node "
        "test cluster (`testcluster.sh up --accounting --nodes N --gpus 1`), N nodes of one GPU "
        "each, N lanes, the runs in the preemptible partition `low`. The faults: slurmctld "
        "restarts, a node lost under a run (kill-node; its job made unrequeueable first, so it "
        "ends NODE_FAIL and xloop retries it: as its next segment, queued held beforehand, or as a "
        "new attempt with --exclude) kept down past SlurmdTimeout and "
        "started again, a node drained and resumed, a preemption wave (root's jobs of partition "
        "`gpu` on every node's GPU: Slurm requeues the study's jobs under their ids), the webhook "
        "down then 500 and 429, `.xloop/` full, SIGKILLs and crash points; no slurmd-down (the "
        "node loss replaces it). Once the autopilot converges, one-variable plan entries keep "
        "the lanes busy. Three checks more than on one node: no attempt had two live jobs at "
        "once (Start..End of different JobIDs of one attempt and segment), every job after "
        "a NODE_FAIL (the attempt's next segments, its next attempt) ran away from the lost "
        "node (sacct NodeList), and the lost node was back in "
        "service and ran runs again. A job Slurm requeued has several records of one JobID in "
        "`sacct -D`: one job, judged by its last record. GPU busy counts min(running run jobs, "
        "N) / N, to `auto off`.")
    lines.append("")
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|---|" + "---|" * len(names))
    for r in NODES_ROWS:
        lines.append("| %s | %s |" % (r, " | ".join(cols[n].get(r, "-") for n in names)))
    lines.append("")
    return "\n".join(lines) + "\n"


def put_nodes(text, c, s):
    """text with its "On many nodes" subsection rewritten for this run
    (before "### Other runs"; the rest of the section as it was)."""
    start = text.find("\n## Chaos soak")
    if start < 0:
        text = text.rstrip("\n") + "\n\n## Chaos soak\n\n"
        start = text.find("\n## Chaos soak")
    end = text.find("\n## ", start + 1)
    end = len(text) if end < 0 else end + 1
    sec = text[start + 1:end]
    at = sec.find("\n" + NODES_HEAD)
    if at >= 0:
        stop = sec.find("\n### ", at + 1)
        stop = len(sec) if stop < 0 else stop + 1
        before, old, after = sec[:at + 1], sec[at + 1:stop], sec[stop:]
    else:
        o = sec.find("\n### Other runs")
        o = len(sec) if o < 0 else o + 1
        before, old, after = sec[:o], "", sec[o:]
    new = nodes_subsection(c, s, old)
    sec = before.rstrip("\n") + "\n\n" + new + after.lstrip("\n")
    return text[:start + 1] + sec + text[end:]


def main():
    c = json.load(open(sys.argv[1]))
    s = json.load(open(sys.argv[2]))
    path = sys.argv[3]
    text = open(path).read()
    if s.get("nodes"):
        text = put_nodes(text, c, s)
    else:
        text = put_single(text, section(c, s))
    with open(path + ".tmp", "w") as f:
        f.write(text)
    import os
    os.rename(path + ".tmp", path)


if __name__ == "__main__":
    main()
