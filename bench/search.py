#!/usr/bin/python3
"""The search benchmark (./build.sh bench search): xloop's autopilot against
Optuna's samplers and random search, the same objectives, the same noise and
the same number of runs (replicates count as runs), over several random
streams. Methods: xloop (`xloop test-search`: the real proposer and promotion
rule), TPE of Debian 12's Optuna 3.1 (host python3-optuna), TPE with
multivariate=True and GPSampler of trixie's Optuna 4.1 (in the tree of
bench/optuna-chroot.sh, built when missing and cached), and random search.
The Optuna samplers run as ask-and-tell servers (bench/optuna_ask.py); the
bench scores every trial itself, so every method sees the same scores.

Objectives: (a) a synthetic noisy objective with an interaction, and a flat
one (nothing to find: every promotion is a false one); (b) the demo's digits
study, (c) gradient boosting on breast-cancer data and (d) gradient boosting
with 5 variables on the wine data, scored in process by the jobs' own code
(bench/search_real.py, cached in build/bench-search-cache.json); (b) also
through the real local Slurm (bench/search-slurm.sh: `auto on`, nothing but
`tick`). For each method and budget it reports the true score (noise-free, or
the mean of 10 fresh seeds) of the configuration the method calls best, its
false promotions (a new best whose true score is below the one it replaced),
and for xloop the run at which its best first moved to a truly better
configuration; then whether the goal of issue 26 is met, cell by cell.

usage: bench/search.py [--streams N] [--flat-streams N] [--budget N]
       [--noise SD] [--xloop PATH] [--real-streams N] [--real-budget N]
       [--digits-budget N] [--jobs N] [--only LIST] [--no-slurm]
       [--lanes-studies LIST] [--lanes-streams N] [--lanes-budget N]
       [--lanes-real-streams N] [--lanes-real-budget N]

--only lanes3 (in the default list): section (g), 3 lanes, on the studies of
--lanes-studies (peak and the real ones: digits, gb, wine, diabetes, mlp),
against TPE with constant liar (with tpe-3.1 among --methods) and GPSampler
(gp-4.1), each asked asynchronously as xloop is. --only mlp: (h), a small
network on the digits data, 5 variables with epochs among them.
"""
import argparse
import hashlib
import json
import math
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("OMP_NUM_THREADS", "1")   # one core per fit: the machine is shared
import search_real  # noqa: E402
# bench/ holds a timeit.py of its own: keep it from shadowing the standard one
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

M64 = (1 << 64) - 1
BASE = (3, 3, 7, 2)
POINTS = (15, 30, 60)
RIVALS = ("tpe-3.1", "tpe-mv-4.1", "gp-4.1", "random")   # the goal's rivals (issue 33: random too)
METHODS = ("xloop",) + RIVALS
SAMPLER = {"tpe-3.1": ("host", "tpe"), "tpe-mv-4.1": ("trixie", "tpe-mv"),
           "gp-4.1": ("trixie", "gp"), "tpe-liar-3.1": ("host", "tpe-liar")}
LANES = 1          # runs in flight (the lanes section: 3; set before forking)
OUT = []
GOAL = []          # (objective, budget, met, text)


def w(text=""):
    """Print a line of the report and keep it for BENCHMARKS.md."""
    print(text, flush=True)
    OUT.append(text)


