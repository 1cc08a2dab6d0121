#!/usr/bin/python3
"""Start and end times of jobs, read from Slurm itself, and the idle gaps
between them.

    slurmjobs.py MODE OUT.json JOBID... [-- JOBID...]

Runs `scontrol show job -o` once (jobs stay in the controller's memory for
MinJobAge after they end) and writes OUT.json:
  {"mode", "jobs": [{id, name, state, submit, start, end}], "gaps": [s...],
   "busy_s", "idle_s", "span_s"}
Gaps are next StartTime - previous EndTime, jobs ordered by StartTime.
Jobs after "--" (runs' later steps) are not in the gaps: they are listed in
"others", and "span_all_s" runs from the first start to the last end of all.
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


LIVE = ("PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED")


def lookup(by_id, ids, missing):
    """The jobs of ids that Slurm knows (the others go to missing)."""
    jobs = []
    for i in ids:
        r = by_id.get(i)
        if r is None:
            missing.append(i)
            continue
        jobs.append({"id": i, "name": r.get("JobName", ""), "state": r.get("JobState", ""),
                     "submit": parse_time(r.get("SubmitTime")),
                     "start": parse_time(r.get("StartTime")),
                     "end": parse_time(r.get("EndTime"))})
    return jobs


def ended(jobs):
    """The jobs that ran and ended, by start."""
    return sorted((j for j in jobs if j["start"] and j["end"] and j["state"] not in LIVE),
                  key=lambda j: j["start"])


def main():
    mode, out, ids = sys.argv[1], sys.argv[2], sys.argv[3:]
    others = ids[ids.index("--") + 1:] if "--" in ids else []
    ids = ids[:ids.index("--")] if "--" in ids else ids
    text = subprocess.run(["scontrol", "show", "job", "-o"], capture_output=True,
                          text=True, check=False).stdout
    by_id = {r["JobId"]: r for r in records(text)}
    missing = []
    jobs = lookup(by_id, ids, missing)
    ran = ended(jobs)
    gaps = [b["start"] - a["end"] for a, b in zip(ran, ran[1:])]
    doc = {"mode": mode, "jobs": jobs, "missing": missing, "gaps": gaps,
           "busy_s": sum(j["end"] - j["start"] for j in ran),
           "idle_s": sum(g for g in gaps if g > 0),
           "span_s": ran[-1]["end"] - ran[0]["start"] if ran else 0}
    if others:
        doc["others"] = lookup(by_id, others, missing)
        every = ended(jobs + doc["others"])
        doc["span_all_s"] = max(j["end"] for j in every) - every[0]["start"] if every else 0
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print("%s: %d jobs, gaps %s" % (mode, len(ran), gaps), file=sys.stderr)
    if missing:
        print("%s: Slurm no longer knows %s" % (mode, " ".join(missing)), file=sys.stderr)


if __name__ == "__main__":
    main()
