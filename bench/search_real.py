"""The search benchmark's real studies (bench/search.py imports this).

Each study is a few job.sh variables on a grid (the same grid for xloop's
`space set`, for TPE and for random search), a baseline, and a score of
(configuration, seed) computed in process by the same code as the job: the
seed changes the cross-validation folds (and the model's own randomness),
nothing else. The true score of a configuration is its mean over 10 fresh
seeds (1001..1010), never used by any method. Scores are cached by
(configuration, seed) in /var/cache/xloop/bench-search-cache.json (or
build/bench-search-cache.json when that is not writable; XLOOP_BENCH_CACHE
overrides): they are deterministic, so a cached score is the score. A
study whose score function changes needs a new name (its cache section).

- gb: scikit-learn's GradientBoostingClassifier on the bundled breast-cancer
  data, 5-fold CV accuracy. Deep trees are the baseline; the optimum needs
  shallow trees, more of them and another learning rate at once.
- digits: the demo's study (runs/digits/base/job.sh: logistic regression on
  the digits data, 5-fold CV repeated REPEATS times), with REPEATS=2.
- wine: scikit-learn's HistGradientBoostingClassifier on the bundled wine
  data, 5 variables (learning rate, iterations, leaves, minimum leaf size,
  L2), 5-fold CV accuracy. 178 samples: every run is noisy.
- diabetes (metric.goal min): scikit-learn's HistGradientBoostingRegressor
  on the bundled diabetes data (442 samples), 4 variables (learning rate,
  iterations, leaves, minimum leaf size), 5-fold CV RMSE: lower is better.
"""
import json
import math
import os
import warnings

# Machine-wide beside the chroot trees when that is writable (so a rerun from
# another checkout is cheap), else in the checkout's build/.
CACHE_PATH = os.environ.get("XLOOP_BENCH_CACHE") or (
    "/var/cache/xloop/bench-search-cache.json" if os.access("/var/cache/xloop", os.W_OK)
    else os.path.join(os.path.dirname(__file__), "..", "build", "bench-search-cache.json"))
TRUTH_SEEDS = range(1001, 1011)


def log_grid(lo, hi, steps):
    return [lo * (hi / lo) ** (i / (steps - 1)) for i in range(steps)]


def canon(x):
    """A grid value as xloop prints it (%g-like, short)."""
    if isinstance(x, str):
        return x
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}"


class Study:
    """A real study: grid, baseline, score(config, seed) with a cache."""

    def __init__(self, name, grid, baseline, spaces, fn, goal="max"):
        self.name, self.grid, self.baseline = name, grid, baseline
        self.goal = goal              # metric.goal: "min" for an error
        self.spaces = spaces          # xloop's `space set` arguments
        self.fn = fn
        self.cache = {}
        try:
            with open(CACHE_PATH) as f:
                self.cache = json.load(f).get(name, {})
        except (OSError, ValueError):
            pass
        self.dirty = 0
        self.new = {}                 # computed here since the cache was read
        self.autosave = True          # off in the bench's workers: one writer

    def key(self, cfg, seed):
        return ",".join(f"{v}={canon(cfg[v])}" for v in sorted(cfg)) + f";{seed}"

    def score(self, cfg, seed):
        k = self.key(cfg, seed)
        if k not in self.cache:
            self.cache[k] = self.new[k] = self.fn(cfg, seed)
            self.dirty += 1
            if self.autosave and self.dirty >= 20:
                self.save()
        return self.cache[k]

    def truth(self, cfg):
        return sum(self.score(cfg, s) for s in TRUTH_SEEDS) / len(TRUTH_SEEDS)

    def merge(self, entries):
        """Scores another process computed."""
        self.cache.update(entries)
        self.dirty += len(entries)

    def save(self):
        try:
            with open(CACHE_PATH) as f:
                allc = json.load(f)
        except (OSError, ValueError):
            allc = {}
        # merged: another run on the same study may have saved scores since
        allc.setdefault(self.name, {}).update(self.cache)
        self.cache = allc[self.name]
        os.makedirs(os.path.dirname(CACHE_PATH), exist_ok=True)
        tmp = f"{CACHE_PATH}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(allc, f)
        os.replace(tmp, CACHE_PATH)
        self.dirty = 0

    def from_xloop(self, d):
        """xloop's configuration (canonical strings) on this study's grid."""
        out = {}
        for v, vals in self.grid.items():
            s = d[v]
            for x in vals:
                if canon(x) == s or (not isinstance(x, str) and
                                     math.isclose(float(s), float(x), rel_tol=1e-4)):
                    out[v] = x
                    break
            else:
                raise ValueError(f"{v}={s} is not on the grid")
        return out