def write_benchmarks(elapsed):
    """Replace BENCHMARKS.md's search section (or add it before ## Method)."""
    path = os.path.join(HERE, "..", "BENCHMARKS.md")
    head = "## 5. Search: autopilot against Optuna (TPE, GPSampler) and random search"
    body = [head, "",
            f"Written by `./build.sh bench search` (bench/search.py, {elapsed / 60:.1f} min "
            f"this run, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"`./build.sh bench` keeps this section). " + SECTION_INTRO, ""]
    body += [ln.replace("## ", "### ", 1) if ln.startswith("## ") else ln
             for ln in OUT if not ln.startswith("# search benchmark")]
    try:
        text = open(path).read()
    except OSError:
        return
    lines = text.split("\n")
    i = next((k for k, ln in enumerate(lines) if ln.startswith("## 5. Search")), None)
    if i is not None:
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
    "(xloop's replicates count as runs); a cell is the true score (noise-free, or the "
    "mean of 10 fresh seeds, 1001..1010, that no method sees) of what the method calls "
    "best after that many runs, as mean and minimum over the streams. Methods: xloop "
    "(`xloop test-search`: the real proposer and choice of the best, in process; it calls "
    "best the model's pick, moved at P >= 0.95, `xloop help best`, docs/search.md); `tpe-3.1`, Optuna 3.1's "
    "TPESampler (Debian 12's python3-optuna); `tpe-mv-4.1`, Optuna 4.1's TPESampler with "
    "multivariate=True, and `gp-4.1`, Optuna 4.1's GPSampler (trixie's python3-optuna "
    "4.1.0 with python3-torch and python3-scipy, in a trixie tree that "
    "bench/optuna-chroot.sh builds with mmdebstrap and caches); and random search. "
    "The Optuna samplers and random search call best the highest single score seen, "
    "start from the baseline (an enqueued first trial) and score trial k of stream s "
    "on a fresh seed (s*100+k on the real studies; noise drawn from (stream, k, x) on "
    "the synthetic ones); xloop's changes keep their parent's seed and its "
    "replicates take fresh ones, as autopilot does. A promotion is a change of the "
    "best; a false one is a new best whose true score is below the one it replaced. "
    "\"Moved\" is the run after which xloop's best first had a true score above the "
    "baseline's (median over the streams that moved, and how many moved by 30 runs). "
    "Real-model scores are cached by (configuration, seed) in "
    "/var/cache/xloop/bench-search-cache.json, so a rerun scores only configurations never run "
    "on that seed (with an empty cache the first run took about 40 min on this "
    "machine, shared with other builds; a rerun after a change of xloop's search "
    "rescores xloop's runs only; column s: seconds in that method's units, two at "
    "a time). (b) also runs through the real local Slurm with nothing but `tick`.")


# --- objectives -------------------------------------------------------------

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


# test-search's default --seed-corr
SEED_CORR = 0.5


def noise(stream, seed, x):
    """The same normal deviate as src/cmd/test-search.c."""
    h = splitmix64(((stream << 40) ^ (seed << 32) ^ (x[0] << 24) ^ (x[1] << 16)
                    ^ (x[2] << 8) ^ x[3]) & M64)
    h2 = splitmix64(h)
    u1 = ((h >> 11) + 1) / 9007199254740993.0
    u2 = (h2 >> 11) / 9007199254740992.0
    return math.sqrt(-2 * math.log(u1)) * math.cos(6.283185307179586 * u2)


class Synthetic:
    """(a): X1..X4 in 1..9, noise sd per run; a configuration is a tuple."""
    real = False
    sign = 1          # metric.goal max

    def __init__(self, name, sd):
        self.name, self.sd = name, sd
        self.grid = {f"X{i}": list(range(1, 10)) for i in range(1, 5)}
        self.baseline = {f"X{i + 1}": BASE[i] for i in range(4)}

    @staticmethod
    def x(cfg):
        return tuple(cfg[f"X{i}"] for i in range(1, 5))

    def score(self, cfg, stream, k):
        # as xloop test-search scores its runs: a seed's offset shared by
        # every configuration run with it (correlation SEED_CORR) plus the
        # run's own noise, the same total sd
        x = self.x(cfg)
        return (true_score(self.name, x)
                + self.sd * math.sqrt(SEED_CORR) * noise(stream, k, (0, 0, 0, 0))
                + self.sd * math.sqrt(1 - SEED_CORR) * noise(stream, k, x))

    def truth(self, cfg):
        return true_score(self.name, self.x(cfg))


class Real:
    """(b), (c), (d): a search_real.Study; trial k of stream s on seed 100s+k."""
    real = True

    def __init__(self, study):
        self.study = study
        self.name, self.grid, self.baseline = study.name, study.grid, study.baseline
        self.sign = -1 if study.goal == "min" else 1

    def score(self, cfg, stream, k):
        return self.study.score(cfg, 100 * stream + k)

    def truth(self, cfg):
        return self.study.truth(cfg)


def frozen(cfg):
    return tuple(sorted((k, search_real.canon(v)) for k, v in cfg.items()))


# --- methods: each returns the configuration it calls best after 1..budget runs

def observed_trace(trials, sign=1):
    """Best observed single score (goal-signed) after each trial -> its configuration."""
    out, best = [], None
    for cfg, y in trials:
        if best is None or sign * y > sign * best[1]:
            best = (cfg, y)
        out.append(best[0])
    return out


def is_cat(vals):
    return all(isinstance(x, str) for x in vals)


_SERVERS = {}


