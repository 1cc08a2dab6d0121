#!/usr/bin/python3
"""The chaos soak's harness (issue 21); tests/soak/soak.sh runs it as root.

    soak.py --minutes M --dir W --study-dir D --xloop BIN --user U
            [--seed N] [--run-secs S] [--nodes N]

A study in D (its .xloop/ on a small loop-mounted filesystem, mounted by
soak.sh), runs of about S seconds on 2 lanes and 2 GPUs, autopilot over a
space of 60^4 configurations. With --nodes N (issue 34; the multi-node
test cluster, one GPU a node): N lanes, the runs in the preemptible
partition low, and the faults of many nodes in place of slurmd's outage:
a node lost under a run (its job made unrequeueable first, so it ends
NODE_FAIL and xloop retries it) that returns after the timeout, a node
drained and resumed, a preemption wave (root's jobs of partition gpu on
every node; Slurm requeues the study's jobs). When the autopilot
converges, plan entries keep the lanes busy (the keeper). The first
third only the Slurm driver (the feeder jobs) runs xloop; then a cron-style tick every 5 s as well. Faults
on a schedule drawn from the seed, each logged with its start and end in
W/faults.jsonl. At the end: `auto off`, wait until no job of the user is
left, then tests/soak/check.py (as the user) checks everything against
sacct and git. W/soak.json gets the figures.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TC = os.path.join(ROOT, "ops", "slurm", "testcluster.sh")
SLURMD_DOWN = 100	# SlurmdTimeout is 60 in testcluster.sh: the node goes DOWN
TICK_EVERY = 5
NODE_DOWN_WAIT = 90	# kill-node: down* after SlurmdTimeout (10 s) and a ping, about 25 s

# The job: four knobs, score A+B+C+D (the climb never runs out in a soak);
# a hash of the configuration picks 10% failures, 5% over their memory
# (OUT_OF_MEMORY where cgroups enforce --mem, else exit 4) and 15% that
# need two segments (exit 85 after a checkpoint).
JOB = r"""#!/bin/bash
A=30
B=30
C=30
D=30
SLEEP=@SLEEP@
echo "START a=$A b=$B c=$C d=$D segment=${XLOOP_SEGMENT:-1} device=cpu"
h=$(printf '%s' "$A-$B-$C-$D" | cksum | cut -d' ' -f1)
case $((h % 20)) in
0|1)	sleep $((SLEEP / 2)); echo "FAILED (planned)"; exit 3 ;;
2)	/usr/bin/python3 -c 'import time; b = b"x" * (400 << 20); time.sleep(3)'
	echo "FAILED (survived its memory: no enforcement)"; exit 4 ;;
3|4|5)	if [ "${XLOOP_SEGMENT:-1}" = 1 ]; then
		echo 1 >"$XLOOP_RUN_DIR/checkpoint"; sleep $((SLEEP / 2)); exit 85
	fi
	sleep $((SLEEP / 2)) ;;