def gb_score(cfg, seed):
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    global _BC
    try:
        X, y = _BC
    except NameError:
        X, y = _BC = load_breast_cancer(return_X_y=True)
    model = GradientBoostingClassifier(
        n_estimators=int(cfg["N_ESTIMATORS"]), learning_rate=float(cfg["LEARNING_RATE"]),
        max_depth=int(cfg["MAX_DEPTH"]), subsample=float(cfg["SUBSAMPLE"]),
        max_features="sqrt", random_state=seed)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    return float(cross_val_score(model, X, y, cv=folds).mean())


def digits_score(cfg, seed):
    """The same computation as runs/digits/base/job.sh."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    global _DG
    try:
        X, y = _DG
    except NameError:
        X, y = _DG = load_digits(return_X_y=True)
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=seed)
    scores = []
    for train, test in folds.split(X, y):
        model = LogisticRegression(C=float(cfg["C"]), max_iter=int(cfg["MAX_ITER"]),
                                   solver="lbfgs")
        if cfg["SCALE"] == "yes":
            model = make_pipeline(StandardScaler(), model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X[train], y[train])
        scores.append(float(model.score(X[test], y[test])))
    return sum(scores) / len(scores)


def gb_study():
    grid = {"N_ESTIMATORS": [20, 40, 80, 160],
            "LEARNING_RATE": log_grid(0.01, 1, 7),
            "MAX_DEPTH": [1, 2, 3, 4, 5, 6],
            "SUBSAMPLE": [0.5, 0.7, 0.85, 1]}
    base = {"N_ESTIMATORS": 40, "LEARNING_RATE": grid["LEARNING_RATE"][3],
            "MAX_DEPTH": 5, "SUBSAMPLE": 1}
    spaces = ["N_ESTIMATORS=20,40,80,160", "LEARNING_RATE=0.01..1:log:steps=7",
              "MAX_DEPTH=1..6:int", "SUBSAMPLE=0.5,0.7,0.85,1"]
    return Study("gb", grid, base, spaces, gb_score)


def digits_study():
    grid = {"C": log_grid(0.001, 10, 9), "MAX_ITER": [25, 50, 100, 200],
            "SCALE": ["no", "yes"]}
    base = {"C": 1, "MAX_ITER": 200, "SCALE": "yes"}
    spaces = ["C=0.001..10:log", "MAX_ITER=25,50,100,200", "SCALE=no,yes"]
    return Study("digits", grid, base, spaces, digits_score)


def wine_score(cfg, seed):
    from sklearn.datasets import load_wine
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    global _WN
    try:
        X, y = _WN
    except NameError:
        X, y = _WN = load_wine(return_X_y=True)
    model = HistGradientBoostingClassifier(
        learning_rate=float(cfg["LEARNING_RATE"]), max_iter=int(cfg["MAX_ITER"]),
        max_leaf_nodes=int(cfg["MAX_LEAF_NODES"]),
        min_samples_leaf=int(cfg["MIN_SAMPLES_LEAF"]),
        l2_regularization=float(cfg["L2"]), random_state=seed)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    return float(cross_val_score(model, X, y, cv=folds).mean())


def wine_study():
    grid = {"LEARNING_RATE": log_grid(0.01, 1, 7),
            "MAX_ITER": [25, 50, 100, 200],
            "MAX_LEAF_NODES": [3, 7, 15, 31],
            "MIN_SAMPLES_LEAF": [2, 5, 10, 20, 40],
            "L2": [0, 0.01, 0.1, 1, 10]}
    base = {"LEARNING_RATE": grid["LEARNING_RATE"][2], "MAX_ITER": 50,
            "MAX_LEAF_NODES": 31, "MIN_SAMPLES_LEAF": 20, "L2": 0}
    spaces = ["LEARNING_RATE=0.01..1:log:steps=7", "MAX_ITER=25,50,100,200",
              "MAX_LEAF_NODES=3,7,15,31", "MIN_SAMPLES_LEAF=2,5,10,20,40",
              "L2=0,0.01,0.1,1,10"]
    return Study("wine", grid, base, spaces, wine_score)


def diabetes_score(cfg, seed):
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import KFold, cross_val_score
    global _DB
    try:
        X, y = _DB
    except NameError:
        X, y = _DB = load_diabetes(return_X_y=True)
    model = HistGradientBoostingRegressor(
        learning_rate=float(cfg["LEARNING_RATE"]), max_iter=int(cfg["MAX_ITER"]),
        max_leaf_nodes=int(cfg["MAX_LEAF_NODES"]),
        min_samples_leaf=int(cfg["MIN_SAMPLES_LEAF"]), random_state=seed)
    folds = KFold(n_splits=5, shuffle=True, random_state=seed)
    mse = -cross_val_score(model, X, y, cv=folds, scoring="neg_mean_squared_error").mean()
    return float(math.sqrt(mse))


def diabetes_study():
    grid = {"LEARNING_RATE": log_grid(0.01, 1, 7),
            "MAX_ITER": [25, 50, 100, 200],
            "MAX_LEAF_NODES": [3, 7, 15, 31],
            "MIN_SAMPLES_LEAF": [2, 5, 10, 20, 40]}
    base = {"LEARNING_RATE": grid["LEARNING_RATE"][4], "MAX_ITER": 100,
            "MAX_LEAF_NODES": 31, "MIN_SAMPLES_LEAF": 20}
    spaces = ["LEARNING_RATE=0.01..1:log:steps=7", "MAX_ITER=25,50,100,200",
              "MAX_LEAF_NODES=3,7,15,31", "MIN_SAMPLES_LEAF=2,5,10,20,40"]
    return Study("diabetes", grid, base, spaces, diabetes_score, goal="min")


def mlp_score(cfg, seed):
    """A small network: one hidden layer, Adam, on the digits data scaled to [0, 1]."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neural_network import MLPClassifier
    global _MD
    try:
        X, y = _MD
    except NameError:
        X, y = load_digits(return_X_y=True)
        X, y = _MD = X / 16.0, y
    model = MLPClassifier(
        hidden_layer_sizes=(int(cfg["HIDDEN"]),), learning_rate_init=float(cfg["LR"]),
        alpha=float(cfg["ALPHA"]), batch_size=int(cfg["BATCH"]),
        max_iter=int(cfg["EPOCHS"]), random_state=seed)
    folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # an epoch budget that stops short of convergence
        return float(cross_val_score(model, X, y, cv=folds).mean())


def mlp_study():
    grid = {"LR": log_grid(0.0001, 0.1, 7),
            "ALPHA": log_grid(0.00001, 0.1, 5),
            "HIDDEN": [16, 32, 64, 128],
            "BATCH": [32, 64, 128, 256],
            "EPOCHS": [5, 10, 20, 40]}
    base = {"LR": grid["LR"][2], "ALPHA": grid["ALPHA"][1], "HIDDEN": 32, "BATCH": 128,
            "EPOCHS": 10}
    spaces = ["LR=0.0001..0.1:log:steps=7", "ALPHA=0.00001..0.1:log:steps=5",
              "HIDDEN=16,32,64,128", "BATCH=32,64,128,256", "EPOCHS=5,10,20,40"]
    return Study("mlp", grid, base, spaces, mlp_score)