def optuna_server(where):
    """This process's ask-and-tell server for Optuna 3.1 (host) or 4.1 (trixie)."""
    if where in _SERVERS:
        return _SERVERS[where]
    if where == "host":   # -I: not bench/ (its timeit.py) on sys.path
        argv = ["/usr/bin/python3", "-I", os.path.join(HERE, "optuna_ask.py")]
    else:
        # a /proc of its own for torch, gone with the process
        argv = ["unshare", "--mount", "--pid", "--fork", f"--mount-proc={TRIXIE}/proc",
                "chroot", TRIXIE, "/usr/bin/python3", "-I", "/opt/xloop-bench/optuna_ask.py"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    os.makedirs(os.path.join(HERE, "..", "build"), exist_ok=True)
    log = open(os.path.join(HERE, "..", "build", "bench-optuna.log"), "a")
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=env, stderr=log)
    hello = json.loads(p.stdout.readline())
    _SERVERS[where] = (p, hello["optuna"])
    return _SERVERS[where]


def run_optuna(method, obj, stream, budget):
    where, kind = SAMPLER[method]
    p, _ = optuna_server(where)
    vars_ = []
    for v, vals in obj.grid.items():
        vars_.append([v, "cat", vals] if is_cat(vals) else [v, "int", 0, len(vals) - 1])
    enq = {v: (obj.baseline[v] if is_cat(vals) else vals.index(obj.baseline[v]))
           for v, vals in obj.grid.items()}
    p.stdin.write(json.dumps({"sampler": kind, "seed": stream, "trials": budget,
                              "vars": vars_, "enqueue": enq, "lanes": LANES,
                              "direction": "minimize" if obj.sign < 0 else "maximize"}) + "\n")
    p.stdin.flush()
    trials, pending, asked = [], [], 0
    while len(trials) < budget:
        # LANES trials in flight; the oldest finishes first (asynchronous, as xloop's lanes)
        while asked < budget and len(pending) < LANES:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: the Optuna server ended")
            a = json.loads(line)["ask"]
            asked += 1
            pending.append(({v: (a[v] if is_cat(vals) else vals[a[v]])
                             for v, vals in obj.grid.items()}, asked))
        cfg, k = pending.pop(0)
        y = obj.score(cfg, stream, k)
        trials.append((cfg, y))
        p.stdin.write(json.dumps({"tell": y}) + "\n")
        p.stdin.flush()
    assert json.loads(p.stdout.readline()).get("done")
    return observed_trace(trials, obj.sign)


def run_random(obj, stream, budget):
    rng = random.Random(stream)
    trials = [(obj.baseline, obj.score(obj.baseline, stream, 1))]
    for k in range(2, budget + 1):
        cfg = {v: rng.choice(vals) for v, vals in obj.grid.items()}
        trials.append((cfg, obj.score(cfg, stream, k)))
    return observed_trace(trials, obj.sign)


def run_xloop_synthetic(obj, stream, budget):
    """In process (the C side draws the same noise): best_true after each run."""
    out = subprocess.run([XLOOP, "test-search", "--objective", obj.name, "--stream",
                          str(stream), "--budget", str(budget), "--noise", str(obj.sd),
                          "--seed-corr", str(SEED_CORR), "--lanes", str(LANES)],
                         check=True, capture_output=True, text=True).stdout
    by_runs = {p["runs"]: (p["best_true"], p["promotions"], p["false_promotions"],
                           p.get("ever_proven", False))
               for p in json.loads(out)["trace"]}
    last, res = (obj.truth(obj.baseline), 0, 0, False), []
    for k in range(1, budget + 1):
        last = by_runs.get(k, last)   # converged early: the best stays
        res.append(last)
    return res


def run_xloop_real(obj, stream, budget):
    st = obj.study
    base = "".join(f"{v}={search_real.canon(st.baseline[v])}\n" for v in st.grid)
    base += f"SEED={100 * stream + 1}\n"
    argv = [XLOOP, "test-search", "--external", "--baseline", base, "--budget", str(budget),
            "--goal", "min" if obj.sign < 0 else "max", "--lanes", str(LANES)]
    for sp in st.spaces:
        argv += ["--space", sp]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    trace = []
    for line in p.stdout:
        msg = json.loads(line)
        if "ask" in msg:
            a = dict(msg["ask"])
            seed = int(a.pop("SEED"))
            p.stdin.write(f"{st.score(st.from_xloop(a), seed)!r}\n")
            p.stdin.flush()
        else:
            trace.append(st.from_xloop(msg["best"]))
    p.wait()
    if p.returncode:
        raise RuntimeError(f"xloop test-search exited {p.returncode}")
    while len(trace) < budget:     # converged early: the best stays
        trace.append(trace[-1])
    return trace


# --- the pool: one unit is (method, stream) of one objective -------------------

OBJ = None       # the objective the pool's workers serve (set before forking)
XLOOP = "./xloop"
TRIXIE = None


