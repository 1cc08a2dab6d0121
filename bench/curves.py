#!/usr/bin/python3
"""Learning curves of real training for the stop benchmark (issue 46):
made once, committed small in bench/curves/, replayed by
`./build.sh bench stop` (bench/stop.py). Rerun it to make them again:

    nice -n 10 /usr/bin/python3 bench/curves.py [--seeds N] [--epochs N] [--jobs N]

Each study is scikit-learn's MLPClassifier (Debian's python3-sklearn),
trained with SGD (Nesterov momentum 0.9) by partial_fit, one call an epoch,
on one of the bundled data sets (digits, wine, breast cancer), standardized.
A seed changes the split into training and validation (stratified, a quarter
held out), the initial weights and the order of the minibatches, nothing
else. After each epoch the curve records the validation accuracy (NaN once
the weights are not finite: the loss diverged, as a real job would report it)
and the epoch's CPU seconds. The grid is the space autopilot searches:
four variables, every point of their product, every seed.

Out: bench/curves/NAME.json.gz, one a study:
  {"study", "data", "epochs", "seeds", "vars": {VAR: [values...]},
   "baseline": {VAR: value}, "chance",
   "runs": [{"cfg": {VAR: value}, "seed": S, "acc": [...], "sec": [...]}]}
"""
import argparse
import gzip
import json
import math
import multiprocessing
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")   # one core per fit: the machine is shared
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
OUT = os.path.join(HERE, "curves")

# the space: learning rates from slow to diverging, width, batch, L2
VARS = {"LR": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0],
        "HIDDEN": [16, 64, 128],
        "BATCH": [32, 128],
        "ALPHA": [0.0001, 0.01]}
BASELINE = {"LR": 0.01, "HIDDEN": 64, "BATCH": 128, "ALPHA": 0.0001}
DATA = {"digits": "load_digits", "wine": "load_wine", "cancer": "load_breast_cancer"}


def data(name):
    import sklearn.datasets
    return getattr(sklearn.datasets, DATA[name])(return_X_y=True)


_X = {}


def curve(job):
    """One run: (study, cfg, seed, epochs) -> its curve."""
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler
    name, cfg, seed, epochs = job
    if name not in _X:
        _X[name] = data(name)
    X, y = _X[name]
    xt, xv, yt, yv = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
    sc = StandardScaler().fit(xt)
    xt, xv = sc.transform(xt), sc.transform(xv)
    m = MLPClassifier(hidden_layer_sizes=(cfg["HIDDEN"],), solver="sgd", momentum=0.9,
                      nesterovs_momentum=True, learning_rate_init=cfg["LR"],
                      batch_size=cfg["BATCH"], alpha=cfg["ALPHA"], random_state=seed)
    classes = np.unique(y)
    acc, sec = [], []
    dead = False
    for _ in range(epochs):
        t0 = time.process_time()
        if not dead:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                try:
                    m.partial_fit(xt, yt, classes=classes)
                except (ValueError, FloatingPointError):
                    dead = True
            if not dead:
                dead = not all(np.isfinite(w).all() for w in m.coefs_) or \
                    not math.isfinite(m.loss_)
        if dead:
            acc.append(float("nan"))
        else:
            with np.errstate(all="ignore"):
                acc.append(round(float(m.score(xv, yv)), 4))
        sec.append(round(time.process_time() - t0, 4))
    return name, cfg, seed, acc, sec


def grid():
    keys = list(VARS)
    out = [{}]
    for k in keys:
        out = [dict(c, **{k: v}) for c in out for v in VARS[k]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=",".join(DATA))
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    cpu0 = time.process_time()
    for name in a.only.split(","):
        jobs = [(name, c, s, a.epochs) for c in grid() for s in range(a.seeds)]
        with multiprocessing.Pool(a.jobs) as pool:
            res = pool.map(curve, jobs, chunksize=4)
        X, y = data(name)
        counts = [int((y == c).sum()) for c in sorted(set(y.tolist()))]
        doc = {"study": name, "data": DATA[name], "epochs": a.epochs, "seeds": a.seeds,
               "vars": VARS, "baseline": BASELINE,
               "chance": round(max(counts) / len(y), 4),
               "runs": [{"cfg": c, "seed": s,
                         "acc": [None if math.isnan(v) else v for v in acc], "sec": sec}
                        for _, c, s, acc, sec in res]}
        path = os.path.join(OUT, f"{name}.json.gz")
        with gzip.GzipFile(path + ".tmp", "w", mtime=0) as f:
            f.write(json.dumps(doc, separators=(",", ":")).encode())
        os.replace(path + ".tmp", path)
        cpu = sum(sum(r[4]) for r in res)
        print(f"{name}: {len(res)} runs, {cpu / 60:.1f} min of training CPU, "
              f"{time.time() - t0:.0f} s so far -> {path} ({os.path.getsize(path)} bytes)",
              flush=True)
    print(f"done in {time.time() - t0:.0f} s (this process {time.process_time() - cpu0:.0f} s CPU)")


if __name__ == "__main__":
    main()
