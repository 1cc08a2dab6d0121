#!/usr/bin/python3
"""The chaos soak's checks, against Slurm's own records (sacct) and git.

    check.py --dir W --study-dir D --user U --since ISO --out FILE

Run as the study's user after tests/soak/soak.py. Prints one "ok - soak:"
or "not ok - soak:" line per check with its count, then
"N passed, N failed, N skipped"; writes the figures to FILE (JSON).
Exit 0 when every check passed. A job Slurm requeued (a lost node, a
preemption) has several records of one JobID in sacct -D; it is one job,
and its last record is its end. On many nodes (soak.json's "nodes") three
checks more: no attempt had two live jobs at once, every job after a
NODE_FAIL (the attempt's next segments, the run's next attempt) ran away
from the lost node, and the lost node ran runs again
after it returned.
"""
import argparse
import collections
import datetime
import json
import os
import re
import sqlite3
import subprocess
import sys

STUDY = "soak"
FINAL = {"COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "CANCELLED",
         "PREEMPTED", "BOOT_FAIL", "DEADLINE"}
INFRA = {"NODE_FAIL", "BOOT_FAIL", "PREEMPTED"}
GRACE = 30	# seconds after a fault's end that still count as its window
COMMENT = re.compile(r"^xloop:" + STUDY + r"/(?P<tag>[^#]+)#(?P<n>\d+)(?:\.(?P<k>\d+))?:(?P<tok>[^:]+)$")


def ts(s):
    if not s or s in ("Unknown", "None"):
        return None
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()


