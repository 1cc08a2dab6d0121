"""Optuna as an ask-and-tell server for the search benchmark (bench/search.py
starts it with Debian 12's python3 for Optuna 3.1, or inside the trixie tree
of bench/optuna-chroot.sh for Optuna 4.1). It computes no score: the bench
scores every trial itself, so every method sees the same objective, noise
and cache.

Protocol, one JSON document a line. In: {"sampler": "tpe"|"tpe-liar"|"tpe-mv"|"gp",
"seed": S, "trials": N, "lanes": L (default 1), "vars": [[NAME, "int", LO, HI] | [NAME, "cat",
[CHOICE...]]], "enqueue": {NAME: value}, "direction": "maximize"|"minimize"}. Then N times: out {"ask":
{NAME: value}}, in {"tell": y}. Then out {"done": true}, and the next
study (or EOF to end). The first line out is {"optuna": VERSION}. With
lanes L, asynchronous: L asks out first, then each tell (the oldest trial
asked, first in first out) is followed by one more ask while trials remain
(tpe-liar: TPESampler with constant_liar=True, so the trials still running
count as the worst seen; gp: Optuna 4.1's GPSampler fits only the COMPLETE
trials, so the trials still running are ignored: no fantasy, no liar, and
nothing keeps it from asking again for a configuration in flight).
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
    if kind == "tpe-liar":
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True)
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
    pending, asked, lanes = [], 0, max(1, int(req.get("lanes", 1)))
    while asked < req["trials"] or pending:
        while asked < req["trials"] and len(pending) < lanes:
            trial = study.ask()
            params = {}
            for v in req["vars"]:
                if v[1] == "int":
                    params[v[0]] = trial.suggest_int(v[0], v[2], v[3])
                else:
                    params[v[0]] = trial.suggest_categorical(v[0], v[2])
            out({"ask": params})
            pending.append(trial)
            asked += 1
        line = sys.stdin.readline()
        if not line:
            raise SystemExit("optuna_ask: EOF in a study")
        study.tell(pending.pop(0), float(json.loads(line)["tell"]))
    out({"done": True})


def main():
    warnings.simplefilter("ignore")
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    out({"optuna": optuna.__version__})
    for line in sys.stdin:
        if line.strip():
            run(json.loads(line))


main()