def worker_init():
    """A pool worker: its scores go back to the parent, which alone saves."""
    if OBJ.real:
        OBJ.study.autosave = False


def unit(job):
    method, stream, budget = job
    t0 = time.time()
    if method == "xloop":
        tr = (run_xloop_real if OBJ.real else run_xloop_synthetic)(OBJ, stream, budget)
    elif method == "random":
        tr = run_random(OBJ, stream, budget)
    else:
        tr = run_optuna(method, OBJ, stream, budget)
    new = OBJ.study.new if OBJ.real else {}
    if OBJ.real:
        OBJ.study.new = {}
    return method, stream, tr, new, time.time() - t0


def truth_pair(job):
    cfg, seed = job
    return OBJ.study.key(cfg, seed), OBJ.study.score(cfg, seed)


# Each unit's trace, kept by (objective, lanes, method, stream, budget; for xloop
# the binary's hash): a later run (another method set, the tables of several
# runs together) takes it from here instead of running the unit again.
TRACES_PATH = os.environ.get("XLOOP_BENCH_TRACES") or os.path.join(
    HERE, "..", "build", "bench-search-traces.json")
XLOOP_SUM = ""


def trace_key(obj, method, stream, budget):
    tag = XLOOP_SUM if method == "xloop" else ""
    name = obj.name if obj.real else f"{obj.name}@{obj.sd:g}"    # the noise makes its scores
    return f"{name}|{LANES}|{method}|{stream}|{budget}|{tag}"


def traces_load():
    try:
        with open(TRACES_PATH) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def traces_save(new):
    """Merge new traces into the file (atomically; other runs' entries kept)."""
    allt = traces_load()
    allt.update(new)
    os.makedirs(os.path.dirname(TRACES_PATH), exist_ok=True)
    tmp = f"{TRACES_PATH}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(allt, f)
    os.replace(tmp, TRACES_PATH)


def run_objective(obj, methods, streams, budget, jobs):
    """{method: [trace per stream]} and seconds per method (CPU in the units)."""
    global OBJ
    OBJ = obj
    stored = traces_load()
    traces = {m: {} for m in methods}
    work = []
    for m in methods:
        for s in range(1, streams[m] + 1):
            k = trace_key(obj, m, s, budget)
            if k in stored:
                traces[m][s] = stored[k]
            else:
                work.append((m, s, budget))
    cost = {"gp-4.1": 0, "xloop": 1, "tpe-mv-4.1": 2, "tpe-3.1": 3, "tpe-liar-3.1": 3,
            "random": 4}
    work.sort(key=lambda j: cost[j[0]])
    secs = {m: 0.0 for m in methods}
    with multiprocessing.get_context("fork").Pool(jobs, initializer=worker_init) as pool:
        for m, s, tr, new, dt in pool.imap_unordered(unit, work):
            traces[m][s] = tr
            secs[m] += dt
            traces_save({trace_key(obj, m, s, budget): tr})
            if new:        # saved as each unit ends: a killed run keeps its scores
                obj.study.merge(new)
                obj.study.save()
        if obj.real:
            obj.study.save()
            cfgs = {}      # every configuration any method called best
            for m in methods:
                for tr in traces[m].values():
                    for cfg in tr:
                        cfgs[frozen(cfg)] = cfg
            pairs = [(cfgs[f], seed) for f in sorted(cfgs) for seed in search_real.TRUTH_SEEDS
                     if obj.study.key(cfgs[f], seed) not in obj.study.cache]
            for i, (k, y) in enumerate(pool.imap_unordered(truth_pair, pairs, chunksize=2)):
                obj.study.cache[k] = y
                if i % 50 == 49:
                    obj.study.save()
            obj.study.save()
    return {m: [traces[m][s] for s in sorted(traces[m])] for m in methods}, secs


# --- scoring and the tables ----------------------------------------------------

def summarize(obj, method, traces, budget):
    """Per stream: true scores at the points, promotions, false ones, moved-at."""
    base = obj.truth(obj.baseline)
    rows = []
    for tr in traces:
        proven = False
        if method == "xloop" and not obj.real:
            truths = [t[0] for t in tr]
            promo, false, proven = tr[-1][1], tr[-1][2], tr[-1][3]
        else:
            truths = [obj.truth(c) for c in tr]
            promo = false = 0
            for a, b, ta, tb in zip(tr, tr[1:], truths, truths[1:]):
                if frozen(a) != frozen(b):
                    promo += 1
                    false += obj.sign * tb < obj.sign * ta - 1e-12
        moved = next((k + 1 for k, t in enumerate(truths)
                      if obj.sign * t > obj.sign * base + 1e-12), None)
        rows.append({"at": [truths[p - 1] for p in POINTS if p <= budget],
                     "promo": promo, "false": false, "moved": moved, "proven": proven})
    return rows


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if n == 0 else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


