#!/usr/bin/python3
"""The search benchmark (./build.sh bench search): xloop's autopilot against
Optuna's TPE and random search, the same objectives, the same noise and the
same number of runs (replicates count as runs), over several random streams:
(a) a synthetic noisy objective with an interaction (and a flat one), (c)
gradient boosting on breast-cancer data and (b) the demo's digits study, both
scored in process by the jobs' own code (bench/search_real.py); (b) also
through the real local Slurm (bench/search-slurm.sh: `auto on`, nothing but
`tick`). For each method and budget it reports the true score (noise-free, or
the mean of 10 fresh seeds) of the configuration the method calls best, and
its false promotions (a new best whose true score is below the one it
replaced). xloop runs `xloop test-search`: the real proposer (src/search/propose.c)
and promotion rule (src/search/noise.c).

usage: bench/search.py [--streams N] [--budget N] [--noise SD] [--xloop PATH]
       [--real-streams N] [--digits-streams N] [--digits-budget N] [--no-slurm]
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

import search_real
os.environ.setdefault("OMP_NUM_THREADS", "1")   # one core per fit: the machine is shared
# bench/ holds a timeit.py of its own: keep it from shadowing the standard one
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(
    os.path.abspath(__file__))]

M64 = (1 << 64) - 1
BASE = (3, 3, 7, 2)


OUT = []


def w(text=""):
    """Print a line of the report and keep it for BENCHMARKS.md."""
    print(text, flush=True)
    OUT.append(text)


def write_benchmarks(elapsed):
    """Replace BENCHMARKS.md's search section (or add it before ## Method)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "BENCHMARKS.md")
    head = "## 5. Search: autopilot against TPE and random search"
    body = [head, "",
            f"Written by `./build.sh bench search` (bench/search.py, {elapsed / 60:.1f} min "
            f"this run; `./build.sh bench` keeps this section). " + SECTION_INTRO, ""]
    body += [ln.replace("## ", "### ", 1) if ln.startswith("## ") else ln
             for ln in OUT if not ln.startswith("# search benchmark")]
    try:
        text = open(path).read()
    except OSError:
        return
    lines = text.split("\n")
    if head in lines:
        i = lines.index(head)
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")),
                 len(lines))
        lines[i:j] = body
    else:
        i = lines.index("## Method") if "## Method" in lines else len(lines)
        lines[i:i] = body
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp", path)


SECTION_INTRO = (
    "Each method gets the same objectives, the same noise and the same number of runs "
    "(xloop's replicates count as runs); the cell is the true score (noise-free, or the "
    "mean of 10 fresh seeds) of what the method calls best after that many runs, as "
    "mean and minimum over the streams. TPE (Optuna's TPESampler, Debian's "
    "python3-optuna) and random search call best the highest single score seen; xloop "
    "calls best what its noise rule promoted (`xloop help space`). A false promotion is "
    "a new best whose true score is below the one it replaced. xloop runs "
    "`xloop test-search`: the real proposer and rule, in process; (b) also runs through "
    "the real local Slurm with nothing but `tick`. TPE and random search score trial k "
    "on seed k (per stream); xloop's changes keep their parent's seed and its "
    "replicates take fresh ones, as autopilot does.")


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def true_score(obj, x):
    if obj == "flat":
        return 0.9
    mid = (x[0] + x[1]) / 2
    return (0.9 - 0.02 * (x[0] - x[1]) ** 2 - 0.004 * (mid - 7) ** 2
            - 0.003 * (x[2] - 2) ** 2 - 0.002 * (x[3] - 5) ** 2)


def noise(stream, seed, x):
    """The same normal deviate as src/cmd/test-search.c."""
    h = splitmix64(((stream << 40) ^ (seed << 32) ^ (x[0] << 24) ^ (x[1] << 16)
                    ^ (x[2] << 8) ^ x[3]) & M64)
    h2 = splitmix64(h)
    u1 = ((h >> 11) + 1) / 9007199254740993.0
    u2 = (h2 >> 11) / 9007199254740992.0
    return math.sqrt(-2 * math.log(u1)) * math.cos(6.283185307179586 * u2)


def trace_of_observed(obj, trials):
    """Best observed value after each trial -> (true score, false promotions)."""
    out, best, best_true, false, promo = [], None, None, 0, 0
    for x, y in trials:
        if best is None or y > best:
            t = true_score(obj, x)
            if best is not None and tuple(x) != tuple(best_x):
                promo += 1
                false += t < best_true
            best, best_x, best_true = y, x, t
        out.append((best_true, false, promo))
    return out


def run_tpe(obj, stream, budget, sd):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials = []
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=stream))
    study.enqueue_trial({"X1": BASE[0], "X2": BASE[1], "X3": BASE[2], "X4": BASE[3]})

    def f(trial):
        x = tuple(trial.suggest_int(f"X{i}", 1, 9) for i in range(1, 5))
        y = true_score(obj, x) + sd * noise(stream, trial.number + 1, x)
        trials.append((x, y))
        return y
    study.optimize(f, n_trials=budget)
    return trace_of_observed(obj, trials)


