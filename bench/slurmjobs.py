#!/usr/bin/python3
"""Start and end times of jobs, read from Slurm itself, and the idle gaps
between them.

    slurmjobs.py MODE OUT.json JOBID...

Runs `scontrol show job -o` once (jobs stay in the controller's memory for
MinJobAge after they end) and writes OUT.json:
  {"mode", "jobs": [{id, name, state, submit, start, end}], "gaps": [s...],
   "busy_s", "idle_s", "span_s"}
Gaps are next StartTime - previous EndTime, jobs ordered by StartTime.
Slurm prints times in whole seconds, local time.
"""
import json
import subprocess
import sys
import time


def parse_time(v):
    if not v or v in ("Unknown", "None", "N/A"):
        return None
    return int(time.mktime(time.strptime(v, "%Y-%m-%dT%H:%M:%S")))


def records(text):
    for line in text.splitlines():
        rec = {}
        for tok in line.split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                rec.setdefault(k, v)
        if "JobId" in rec:
            yield rec


def main():
    mode, out, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True,
                          text=True, check=False).stdout
    by_id = {r["JobId"]: r for r in records(text)}
    jobs, missing = [], []
    for i in ids:
        r = by_id.get(i)
        if r is None:
            missing.append(i)
            continue
        jobs.append({"id": i, "name": r.get("JobName", ""), "state": r.get("JobState", ""),
                     "submit": parse_time(r.get("SubmitTime")),
                     "start": parse_time(r.get("StartTime")),
                     "end": parse_time(r.get("EndTime"))})
    live = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED")
    ran = sorted((j for j in jobs if j["start"] and j["end"] and j["state"] not in live),
                 key=lambda j: j["start"])
    gaps = [b["start"] - a["end"] for a, b in zip(ran, ran[1:])]
    doc = {"mode": mode, "jobs": jobs, "missing": missing, "gaps": gaps,
           "busy_s": sum(j["end"] - j["start"] for j in ran),
           "idle_s": sum(g for g in gaps if g > 0),
           "span_s": ran[-1]["end"] - ran[0]["start"] if ran else 0}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print("%s: %d jobs, gaps %s" % (mode, len(ran), gaps), file=sys.stderr)
    if missing:
        print("%s: Slurm no longer knows %s" % (mode, " ".join(missing)), file=sys.stderr)


if __name__ == "__main__":
    main()