*)	sleep "$SLEEP" ;;
esac
printf '{"score": %s}\n' $((A + B + C + D)) >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
"""

# crash points of the test build (crash_point() in src/), for killed ticks
# (those a tick passes through)
CRASH_POINTS = [
    "auto-after-created", "auto-after-intent", "auto-after-run",
    "feeder-after-intent", "feeder-after-sbatch",
    "segment-after-intent", "segment-after-record", "segment-after-sbatch",
    "submit-after-intent", "submit-after-sbatch", "submit-in-transaction",
    "verdict-after-db", "verdict-after-commit",
]


class Soak:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.t0 = time.time()
        self.T = a.minutes * 60.0
        self.s = a.minutes / 30.0	# the schedule's scale
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.faults = []
        self.faultlog = open(os.path.join(a.dir, "faults.jsonl"), "a")
        self.hook = None
        self.hook_port = 0
        self.modefile = os.path.join(a.dir, "hook.mode")
        self.hooklog = os.path.join(a.dir, "hook.jsonl")
        self.ticks = {"run": 0, "rc": {}}
        self.phase2_at = self.t0 + self.T / 3
        self.tick_procs = []
        self.kills = []
        self.errors = []
        self.node_loss = []
        self.preempt = []
        self.plan_added = 0
        self.quiet = threading.Event()	# a node's outage: no controller restart now
        self.plan_schedule()

    def plan_schedule(self):
        """The faults' times (seconds from the start), drawn from the seed:
        slurmd's outage (on many nodes: a node's loss) first, the
        controller's restarts around it (a restart would reset the node's
        timeout, and no NODE_FAIL comes)."""
        T, rng = self.T, self.rng
        self.at_slurmd = T * rng.uniform(0.4, 0.55)
        if self.a.nodes:
            # the node back before the preemption wave, the drain after it
            self.at_slurmd -= T * 0.05
            self.node_hold = max(60 * self.s, 20)
            self.at_preempt = T * rng.uniform(0.62, 0.68)
            self.preempt_hold = max(90 * self.s, 30)
            quiet = (self.at_slurmd - 10, self.at_slurmd + NODE_DOWN_WAIT + self.node_hold + 60)
        else:
            quiet = (self.at_slurmd - 10, self.at_slurmd + SLURMD_DOWN + 30)
        period = max(300 * self.s, 30)
        self.at_ctld = []
        t = period * rng.uniform(0.5, 1.0)
        while t < T * 0.95:
            if quiet[0] <= t <= quiet[1]:
                t = quiet[1] + 5	# after the node's outage, not instead of it
            self.at_ctld.append(t)
            t += period * rng.uniform(0.8, 1.2)
        self.ctld_killed = rng.randrange(len(self.at_ctld)) if self.at_ctld else -1
        self.at_drain = T * rng.uniform(0.7, 0.8)
        if self.a.nodes:
            self.at_drain = max(self.at_drain, self.at_preempt + self.preempt_hold + 30)
        self.at_webhook = T * rng.uniform(0.1, 0.2)
        self.at_disk = T * rng.uniform(0.3, 0.4)

    # -- helpers -------------------------------------------------------
    def now(self):
        return time.time() - self.t0

    def say(self, msg):
        with self.lock:
            print("# [%7.1f s] %s" % (self.now(), msg), flush=True)

    def fault(self, name, start, end, detail=""):
        rec = {"fault": name, "start": start, "end": end, "detail": detail}
        with self.lock:
            self.faults.append(rec)
            self.faultlog.write(json.dumps(rec) + "\n")
            self.faultlog.flush()
        self.say("fault %s: %.1f..%.1f s %s" % (name, start - self.t0, end - self.t0, detail))

    def env(self, extra=None):
        e = {"PATH": os.environ["PATH"], "SLURM_CONF": os.environ["SLURM_CONF"],
             "HOME": "/tmp", "LANG": "C.UTF-8",
             "XLOOP_NOTIFY_URL": "http://127.0.0.1:%d/hook" % self.hook_port}
        e.update(extra or {})
        return ["env"] + ["%s=%s" % kv for kv in e.items()]

    def as_user(self, argv, extra=None, timeout=300, **kw):
        cmd = ["runuser", "-u", self.a.user, "--"] + self.env(extra) + argv
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, text=True, **kw)

    def x(self, *args, timeout=300, extra=None):
        return self.as_user([self.a.xloop, "-C", self.a.study_dir] + list(args),
                            extra=extra, timeout=timeout)

    def must(self, what, r):
        if r.returncode != 0:
            raise SystemExit("soak: %s failed (exit %d):\n%s" % (what, r.returncode, r.stdout))
        return r

    def tc(self, *args):
        return subprocess.run([TC] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def sleep_until(self, t):
        while not self.stop.is_set():
            left = t - time.time()
            if left <= 0:
                return True
            time.sleep(min(left, 0.5))
        return False

    def retry_root(self, argv, secs=120):
        """A Slurm command as root, again until it works (the controller may be down)."""
        end = time.time() + secs
        while True:
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode == 0 or time.time() > end:
                return r
            time.sleep(2)

    def attempts(self):
        """Attempts xloop made so far (n > 0), read as the user (read-only)."""
        r = self.as_user(["/usr/bin/python3", "-c", "import sqlite3,sys\n"
                          "c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True,timeout=10)\n"
                          "print(c.execute('SELECT count(*) FROM attempt WHERE n > 0').fetchone()[0])",
                          os.path.join(self.a.study_dir, ".xloop", "state.db")], timeout=60)
        try:
            return int(r.stdout.strip())
        except ValueError:
            return -1

    # -- the webhook -----------------------------------------------------
    def hook_mode(self, mode):
        with open(self.modefile + ".tmp", "w") as f:
            f.write(mode + "\n")
        os.rename(self.modefile + ".tmp", self.modefile)

    def hook_start(self):
        self.hook = subprocess.Popen([sys.executable, os.path.join(HERE, "hook.py"),
                                      str(self.hook_port), self.modefile, self.hooklog],
                                     stdout=subprocess.PIPE, text=True)
        self.hook_port = int(self.hook.stdout.readline())

    def hook_stop(self):
        if self.hook:
            self.hook.terminate()
            self.hook.wait()
            self.hook = None

    # -- the study ---------------------------------------------------------
    def setup(self):
        d = self.a.study_dir
        self.hook_mode("ok")
        self.hook_start()
        for argv in (["git", "-C", d, "init", "-q", "-b", "main"],
                     ["git", "-C", d, "config", "user.name", "Soak"],
                     ["git", "-C", d, "config", "user.email", "soak@example.com"]):
            self.must(" ".join(argv), self.as_user(argv))
        self.must("init", self.x("init", "--study", "soak"))
        p = os.path.join(d, "xloop.json")
        c = json.load(open(p))
        c["resources"].update(cpus=1, mem="100M", time="00:05:00")
        c["queue"].update(lanes=self.a.nodes or 2, depth=1)
        if self.a.nodes:
            c["slurm"]["partition"] = "low"
            c["resources"]["gres"] = "gpu:1"
        c["breaker"] = {"program": 0, "infra": 0, "no_gpu": False}
        c["retry"] = {"infra_max": 5, "auto_resources": False}
        c["segments"] = {"max": 2, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
        c["notify"] = {"url_env": "XLOOP_NOTIFY_URL", "kind": "json"}
        c.setdefault("driver", {})["mode"] = "slurm"
        st = os.stat(p)
        with open(p, "w") as f:
            json.dump(c, f, indent=2)
        os.chown(p, st.st_uid, st.st_gid)
        job = os.path.join(self.a.dir, "job.sh")
        with open(job, "w") as f:
            f.write(JOB.replace("@SLEEP@", str(self.a.run_secs)))
        cv = os.path.join(self.a.dir, "cv.json")
        with open(cv, "w") as f:
            f.write('{"score": 120}\n')
        os.chmod(job, 0o644)
        os.chmod(cv, 0o644)
        self.must("adopt", self.x("adopt", job, "--tag", "base", "--cv", cv))
        for v in "ABCD":
            self.must("space set " + v, self.x("space", "set", v + "=1..60:int"))
        self.must("auto on", self.x("auto", "on"))
        self.t0 = time.time()
        self.phase2_at = self.t0 + self.T / 3
        self.must("next", self.x("next"))
        self.say("study ready in %s; first next done; driver alone until %.0f s"
                 % (d, self.T / 3))

    # -- the faults ----------------------------------------------------------
    def f_ctld(self):
        """slurmctld stopped (TERM) and started every 5 min (scaled); once KILL."""
        for i, t in enumerate(self.at_ctld):
            if not self.sleep_until(self.t0 + t):
                return
            sig = "KILL" if i == self.ctld_killed else "TERM"
            while self.quiet.is_set() and not self.stop.is_set():
                time.sleep(1)	# a node's outage runs longer than planned
            start = time.time()
            r = self.tc("kill-daemon", "slurmctld", sig)
            if r.returncode != 0:
                self.errors.append("kill slurmctld: " + r.stdout)
            time.sleep(self.rng.uniform(2, 6))
            r = self.tc("start-daemon", "slurmctld")
            if r.returncode != 0:
                self.errors.append("start slurmctld: " + r.stdout)
                r = self.tc("start-daemon", "slurmctld")
            self.fault("slurmctld-" + sig, start, time.time())

    def f_slurmd(self):
        """slurmd killed and kept down past SlurmdTimeout: NODE_FAIL."""
        if not self.sleep_until(self.t0 + self.at_slurmd):
            return
        start = time.time()
        r = self.tc("kill-daemon", "slurmd", "KILL")
        if r.returncode != 0:
            self.errors.append("kill slurmd: " + r.stdout)
        time.sleep(SLURMD_DOWN)
        st = " ".join(w for w in subprocess.run(["scontrol", "show", "node", "-o"],
                                                 stdout=subprocess.PIPE, text=True).stdout.split()
                      if w.startswith("State="))
        r = self.tc("start-daemon", "slurmd")
        if r.returncode != 0:
            self.errors.append("start slurmd: " + r.stdout)
        # ReturnToService=2: the node comes back when slurmd registers
        end = time.time() + 120
        while time.time() < end:
            s = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], stdout=subprocess.PIPE,
                               text=True).stdout.strip()
            if s and "*" not in s and not s.startswith(("down", "drain")):
                break
            if s == "down":
                subprocess.run(["scontrol", "update", "nodename=" + os.uname()[1].split(".")[0],
                                "state=resume"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
        self.fault("slurmd-down", start, time.time(), "node %s after %d s" % (st, SLURMD_DOWN))

    def f_drain(self):
        """The node drained for 2 minutes (scaled), then resumed."""
        if not self.sleep_until(self.t0 + self.at_drain):
            return
        node = os.uname()[1].split(".")[0]
        detail = ""
        if self.a.nodes:
            # a node with a run on it (the run ends there; nothing new
            # starts there), not the one lost earlier when another will do
            lost = {n["node"] for n in self.node_loss}
            busy = [n for _, n in self.run_jobs() if n not in lost] or \
                ["node%d" % k for k in range(1, self.a.nodes + 1) if "node%d" % k not in lost]
            node = self.rng.choice(sorted(busy))
            detail = node
        start = time.time()
        self.retry_root(["scontrol", "update", "nodename=" + node, "state=drain",
                         "reason=soak"])
        time.sleep(max(120 * self.s, 15))
        self.retry_root(["scontrol", "update", "nodename=" + node, "state=resume"])
        if self.a.nodes:
            detail += ", then " + self.node_state(node)
        self.fault("drain", start, time.time(), detail)

    def run_jobs(self):
        """(job id, node) of the study's run jobs running now (not feeders)."""
        r = subprocess.run(["squeue", "-h", "-u", self.a.user, "-t", "RUNNING", "-o", "%i|%N|%k"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        out = []
        for line in r.stdout.splitlines():
            v = line.split("|", 2)
            if len(v) == 3 and v[2].startswith("xloop:") and v[1]:
                out.append((v[0], v[1]))
        return out

    def node_state(self, node):
        return subprocess.run(["sinfo", "-h", "-N", "-n", node, "-o", "%T"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.split("\n")[0].strip() or "unknown"

    def f_node_lost(self):
        """A node lost under a run (kill-node: its slurmd and every process
        of its namespace), kept down past SlurmdTimeout, then started again:
        it must come back in service and get work. The run's job is made
        unrequeueable first (scontrol update requeue=0): it ends NODE_FAIL,
        is judged infra and retried by xloop, away from the lost node (the
        preemption wave shows Slurm's own requeues)."""
        if not self.sleep_until(self.t0 + self.at_slurmd):
            return
        victims = []
        end = time.time() + 120
        while not victims and time.time() < end and not self.stop.is_set():
            victims = self.run_jobs()
            if not victims:
                time.sleep(1)
        if not victims:
            self.errors.append("node loss: no run job ran within 120 s")
            return
        job, node = self.rng.choice(sorted(victims))
        self.quiet.set()
        try:
            self.retry_root(["scontrol", "update", "jobid=" + job, "requeue=0"], secs=30)
            start = time.time()
            on = [j for j, n in self.run_jobs() if n == node]
            r = self.tc("kill-node", node)
            if r.returncode != 0:
                self.errors.append("kill-node %s: %s" % (node, r.stdout))
            down = None
            until = time.time() + NODE_DOWN_WAIT
            while time.time() < until:
                st = self.node_state(node)
                if st.startswith("down"):
                    down = time.time()
                    break
                time.sleep(1)
            time.sleep(self.node_hold)
            r = self.tc("start-node", node)
            if r.returncode != 0:
                self.errors.append("start-node %s: %s" % (node, r.stdout))
            back = time.time()
            st = self.node_state(node)
        finally:
            self.quiet.clear()
        self.node_loss.append({"node": node, "jobs": on, "unrequeued": job, "killed": start,
                               "down": down, "returned": back, "state": st})
        self.fault("node-lost", start, back, "%s with run job%s %s; down* after %s; back %s" %
                   (node, "s" if len(on) > 1 else "", " ".join(on) or job,
                    "%.0f s" % (down - start) if down else "(never seen down)", st))

    def f_preempt(self):
        """A preemption wave: root's jobs of partition gpu (PriorityTier 2)
        take every node's GPU for a while; the study's jobs in low are
        preempted and requeued by Slurm (same job id); then they leave."""
        if not self.sleep_until(self.t0 + self.at_preempt):
            return
        start = time.time()
        hit = self.run_jobs()
        ids = []
        for k in range(1, self.a.nodes + 1):
            r = self.retry_root(["sbatch", "--parsable", "-p", "gpu", "-w", "node%d" % k,
                                 "--gres=gpu:1", "-c", "1", "--mem=20M", "-J", "soak-preempt",
                                 "-o", "/dev/null", "--wrap", "sleep 3600"], secs=60)
            if r.returncode == 0:
                ids.append(r.stdout.strip().split(";")[0])
            else:
                self.errors.append("preempt sbatch: " + r.stdout)
        ran = 0
        until = time.time() + 60
        while time.time() < until and ids:
            q = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-j", ",".join(ids), "-o", "%i"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            ran = len(q.stdout.split())
            if ran == len(ids):
                break
            time.sleep(1)
        time.sleep(self.preempt_hold)
        if ids:
            self.retry_root(["scancel"] + ids, secs=60)
        until = time.time() + 60
        while time.time() < until and ids:
            q = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-o", "%i"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if q.returncode == 0 and not q.stdout.strip():
                break
            time.sleep(1)
        self.preempt.append({"jobs": ids, "ran": ran, "hit": [j for j, _ in hit],
                             "start": start, "end": time.time()})
        self.fault("preempt-wave", start, time.time(),
                   "%d jobs of partition gpu (%s), %d ran; run jobs running before: %s" %
                   (len(ids), " ".join(ids), ran, " ".join(j for j, _ in hit) or "none"))

    def autopilot_stopped(self):
        """Whether the autopilot stopped by itself (converged), read as the user."""
        r = self.as_user(["/usr/bin/python3", "-c", "import sqlite3,sys\n"
                          "c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro',uri=True,timeout=10)\n"
                          "print(c.execute(\"SELECT count(*) FROM event WHERE kind = 'autopilot'"
                          " AND detail LIKE 'autopilot stopped%'\").fetchone()[0],"
                          " c.execute(\"SELECT count(*) FROM plan WHERE state = 'queued'\").fetchone()[0])",
                          os.path.join(self.a.study_dir, ".xloop", "state.db")], timeout=60)
        try:
            stopped, queued = (int(x) for x in r.stdout.split())
        except ValueError:
            return False, 0
        return stopped > 0, queued

    def keeper(self):
        """Work for the lanes after the autopilot converged (on many nodes a
        node's loss, the drain and the preemption wave need running runs):
        one-variable changes of best as plan entries, a few ahead."""
        while not self.stop.is_set():
            self.stop.wait(10)
            if self.stop.is_set() or self.now() > self.T * 0.97:
                return
            stopped, queued = self.autopilot_stopped()
            if not stopped or queued >= self.a.nodes:
                continue
            for _ in range(40):
                if queued >= self.a.nodes:
                    break
                var, val = self.rng.choice("ABCD"), self.rng.randint(1, 60)
                r = self.x("plan", "add", "%s=%d" % (var, val), timeout=120)
                if r.returncode == 0:
                    queued += 1
                    self.plan_added += 1

    def f_webhook(self):
        """The webhook down for 10 min (scaled), then 500, then 429, then fine."""
        if not self.sleep_until(self.t0 + self.at_webhook):
            return
        start = time.time()
        self.hook_stop()
        time.sleep(max(600 * self.s, 40))
        self.hook_mode("500")
        self.hook_start()
        self.fault("webhook-down", start, time.time())
        start = time.time()
        time.sleep(max(120 * self.s, 15))
        self.fault("webhook-500", start, time.time())
        start = time.time()
        self.hook_mode("429")
        time.sleep(max(120 * self.s, 15))
        self.hook_mode("ok")
        self.fault("webhook-429", start, time.time())

    def f_disk(self):
        """The filesystem of .xloop/ full for a minute (scaled)."""
        if not self.sleep_until(self.t0 + self.at_disk):
            return
        fill = os.path.join(self.a.study_dir, ".xloop", "soak-fill")
        start = time.time()
        subprocess.run(["dd", "if=/dev/zero", "of=" + fill, "bs=64k"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        df = subprocess.run(["df", "-k", "--output=avail", os.path.dirname(fill)],
                            stdout=subprocess.PIPE, text=True).stdout.split()[-1]
        time.sleep(max(60 * self.s, 10))
        os.unlink(fill)
        self.fault("disk-full", start, time.time(), "%s KB left while full" % df)

    def xloop_pids(self):
        """xloop processes of the user (any command, the feeders' too)."""
        uid = int(subprocess.run(["id", "-u", self.a.user], stdout=subprocess.PIPE,
                                 text=True).stdout)
        want = os.path.realpath(self.a.xloop)
        out = []
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                if os.stat("/proc/" + p).st_uid != uid:
                    continue
                if os.readlink("/proc/%s/exe" % p) != want:
                    continue
                cmd = open("/proc/%s/cmdline" % p, "rb").read().split(b"\0")
                out.append((int(p), " ".join(c.decode() for c in cmd[3:] if c)))
            except OSError:
                continue
        return out

    def f_kills(self):
        """One xloop process SIGKILLed every 50 runs (scaled), at a random
        point: a live process (a feeder's tick, a cron tick) or a tick that
        dies at a crash point of the test build."""
        every = max(int(round(50 * self.s)), 4)
        next_at = every
        n = 0
        while not self.stop.is_set():
            time.sleep(5)
            if self.now() > self.T * 0.95:
                return
            if self.attempts() < next_at:
                continue
            next_at += every
            n += 1
            if n % 2 == 0 and time.time() >= self.phase2_at:
                point = self.rng.choice(CRASH_POINTS)
                start = time.time()
                for _ in range(10):	# 75: another tick holds the lock
                    r = self.x("tick", extra={"XLOOP_CRASH_AT": point, "XLOOP_CRASH_ONCE": "1"},
                               timeout=300)
                    if r.returncode != 75:
                        break
                    time.sleep(1)
                self.fault("crash-point", start, time.time(),
                           "tick with XLOOP_CRASH_AT=%s: exit %d" % (point, r.returncode))
                continue
            start = time.time()
            end = start + 180
            while time.time() < end and not self.stop.is_set():
                pids = self.xloop_pids()
                if pids:
                    time.sleep(self.rng.uniform(0, 0.3))
                    pid, cmd = self.rng.choice(pids)
                    try:
                        os.kill(pid, signal.SIGKILL)
                        self.fault("sigkill", time.time(), time.time(),
                                   "pid %d: %s" % (pid, cmd))
                    except ProcessLookupError:
                        continue
                    break
                time.sleep(0.05)

    def ticker(self):
        """cron: a tick every 5 s from a third of the soak on (overlaps allowed)."""
        if not self.sleep_until(self.phase2_at):
            return
        self.say("ticks every %d s from now on" % TICK_EVERY)
        while not self.stop.is_set():
            self.tick_once()
            self.stop.wait(TICK_EVERY)

    def tick_once(self):
        cmd = ["runuser", "-u", self.a.user, "--"] + self.env() + \
            [self.a.xloop, "-C", self.a.study_dir, "tick"]
        log = open(os.path.join(self.a.dir, "ticks.log"), "a")
        log.write("== %.1f\n" % self.now())
        log.flush()
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.tick_procs = [q for q in self.tick_procs if q.poll() is None]
        self.tick_procs.append(p)
        self.ticks["run"] += 1

    # -- the run -------------------------------------------------------------
    def run(self):
        self.setup()
        if self.a.nodes:
            faults = (self.f_ctld, self.f_node_lost, self.f_preempt, self.f_drain,
                      self.f_webhook, self.f_disk, self.f_kills, self.ticker, self.keeper)
        else:
            faults = (self.f_ctld, self.f_slurmd, self.f_drain, self.f_webhook, self.f_disk,
                      self.f_kills, self.ticker)
        threads = [threading.Thread(target=f, daemon=True) for f in faults]
        for th in threads:
            th.start()
        self.sleep_until(self.t0 + self.T)
        end_at = time.time()
        self.say("time is up: auto off (faults end first)")
        # the fault threads restore what they broke before they return
        self.stop.set()
        for th in threads:
            th.join(timeout=400)
        self.hook_mode("ok")
        if self.hook is None:
            self.hook_start()
        for i in range(60):
            r = self.x("auto", "off")
            if r.returncode == 0:
                break
            time.sleep(2)
        auto_off = time.time()
        self.say("auto off (exit %d); draining" % r.returncode)
        drained = None
        deadline = time.time() + max(900, 10 * self.a.run_secs)
        while time.time() < deadline:
            self.tick_once()
            time.sleep(TICK_EVERY)
            q = subprocess.run(["squeue", "-h", "-u", self.a.user, "-o", "%i"],
                               stdout=subprocess.PIPE, text=True)
            if q.returncode == 0 and not q.stdout.strip():
                drained = time.time()
                break
        for p in self.tick_procs:
            p.wait()
        # one last tick: judge and notify what the drain left
        r = self.x("tick")
        self.say("drained after %s s; last tick exit %d" %
                 ("%.0f" % (drained - auto_off) if drained else "(not drained)", r.returncode))
        self.hook_stop()
        res = {"seed": self.a.seed, "minutes": self.a.minutes, "run_secs": self.a.run_secs,
               "t0": self.t0, "phase2": self.phase2_at, "end": end_at, "auto_off": auto_off, "drained": drained,
               "ticks": self.ticks["run"], "faults": self.faults, "errors": self.errors,
               "nodes": self.a.nodes, "gpus": self.a.nodes or 2, "lanes": self.a.nodes or 2,
               "partition": "low" if self.a.nodes else None, "node_loss": self.node_loss,
               "preempt": self.preempt, "plan_added": self.plan_added}
        with open(os.path.join(self.a.dir, "soak.json"), "w") as f:
            json.dump(res, f, indent=1)
        return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--study-dir", required=True)
    ap.add_argument("--xloop", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--run-secs", type=int, default=15)
    ap.add_argument("--nodes", type=int, default=0)
    a = ap.parse_args()
    s = Soak(a)
    res = s.run()
    for e in res["errors"]:
        print("# harness error: " + e.strip().replace("\n", "\n#   "))
    return 0


if __name__ == "__main__":
    sys.exit(main())