def run_random(obj, stream, budget, sd):
    rng = random.Random(stream)
    trials = [(BASE, true_score(obj, BASE) + sd * noise(stream, 1, BASE))]
    for i in range(1, budget):
        x = tuple(rng.randint(1, 9) for _ in range(4))
        trials.append((x, true_score(obj, x) + sd * noise(stream, i + 1, x)))
    return trace_of_observed(obj, trials)


def run_xloop(xloop, obj, stream, budget, sd):
    out = subprocess.run([xloop, "test-search", "--objective", obj, "--stream",
                          str(stream), "--budget", str(budget), "--noise", str(sd)],
                         check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    by_runs = {p["runs"]: (p["best_true"], p["false_promotions"], p["promotions"])
               for p in doc["trace"]}
    last = (true_score(obj, BASE), 0, 0)
    res = []
    for k in range(1, budget + 1):
        last = by_runs.get(k, last)   # converged early: the best stays
        res.append(last)
    return res, doc["runs"]


def optuna_tpe(seed):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(direction="maximize",
                               sampler=optuna.samplers.TPESampler(seed=seed))


def suggest(trial, study):
    """A grid point: ordered grids by index (TPE sees the order), choices by name."""
    cfg = {}
    for v, vals in study.grid.items():
        if all(isinstance(x, str) for x in vals):
            cfg[v] = trial.suggest_categorical(v, vals)
        else:
            cfg[v] = vals[trial.suggest_int(v, 0, len(vals) - 1)]
    return cfg


def index_params(study, cfg):
    return {v: (cfg[v] if all(isinstance(x, str) for x in vals) else vals.index(cfg[v]))
            for v, vals in study.grid.items()}


def observed_trace(trials):
    """Best observed single score after each trial -> its configuration."""
    out, best = [], None
    for cfg, y in trials:
        if best is None or y > best[1]:
            best = (cfg, y)
        out.append(best[0])
    return out


def real_tpe(study, stream, budget):
    tpe = optuna_tpe(stream)
    tpe.enqueue_trial(index_params(study, study.baseline))
    trials = []

    def f(trial):
        cfg = suggest(trial, study)
        y = study.score(cfg, 100 * stream + trial.number + 1)
        trials.append((cfg, y))
        return y
    tpe.optimize(f, n_trials=budget)
    return observed_trace(trials)


def real_random(study, stream, budget):
    rng = random.Random(stream)
    trials = [(study.baseline, study.score(study.baseline, 100 * stream + 1))]
    for i in range(1, budget):
        cfg = {v: rng.choice(vals) for v, vals in study.grid.items()}
        trials.append((cfg, study.score(cfg, 100 * stream + i + 1)))
    return observed_trace(trials)


def real_xloop(xloop, study, stream, budget):
    base = "".join(f"{v}={search_real.canon(study.baseline[v])}\n" for v in study.grid)
    base += f"SEED={100 * stream + 1}\n"
    argv = [xloop, "test-search", "--external", "--baseline", base, "--budget", str(budget)]
    for sp in study.spaces:
        argv += ["--space", sp]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    trace = []
    for line in p.stdout:
        msg = json.loads(line)
        if "ask" in msg:
            a = dict(msg["ask"])
            seed = int(a.pop("SEED"))
            y = study.score(study.from_xloop(a), seed)
            p.stdin.write(f"{y!r}\n")
            p.stdin.flush()
        else:
            trace.append(study.from_xloop(msg["best"]))
    p.wait()
    if p.returncode:
        raise RuntimeError(f"xloop test-search exited {p.returncode}")
    while len(trace) < budget:     # converged early: the best stays
        trace.append(trace[-1])
    return trace


def score_trace(study, trace, points):
    """True scores at the points, and (false) promotions along the trace."""
    truths = [study.truth(trace[p - 1]) for p in points]
    false = promo = 0
    for a, b in zip(trace, trace[1:]):
        if b != a:
            promo += 1
            false += study.truth(b) < study.truth(a)
    return truths, false, promo


def real_table(xloop, study, streams, budget, extra=None):
    points = [p for p in (15, 30, 60) if p <= budget]
    t0 = time.time()
    w("| method | " + " | ".join(f"{p} runs (mean, min)" for p in points)
          + " | false promotions | promotions |")
    w("|---" * (len(points) + 3) + "|")
    base_truth = study.truth(study.baseline)
    for method in ("xloop", "tpe", "random"):
        rows, false, promo = [], 0, 0
        for s in range(1, streams + 1):
            if method == "xloop":
                tr = real_xloop(xloop, study, s, budget)
            elif method == "tpe":
                tr = real_tpe(study, s, budget)
            else:
                tr = real_random(study, s, budget)
            t, f, pr = score_trace(study, tr, points)
            rows.append(t)
            false += f
            promo += pr
        cells = [f"{sum(r[i] for r in rows) / len(rows):.4f}, {min(r[i] for r in rows):.4f}"
                 for i in range(len(points))]
        w(f"| {method} | " + " | ".join(cells) + f" | {false} | {promo} |")
        sys.stdout.flush()
    for row in extra or []:
        w(row)
    study.save()
    w(f"\nbaseline's true score {base_truth:.4f}; {streams} streams; "
          f"{time.time() - t0:.0f} s\n")


def main():
    t0 = time.time()
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=5)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--xloop", default="./xloop")
    ap.add_argument("--real-streams", type=int, default=3)
    ap.add_argument("--real-budget", type=int, default=60)
    ap.add_argument("--digits-streams", type=int, default=2)
    ap.add_argument("--digits-budget", type=int, default=30)
    ap.add_argument("--no-slurm", action="store_true")
    ap.add_argument("--only", default="synthetic,gb,digits")
    a = ap.parse_args()
    only = a.only.split(",")
    points = [p for p in (15, 30, 60) if p <= a.budget]
    w(f"# search benchmark: {a.streams} streams, noise sd {a.noise}, "
          f"budgets {points}; true score of the chosen best (optimum 0.9); on the\n"
          f"# flat objective every promotion is a false one (nothing is better)\n")
    for obj in ("peak", "flat") if "synthetic" in only else ():
        w(f"## objective {obj}\n")
        w("| method | " + " | ".join(f"{p} runs (mean, min)" for p in points)
              + " | false promotions | promotions | runs used |")
        w("|---" * (len(points) + 4) + "|")
        for method in ("xloop", "tpe", "random"):
            rows, used = [], []
            for s in range(1, a.streams + 1):
                if method == "xloop":
                    tr, n = run_xloop(a.xloop, obj, s, a.budget, a.noise)
                    used.append(n)
                elif method == "tpe":
                    tr = run_tpe(obj, s, a.budget, a.noise)
                    used.append(a.budget)
                else:
                    tr = run_random(obj, s, a.budget, a.noise)
                    used.append(a.budget)
                rows.append(tr)
            cells = []
            for p in points:
                vals = [r[p - 1][0] for r in rows]
                cells.append(f"{sum(vals) / len(vals):.4f}, {min(vals):.4f}")
            false = sum(r[-1][1] for r in rows)
            promo = sum(r[-1][2] for r in rows)
            w(f"| {method} | " + " | ".join(cells) + f" | {false} | {promo} | "
                  f"{min(used)}-{max(used)} |")
        w()
    sys.stdout.flush()
    if "gb" in only:
        st = search_real.gb_study()
        w("## (c) gradient boosting, breast cancer, 5-fold CV (true score: mean of 10 "
              "fresh seeds)\n")
        real_table(a.xloop, st, a.real_streams, a.real_budget)
    if "digits" in only:
        st = search_real.digits_study()
        w("## (b) the demo's digits study, in process (true score: mean of 10 fresh "
              "seeds)\n")
        real_table(a.xloop, st, a.digits_streams, a.digits_budget)
        if not a.no_slurm:
            slurm_digits(a.xloop, st)
    if a.only == "synthetic,gb,digits":
        write_benchmarks(time.time() - t0)


