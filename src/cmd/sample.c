/*
 * xloop sample --out FILE [--every N] [--log LOG]: run in the background
 * by a job.sh, record the job's cgroup memory (and GPU memory where
 * nvidia-smi exists) every N seconds until the job ends. `xloop mem`
 * reads what it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/fsutil.h"
#include "memsample.h"
#include "lib/proc.h"

static const struct opt sample_opts[] = {
	{ "out", OPT_STRING, "FILE", "the file to append the samples to", OPT_REQUIRED },
	{ "every", OPT_STRING, "N", "seconds between samples (1 to 3600, default 5)" },
	{ "log", OPT_STRING, "LOG", "the job's log (default: FILE with .mem replaced by .out)" },
	OPT_END,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* A small file's text, or NULL. */
static char *slurp(const char *path)
{
	struct buf b = BUF_INIT;
	char *cause = NULL;
	int err;

	if (read_file(path, 1 << 20, &b, &err, &cause) < 0) {
		free(cause);
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* One number from a cgroup file, or -1. */
static long long read_num(const char *dir, const char *name)
{
	char *p = path_join(dir, name), *t = slurp(p);
	long long v = -1;
	const char *errstr;

	free(p);
	if (t) {
		t[strcspn(t, "\n")] = '\0';
		if (parse_ll(t, 0, LLONG_MAX, &v, &errstr) < 0)
			v = -1;
		free(t);
	}
	return v;
}

/* GPU memory in use in bytes (the job's GPUs), or -1. */
static long long gpu_used(void)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	const char *argv[] = { "nvidia-smi", "--query-gpu=memory.used",
			       "--format=csv,noheader,nounits", NULL, NULL };
	struct proc p = PROC_INIT;
	long long total = -1;
	char *sel = NULL;

	if (vis && *vis && strspn(vis, "0123456789,") == strlen(vis)) {
		sel = xasprintf("--id=%s", vis);
		argv[3] = sel;
	}
	p.argv = argv;
	p.timeout_ms = 10000;
	if (proc_run(&p) == 0 && p.status == 0) {
		const char *l = p.out.s;

		total = 0;
		while (*l) {
			total += strtoll(l, NULL, 10) * 1024 * 1024;
			l += strcspn(l, "\n");
			l += *l == '\n';
		}
	}
	proc_release(&p);
	free(sel);
	return total;
}

/* The phase the job's log shows on its last line. */
static const char *log_phase(const char *log)
{
	char *t = log ? slurp(log) : NULL;
	const char *phase = "-";
	size_t len;

	if (t) {
		char *last;

		len = strlen(t);
		while (len && (t[len - 1] == '\n' || t[len - 1] == '\r'))
			t[--len] = '\0';
		last = strrchr(t, '\n');
		phase = mem_phase_of(last ? last + 1 : t);
		free(t);
	}
	return phase;
}

/* Record until the job (our parent) is gone. */
static int cmd_sample(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	const char *out = args_get(args, "out"), *every_s = args_get(args, "every");
	const char *log_opt = args_get(args, "log"), *errstr;
	char *cg = NULL, *path = NULL, *dir = NULL, *log = NULL;
	long long every = 5;
	int rc, version, fd, gpu;
	pid_t parent = getppid();
	struct sigaction sa;

	(void)ctx;
	if (every_s && parse_ll(every_s, 1, 3600, &every, &errstr) < 0)
		return cmd_usage_error(self, "--every wants seconds from 1 to 3600"), XL_USAGE;
	cg = slurp("/proc/self/cgroup");
	if (!cg || mem_parse_proc_cgroup(cg, &version, &path) < 0) {
		free(cg);
		error("no memory cgroup in /proc/self/cgroup: is this a Slurm job with "
		      "cgroup memory enforcement?");
		return XL_UNAVAILABLE;
	}
	free(cg);
	dir = xasprintf("%s%s", version == 1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup",
			path);
	if (log_opt) {
		log = xstrdup(log_opt);
	} else if (strlen(out) > 4 && strcmp(out + strlen(out) - 4, ".mem") == 0) {
		log = xasprintf("%.*s.out", (int)(strlen(out) - 4), out);
	}
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("unable to open '%s': %s", out, strerror(errno));
		rc = XL_ERR;
		goto done;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* the job script ending ends the sampling at once, with a last sample */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		stop = 1;
	gpu = access("/usr/bin/nvidia-smi", X_OK) == 0 || getenv("CUDA_VISIBLE_DEVICES");
	{
		char *h = xasprintf("# xloop-mem 1 cgroup=v%d path=%s every=%lld\n"
				    "# time anon shmem file current peak gpu phase\n",
				    version, path, every);
		rc = write(fd, h, strlen(h)) == (ssize_t)strlen(h) ? 0 : XL_ERR;
		free(h);
	}
	for (;;) {
		int last = stop || getppid() != parent;
		char *stat_path = path_join(dir, "memory.stat"), *st = slurp(stat_path), *line;
		long long anon = -1, shmem = -1, file = -1, cur, peak;
		ssize_t len;

		free(stat_path);
		if (st)
			mem_parse_stat(st, version, &anon, &shmem, &file);
		free(st);
		cur = read_num(dir, version == 1 ? "memory.usage_in_bytes" : "memory.current");
		peak = read_num(dir, version == 1 ? "memory.max_usage_in_bytes" : "memory.peak");
		line = xasprintf("%lld %lld %lld %lld %lld %lld %lld %s\n", (long long)time(NULL),
				 anon, shmem, file, cur, peak, gpu ? gpu_used() : -1LL,
				 log_phase(log));
		len = write(fd, line, strlen(line));
		if (len != (ssize_t)strlen(line))
			rc = XL_ERR;	/* the disk is full or the file went away */
		free(line);
		if (rc || last || (anon < 0 && cur < 0))
			break;		/* done, or the cgroup is gone: the job ended */
		sleep((unsigned)every);	/* SIGTERM cuts it short */
	}
	close(fd);
	rc = 0;
done:
	free(path);
	free(dir);
	free(log);
	return rc;
}

const struct cmd_entry cmd_sample_entry = {
	.name = "sample", .opts = sample_opts, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_NONE,
	.summary = "record the job's cgroup memory (and GPU memory) for `xloop mem`",
	.help = "Run it in the background from job.sh:\n"
	"  xloop sample --out \"$XLOOP_RUN_DIR/slurm/attempt$XLOOP_ATTEMPT.mem\" &\n"
	"Every N seconds (default 5) it appends the job's memory from its cgroup\n"
	"(v1: memory.stat rss/shmem/cache, usage and max usage; v2: anon, shmem,\n"
	"file, memory.current and memory.peak), GPU memory where nvidia-smi exists,\n"
	"and whether the log's last line speaks of training or evaluation (LOG,\n"
	"default: FILE with .mem replaced by .out). It stops with the job.\n",
	.flags = CMD_LOCAL, .exec = cmd_sample,
};
