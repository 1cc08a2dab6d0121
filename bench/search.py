#!/usr/bin/python3
"""The search benchmark (./build.sh bench search): xloop's autopilot against
Optuna's TPE and random search on a synthetic noisy objective with an
interaction, the same noise and the same number of runs (replicates count
as runs), over several random streams. For each method and budget it reports
the true (noise-free) score of the configuration the method calls best, and
its false promotions (a new best whose true score is below the one it
replaced). xloop runs in process: `xloop test-search` drives the real
proposer (src/propose.c) and promotion rule (src/noise.c).

usage: bench/search.py [--streams N] [--budget N] [--noise SD] [--xloop PATH]
"""
import argparse
import json
import math
import random
import subprocess
import sys

M64 = (1 << 64) - 1
BASE = (3, 3, 7, 2)


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
    """The same normal deviate as src/cmd-test-search.c."""
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=5)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--xloop", default="./xloop")
    a = ap.parse_args()
    points = [p for p in (15, 30, 60) if p <= a.budget]
    print(f"# search benchmark: {a.streams} streams, noise sd {a.noise}, "
          f"budgets {points}; true score of the chosen best (optimum 0.9); on the\n"
          f"# flat objective every promotion is a false one (nothing is better)\n")
    for obj in ("peak", "flat"):
        print(f"## objective {obj}\n")
        print("| method | " + " | ".join(f"{p} runs (mean, min)" for p in points)
              + " | false promotions | promotions | runs used |")
        print("|---" * (len(points) + 4) + "|")
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
            print(f"| {method} | " + " | ".join(cells) + f" | {false} | {promo} | "
                  f"{min(used)}-{max(used)} |")
        print()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