def slurm_digits(xloop, study, budget=15):
    """(b) through the real local Slurm: bench/search-slurm.sh drives `tick`."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.getuid() != 0:
        w("(b) through Slurm skipped: run as root (it takes a test cluster slot)\n")
        return
    t0 = time.time()
    r = subprocess.run([os.path.join(here, "search-slurm.sh"), os.path.abspath(xloop),
                        str(budget)], capture_output=True, text=True)
    if r.returncode:
        w(f"(b) through Slurm failed (exit {r.returncode}): {r.stderr.strip()[-400:]}\n")
        return
    trace, runs = [], 0
    for line in r.stdout.splitlines():     # "RUNS BESTCONFIG-JSON" after each tick
        n, cfg = line.split(" ", 1)
        d = json.loads(cfg)
        trace.append((int(n), study.from_xloop(d)))
    best = trace[-1][1]
    false = promo = 0
    for (_, a), (_, b) in zip(trace, trace[1:]):
        if b != a:
            promo += 1
            false += study.truth(b) < study.truth(a)
    study.save()
    w(f"(b) through the real local Slurm: `auto on --budget-runs {budget}`, nothing "
          f"but `tick`: {trace[-1][0]} runs; the chosen best {best} has true score "
          f"{study.truth(best):.4f} (baseline {study.truth(study.baseline):.4f}); "
          f"{promo} promotions, {false} false; {time.time() - t0:.0f} s\n")


if __name__ == "__main__":
    main()
