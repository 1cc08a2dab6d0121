/*
 * Where and how a feeder job runs its tick: the filesystem that holds the
 * study (a network one forwards the tick to driver.host), the command line
 * forwarded, the user's scrontab block, the binary itself, and doctor's
 * probe that a feeder-sized job can run xloop there. See driver-host.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "driver/driver-host.h"
#include "lib/fsutil.h"
#include "remote.h"

/* Seconds from the environment variable name (lo..hi), else def: tests change them. */
long long driver_env_secs(const char *name, long long lo, long long hi, long long def)
{
	const char *v = getenv(name);
	long long n;
	const char *errstr;

	return v && *v && parse_ll(v, lo, hi, &n, &errstr) == 0 ? n : def;
}

/* The absolute path of the running binary. */
char *driver_self_exe(char **cause)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0) {
		*cause = xasprintf("unable to read /proc/self/exe: %s", strerror(errno));
		return NULL;
	}
	buf[n] = '\0';
	return xstrdup(buf);
}

/* How long doctor's probe job may take to start and end. */
static int probe_secs(void)
{
	return (int)driver_env_secs("XLOOP_DRIVER_PROBE_SECS", 1, 3600, 60);
}

/* Run a feeder-sized probe job that checks the binary and the study are there. */
int driver_probe(struct slurm *s, const struct config *cfg, const char *root, int *ok,
		 char **detail)
{
	char *dir = xasprintf("%s/.xloop/driver", root), *cause = NULL, *exe, *script = NULL;
	char *out = NULL, jid[24];
	struct buf b = BUF_INIT, log = BUF_INIT;
	struct slurm_submit req;
	long long job = 0;
	int rc = XL_ERR, ambiguous, waited, err;

	*ok = 0;
	*detail = NULL;
	exe = driver_self_exe(&cause);
	if (!exe || make_dir(dir, 0700, &cause) < 0)
		goto out;
	script = xasprintf("%s/probe.sh", dir);
	out = xasprintf("%s/probe.out", dir);
	buf_adds(&b, "#!/bin/sh\n# xloop doctor: can a feeder job run xloop and read the "
		 "study here?\nx=");
	remote_quote(&b, exe);
	buf_adds(&b, "\nr=");
	remote_quote(&b, root);
	buf_adds(&b, "\n[ -x \"$x\" ] || { echo \"the xloop binary $x is not executable on "
		 "$(hostname)\"; exit 3; }\n[ -r \"$r/xloop.json\" ] || { echo \"the study $r "
		 "is not readable on $(hostname)\"; exit 4; }\n\"$x\" --version >/dev/null || "
		 "{ echo \"$x does not run on $(hostname)\"; exit 5; }\necho \"ok on "
		 "$(hostname)\"\n");
	unlink(out);
	if (write_file_atomic(script, b.s, b.len, 0700, &cause) < 0)
		goto out;
	memset(&req, 0, sizeof(req));
	req.script = script;
	req.job_name = DRIVER_JOB_NAME;
	req.output = out;
	req.comment = DRIVER_COMMENT "probe";
	req.partition = *cfg->driver.partition ? cfg->driver.partition : cfg->partition;
	req.cpus = 1;
	req.mem = DRIVER_MEM;
	req.time = "00:01:00";
	req.account = cfg->account;
	req.qos = cfg->qos;
	req.workdir = "/";
	rc = slurm_sbatch(s, &req, &job, &ambiguous, &cause);
	if (rc)
		goto out;
	xsnprintf(jid, sizeof(jid), "%lld", job);
	for (waited = 0; waited < probe_secs() * 4; waited++) {
		struct slurm_jobs q = SLURM_JOBS_INIT;
		int unknown = 0, fin = 0;

		if (slurm_scontrol_job(s, jid, &q, &unknown, &cause) == 0) {
			fin = unknown || (q.nr && slurm_state_is_final(q.v[0].state));
			if (fin && q.nr)
				*ok = q.v[0].state == SLURM_STATE_COMPLETED && q.v[0].exit_code == 0;
		}
		FREE_AND_NULL(cause);
		slurm_jobs_release(&q);
		if (fin)
			break;
		nanosleep(&(struct timespec){ 0, 250 * 1000000L }, NULL);
	}
	if (waited >= probe_secs() * 4) {
		slurm_scancel(s, jid, &cause);
		FREE_AND_NULL(cause);
		*detail = xasprintf("the probe job %s did not run within %d s (cancelled): "
				    "feeders may wait as long", jid, probe_secs());
		*ok = 1;	/* not proof of a fault */
		rc = 0;
		goto out;
	}
	if (read_file(out, 4096, &log, &err, &cause) == 0)
		buf_rtrim(&log);
	FREE_AND_NULL(cause);
	*detail = xasprintf("probe job %s: %s", jid, log.len ? log.s :
			    "no output (the study's directory is not writable where it ran?)");
	rc = 0;
out:
	if (rc && !*detail)
		*detail = xasprintf("no probe job: %s", cause ? cause : "?");
	buf_release(&b);
	buf_release(&log);
	free(cause);
	free(exe);
	free(script);
	free(out);
	free(dir);
	return rc;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* Whether mount point m holds path (a prefix at a path boundary). */
static int holds(const char *m, const char *path)
{
	size_t n = strlen(m);

	if (strcmp(m, "/") == 0)
		return path[0] == '/';
	return strncmp(m, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The fstype of the mount holding path, from mountinfo text. */
char *driver_mount_fstype(const char *mountinfo, const char *path)
{
	const char *line = mountinfo;
	char *best = NULL;
	size_t best_len = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		char *l = end ? xstrndup(line, (size_t)(end - line)) : xstrdup(line);
		char *f[6], *save = NULL, *sep, *p;
		int n = 0;

		line = end ? end + 1 : NULL;
		/* id parent major:minor root mountpoint options [optional...] - type src super */
		sep = strstr(l, " - ");
		if (sep) {
			*sep = '\0';
			for (p = strtok_r(l, " ", &save); p && n < 6; p = strtok_r(NULL, " ", &save))
				f[n++] = p;
		}
		if (sep && n >= 5) {
			char *type = sep + 3, *tend = strchr(type, ' ');
			size_t len;

			if (tend)
				*tend = '\0';
			unescape(f[4]);
			len = strlen(f[4]);
			if (*type && holds(f[4], path) && (!best || len >= best_len)) {
				free(best);
				best = xstrdup(type);
				best_len = len;
			}
		}
		free(l);
	}
	return best;
}

/* Network filesystems: the DB would be opened from more than one host. */
int driver_fs_is_network(const char *fstype)
{
	static const char *const net[] = {
		"nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs",
		"ceph", "glusterfs", "afs", "panfs", "ocfs2", "gfs2", "9p", "wekafs",
		"fuse.sshfs", "fuse.glusterfs", "fuse.ceph-fuse", "fuse.s3fs",
		"fuse.gcsfuse", "fuse.juicefs", "fuse.beegfs",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(net); i++)
		if (strcmp(fstype, net[i]) == 0)
			return 1;
	return 0;
}

/* statfs's f_type of the filesystems xloop tells apart, by the names mountinfo uses. */
static const struct {
	unsigned long magic;
	const char *name;
} fs_magic[] = {
	{ 0xEF53, "ext4" },		/* ext2, ext3 and ext4 share it */
	{ 0x58465342, "xfs" }, { 0x9123683E, "btrfs" }, { 0x2FC12FC1, "zfs" },
	{ 0x01021994, "tmpfs" }, { 0x858458F6, "ramfs" }, { 0x794C7630, "overlay" },
	{ 0x73717368, "squashfs" }, { 0x4D44, "vfat" }, { 0x5346544E, "ntfs" },
	{ 0xF2F52010, "f2fs" }, { 0x6969, "nfs" }, { 0xFF534D42, "cifs" },
	{ 0xFE534D42, "smb3" }, { 0x0BD00BD0, "lustre" }, { 0x47504653, "gpfs" },
	{ 0x19830326, "beegfs" }, { 0x00C36400, "ceph" }, { 0x5346414F, "afs" },
	{ 0x6B414653, "afs" }, { 0xAAD7AAEA, "panfs" }, { 0x7461636F, "ocfs2" },
	{ 0x01161970, "gfs2" }, { 0x01021997, "9p" }, { 0x65735546, "fuse" },
};

/* The filesystem type of path from statfs (malloc'd), NULL when it fails. */
static char *statfs_type(const char *path)
{
	struct statfs sf;
	size_t i;

	if (statfs(path, &sf) < 0)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(fs_magic); i++)
		if ((unsigned long)sf.f_type == fs_magic[i].magic)
			return xstrdup(fs_magic[i].name);
	return xasprintf("an unknown filesystem (magic 0x%lx)", (unsigned long)sf.f_type);
}

/*
 * The filesystem type holding path: /proc/self/mountinfo's name (it tells
 * fuse.sshfs from other FUSE mounts), else statfs's magic (no /proc, as
 * in a chroot, or no mount listed that holds path).
 */
char *driver_fstype(const char *path)
{
	const char *file = "/proc/self/mountinfo";
	struct buf b = BUF_INIT;
	char *cause = NULL, *t = NULL;
	int err;

#ifdef XLOOP_TEST_BUILD
	if (getenv("XLOOP_TEST_MOUNTINFO"))
		file = getenv("XLOOP_TEST_MOUNTINFO");
#endif
	if (read_file(file, 4 << 20, &b, &err, &cause) == 0)
		t = driver_mount_fstype(b.s, path);
	buf_release(&b);
	free(cause);
	if (!t)
		t = statfs_type(path);
	return t ? t : xstrdup("unknown (neither mountinfo nor statfs answered)");
}

/* driver.host when the study lies on a network filesystem. */
const char *driver_forward_host(const struct config *cfg, const char *root)
{
	char *t;
	int net;

	if (!*cfg->driver.host)
		return NULL;
	t = driver_fstype(root);
	net = driver_fs_is_network(t);
	free(t);
	return net ? cfg->driver.host : NULL;
}

/* tick --feeder with the job and token spelled out, for the far side. */
char **driver_forward_args(const char *job_id, const char *token, int *n)
{
	char **v = xcalloc(8, sizeof(*v));

	*n = 0;
	v[(*n)++] = xstrdup("tick");
	v[(*n)++] = xstrdup("--feeder");
	if (job_id && *job_id) {
		v[(*n)++] = xstrdup("--feeder-job");
		v[(*n)++] = xstrdup(job_id);
	}
	if (token && *token) {
		v[(*n)++] = xstrdup("--feeder-token");
		v[(*n)++] = xstrdup(token);
	}
	return v;
}

/* The study's block in a crontab replaced or appended. */
char *driver_scrontab_merge(const char *old, const char *root, const char *entry)
{
	char *begin = xasprintf("# xloop driver: %s", root);
	char *end = xasprintf("# xloop driver end: %s", root);
	struct buf b = BUF_INIT;
	const char *p = old;
	int inside = 0, done = 0;

	while (*p) {
		size_t n = strcspn(p, "\n");
		int is_begin = n == strlen(begin) && strncmp(p, begin, n) == 0;
		int is_end = n == strlen(end) && strncmp(p, end, n) == 0;

		if (is_begin && !done) {
			inside = 1;
			buf_addf(&b, "%s\n%s%s\n", begin, entry, end);
			done = 1;
		} else if (inside) {
			if (is_end)
				inside = 0;
		} else {
			buf_add(&b, p, n);
			buf_addc(&b, '\n');
		}
		p += n + (p[n] == '\n');
	}
	if (!done)
		buf_addf(&b, "%s\n%s%s\n", begin, entry, end);
	free(begin);
	free(end);
	return buf_detach(&b, NULL);
}
