#!/usr/bin/python3
"""A synthetic study for the scale benchmark.

    synth.py DIR [RUNS] [ATTEMPTS] [--no-logs]

DIR is a study made by `xloop init` (so the schema is xloop's own). Adds
RUNS runs (default 10,000: an adopted root and one-change children, each
the child of a random recent run) and ATTEMPTS attempts (default 50,000:
1 to 9 per run, 5 on average), all finished: every attempt before a run's
last failed (infra or program), the last succeeded (3 in 4) or failed the
program way, so nothing is left for Slurm, for an automatic retry or for the
circuit breaker. One verdict event per judged attempt; the briefing and
tick marks are set past them, and every decision is marked written. The log
of every failed attempt is written (twelve lines), since the report shows
its tail; successful attempts have no log file. --no-logs writes none (a
study of 100,000 runs would write 425,000 files; status and next never
read them).
"""
import json
import os
import random
import sqlite3
import sys
import time

VARS = ["LR", "EPOCHS", "BATCH", "WD", "DROPOUT", "WARMUP", "SEED", "AUG"]


def main():
    logs = "--no-logs" not in sys.argv
    sys.argv = [a for a in sys.argv if a != "--no-logs"]
    root = os.path.abspath(sys.argv[1])
    nruns = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    natt = int(sys.argv[3]) if len(sys.argv) > 3 else 50000
    study = json.load(open(os.path.join(root, "xloop.json")))["study"]
    rnd = random.Random(11)
    db = sqlite3.connect(os.path.join(root, ".xloop", "state.db"))
    cols = {r[1] for r in db.execute("PRAGMA table_info(attempt)")}

    # attempts per run: the root has 1; the others average (natt-1)/(nruns-1)
    per = [1] + [(natt - 1) // (nruns - 1)] * (nruns - 1)
    for i in range(1, nruns - 1, 2):
        d = rnd.randint(0, min(4, per[i] - 1))
        per[i] += d
        per[i + 1] -= d
    per[-1] += natt - sum(per)
    assert sum(per) == natt and min(per) >= 1

    t = int(time.time()) - natt * 700
    runs, atts, events = [], [], []
    aid = eid = 0
    job = 1000000
    for i in range(nruns):
        rid = i + 1
        tag = "base" if i == 0 else "r%05d" % i
        d = os.path.join(root, "runs", study, tag, "slurm")
        if logs:
            os.makedirs(d, exist_ok=True)
        if i == 0:
            runs.append((rid, study, tag, None, None, None, None, None, t, "%040x" % rnd.getrandbits(160)))
        else:
            parent = 1 if i < 50 else rnd.randint(max(2, i - 200), i)
            var = VARS[i % len(VARS)]
            runs.append((rid, study, tag, parent, var, "1", str(i), "from plan entry %d" % i,
                         t, "%040x" % rnd.getrandbits(160)))
        prev_infra = False
        for n in range(1, per[i] + 1):
            aid += 1
            last = n == per[i]
            log = os.path.join(d, "attempt%d.out" % (0 if i == 0 else n))
            a = dict(id=aid, run_id=rid, n=0 if i == 0 else n,
                     token="xl%024x" % rnd.getrandbits(96),
                     phase="adopted" if i == 0 else "submitted", log_path=log,
                     intent_at=t, decided=1)
            if i == 0:
                a.update(verdict="success", verdict_reason="adopted with a hand-run cv.json",
                         score=0.5, judged_at=t)
            else:
                job += 1
                start, end = t + 5, t + 5 + rnd.randint(300, 900)
                a.update(job_id=str(job), job_sha256="%064x" % rnd.getrandbits(256),
                         partition="gpu", gres="gpu:1", cpus=4, mem="16G",
                         time_limit="04:00:00", after_job=str(job - 1),
                         submitted_at=t, started_at=start, ended_at=end, node="gpu1",
                         judged_at=end + 30)
                if prev_infra and "auto_retry" in cols:
                    a["auto_retry"] = "infra"
                ok = last and rnd.random() < 0.75
                if ok:
                    a.update(state="COMPLETED", exit_code="0:0", verdict="success",
                             score=round(0.5 + rnd.random() * 0.4, 6),
                             verdict_reason="COMPLETED 0:0, score",
                             evidence="log last line: 'FINISHED'; START names a GPU")
                    prev_infra = False
                else:
                    infra = not last and rnd.random() < 0.3
                    state, code, why = (("NODE_FAIL", "0:0", "NODE_FAIL: the node failed")
                                        if infra else rnd.choice([
                                            ("FAILED", "1:0", "FAILED (ExitCode 1:0): the job exited non-zero"),
                                            ("OUT_OF_MEMORY", "0:125", "OUT_OF_MEMORY: over --mem"),
                                            ("TIMEOUT", "0:0", "TIMEOUT: over --time")]))
                    a.update(state=state, exit_code=code, verdict="failure",
                             failure_class="infra" if infra else "program",
                             verdict_reason=why,
                             evidence="log last line: 'Traceback (most recent call last):'")
                    prev_infra = infra
                    lines = ["START lr=%d device=cuda:0\n" % i] + [
                        "epoch %d/10 loss=0.%03d\n" % (k, rnd.randint(100, 999)) for k in range(1, 9)]
                    if logs:
                        with open(log, "w") as f:
                            f.write("".join(lines))
                            f.write("Traceback (most recent call last):\n  File \"train.py\", line 88\n"
                                    "RuntimeError: CUDA error: device-side assert triggered\n")
                eid += 1
                events.append((eid, a["judged_at"], "verdict", rid, aid, a["verdict_reason"]))
                t = end + 30
            atts.append(a)
        t += 60

    db.execute("BEGIN")
    db.executemany("INSERT INTO run (id, study, tag, parent_id, var, old_value, new_value,"
                   " note, created_at, commit_id) VALUES (?,?,?,?,?,?,?,?,?,?)", runs)
    names = sorted({k for a in atts for k in a})
    missing = [k for k in names if k not in cols]
    assert not missing, "the attempt table has no column %s" % missing
    db.executemany("INSERT INTO attempt (%s) VALUES (%s)" % (", ".join(names), ", ".join("?" * len(names))),
                   [tuple(a.get(k) for k in names) for a in atts])
    db.executemany("INSERT INTO event (id, at, kind, run_id, attempt_id, detail) VALUES (?,?,?,?,?,?)", events)
    for k in ("briefing_seen", "tick_seen"):
        db.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (k, str(eid)))
    db.execute("INSERT OR REPLACE INTO kv (key, value) VALUES ('last_live', '0')")
    db.commit()
    c = db.execute("SELECT (SELECT count(*) FROM run), (SELECT count(*) FROM attempt),"
                   " (SELECT count(*) FROM attempt WHERE verdict IS NULL),"
                   " (SELECT count(*) FROM attempt WHERE verdict = 'failure')").fetchone()
    db.close()
    print(json.dumps({"runs": c[0], "attempts": c[1], "unfinished": c[2], "failed": c[3],
                      "db_bytes": os.path.getsize(os.path.join(root, ".xloop", "state.db"))}))


if __name__ == "__main__":
    main()
