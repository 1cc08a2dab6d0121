/* Doctor here: free disk, stray GPU processes, the webhook, the driver. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lib/buf.h"
#include "doctor/doctor-impl.h"
#include "driver/driver.h"
#include "lib/fsutil.h"
#include "lib/proc.h"
#include "lib/util.h"

#define GPU_QUERY_TIMEOUT_MS 15000
#define DISK_WARN_BYTES (5ULL << 30)
#define DISK_FAIL_BYTES (500ULL << 20)

/* "12.3 GiB" or "480 MiB". */
static void human_bytes(unsigned long long n, char *out, size_t size)
{
	if (n >= (1ULL << 30))
		xsnprintf(out, size, "%.1f GiB", (double)n / (1ULL << 30));
	else
		xsnprintf(out, size, "%llu MiB", n >> 20);
}

/* Free space where logs, cv.json and the state DB are written. */
void doctor_check_disk(struct doctor_checks *c, const char *root)
{
	struct statvfs sv;
	unsigned long long avail;
	char size[32];

	if (statvfs(root, &sv) < 0) {
		doctor_add(c, "disk", DOCTOR_FAIL, xasprintf("cannot tell the free space under %s: %s",
		    root, strerror(errno)), xstrdup("check that the study directory is "
		    "readable"));
		return;
	}
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	human_bytes(avail, size, sizeof(size));
	if (avail < DISK_FAIL_BYTES)
		doctor_add(c, "disk", DOCTOR_FAIL, xasprintf("only %s free under %s: logs, cv.json "
		    "and the state DB may not fit", size, root), xstrdup("free space on "
		    "that filesystem (at least 500 MiB; 5 GiB to be comfortable)"));
	else if (avail < DISK_WARN_BYTES)
		doctor_add(c, "disk", DOCTOR_WARN, xasprintf("%s free under %s", size, root),
		    xstrdup("free space on that filesystem before a long run fills it "
			    "(below 5 GiB)"));
	else
		doctor_add(c, "disk", DOCTOR_OK, xasprintf("%s free under %s", size, root), NULL);
}

/* True when pid runs under slurmstepd (a Slurm job), walking up its parents. */
static int under_slurm(long long pid)
{
	char path[64], comm[64];
	struct buf stat = BUF_INIT;
	int depth, err, found = 0;
	char *cause = NULL;

	for (depth = 0; depth < 64 && pid > 1 && !found; depth++) {
		const char *open, *close;

		xsnprintf(path, sizeof(path), "/proc/%lld/stat", pid);
		buf_reset(&stat);
		if (read_file(path, 4096, &stat, &err, &cause) < 0) {
			FREE_AND_NULL(cause);
			break;
		}
		/* "pid (comm) state ppid ...": comm may hold ')' itself */
		open = strchr(stat.s, '(');
		close = strrchr(stat.s, ')');
		if (open == NULL || close == NULL || close < open ||
		    (size_t)(close - open - 1) >= sizeof(comm))
			break;
		memcpy(comm, open + 1, (size_t)(close - open - 1));
		comm[close - open - 1] = '\0';
		found = strcmp(comm, "slurmstepd") == 0;
		if (sscanf(close + 1, " %*c %lld", &pid) != 1)
			break;
	}
	buf_release(&stat);
	return found;
}

/* True when an executable prog is in one of PATH's directories. */
static int in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char *dir, *file;
	int found = 0;

	while (p && *p && !found) {
		size_t n = strcspn(p, ":");

		dir = n ? xstrndup(p, n) : xstrdup(".");
		file = path_join(dir, prog);
		found = access(file, X_OK) == 0;
		free(file);
		free(dir);
		p += n + (p[n] == ':');
	}
	return found;
}