def sacct(user, since, out_path):
    """Every job record of the user since the soak began (-D: requeued and
    duplicated ids too), one dict each."""
    fields = ["JobID", "JobName", "State", "ExitCode", "Submit", "Start", "End",
              "NodeList", "Comment", "WorkDir"]
    out = subprocess.run(["sacct", "-D", "-X", "-n", "-P", "-u", user, "-S", since,
                          "-E", "now", "-o", ",".join(fields)],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    try:	# for a post-mortem (the cluster is gone by then)
        with open(os.path.join(os.path.dirname(os.path.abspath(out_path)), "sacct.txt"), "w") as f:
            f.write(out)
    except OSError:
        pass
    jobs = []
    for line in out.splitlines():
        v = line.split("|")
        if len(v) < len(fields):
            continue
        j = dict(zip(fields, v[:len(fields) - 1] + ["|".join(v[len(fields) - 1:])]))
        j["State"] = j["State"].split()[0].rstrip("+")
        j["seq"] = len(jobs)
        jobs.append(j)
    return jobs


def rec_key(j):
    """The order of one job's records in sacct -D: by start (a requeued
    job's next record starts later), then as sacct lists them."""
    return (ts(j["Start"]) or ts(j["End"]) or ts(j["Submit"]) or 0, j["seq"])


def overlaps(recs):
    """Pairs of records of different JobIDs whose Start..End overlap (a
    record still running ends now)."""
    iv = []
    for j in recs:
        s = ts(j["Start"])
        if s is None:
            continue
        e = ts(j["End"]) or datetime.datetime.now().timestamp()
        iv.append((s, e, j))
    iv.sort(key=lambda x: x[0])
    out = []
    for i, (s1, e1, j1) in enumerate(iv):
        for s2, e2, j2 in iv[i + 1:]:
            if s2 >= e1:
                break
            if j1["JobID"] != j2["JobID"]:
                out.append((j1, j2))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--study-dir", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--since", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    soak = json.load(open(os.path.join(a.dir, "soak.json")))
    res = collections.OrderedDict()
    details = collections.defaultdict(list)
    passed = failed = skipped = 0

    def report(name, count, ok, what=""):
        nonlocal passed, failed
        res[name] = count
        if ok:
            passed += 1
            print("ok - soak: %s: %s%s" % (name, count, what))
        else:
            failed += 1
            print("not ok - soak: %s: %s%s" % (name, count, what))
            for d in details[name][:15]:
                print("    " + d)

    # --- what Slurm knows ---------------------------------------------------
    jobs = sacct(a.user, a.since, a.out)
    runs = []	# run jobs with their comment parsed
    feeders = 0
    for j in jobs:
        m = COMMENT.match(j["Comment"])
        if m:
            j["tag"], j["n"] = m.group("tag"), int(m.group("n"))
            j["k"], j["tok"] = int(m.group("k") or 1), m.group("tok")
            runs.append(j)
        elif j["Comment"].startswith("xloop-feed:"):
            feeders += 1
    by_tok = collections.defaultdict(list)
    for j in runs:
        by_tok[j["tok"]].append(j)
    # a job's last record (Slurm's requeues make several of one JobID)
    last_rec = {}
    for j in runs:
        if j["JobID"] not in last_rec or rec_key(j) >= rec_key(last_rec[j["JobID"]]):
            last_rec[j["JobID"]] = j
    requeued = {i for i in last_rec if sum(1 for j in runs if j["JobID"] == i) > 1}
    nodes = soak.get("nodes") or 0
    gpus = soak.get("gpus") or 2

    # --- what xloop recorded --------------------------------------------------
    db = sqlite3.connect("file:%s/.xloop/state.db?mode=ro" % a.study_dir, uri=True, timeout=30)
    att = {}
    for r in db.execute("SELECT t.id, r.tag, t.n, t.token, coalesce(t.job_id, ''), t.phase,"
                        " t.state, t.exit_code, t.verdict, t.failure_class,"
                        " coalesce(t.verdict_reason, ''), t.score, t.decided"
                        " FROM attempt t JOIN run r ON r.id = t.run_id WHERE t.n > 0"):
        att[r[0]] = dict(zip(("id", "tag", "n", "token", "job", "phase", "state", "exit",
                              "verdict", "cls", "reason", "score", "decided"), r))
    tok_att = {a_["token"]: a_["id"] for a_ in att.values()}
    segs = collections.defaultdict(list)
    for r in db.execute("SELECT attempt_id, k, try, token, coalesce(job_id, ''), state"
                        " FROM segment ORDER BY attempt_id, k, try"):
        segs[r[0]].append({"k": r[1], "try": r[2], "token": r[3], "job": r[4], "state": r[5]})
        tok_att[r[3]] = r[0]
    # when the autopilot stopped by itself (converged, budget): no work after it
    stopped_at = db.execute("SELECT min(at) FROM event WHERE kind = 'autopilot'"
                            " AND detail LIKE 'autopilot stopped%'").fetchone()[0]
    outbox = list(db.execute("SELECT id, kind, tag, status, attempts FROM outbox"))
    integrity = db.execute("PRAGMA integrity_check").fetchall()
    db.close()

    # 1. duplicate submissions: two jobs for one token (attempt, segment and
    # try), or two jobs of one attempt and segment that both ran
    dups = 0
    for tok, js in by_tok.items():
        ids = sorted({j["JobID"] for j in js})
        if len(ids) > 1:
            dups += len(ids) - 1
            details["duplicate submissions"].append("token %s: jobs %s" % (tok, " ".join(ids)))
    ran = collections.defaultdict(set)
    for j in runs:
        if ts(j["Start"]):
            ran[(j["tag"], j["n"], j["k"])].add(j["JobID"])
    for key, ids in ran.items():
        if len(ids) > 1 and len({by for by in ids}) > 1:
            toks = {j["tok"] for j in runs if j["JobID"] in ids}
            if len(toks) > 1:
                dups += len(ids) - 1
                details["duplicate submissions"].append("%s#%d.%d ran as jobs %s" %
                                                        (key + (" ".join(sorted(ids)),)))
    report("duplicate submissions", dups, dups == 0,
           " (%d run jobs, %d requeued by Slurm, %d feeder jobs in sacct)" %
           (len(last_rec), len(requeued), feeders))

    # 2. lost attempts: every run job Slurm has is an attempt (or a segment of
    # one) in the DB, and every attempt has its verdict
    lost = 0
    for tok, js in by_tok.items():
        aid = tok_att.get(tok)
        if aid is None:
            lost += 1
            details["lost attempts"].append("job %s (%s) is in no attempt" %
                                            (js[0]["JobID"], js[0]["Comment"]))
        elif att[aid]["verdict"] is None:
            lost += 1
            details["lost attempts"].append("%s attempt %d (job %s) has no verdict" %
                                            (att[aid]["tag"], att[aid]["n"], js[0]["JobID"]))
    for a_ in att.values():
        if a_["verdict"] is None and a_["token"] not in by_tok and a_["phase"] == "submitted":
            lost += 1
            details["lost attempts"].append("%s attempt %d (job %s) has no verdict" %
                                            (a_["tag"], a_["n"], a_["job"]))
    report("lost attempts", lost, lost == 0, " (%d attempts in the DB)" % len(att))

    # 3. every verdict as Slurm and cv.json say: the attempt's last job (its
    # last segment); a job Slurm does not know (or never ended) is lost,
    # infra, and the run was retried
    wrong = 0
    judged = [a_ for a_ in att.values() if a_["verdict"] is not None]
    per_run = collections.defaultdict(list)
    for a_ in att.values():
        per_run[a_["tag"]].append(a_["n"])
    verdicts = collections.Counter()
    for a_ in judged:
        # its segments that ran (a segment after the last one only says
        # "unneeded" and exits 0)
        toks = [s["token"] for s in segs.get(a_["id"], [])
                if s["job"] and s["state"] != "unneeded"] or [a_["token"]]
        last = None
        for tok in toks:
            for j in by_tok.get(tok, []):
                j = last_rec[j["JobID"]]
                if last is None or (ts(j["Start"]) or 0, j["k"]) >= (ts(last["Start"]) or 0, last["k"]):
                    last = j
        if last is not None and last["State"] not in FINAL:
            last = None
        if last is None:
            want, cls = "failure", "infra"
            ok = a_["verdict"] == "failure" and a_["cls"] == "infra" and \
                a_["reason"].startswith("lost")
            if ok and max(per_run[a_["tag"]]) <= a_["n"]:
                ok = False
                details["wrong verdicts"].append("%s attempt %d: lost but not retried" %
                                                 (a_["tag"], a_["n"]))
            verdicts["lost"] += 1
        else:
            st = last["State"]
            okcode = last["ExitCode"] == "0:0"
            if st == "COMPLETED" and okcode:
                want, cls = "success", None
            else:
                want, cls = "failure", "infra" if st in INFRA else "program"
            ok = a_["verdict"] == want and (cls is None or a_["cls"] == cls)
            if ok and want == "failure" and st not in a_["reason"] and st != "COMPLETED":
                ok = False
            if ok and want == "success":
                ok = a_["score"] is not None and abs(a_["score"] - expected_score(a.study_dir, a_["tag"])) < 1e-9
            if ok and cls == "infra" and max(per_run[a_["tag"]]) <= a_["n"]:
                ok = False
                details["wrong verdicts"].append("%s attempt %d: %s but not retried" %
                                                 (a_["tag"], a_["n"], st))
            verdicts[st if want == "failure" else "success"] += 1
        if not ok:
            wrong += 1
            details["wrong verdicts"].append(
                "%s attempt %d: xloop %s/%s (%s), Slurm %s" %
                (a_["tag"], a_["n"], a_["verdict"], a_["cls"], a_["reason"][:80],
                 "%s %s job %s" % (last["State"], last["ExitCode"], last["JobID"]) if last else "lost"))
    report("wrong verdicts", wrong, wrong == 0, " (%d judged: %s)" %
           (len(judged), ", ".join("%s %d" % kv for kv in sorted(verdicts.items()))))

    # 4. every verdict committed exactly once in ops/decisions.md
    subj = subprocess.run(["git", "-C", a.study_dir, "log", "--format=%s", "--",
                           "ops/decisions.md"], stdout=subprocess.PIPE, text=True).stdout
    commits = collections.Counter()
    for s in subj.splitlines():
        m = re.match(r"^xloop: verdict " + STUDY + r"/(\S+) attempt (\d+): ", s)
        if m:
            commits[(m.group(1), int(m.group(2)))] += 1
    bad = 0
    for a_ in judged:
        c = commits.pop((a_["tag"], a_["n"]), 0)
        if c != 1:
            bad += 1
            details["verdicts not committed once"].append("%s attempt %d: %d commits" %
                                                          (a_["tag"], a_["n"], c))
    for k, c in commits.items():
        bad += 1
        details["verdicts not committed once"].append("%s attempt %d: %d commits, no verdict in the DB" % (k + (c,)))
    # ... and written once in the file itself
    entries = collections.Counter()
    try:
        for line in open(os.path.join(a.study_dir, "ops", "decisions.md")):
            m = re.match(r"^## .* · (\S+) attempt (\d+): ", line)
            if m:
                entries[(m.group(1), int(m.group(2)))] += 1
    except FileNotFoundError:
        pass
    for a_ in judged:
        c = entries.get((a_["tag"], a_["n"]), 0)
        if c != 1:
            bad += 1
            details["verdicts not committed once"].append("%s attempt %d: %d entries in ops/decisions.md" %
                                                          (a_["tag"], a_["n"], c))
    report("verdicts not committed once", bad, bad == 0)

    # 5. every event's notification answered 2xx exactly once. Delivery is
    # at least once (src/notify.h: the payload's id lets a receiver drop a
    # repeat): an event answered twice is allowed only when a SIGKILL of an
    # xloop process fell between the two answers (after the POST, before
    # the row said sent)
    got = collections.defaultdict(list)
    codes = collections.Counter()
    try:
        for line in open(os.path.join(a.dir, "hook.jsonl")):
            r = json.loads(line)
            codes[r["code"]] += 1
            if 200 <= r["code"] < 300:
                got[r["id"]].append(r["t"])
    except FileNotFoundError:
        pass
    kills = [f["start"] for f in soak["faults"] if f["fault"] == "sigkill"]
    bad = repeats = 0
    for oid, kind, tag, status, tries in outbox:
        ts_ = sorted(got.pop(oid, []))
        c = len(ts_)
        explained = all(any(t0 - 1 <= k <= t1 for k in kills) for t0, t1 in zip(ts_, ts_[1:]))
        if c >= 2 and explained and status == "sent":
            details["notifications not answered 2xx once"].append(
                "event %d (%s %s): answered 2xx %d times, each repeat after a SIGKILL (allowed)"
                % (oid, kind, tag, c))
            repeats += c - 1
            continue
        if c != 1 or status != "sent":
            bad += 1
            details["notifications not answered 2xx once"].append(
                "event %d (%s %s): %s, %d answered 2xx, %d tries" % (oid, kind, tag, status, c, tries))
    for oid, ts_ in got.items():
        c = len(ts_)
        bad += 1
        details["notifications not answered 2xx once"].append("id %s: 2xx %d times, not in the outbox" % (oid, c))
    report("notifications not answered 2xx once", bad, bad == 0,
           " (%d events; requests answered: %s; repeats after a kill: %d)" %
           (len(outbox), ", ".join("%s %d" % kv for kv in sorted(codes.items())), repeats))

    # 6. the DB
    ok = integrity == [("ok",)]
    report("integrity_check errors", 0 if ok else len(integrity), ok)

    # 7. nothing of xloop's queued after the drain
    q = subprocess.run(["squeue", "-h", "-u", a.user, "-o", "%i %j %T"], stdout=subprocess.PIPE,
                       text=True).stdout.split("\n")
    q = [x for x in q if x.strip()]
    details["jobs left after the drain"] = q
    report("jobs left after the drain", len(q), not q)

    # 8. GPU busy outside the fault windows: run jobs on the GPUs (2, or
    # one a node), from the
    # first run job's start to `auto off`, or to the autopilot's own stop
    # (converged: no untried neighbour left) when that came first, with
    # the runs it waited for: the study has no work after it
    iv = []
    for j in runs:
        s, e = ts(j["Start"]), ts(j["End"])
        if s and e and e > s:
            iv.append((s, e))
    windows = [(f["start"], f["end"] + GRACE) for f in soak["faults"]]
    t_from = min((s for s, _ in iv), default=soak["t0"])
    t_to = soak["auto_off"]
    if stopped_at and stopped_at < t_to and not nodes:
        # (on many nodes the keeper's plan entries go on after it)
        t_to = max(stopped_at, t_from)
        res["autopilot stopped"] = round(stopped_at - soak["t0"], 1)
        print("# the autopilot stopped by itself at %.0f s (of %.0f): GPU busy counted until then" %
              (stopped_at - soak["t0"], soak["auto_off"] - soak["t0"]))
    # integrate busy GPUs (at most all of them) and time outside windows per second
    def busy_in(t0, t1):
        busy = total = 0.0
        t = t0
        while t < t1:
            if not any(w0 <= t < w1 for w0, w1 in windows):
                n = sum(1 for s, e in iv if s <= t < e)
                busy += min(n, gpus) / float(gpus)
                total += 1
            t += 1.0
        return busy, total
    busy, total = busy_in(t_from, t_to)
    frac = busy / total if total else 0.0
    for name, (p0, p1) in (("driver alone", (t_from, soak["phase2"])),
                           ("driver and ticks", (soak["phase2"], t_to))):
        b, n = busy_in(p0, p1)
        res["gpu busy outside faults, " + name] = round(100 * b / n, 1) if n else None
        print("# GPU busy outside fault windows, %s: %s%% of %d s" %
              (name, "%.1f" % (100 * b / n) if n else "-", n))
    res["gpu busy outside faults"] = round(100 * frac, 1)
    res["seconds outside faults"] = int(total)
    if total < 60:
        skipped += 1
        print("ok - soak: GPU busy outside fault windows: %.1f%% of %d s # skip under a minute outside the fault windows" % (100 * frac, total))
    else:
        ok = frac >= 0.90
        if ok:
            passed += 1
        else:
            failed += 1
        print("%sok - soak: GPU busy outside fault windows: %.1f%% of %d s (goal 90%%)" %
              ("" if ok else "not ", 100 * frac, total))

    if nodes:
        skipped += many_nodes(soak, runs, last_rec, report, details, res)

    res["run jobs"] = len(last_rec)
    res["requeued jobs"] = len(requeued)
    res["nodes"], res["gpus"] = nodes, gpus
    res["feeder jobs"] = feeders
    res["attempts"] = len(att)
    res["runs"] = len({a_["tag"] for a_ in att.values()})
    res["verdicts"] = dict(verdicts)
    res["faults"] = dict(collections.Counter(f["fault"] for f in soak["faults"]))
    res["notifications"] = len(outbox)
    res["passed"], res["failed"] = passed, failed
    res["details"] = {k: v[:50] for k, v in details.items() if v}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 0 if failed == 0 else 1


def many_nodes(soak, runs, last_rec, report, details, res):
    """The checks of many nodes: no two live jobs of one attempt, retries
    away from a lost node, the lost node back at work. Returns the checks
    skipped."""
    skipped = 0
    # 9. no attempt (and segment) ever had two live jobs at once: Start..End
    # of its records of different JobIDs never overlap
    per = collections.defaultdict(list)
    for j in runs:
        per[(j["tag"], j["n"], j["k"])].append(j)
    bad = 0
    for key, recs in per.items():
        for j1, j2 in overlaps(recs):
            bad += 1
            details["attempts with two live jobs"].append(
                "%s#%d.%d: job %s (%s..%s on %s) and job %s (%s..%s on %s)" %
                (key + (j1["JobID"], j1["Start"], j1["End"], j1["NodeList"],
                        j2["JobID"], j2["Start"], j2["End"], j2["NodeList"])))
    report("attempts with two live jobs", bad, bad == 0,
           " (%d attempts and segments with jobs)" % len(per))

    # 10. every retry after a node loss ran away from the lost node: a job
    # that ended NODE_FAIL (its last record), and the jobs after it: the
    # attempt's later segments (an infra failure of a segment goes on as
    # the next segment) and the run's next attempt
    by_att = collections.defaultdict(list)
    for j in runs:
        by_att[(j["tag"], j["n"])].append(j)
    bad = checked = 0
    for jid, j in last_rec.items():
        if j["State"] != "NODE_FAIL":
            continue
        nxt = [r for r in by_att.get((j["tag"], j["n"]), []) if r["k"] > j["k"]] + \
            by_att.get((j["tag"], j["n"] + 1), [])
        for r in nxt:
            if not ts(r["Start"]):
                continue
            checked += 1
            if j["NodeList"] in r["NodeList"].split(","):
                bad += 1
                details["retries on the lost node"].append(
                    "%s attempt %d.%d: job %s ended NODE_FAIL on %s; %d.%d ran as job %s on %s" %
                    (j["tag"], j["n"], j["k"], jid, j["NodeList"], r["n"], r["k"], r["JobID"],
                     r["NodeList"]))
    lost_jobs = sum(1 for j in last_rec.values() if j["State"] == "NODE_FAIL")
    if checked == 0:
        print("ok - soak: retries on the lost node: 0 # skip no retry after a NODE_FAIL "
              "ran (%d jobs ended NODE_FAIL)" % lost_jobs)
        res["retries on the lost node"] = None
        skipped += 1
    else:
        report("retries on the lost node", bad, bad == 0,
               " (%d jobs ended NODE_FAIL, %d retry records checked)" % (lost_jobs, checked))
    res["retries after a node loss"] = checked

    # 11. the lost node came back and ran runs again
    bad = 0
    again = []
    for nl in soak.get("node_loss", []):
        nl["state"] = nl["state"].split("\n")[0]	# sinfo's line of each partition
        after = [j for j in runs if nl["node"] in j["NodeList"].split(",") and
                 (ts(j["Start"]) or 0) >= int(nl["returned"])]
        again.append(len(after))
        if not nl["state"].startswith(("idle", "mixed", "allocated", "completing")) or not after:
            bad += 1
            details["lost nodes not back at work"].append(
                "%s: %s after start-node, %d run jobs started on it after" %
                (nl["node"], nl["state"], len(after)))
    if not soak.get("node_loss"):
        bad = 1
        details["lost nodes not back at work"].append("no node was lost (the harness found no run to kill)")
    report("lost nodes not back at work", bad, bad == 0,
           " (%s)" % ", ".join("%s back %s, %d run jobs after" % (nl["node"], nl["state"], n)
                               for nl, n in zip(soak.get("node_loss", []), again)))
    res["lost node's run jobs after its return"] = sum(again)
    return skipped


def expected_score(study_dir, tag):
    """A+B+C+D from the run's job.sh."""
    v = {}
    for line in open(os.path.join(study_dir, "runs", STUDY, tag, "job.sh")):
        m = re.match(r"^([ABCD])=(?:'|\")?(\d+)", line)
        if m:
            v[m.group(1)] = int(m.group(2))
    return float(sum(v.values()))


if __name__ == "__main__":
    sys.exit(main())