def table(obj, key, label, res, budget, secs, goal=True, flat=False, rivals=RIVALS):
    points = [p for p in POINTS if p <= budget]
    w(f"## {label}\n")
    w("| method | streams | " + " | ".join(f"{p} runs (mean, min)" for p in points)
      + " | promotions (streams promoting) | false | moved (median; by 30 runs) | s |")
    w("|---" * (len(points) + 6) + "|")
    means = {}
    for m, traces in res.items():
        rows = summarize(obj, m, traces, budget)
        n = len(rows)
        means[m] = [sum(r["at"][i] for r in rows) / n for i in range(len(points))]
        cells = [f"{means[m][i]:.4f}, {min(r['at'][i] for r in rows):.4f}"
                 for i in range(len(points))]
        promoting = sum(r["promo"] > 0 for r in rows)
        moved = "-"
        if m == "xloop":
            mv = [r["moved"] for r in rows if r["moved"] is not None]
            by30 = sum(1 for x in mv if x <= 30)
            moved = (f"{median(mv):g}; {by30} of {n}" if mv else f"never; 0 of {n}")
            means["xloop-by30"] = (by30, n)
            means["xloop-promoting"] = (promoting, n)
            means["xloop-proven"] = (sum(bool(r["proven"]) for r in rows), n)
        w(f"| {m} | {n} | " + " | ".join(cells) + f" | {sum(r['promo'] for r in rows)} "
          f"({promoting}) | {sum(r['false'] for r in rows)} | {moved} | {secs[m]:.0f} |")
    if "xloop" in res and goal:
        # xloop's difference to each rival, stream by stream (same stream, same noise)
        xr = summarize(obj, "xloop", res["xloop"], budget)
        w("\nxloop's lead over each rival's pick, per stream, in the goal's direction "
          "(positive: xloop's is better; mean, min, standard error):\n")
        w("| rival | " + " | ".join(f"{p} runs" for p in points) + " |")
        w("|---" * (len(points) + 1) + "|")
        for m in res:
            if m == "xloop":
                continue
            rr = summarize(obj, m, res[m], budget)
            k = min(len(xr), len(rr))
            cells = []
            for i in range(len(points)):
                d = [obj.sign * (xr[j]["at"][i] - rr[j]["at"][i]) for j in range(k)]
                mu = sum(d) / k
                se = (sum((x - mu) ** 2 for x in d) / (k - 1) / k) ** 0.5 if k > 1 else 0
                cells.append(f"{mu:+.4f}, {min(d):+.4f}, {se:.4f}")
            w(f"| {m} | " + " | ".join(cells) + " |")
    line = f"\nthe baseline's true score {obj.truth(obj.baseline):.4f}"
    if "xloop" in res and len(res["xloop"]) <= 30:
        mv = [r["moved"] for r in summarize(obj, "xloop", res["xloop"], budget)]
        line += ("; xloop's best first moved to a truly better configuration after run "
                 + ", ".join("never" if x is None else str(x) for x in mv) + " (per stream)")
    w(line + "\n")
    if goal and "xloop" in means:
        # issue 43: met when xloop's mean is at least the strongest rival's less one
        # standard error of the per-stream difference (the same streams)
        xr = summarize(obj, "xloop", res["xloop"], budget)
        for i, p in enumerate(points):
            cand = [(means[m][i], m) for m in rivals if m in means]
            if not cand:
                continue
            top, who = max(cand) if obj.sign > 0 else min(cand)
            rr = summarize(obj, who, res[who], budget)
            k = min(len(xr), len(rr))
            d = [obj.sign * (xr[j]["at"][i] - rr[j]["at"][i]) for j in range(k)]
            mu = sum(d) / k
            se = (sum((x - mu) ** 2 for x in d) / (k - 1) / k) ** 0.5 if k > 1 else 0
            GOAL.append((key, f"{p} runs", mu >= -se - 1e-12,
                         f"xloop {means['xloop'][i]:.4f} vs {who} {top:.4f}: lead "
                         f"{mu:+.4f} ± {se:.4f} ({k} streams)"))
    if flat:
        k, n = means["xloop-promoting"]
        GOAL.append(("(a) flat", f"{budget} runs", k <= 0.10 * n,
                     f"{k} of {n} xloop streams move their best ({100 * k / n:.1f}%, "
                     f"goal ≤ 10%)"))
        k, n = means["xloop-proven"]
        GOAL.append(("(a) flat", f"{budget} runs", k <= 0.05 * n,
                     f"{k} of {n} xloop streams label their best confirmed "
                     f"({100 * k / n:.1f}%, goal ≤ 5%)"))
    return means


