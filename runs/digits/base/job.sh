#!/bin/bash
# The example study: 5-fold cross-validated logistic regression on
# scikit-learn's bundled digits dataset (1797 8x8 images), repeated with
# REPEATS shuffles (3: 15 fits, a few seconds per run on a CPU). It follows
# xloop's log contract: a START line with the configuration and device, one
# line per fold, FINISHED or FAILED; the score goes to
# $XLOOP_RUN_DIR/cv.json. xloop changes exactly one of the assignments
# below per run; SEED only changes the folds' shuffling (xloop space seed
# SEED: runs that differ in SEED measure the noise).
# XLOOP_RUN_ID is the same in every job of a run (attempts, segments, steps,
# Slurm requeues): a tracker given it as its run id (wandb.init(id=...,
# resume="allow"), or WANDB_RUN_ID named in xloop.json's tracker.run_id_vars)
# sees one run where Slurm saw many jobs.
# It reports each fold as an epoch in $XLOOP_RUN_DIR/progress ("epoch K
# MEAN-SO-FAR", chance 0.1 for ten classes), and stops early, with the mean
# so far in cv.json, once xloop's stop watcher writes $XLOOP_RUN_DIR/stopped
# (xloop help adopt: progress and early stop).
set -euo pipefail
C=1.0
MAX_ITER=200
SCALE=yes
SOLVER=lbfgs
REPEATS=3
SEED=0
python3 - "$C" "$MAX_ITER" "$SCALE" "$SOLVER" "$REPEATS" "$SEED" <<'PY'
import json, os, sys, warnings
c, max_iter, scale, solver, repeats, seed = sys.argv[1:7]
print(f"START model=logreg C={c} max_iter={max_iter} scale={scale} solver={solver} "
      f"repeats={repeats} seed={seed} device=cpu run_id={os.environ.get('XLOOP_RUN_ID', '')}",
      flush=True)
try:
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import RepeatedStratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=int(repeats), random_state=int(seed))
    total = 5 * int(repeats)
    scores = []
    run_dir = os.environ["XLOOP_RUN_DIR"]
    with open(os.path.join(run_dir, "progress"), "a") as p:
        p.write(f"epochs {total}\nchance 0.1\n")
    for k, (train, test) in enumerate(folds.split(X, y), 1):
        model = LogisticRegression(C=float(c), max_iter=int(max_iter), solver=solver)
        if scale == "yes":
            model = make_pipeline(StandardScaler(), model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings at small max_iter
            model.fit(X[train], y[train])
        scores.append(float(model.score(X[test], y[test])))
        print(f"fold {k}/{total} n={len(train)} acc={scores[-1]:.4f}", flush=True)
        with open(os.path.join(run_dir, "progress"), "a") as p:
            p.write(f"epoch {k} {sum(scores) / len(scores):.6f}\n")
        if os.path.exists(os.path.join(run_dir, "stopped")):
            print(f"STOPPED by xloop after fold {k}", flush=True)
            break
except Exception as e:
    print(f"FAILED {type(e).__name__}: {e}", flush=True)
    sys.exit(1)
mean = sum(scores) / len(scores)
with open(os.path.join(os.environ["XLOOP_RUN_DIR"], "cv.json"), "w") as f:
    json.dump({"score": mean, "metric": "accuracy", "folds": scores}, f)
print(f"FINISHED cv_accuracy={mean:.4f}", flush=True)
PY
