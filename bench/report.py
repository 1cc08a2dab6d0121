#!/usr/bin/python3
"""BENCHMARKS.md from the results of one benchmark run.

    report.py RESULTS_DIR [--old FILE]          the whole file on stdout
    report.py RESULTS_DIR --steps [--old FILE]  FILE with only the runs with
                                                steps rewritten (bench/run.sh steps)
    report.py RESULTS_DIR [--steps] --summary   the headline lines only

The sections other runs write (5: ./build.sh bench search; 6: measured on its
own; the chaos soak, with its "Other runs") are copied from FILE, by default
the checkout's BENCHMARKS.md, and so is the steps part when RESULTS_DIR has none.
"""
import json
import os
import statistics
import sys

RES = sys.argv[1]
OLD_PATH = (sys.argv[sys.argv.index("--old") + 1] if "--old" in sys.argv else
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS.md"))
try:
    with open(OLD_PATH) as f:
        OLD = f.read().split("\n")
except OSError:
    OLD = []


def bounds(lines, start):
    """(i, j): lines[i] is the first that starts with start, lines[j] the next "## " heading."""
    i = next((k for k, ln in enumerate(lines) if ln.startswith(start)), None)
    if i is None:
        return None
    return i, next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")), len(lines))


def old_part(start):
    """OLD's lines from the first that starts with start to the next "## " heading."""
    b = bounds(OLD, start)
    return OLD[b[0]:b[1]] if b else []


def load(name, default=None):
    p = os.path.join(RES, name)
    if not os.path.exists(p):
        return default
    with open(p) as f:
        return json.load(f)


def took(name):
    return (load("took-%s.json" % name) or {}).get(name)


def fmt_s(v):
    return "-" if v is None else ("%d s" % v if float(v).is_integer() else "%.1f s" % v)


def ms(v):
    return "-" if v is None else ("%.0f ms" % v if v >= 100 else "%.1f ms" % v)


def ok(flag):
    return "met" if flag else "**missed**"


def med(v):
    return statistics.median(v) if v else None


machine = load("machine.json", {})
cluster = load("cluster.json", {})
gaps = {m: load("gap-%s.json" % m) for m in ("a", "b", "c", "dies", "dslurm", "dnone", "steps",
                                             "stepsd2", "stepsfold", "stepsafter")}
calls = load("calls.json", [])
over = load("overhead-tick.json", {})
synth = load("synth.json", {})
scale = load("scale.json", {})
scale_check = load("scale-check.json", {})
report_bytes = (load("scale-report.json", {}) or {}).get("report_bytes")
size = load("size.json", {})
startup = load("startup.json", {})
total = load("took-total.json", {})
cfg = load("gap-config.json", {}) or {}
POLL, TICK = cfg.get("poll_b", 30), cfg.get("tick", 60)
RUNS = cfg.get("runs", {})
osync = load("overhead-syncs.json", {}) or {}
SYN = "%s runs / %s attempts" % (format(synth.get("runs", 0), ","), format(synth.get("attempts", 0), ","))
STEPS = ("gap-a", "gap-dies", "gap-dslurm", "gap-dnone", "gap-b", "gap-c", "calls", "scale", "lanes",
         "gap-steps", "gap-stepsd2", "gap-stepsfold", "gap-stepsafter")
lanes = load("lanes.json", []) or []
held = {k: took(k) for k in STEPS if took(k) is not None}
# the 1-minute load average as each step started and ended
loads = [x for k in STEPS for x in (load("took-%s.json" % k) or {}).get("load", [])]
part1 = sum(v for k, v in held.items() if k.startswith("gap-")) if held else None

# --- the numbers
g = {}
for m, doc in gaps.items():
    if doc:
        v = doc["gaps"]
        ran = [j for j in doc["jobs"] if j["start"] and j["end"]]
        g[m] = dict(n=len(ran), gaps=v, median=med(v), max=max(v) if v else None,
                    idle=doc["idle_s"], span=doc.get("span_all_s", doc["span_s"]),
                    job=med([j["end"] - j["start"] for j in ran]))
RESOLUTION = 1  # Slurm's StartTime/EndTime are whole seconds


def ratio(m):
    if "a" not in g or m not in g or g[m]["median"] is None or g["a"]["median"] is None:
        return None, ""
    den = max(g["a"]["median"], RESOLUTION)
    floor = g["a"]["median"] < RESOLUTION
    return g[m]["median"] / den, ("≥ " if floor else "")


rb, rb_pre = ratio("b")
rc_, rc_pre = ratio("c")
tick_ms = over.get("xloop tick", {}).get("median_ms")
sq_ms = over.get("squeue", {}).get("median_ms")
tick_ratio = tick_ms / sq_ms if tick_ms and sq_ms else None
max_calls = max((c["calls"] for c in calls), default=None)
calls_const = len({c["calls"] for c in calls}) == 1 if calls else False
st, nx, rp = scale.get("status --json", {}), scale.get("next", {}), scale.get("report", {})
xv, gv = startup.get("xloop --version", {}), startup.get("git --version", {})

a_ok = "a" in g and g["a"]["max"] is not None and g["a"]["max"] <= 2
rows = [
    ("GPU idle gap between runs, xloop `next` + depth 1 (a)",
     "median %s, max %s" % (fmt_s(g.get("a", {}).get("median")), fmt_s(g.get("a", {}).get("max"))),
     "within Slurm's granularity (1-2 s)", ok(a_ok)),
    ("same, naive %d s poller (b) / xloop (a)" % POLL,
     "%s%.0f× (b: median %s)" % (rb_pre, rb, fmt_s(g["b"]["median"])) if rb else "-",
     "≥ 10×", ok(rb is not None and rb >= 10)),
    ("same, cron `tick` every %d s, depth 0 (c) / xloop (a)" % TICK,
     "%s%.0f× (c: median %s)" % (rc_pre, rc_, fmt_s(g["c"]["median"])) if rc_ else "-", "", ""),
    ("Slurm commands per `tick`, %s live jobs" % "/".join(str(c["live"]) for c in calls),
     "%s (a per-job poller: %s)" % ("/".join(str(c["calls"]) for c in calls),
                                   "/".join(str(c["live"]) for c in calls)),
     "≤ 3, independent of N", ok(max_calls is not None and max_calls <= 3 and calls_const)),
    ("`tick` (nothing changed) / one `squeue`",
     "%.2f× (%s vs %s)" % (tick_ratio, ms(tick_ms), ms(sq_ms)) if tick_ratio else "-",
     "≤ 1.5×", ok(tick_ratio is not None and tick_ratio <= 1.5)),
]
for name, r, target_ms in (("status --json", st, 100), ("next", nx, 100), ("report", rp, 2000)):
    if r:
        rows.append(("`xloop %s`, %s" % (name, SYN),
                     "%s, peak RSS %.1f MB" % (ms(r["median_ms"]), r["max_rss_kb"] / 1024),
                     "< %s, RSS < 32 MB" % ("%d ms" % target_ms if target_ms < 1000 else "%d s" % (target_ms // 1000)),
                     "time %s, RSS %s" % (ok(r["median_ms"] < target_ms), ok(r["max_rss_kb"] < 32 * 1024))))
STEPS_ROW = "GPU idle gap between trainings, runs with a %s s CPU eval step (e)" % cfg.get("eval_secs", 30)
STEPS_KEY = "| GPU idle gap between trainings,"  # how its line in the headline starts
STEPS_PART = "**Runs with steps**"  # how their part of section 1 starts
if "steps" in g:
    e = g["steps"]
    steps_row = (STEPS_ROW, "median %s, max %s" % (fmt_s(e["median"]), fmt_s(e["max"])),
                 "within Slurm's granularity (1-2 s)",
                 ok(e["max"] is not None and e["max"] <= 2 and e["n"] >= RUNS.get("steps", 0)))
    rows.insert(1, steps_row)
else:
    # no runs with steps in this run: their row from the last run that had them
    _old_row = next((ln for ln in OLD if ln.startswith(STEPS_KEY)), None)
    if _old_row:
        rows.insert(1, tuple(c.strip() for c in _old_row.strip().strip("|").split("|")))
if xv and gv:
    rows.append(("`xloop --version` / `git --version` start-up",
                 "%.2f× (%s vs %s)" % (xv["median_ms"] / gv["median_ms"], ms(xv["median_ms"]),
                                       ms(gv["median_ms"])), "", ""))
if size:
    rows.append(("binary size (static)", "%.1f MB, stripped %.1f MB" % (
        size["bytes"] / 1e6, size["stripped_bytes"] / 1e6), "", ""))

STEP_NAMES = {
    "steps": "(e) xloop's steps: the evaluation its own CPU job `afterok` on its training, the next "
             "training chained `afterany` on the training before (`next` every 3 s, `queue.depth` 1)",
    "stepsd2": "(e2) the same with `queue.depth` 2",
    "stepsfold": "(f) the evaluation folded into job.sh: training and evaluation in one GPU job "
                 "(`next` every 3 s, `queue.depth` 1)",
    "stepsafter": "(g) by hand with `sbatch`, every job at once: each training `afterany` on the "
                  "previous run's evaluation",
}


def steps_block(alone):
    """Section 1's runs with steps: the ways side by side, and the goal."""
    e, f, h = g.get("steps"), g.get("stepsfold"), g.get("stepsafter")
    cl = load("cluster-gap-steps.json", {}) or {}
    ev = cfg.get("eval_secs", 30)
    lo = ["%s %s to %s" % (k[4:], *load("took-%s.json" % k)["load"])
          for k in STEPS if k.startswith("gap-steps") and "load" in (load("took-%s.json" % k) or {})]
    L = []
    L.append(
        "**Runs with steps** (`adopt --step eval=eval.sh`, issue 28): each run a %s s training "
        "that takes a GPU and a %s s evaluation that needs only a CPU, %s runs each way, one way "
        "after the other, %s on the test cluster's 4-GPU profile (`testcluster.sh up --gpus 4`: "
        "profile %s, %s CPUs, `Gres=%s`), so an evaluation has CPUs beside the next training "
        "(on the one-GPU profile's 2 CPUs it would hold the CPU the training needs). Gaps are "
        "between the trainings (the GPU jobs), from Slurm's StartTime and EndTime as above; the "
        "span runs from the first training's start to the last job's end, the last evaluation "
        "included. The machine's 1-minute load average at the start and end of each way: %s." % (
            cfg.get("run_secs", "?"), ev, RUNS.get("steps", "?"),
            "measured on its own on %s by `./build.sh bench steps` (`bench/run.sh steps`, which "
            "rewrites only this part and its headline row)" % machine.get("date", "?")
            if alone else "in this run",
            cl.get("profile", "?"), cl.get("cpus", "?"), cl.get("gres", "?"), "; ".join(lo)))
    L.append("")
    L.append("| mode | runs | gaps (s) | median | max | GPU idle in all | GPU job (median) | "
             "first start to last end |")
    L.append("|---|---|---|---|---|---|---|---|")
    for m in STEP_NAMES:
        if m in g:
            x = g[m]
            L.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                STEP_NAMES[m], x["n"], ", ".join(str(v) for v in x["gaps"]) or "-",
                fmt_s(x["median"]), fmt_s(x["max"]), fmt_s(x["idle"]), fmt_s(x["job"]),
                fmt_s(x["span"])))
    L.append("")
    met = e["max"] is not None and e["max"] <= 2 and e["n"] >= RUNS.get("steps", 0)
    t = ("The goal (issue 28: with a %s s CPU evaluation step the idle gap between GPU jobs stays "
         "at Slurm's limit, 1-2 s as for (a)): **%s**; (e)'s gaps have median %s and max %s over "
         "%d trainings." % (ev, "met" if met else "missed", fmt_s(e["median"]), fmt_s(e["max"]),
                            e["n"]))
    if e["n"] < RUNS.get("steps", 0):
        t += " Only %d of the %s runs' trainings ran." % (e["n"], RUNS["steps"])
    full = (gaps["steps"] or {}).get("full_none_waiting") or {}
    if not met and full.get("count"):
        t += (" %d of the agent's `next` calls fed nothing with no job waiting in the queue (`%s`): "
              "a run whose evaluation is still running counts as a live run of the lane, one of "
              "its `queue.depth` + 1, so the next training is queued only when an evaluation "
              "ends, and a training that ends first leaves the GPU idle. With evaluations %s "
              "times as long as a training, up to %s runs can be in evaluation at once." % (
                  full["count"], full["first"], "%g" % (ev / cfg.get("run_secs", 10)),
                  "%d" % -(-ev // cfg.get("run_secs", 10))))
    deeper = ["`queue.depth` %s %s: gaps median %s, max %s" % (
        m[6:], STEP_NAMES[m].split(" ")[0], fmt_s(g[m]["median"]), fmt_s(g[m]["max"]))
        for m in ("stepsd2",) if m in g]
    if deeper:
        t += " With %s." % "; with ".join(deeper)
    if f:
        t += (" Folded (f), the GPU has no gap (median %s, max %s), but each GPU job lasts %s "
              "against %s for a training alone: the GPU is held for %s of every run by an "
              "evaluation that does not need it." % (
                  fmt_s(f["median"]), fmt_s(f["max"]), fmt_s(f["job"]), fmt_s(e["job"]),
                  fmt_s(f["job"] - e["job"]) if f["job"] is not None and e["job"] is not None
                  else "-"))
    if h:
        t += (" Chained on the evaluation (g), the GPU is free while the evaluation runs, and "
              "idle: median gap %s, %s in all." % (fmt_s(h["median"]), fmt_s(h["idle"])))
    if f or h:
        t += " First start to last end: %s." % ", ".join(
            "%s %s" % (STEP_NAMES[m].split(" ")[0], fmt_s(g[m]["span"])) for m in STEP_NAMES if m in g)
    L.append(t)
    L.append("")
    return L


def row_line(r):
    return "| %s | %s | %s | %s |" % r


if "--steps" in sys.argv:
    if "steps" not in g:
        sys.exit("report.py: no results of the runs with steps in %s" % RES)
    if "--summary" in sys.argv:
        print("%s: %s  [target %s: %s]" % steps_row)
        sys.exit(0)
    doc = list(OLD)
    at = next((k for k, ln in enumerate(doc) if ln.startswith("## 2.")), len(doc))
    i, j = bounds(doc, STEPS_PART) or (at, at)
    doc[i:j] = steps_block(True)
    k = next((k for k, ln in enumerate(doc) if ln.startswith(STEPS_KEY)), None)
    if k is not None:
        doc[k] = row_line(steps_row)
    else:
        k = next((k for k, ln in enumerate(doc) if ln.startswith("| GPU idle gap between runs")), None)
        if k is not None:
            doc.insert(k + 1, row_line(steps_row))
    print("\n".join(doc), end="")
    sys.exit(0)

if "--summary" in sys.argv:
    for r in rows:
        print("%s: %s%s" % (r[0], r[1], "  [target %s: %s]" % (r[2], r[3]) if r[2] else ""))
    sys.exit(0)

out = []
w = out.append
w("# Benchmarks")
w("")
w("Written by `./build.sh bench` (`bench/run.sh`), which reruns every measurement and rewrites")
w("this file. Absolute times on a shared two-core VM are noisy; the ratios, measured side by")
w("side in one run, are what count. Issue 11 has the questions and the targets.")
w("")
w("| | |")
w("|---|---|")
w("| date | %s |" % machine.get("date", "?"))
w("| machine | %s cores (`nproc`), %.1f GiB RAM, %s |" % (
    machine.get("nproc", "?"), machine.get("mem_kb", 0) / 1048576, machine.get("cpu", "?")))
w("| kernel | Linux %s |" % machine.get("kernel", "?"))
w("| Slurm | %s (`sinfo -V`): the private test cluster of `ops/slurm/testcluster.sh`, "
  "profile %s: one node, one GRES `gpu`, `SchedulerParameters=%s` |" % (
      cluster.get("sinfo_v", "?"), cluster.get("profile", "?"), cluster.get("sched", "?")))
w("| xloop | %s |" % machine.get("xloop", "?"))
net = total.get("total") - total.get("waited") if total.get("total") is not None else None
w("| this run | %s of benchmark (plus %s waiting for the shared cluster); part 1 %s, part 2 + 3a %s, "
  "3b %s (each step holds the cluster lock on its own; longest hold %s); the machine's 1-minute "
  "load average %s at the steps' starts and ends (other work shares the cores) |" % (
      fmt_s(round(net, 1) if net is not None else None), fmt_s(total.get("waited")), fmt_s(part1),
      fmt_s(held.get("calls")), fmt_s(held.get("scale")),
      fmt_s(max(held.values())) if held else "-",
      "from %.2f to %.2f" % (min(loads), max(loads)) if loads else "not recorded"))
w("")
w("## Headline")
w("")
w("| measurement | this run | target | |")
w("|---|---|---|---|")
for r in rows:
    w(row_line(r))
w("")

# --- part 1
w("## 1. GPU idle gap between consecutive experiments")
w("")
durs = [j["end"] - j["start"] for m in ("a", "b", "c", "dies") for j in (gaps.get(m) or {}).get("jobs", [])
        if j["start"] and j["end"]]
w("Each run is a `job.sh` that prints START, sleeps %s s (median run %s in Slurm) and writes "
  "`cv.json`; one CPU, 100 MB, `--gres=gpu:1`, so runs take the one GPU in turn. Gap = next "
  "StartTime − previous EndTime, both from `scontrol show job -o` (whole seconds), runs ordered "
  "by start." % (cfg.get("run_secs", "?"), fmt_s(med(durs))))
w("")
w("| mode | runs | gaps (s) | median | max | GPU idle in all | first start to last end |")
w("|---|---|---|---|---|---|---|")
names = {
    "a": "(a) agent calls `xloop next` every 3 s, `queue.depth` 1 (next run queued `afterany`)",
    "b": "(b) naive poller: `sbatch`, then `squeue` every %d s until the queue is empty" % POLL,
    "c": "(c) cron: `xloop tick` every %d s, `queue.depth` 0" % TICK,
    "dies": "(a) with the agent gone after run 2, cron `tick` every %d s left" % TICK,
}
for m in ("a", "b", "c", "dies"):
    if m in g:
        x = g[m]
        w("| %s | %d | %s | %s | %s | %s | %s |" % (
            names[m], x["n"], ", ".join(str(v) for v in x["gaps"]) or "-", fmt_s(x["median"]),
            fmt_s(x["max"]), fmt_s(x["idle"]), fmt_s(x["span"])))
w("")
if rb:
    w("Ratio of median gaps (b)/(a): **%s%.0f×**; (c)/(a): **%s%.0f×**.%s" % (
        rb_pre, rb, rc_pre, rc_,
        " (a)'s median gap is %s at Slurm's one-second resolution, so the ratios divide by 1 s "
        "and are lower bounds." % fmt_s(g["a"]["median"]) if rb_pre else ""))
    w("")
runs_note = []
if "b" in g and g["b"]["n"] < 6:
    runs_note.append("(b) ran %d runs instead of 6" % g["b"]["n"])
if "c" in g and g["c"]["n"] < 6:
    runs_note.append("(c) %d" % g["c"]["n"])
if runs_note:
    w("To keep part 1 near six minutes, %s: with a %d s poll or a %d s tick every gap is the "
      "interval minus the run, so more runs would repeat the same number. (a) ran %s." %
      (" and ".join(runs_note), POLL, TICK, RUNS.get("a", "?")))
    w("")
d = gaps.get("dies")
if d:
    dd = g["dies"]
    w("**When the driver dies.** A fresh study of %d runs, `queue.depth` 1, the agent's `next` loop "
      "(every 3 s) plus a cron-like `xloop tick` every %d s. The agent's loop was killed right after the `next` "
      "that judged run 2; Slurm then held: %s. Nothing else changed: the queued job ran, and the "
      "cron tick judged it and fed the queue again (depth 1: two jobs per tick). The study %s "
      "with **%s of GPU idle in all** (%s of it after the agent died) over %s, against %s for the "
      "same study with the agent alive (a). For (b) the driver *is* the queue: kill the poller after "
      "run 2 and nothing is left in Slurm, so the GPU idles and the study **never completes** until "
      "someone restarts it by hand (nothing is measured for that: there is nothing to wait for)." % (
          d.get("runs_wanted", dd["n"]), TICK,
          ", ".join(q.replace(":", " ") for q in d.get("queued_at_kill", [])) or "nothing",
          "completed" if d.get("completed") else "had NOT completed when the benchmark gave up",
          fmt_s(dd["idle"]), fmt_s(d.get("idle_after_kill_s")), fmt_s(dd["span"]),
          fmt_s(g.get("a", {}).get("idle"))))
    w("")

if gaps.get("dslurm") or gaps.get("dnone"):
    w("**The agent dies after run 2, no cron installed.** The same study of %s runs, the agent's "
      "`next` loop killed after run 2, nothing else started: how long the GPU idles until the study "
      "completes." % RUNS.get("dies", "?"))
    w("")
    w("| what is left to drive it | completed | GPU idle after the agent died | runs judged |")
    w("|---|---|---|---|")
    for m, what in (("dslurm", "xloop, `driver.mode: slurm`: the feeder job behind the runs"),
                    ("dies", "xloop, `driver.mode: none`, cron `tick` every %d s" % TICK),
                    ("dnone", "xloop, `driver.mode: none`, no cron")):
        doc = gaps.get(m)
        if doc:
            w("| %s | %s | %s%s | %s of %s |" % (
                what, "yes" if doc.get("completed") else "**no**", fmt_s(doc.get("idle_after_kill_s")),
                "" if doc.get("completed") else " (until the benchmark gave up; it never ends)",
                doc.get("judged", "?"), doc.get("runs_wanted", "?")))
    w("| the naive poller (b) | **no**: the poller is the driver; nothing is left in Slurm | "
      "unbounded | 2 |")
    w("")

# the runs with steps: this run's, or the last ones measured
out.extend(steps_block(False) if "steps" in g else old_part(STEPS_PART))

# --- part 2
w("## 2. Slurm calls per poll")
w("")
w("One study; a job holds the GPU for 20 minutes, so nothing finishes while we count; job "
  "arrays from `xloop sweep` (chained `afterany` behind it) bring the live xloop jobs to each size. "
  "After one tick takes the new jobs in, the next tick runs with a PATH shim directory "
  "(`bench/shim.sh`: one wrapper per Slurm client command that logs its argv and execs "
  "`/usr/bin/<cmd>`), prepended to PATH for that one process.")
w("")
w("| live xloop jobs | Slurm commands in one `tick` | which | a per-job poller | `tick` wall (median of 5) | `squeue` wall | disk syncs in one `tick` |")
w("|---|---|---|---|---|---|---|")
for c in calls:
    cmds = {}
    for x in c["commands"]:
        cmds[x] = cmds.get(x, 0) + 1
    w("| %d | **%d** | %s | %d | %s | %s | %s |" % (
        c["live"], c["calls"], ", ".join("%s ×%d" % kv for kv in sorted(cmds.items())) or "-",
        c["live"], ms(c["tick_median_ms"]), ms(c["squeue_median_ms"]),
        "-" if c.get("syncs") is None else c["syncs"]))
w("")
if calls:
    w("The command itself: `%s`. `.xloop/tick.log` agrees (`%s`). A per-job poller asks once per "
      "job (`squeue -j ID` or `scontrol show job ID`), N calls per poll. The regression test is "
      "`tests/t/t1800-bench-calls.sh` (5 and 40 live jobs: the same count, at most 3)." % (
          calls[-1]["argv"][0] if calls[-1]["argv"] else "?",
          calls[-1]["tick_log_measured"].split(" ", 1)[-1]))
    w("")
    if len(calls) > 1 and calls[-1]["tick_median_ms"] > 3 * calls[0]["tick_median_ms"]:
        w("The Slurm side stays constant, but the tick's own time grows with N (%s at %d jobs, "
          "%s at %d): see the note under part 3." % (
              ms(calls[0]["tick_median_ms"]), calls[0]["live"], ms(calls[-1]["tick_median_ms"]),
              calls[-1]["live"]))
        w("")

# --- part 3
w("## 3. Overhead and scale")
w("")
if over:
    w("**`xloop tick` when nothing changed vs one bare `squeue -u USER`**, %d runs each, "
      "interleaved, as the user (2 live jobs: one running, one queued behind it, the usual "
      "depth-1 picture):" % len(over["squeue"]["wall_ms"]))
    w("")
    w("| | median | max | min |")
    w("|---|---|---|---|")
    for k in ("xloop tick", "squeue"):
        w("| `%s` | %s | %s | %s |" % (k, ms(over[k]["median_ms"]), ms(over[k]["max_ms"]),
                                       ms(over[k]["min_ms"])))
    w("")
    idle = startup.get("xloop tick, nothing in flight", {})
    w("Ratio: **%.2f×** (target ≤ 1.5×: %s).%s%s%s" % (
        tick_ratio, ok(tick_ratio <= 1.5),
        " Such a tick syncs nothing to disk (%s fsync/fdatasync under strace: the state DB "
        "does not change)." % osync["syncs"]
        if osync.get("syncs") is not None else "",
        " This is close to the target: between runs on this machine the ratio moves by about "
        "±0.15, so it can land on either side." if 1.3 <= tick_ratio <= 1.7 else "",
        " Its parts: a tick on a study with nothing in flight, which asks Slurm nothing, takes %s "
        "(process start, `xloop.json`, the lock, the DB, `tick.log`; `xloop --version` alone: %s); "
        "the rest is the squeue it runs, plus spawning it and reading its output." % (
            ms(idle["median_ms"]), ms(xv.get("median_ms"))) if idle else ""))
    w("")
if scale:
    w("**A synthetic study** (`bench/synth.py`): `xloop init`, then %s runs and %s attempts inserted "
      "into its `state.db` (%.1f MB): 1 to 9 attempts per run, all finished (%s failed, each with "
      "a 12-line log; the last attempt of a run succeeded 3 times in 4), one verdict event each, "
      "marks set as after a briefing. %d runs each after one warm-up, interleaved; wall time "
      "around the bare process, peak RSS from a second run under %s." % (
          format(synth.get("runs", 0), ","), format(synth.get("attempts", 0), ","),
          synth.get("db_bytes", 0) / 1e6, format(synth.get("failed", 0), ","),
          len(st.get("wall_ms", [])), st.get("rss_from", "?")))
    w("")
    w("| command | median | max | peak RSS | target |")
    w("|---|---|---|---|---|")
    for name, r, t in (("status --json", st, "< 100 ms, < 32 MB"), ("next", nx, "< 100 ms, < 32 MB"),
                       ("report", rp, "< 2 s, < 32 MB")):
        if r:
            w("| `xloop %s` | %s | %s | %.1f MB | %s |" % (name, ms(r["median_ms"]), ms(r["max_ms"]),
                                                          r["max_rss_kb"] / 1024, t))
    w("")
    extra = []
    if scale_check:
        extra.append("`status --json` listed %s runs (Slurm reachable: %s)" % (
            format(scale_check.get("status_runs") or 0, ","),
            str(scale_check.get("slurm_reachable")).lower()))
    if report_bytes:
        extra.append("the report is %.1f MB of HTML" % (report_bytes / 1e6))
    if extra:
        t = "; ".join(extra)
        w(t[0].upper() + t[1:] + ".")
        w("")
    how = ("How: each command reads the attempts in one query (not one per run); the "
           "queries every tick and briefing make have indexes (schema migration 4); "
           "`status --json` writes its document as it reads it, and `report` keeps a small "
           "record per attempt and writes its page to the file in 1 MB pieces.")
    if st and st["median_ms"] >= 100 and scale_check.get("status_bytes"):
        how += (" What `status --json` still spends is SQLite reading 50,000 attempts and "
                "writing %.1f MB of JSON." % (scale_check["status_bytes"] / 1e6))
    w(how)
    w("")
if size:
    w("**Binary**: `./xloop` %s bytes as built (%s), %s bytes stripped." % (
        format(size["bytes"], ","), size.get("file", ""), format(size["stripped_bytes"], ",")))
    w("")
if xv and gv:
    w("**Start-up**, %d runs each, interleaved: `xloop --version` median %s (max %s, peak RSS "
      "%.1f MB), `git --version` median %s (max %s): ratio %.2f×." % (
          len(xv["wall_ms"]), ms(xv["median_ms"]), ms(xv["max_ms"]), xv["max_rss_kb"] / 1024,
          ms(gv["median_ms"]), ms(gv["max_ms"]), xv["median_ms"] / gv["median_ms"]))
    w("")

if lanes:
    w("## 4. Lanes: every GPU busy")
    w("")
    w("`queue.lanes` 1, 2 and 4 on the test cluster's 4-GPU profile (`testcluster.sh up --gpus 4`), "
      "%d planned runs of %d s each, driven by `xloop tick` alone once a second (bench/lanes.sh). "
      "Wall time from the first tick to the last run's end; idle per GPU from `xloop report --json`, "
      "over the span of the study's attempts." % (lanes[0]["runs"], lanes[0]["run_s"]))
    w("")
    w("| lanes | wall | runs/min | vs 1 lane | most running | idle per GPU used |")
    w("|---|---|---|---|---|---|")
    base = lanes[0]["runs_per_min"] or 1
    for L in lanes:
        w("| %d | %s s | %.2f | %.2f× | %d | %s |" % (
            L["lanes"], L["wall_s"], L["runs_per_min"], L["runs_per_min"] / base, L["max_running"],
            ", ".join("GPU %d %d s" % (g["gpu"], g["idle_s"]) for g in L["gpus"]) or "-"))
    w("")
    w("The regression test is `tests/t/t1850-lanes.sh` (16 runs of 10 s on 4 lanes: within "
      "1.15 × the ideal, median idle gap per GPU at most 1.5 s, at least 3.6 × one lane).")
    w("")
    # what other runs measured (on many nodes: issue 34, bench/lanes-nodes.sh) is kept
    sec4 = old_part("## 4. Lanes")
    k = next((i for i, ln in enumerate(sec4) if ln.startswith("The regression test is")), None)
    for ln in sec4[k + 1:] if k is not None else []:
        if ln or out[-1]:
            w(ln)

# the search section (./build.sh bench search, bench/search.py) and the
# driver's (measured on its own; issue 27): kept as they are
out.extend(old_part("## 5. Search"))
out.extend(old_part("## 6. The Slurm driver"))
# a long study's cost, measured by hand (issue 47): kept as it is
out.extend(old_part("## 7. A long study"))
# stopping runs behind the best (./build.sh bench stop, bench/stop.py; issue 46): kept
out.extend(old_part("## 8. Stopping runs"))

w("## Method")
w("")
w("Everything runs on the private single-node Slurm of `ops/slurm/testcluster.sh` on loopback, "
  "whose one GRES `gpu` makes GPU jobs run one at a time as on a one-GPU box; xloop runs as an "
  "unprivileged user, and each step that talks to Slurm holds `/tmp/xloop-cluster.lock` on its "
  "own (the cluster is shared with test suites), with no one else's job in the queue. Idle gaps are read from Slurm's "
  "own StartTime and EndTime (`scontrol show job -o`), never from the driver's clock, and the "
  "modes run one after another in the same run so that they share the machine's state. Slurm "
  "calls are counted by wrappers in a temporary directory put first on the PATH of the one "
  "`xloop tick` being measured, and checked against the count xloop writes to `.xloop/tick.log`. "
  "Wall times are `time.perf_counter()` around each process, started from Python as the user, "
  "with stdout discarded and the compared commands interleaved round by round, so that other "
  "load on the shared machine hits both sides alike; medians are reported with maxima, and peak RSS "
  "comes from `/usr/bin/time -v`. The scale study is synthetic but real in form: the schema is "
  "the one `xloop init` created, the rows are what xloop writes, and only finished attempts were "
  "inserted, so measuring it costs Slurm nothing but `status`'s one squeue.")
w("")
# the chaos soak's section (tests/soak/bench.py writes it) stays, "Other runs" with it
soak = old_part("## Chaos soak")
while soak and not soak[-1]:
    soak.pop()
out.extend(soak + [""] if soak else [])
print("\n".join(out))