/* GPU processes that no Slurm job owns, when nvidia-smi exists. */
void doctor_check_gpu_procs(struct doctor_checks *c)
{
	const char *argv[] = { "nvidia-smi", "--query-compute-apps=pid,process_name",
			       "--format=csv,noheader", NULL };
	struct proc p = PROC_INIT;
	struct buf how = BUF_INIT, stray = BUF_INIT;
	size_t nstray = 0, nslurm = 0;
	const char *line;

	if (!in_path(argv[0])) {
		doctor_add(c, "gpu-procs", DOCTOR_OK, xstrdup("nvidia-smi not on PATH: no NVIDIA "
		    "GPU to check here"), NULL);
		return;
	}
	p.argv = argv;
	p.timeout_ms = GPU_QUERY_TIMEOUT_MS;
	p.max_output = 1 << 20;
	if (proc_run(&p) < 0) {
		doctor_add(c, "gpu-procs", DOCTOR_WARN, xasprintf("cannot run nvidia-smi: %s",
		    strerror(p.exec_errno)), xstrdup("check the NVIDIA driver "
		    "installation (`nvidia-smi` by hand)"));
		proc_release(&p);
		return;
	}
	if (p.status != 0 || p.timed_out) {
		buf_rtrim(&p.out);
		buf_rtrim(&p.err);
		proc_describe(&p, &how);
		doctor_add(c, "gpu-procs", DOCTOR_WARN, xasprintf("nvidia-smi %s%s%s", how.s,
		    p.err.len || p.out.len ? ": " : "", p.err.len ? p.err.s : p.out.s),
		    xstrdup("check the NVIDIA driver (`nvidia-smi` by hand); jobs may "
			    "not see the GPU"));
		buf_release(&how);
		proc_release(&p);
		return;
	}
	for (line = p.out.s; *line;) {
		size_t n = strcspn(line, "\n");
		const char *comma = memchr(line, ',', n);
		char *pidtxt = xstrndup(line, comma ? (size_t)(comma - line) : n);
		const char *errstr, *name = comma ? comma + 1 : "";
		long long pid;

		while (*name == ' ')
			name++;
		if (parse_ll(pidtxt, 1, LLONG_MAX, &pid, &errstr) == 0) {
			if (under_slurm(pid)) {
				nslurm++;
			} else if (nstray++ < LIST_MAX) {
				buf_addf(&stray, "%s%lld %.*s", stray.len ? ", " : "", pid,
					 (int)(line + n - name), name);
				buf_rtrim(&stray);
			}
		}
		free(pidtxt);
		line += n + (line[n] == '\n');
	}
	if (nstray > LIST_MAX)
		buf_addf(&stray, ", and %zu more", nstray - LIST_MAX);
	if (nstray)
		doctor_add(c, "gpu-procs", DOCTOR_WARN, xasprintf("%zu process%s outside Slurm hold%s "
		    "a GPU: %s", nstray, nstray == 1 ? "" : "es", nstray == 1 ? "s" : "",
		    stray.s), xstrdup("stop them if they are not yours to keep (kill PID): "
		    "they take GPU memory that Slurm jobs count on"));
	else
		doctor_add(c, "gpu-procs", DOCTOR_OK, xasprintf("no GPU process outside Slurm "
		    "(nvidia-smi; %zu in Slurm jobs)", nslurm), NULL);
	buf_release(&stray);
	proc_release(&p);
}

/* The webhook's env var is set (its value is a secret: never printed). */
void doctor_check_notify(struct doctor_checks *c, const struct config *cfg)
{
	const char *name = cfg->notify_url_env, *v;

	if (!*name) {
		doctor_add(c, "notify", DOCTOR_OK, xstrdup("notifications off (notify.url_env is "
		    "\"\")"), NULL);
		return;
	}
	v = getenv(name);
	if (v == NULL || *v == '\0')
		doctor_add(c, "notify", DOCTOR_WARN, xasprintf("%s is not set: xloop tick will not "
		    "notify anyone", name), xasprintf("export %s=https://... where xloop "
		    "runs (cron too), or set notify.url_env to \"\" in xloop.json", name));
	else if (!starts_with(v, "https://") && !starts_with(v, "http://"))
		doctor_add(c, "notify", DOCTOR_WARN, xasprintf("%s is set but is not an http(s) URL "
		    "(value not shown)", name), xasprintf("set %s to the webhook's "
		    "https:// URL", name));
	else
		doctor_add(c, "notify", DOCTOR_OK, xasprintf("webhook URL set in %s (value not shown)",
		    name), NULL);
}

/* Who drives the loop, how a feeder reaches the DB, and the probe's word. */
void doctor_check_driver(struct doctor_checks *c, const struct doctor_facts *f,
			 const struct config *cfg, const char *root)
{
	const char *mode = cfg->driver.mode;
	char *t = driver_fstype(root);
	int net = driver_fs_is_network(t);

	if (strcmp(mode, "slurm") != 0 && strcmp(mode, "scrontab") != 0) {
		doctor_add(c, "driver", strcmp(mode, "none") == 0 ? DOCTOR_WARN : DOCTOR_OK,
		    xasprintf("driver.mode %s: %s", mode, strcmp(mode, "cron") == 0 ?
			      "cron runs `xloop tick`" : "only an agent's or your calls move the "
			      "loop; once the session ends the queue drains"),
		    strcmp(mode, "none") == 0 ? xstrdup("set driver.mode to \"slurm\": a small "
			"feeder job behind the runs keeps the loop going") : NULL);
	} else if (net && !*cfg->driver.host) {
		doctor_add(c, "driver", DOCTOR_FAIL, xasprintf("driver.mode %s, but the study is on a "
		    "network filesystem (%s) and driver.host is not set: a feeder would open "
		    "the state DB from a compute node", mode, t),
		    xstrdup("set driver.host to this login node's name (ssh to it must work "
			    "without a password from the compute nodes)"));
	} else if (f->probe_done && !f->probe_ok) {
		doctor_add(c, "driver", DOCTOR_FAIL, xasprintf("driver.mode %s: the probe job failed: %s",
		    mode, f->probe_detail), xstrdup("feeders run the xloop binary and read the "
		    "study where jobs run: install xloop on a path the nodes see, or set "
		    "driver.mode to \"cron\""));
	} else {
		doctor_add(c, "driver", DOCTOR_OK, xasprintf("driver.mode %s: %s%s (%s)%s%s", mode, net ?
		    "a feeder forwards its tick over ssh to " : "a feeder opens the state DB "
		    "itself", net ? cfg->driver.host : "", t, f->probe_done ? "; " : "",
		    f->probe_done ? f->probe_detail : ""), NULL);
	}
	free(t);
}