def early_one(argv):
    """One in-process stream of `xloop test-search` (the early-study harnesses)."""
    out = subprocess.run([XLOOP, "test-search"] + argv, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["trace"]


def early(a):
    """
    The first hours of a study (issue 43), xloop alone, in process: the flat
    harness and the plain-lead harness in 2, 5 and 8 variables. A seed-sd is
    the sd of one run's score about its configuration's true score (--noise);
    same-seed runs correlate 0.5.
    """
    pool = multiprocessing.Pool(a.jobs)
    w("## (f) the first hours of a study: flat and plain-lead harnesses in 2, 5 and 8 "
      "variables (xloop alone, in process)\n")
    w(f"Flat: every configuration truly scores 0.9; {a.flat_streams} streams of "
      f"{a.budget} runs; a stream moves when its best ever changes, labels when the "
      "paired test ever labels a configuration. Plain lead: every configuration scores "
      "0.9 but one, 3 seed-sds better, the first new configuration from run 4 (or 10) on; "
      f"{a.lead_streams} streams of 30 runs; \"paired\": the first point at which it has "
      "2 runs on seeds the baseline has (streams that never got there count as misses).\n")
    w("| harness | variables | streams | measured | goal | met |")
    w("|---|---|---|---|---|---|")
    for d in (2, 5, 8):
        t0 = time.time()
        traces = pool.map(early_one, [["--objective", "flat", "--vars", str(d), "--budget",
                                       str(a.budget), "--stream", str(s), "--noise",
                                       str(a.noise)] for s in range(1, a.flat_streams + 1)])
        n = len(traces)
        moved = sum(t[-1]["promotions"] > 0 for t in traces)
        lab = sum(t[-1]["ever_any_proven"] for t in traces)
        for what, k, goal in (("move their best", moved, 0.10), ("label anything", lab, 0.05)):
            met = k <= goal * n
            w(f"| flat | {d} | {n} | {k} {what} ({100 * k / n:.1f}%; {time.time() - t0:.0f} s) "
              f"| ≤ {100 * goal:.0f}% | {'met' if met else 'not met'} |")
            GOAL.append((f"(f) flat, {d} variables", f"{a.budget} runs", met,
                         f"{k} of {n} streams {what}"))
    for at in (4, 10):
        for d in (2, 5, 8):
            traces = pool.map(early_one, [["--objective", "lead", "--vars", str(d), "--lead-at",
                                           str(at), "--budget", "30", "--stream", str(s),
                                           "--noise", str(a.noise)]
                                          for s in range(1, a.lead_streams + 1)])
            n = len(traces)
            paired = sum(next((e["best_is_lead"] for e in t if e["lead_common"] >= 2), False)
                         for t in traces)
            at15 = sum(t[min(14, len(t) - 1)]["best_is_lead"] for t in traces)
            at30 = sum(t[-1]["best_is_lead"] for t in traces)
            for what, k, goal in (("after its 2nd paired run", paired, 0.80),
                                  ("at run 15", at15, 0.95), ("at run 30", at30, None)):
                met = goal is None or k >= goal * n
                w(f"| lead from run {at} | {d} | {n} | the best {what} in {k} "
                  f"({100 * k / n:.0f}%) | {'≥ %.0f%%' % (100 * goal) if goal else '-'} | "
                  f"{'met' if met else 'not met'} |")
                if goal:
                    GOAL.append((f"(f) lead from run {at}, {d} variables", what, met,
                                 f"{k} of {n} streams"))
    pool.close()
    w("")


def lanes3(a, methods, studies):
    """
    (g) 3 lanes (issue 43): 3 runs in flight, asynchronous: when the oldest
    finishes its score is told and one new run is asked while 2 still run;
    xloop (`test-search --lanes 3`: pending runs fantasized at the model's
    mean) against Optuna 3.1's TPE with constant_liar=True asked the same way.
    Met: xloop's mean at least the rival's less one standard error of the
    per-stream difference.
    """
    global LANES
    LANES = 3
    ms = [m for m in ("xloop", "tpe-liar-3.1", "gp-4.1") if m in methods or
          (m == "tpe-liar-3.1" and "tpe-3.1" in methods)]
    w("## (g) 3 lanes: 3 runs in flight, a freed lane gets one new run while 2 still run "
      "(xloop against Optuna 3.1's TPE with constant liar and Optuna 4.1's GPSampler, "
      "asked the same way)\n")
    for name in a.lanes_studies.split(","):
        if name == "peak":
            obj, n, budget = Synthetic("peak", a.noise), a.lanes_streams, a.lanes_budget
            label = f"(g) peak on 3 lanes, noise sd {a.noise}"
        else:
            obj, n, budget = Real(studies[name][0]()), a.lanes_real_streams, a.lanes_real_budget
            label = f"(g) {name} on 3 lanes (true score: the mean of 10 fresh seeds)"
        t1 = time.time()
        res, secs = run_objective(obj, ms, {m: n for m in ms}, budget, a.jobs)
        table(obj, f"(g) {name}, 3 lanes", label, res, budget, secs,
              rivals=("tpe-liar-3.1", "gp-4.1"))
        if obj.real:
            w(f"({name} on 3 lanes: {time.time() - t1:.0f} s wall, {len(obj.study.cache)} "
              "cached scores)\n")
    LANES = 1


def main():
    global XLOOP, TRIXIE, XLOOP_SUM
    t0 = time.time()
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=20)
    ap.add_argument("--flat-streams", type=int, default=300)
    ap.add_argument("--rival-flat-streams", type=int, default=10)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--xloop", default="./xloop")
    ap.add_argument("--real-streams", type=int, default=10)
    ap.add_argument("--real-budget", type=int, default=60)
    ap.add_argument("--digits-budget", type=int, default=30)
    ap.add_argument("--mlp-budget", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-slurm", action="store_true")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--lead-streams", type=int, default=100)
    ap.add_argument("--lanes-studies", default="peak,wine")
    ap.add_argument("--lanes-streams", type=int, default=20)
    ap.add_argument("--lanes-budget", type=int, default=60)
    ap.add_argument("--lanes-real-streams", type=int, default=5)
    ap.add_argument("--lanes-real-budget", type=int, default=30)
    ap.add_argument("--only", default="peak,flat,early,digits,gb,wine,diabetes,mlp,lanes3")
    a = ap.parse_args()
    XLOOP = os.path.abspath(a.xloop)
    with open(XLOOP, "rb") as f:
        XLOOP_SUM = hashlib.sha256(f.read()).hexdigest()[:12]
    only = a.only.split(",")
    methods = [m for m in a.methods.split(",") if m in METHODS]
    if only == ["lanes3"]:     # the lanes section: xloop, TPE with constant liar, GPSampler
        methods = [m for m in methods if m in ("xloop", "tpe-3.1", "gp-4.1")]
    if any(SAMPLER.get(m, ("",))[0] == "trixie" for m in methods):
        # XLOOP_BENCH_TRIXIE: a tree to use as it is (one whose build is still
        # byte-compiling, say); otherwise bench/optuna-chroot.sh's, built when missing
        TRIXIE = os.environ.get("XLOOP_BENCH_TRIXIE") or subprocess.run(
            [os.path.join(HERE, "optuna-chroot.sh")], check=True, stdout=subprocess.PIPE,
            text=True).stdout.strip()
        os.makedirs(f"{TRIXIE}/opt/xloop-bench", exist_ok=True)
        shutil.copy(os.path.join(HERE, "optuna_ask.py"), f"{TRIXIE}/opt/xloop-bench/")
    vers = {}      # only the Optunas a chosen method runs on are asked
    for where in ("host", "trixie"):
        if any(SAMPLER.get(m, ("",))[0] == where for m in methods):
            vers[where] = optuna_server(where)[1]
    for p, _ in _SERVERS.values():     # the pool's workers start their own
        p.stdin.close()
        p.wait()
    _SERVERS.clear()
    w(f"# search benchmark: noise sd {a.noise}, budgets {list(POINTS)}; Optuna "
      + (", ".join(f"{v} ({k})" for k, v in vers.items()) or "not run") + "\n")
    w(f"Optuna versions measured: {', '.join(f'{v} ({k})' for k, v in vers.items()) or 'none'}; "
      f"{a.jobs} units at a time; xloop {os.path.relpath(XLOOP, os.path.join(HERE, '..'))}.\n")
    if "peak" in only:
        obj = Synthetic("peak", a.noise)
        res, secs = run_objective(obj, methods, {m: a.streams for m in methods},
                                  a.budget, a.jobs)
        table(obj, "(a) peak", "(a) peak: 4 integer variables, a ridge (optimum 0.9), noise sd "
              f"{a.noise}", res, a.budget, secs)
    if "flat" in only:
        obj = Synthetic("flat", a.noise)
        n = {m: (a.flat_streams if m == "xloop" else a.rival_flat_streams) for m in methods}
        res, secs = run_objective(obj, methods, n, a.budget, a.jobs)
        table(obj, "(a) flat", f"(a) flat: nothing to find (true score 0.9 everywhere), noise sd "
              f"{a.noise}; every promotion is noise", res, a.budget, secs, goal=False,
              flat="xloop" in methods)
    if "early" in only:
        early(a)
    studies = {"digits": (search_real.digits_study, a.digits_budget,
                          "(b) the demo's digits study (logistic regression, 3 variables), "
                          "in process"),
               "gb": (search_real.gb_study, a.real_budget,
                      "(c) gradient boosting, breast cancer, 4 variables, 5-fold CV"),
               "wine": (search_real.wine_study, a.real_budget,
                        "(d) histogram gradient boosting, wine, 5 variables, 5-fold CV"),
               "diabetes": (search_real.diabetes_study, a.real_budget,
                            "(e) histogram gradient boosting regression, diabetes, 4 "
                            "variables, 5-fold CV RMSE, metric.goal min (lower is better)"),
               "mlp": (search_real.mlp_study, a.mlp_budget,
                       "(h) a small network (one hidden layer, Adam) on the digits data, 5 "
                       "variables (learning rate, weight decay, hidden size, batch size, "
                       "epochs), 3-fold CV")}
    by30 = None
    for name in ("digits", "gb", "wine", "diabetes", "mlp"):
        if name not in only:
            continue
        make, budget, label = studies[name]
        obj = Real(make())
        t1 = time.time()
        res, secs = run_objective(obj, methods, {m: a.real_streams for m in methods},
                                  budget, a.jobs)
        means = table(obj, label[:3] + " " + name, label + " (true score: the mean of 10 fresh seeds)", res,
                      budget, secs)
        w(f"({name}: {time.time() - t1:.0f} s wall, {len(obj.study.cache)} cached scores)\n")
        if name == "gb" and "xloop-by30" in means:
            by30 = means["xloop-by30"]
        if name == "digits" and not a.no_slurm:
            slurm_digits(obj.study)
    if "lanes3" in only:
        lanes3(a, methods, studies)
    if by30:
        GOAL.append(("(c) gb", "30 runs", by30[0] == by30[1],
                     f"xloop's best moved to a truly better configuration by run 30 in "
                     f"{by30[0]} of {by30[1]} streams"))
    if GOAL:
        w("## the goal (issues 26, 33), cell by cell\n")
        w("| objective | budget | met | measured |")
        w("|---|---|---|---|")
        for o, b, met, text in GOAL:
            w(f"| {o} | {b} | {'met' if met else 'not met'} | {text} |")
        w(f"\n{sum(g[2] for g in GOAL)} of {len(GOAL)} cells met.\n")
    elapsed = time.time() - t0
    w(f"whole run: {elapsed / 60:.1f} min")
    if (set(only) >= {"peak", "flat", "digits", "gb", "wine", "diabetes"}
            and set(methods) == set(METHODS)):
        write_benchmarks(elapsed)


