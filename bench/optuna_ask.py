"""Optuna as an ask-and-tell server for the search benchmark (bench/search.py
starts it with Debian 12's python3 for Optuna 3.1, or inside the trixie tree
of bench/optuna-chroot.sh for Optuna 4.1). It computes no score: the bench
scores every trial itself, so every method sees the same objective, noise
and cache.

Protocol, one JSON document a line. In: {"sampler": "tpe"|"tpe-mv"|"gp",
"seed": S, "trials": N, "vars": [[NAME, "int", LO, HI] | [NAME, "cat",
[CHOICE...]]], "enqueue": {NAME: value}, "direction": "maximize"|"minimize"}. Then N times: out {"ask":
{NAME: value}}, in {"tell": y}. Then out {"done": true}, and the next
study (or EOF to end). The first line out is {"optuna": VERSION}.
"""
import json
import os
import sys
import warnings

# the protocol has stdout to itself: what the libraries print goes to stderr
PROTO = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
import optuna  # noqa: E402


def sampler_of(kind, seed):
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if kind == "tpe-mv":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if kind == "gp":
        return optuna.samplers.GPSampler(seed=seed)
    raise SystemExit(f"optuna_ask: unknown sampler {kind!r}")


def out(doc):
    PROTO.write(json.dumps(doc) + "\n")
    PROTO.flush()


def run(req):
    study = optuna.create_study(direction=req.get("direction", "maximize"),
                                sampler=sampler_of(req["sampler"], req["seed"]))
    if req.get("enqueue"):
        study.enqueue_trial(req["enqueue"])
    for _ in range(req["trials"]):
        trial = study.ask()
        params = {}
        for v in req["vars"]:
            if v[1] == "int":
                params[v[0]] = trial.suggest_int(v[0], v[2], v[3])
            else:
                params[v[0]] = trial.suggest_categorical(v[0], v[2])
        out({"ask": params})
        line = sys.stdin.readline()
        if not line:
            raise SystemExit("optuna_ask: EOF in a study")
        study.tell(trial, float(json.loads(line)["tell"]))
    out({"done": True})


def main():
    warnings.simplefilter("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    out({"optuna": optuna.__version__})
    for line in sys.stdin:
        if line.strip():
            run(json.loads(line))


main()