def slurm_digits(study, budget=15):
    """(b) through the real local Slurm: bench/search-slurm.sh drives `tick`."""
    if os.getuid() != 0:
        w("(b) through Slurm skipped: run as root (it takes a test cluster slot)\n")
        return
    t0 = time.time()
    r = subprocess.run([os.path.join(HERE, "search-slurm.sh"), XLOOP, str(budget)],
                       capture_output=True, text=True)
    if r.returncode:
        w(f"(b) through Slurm failed (exit {r.returncode}): {r.stderr.strip()[-400:]}\n")
        return
    trace = []
    for line in r.stdout.splitlines():     # "RUNS BESTCONFIG-JSON" after each tick
        n, cfg = line.split(" ", 1)
        trace.append((int(n), study.from_xloop(json.loads(cfg))))
    best = trace[-1][1]
    false = promo = 0
    for (_, x), (_, y) in zip(trace, trace[1:]):
        if y != x:
            promo += 1
            false += study.truth(y) < study.truth(x)
    study.save()
    w(f"(b) through the real local Slurm: `auto on --budget-runs {budget}`, nothing "
      f"but `tick`: {trace[-1][0]} runs; the chosen best {best} has true score "
      f"{study.truth(best):.4f} (baseline {study.truth(study.baseline):.4f}); "
      f"{promo} promotions, {false} false; {time.time() - t0:.0f} s\n")


if __name__ == "__main__":
    main()
