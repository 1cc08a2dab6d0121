/*
 * Where and how a feeder job (driver.h) runs its tick: the shape of the
 * job, the filesystem that holds the study (on a network one the tick is
 * forwarded to driver.host, so that one host opens the state DB), the
 * forwarded command line, the user's scrontab block, and doctor's probe.
 * Nothing here reads the state DB.
 */
#ifndef XLOOP_DRIVER_HOST_H
#define XLOOP_DRIVER_HOST_H

#include "config.h"
#include "slurm/slurm.h"

#define DRIVER_JOB_NAME "xloop-feed"
#define DRIVER_WATCH_NAME "xloop-watch"	/* the watchdog (driver.h) */
#define DRIVER_WATCH_PREFIX "watch-"	/* its token's, in the comment and the environment */
#define DRIVER_COMMENT SLURM_FEEDER_COMMENT	/* slurm.h: no run's comment starts so */
#define DRIVER_TIME "00:05:00"
#define DRIVER_MEM "256M"

/* Seconds from the environment variable name (lo..hi), else def: tests change them. */
long long driver_env_secs(const char *name, long long lo, long long hi, long long def);

/*
 * The filesystem type of the mount that holds path, from the text of
 * /proc/self/mountinfo (the longest mount point that is a prefix of
 * path, the last one of equal length); malloc'd, NULL when none. Pure.
 */
char *driver_mount_fstype(const char *mountinfo, const char *path);
/* 1 for NFS, Lustre, GPFS, CIFS, sshfs and other network filesystems. Pure. */
int driver_fs_is_network(const char *fstype);
/*
 * The type of the filesystem holding path here (malloc'd): mountinfo's
 * name, else from statfs's magic; a sentence when neither answers.
 */
char *driver_fstype(const char *path);

/*
 * Where a feeder for this study forwards its tick: driver.host when the
 * study lies on a network filesystem and a host is set, else NULL.
 */
const char *driver_forward_host(const struct config *cfg, const char *root);

/*
 * The command line of a feeder's tick forwarded to host (for remote_run):
 * "tick --feeder --feeder-job ID --feeder-token T". The array and its
 * strings are malloc'd (strv_free); *n is the count.
 */
char **driver_forward_args(const char *job_id, const char *token, int *n);

/*
 * The user's crontab text old with the study's block (between the lines
 * "# xloop driver: ROOT" and "# xloop driver end: ROOT") replaced by
 * entry, or appended when there is none. Malloc'd. Pure.
 */
char *driver_scrontab_merge(const char *old, const char *root, const char *entry);

/*
 * Doctor's probe: a feeder-sized job (XLOOP_DRIVER_PROBE_SECS, default 60,
 * to start and end) checks that this binary runs and the study is readable
 * where feeders run. *ok and *detail (malloc'd) say what it found; an exit
 * code when no probe could be submitted (*detail says why).
 */
int driver_probe(struct slurm *s, const struct config *cfg, const char *root, int *ok,
		 char **detail);

/* The absolute path of this xloop binary (malloc'd), NULL with *cause. */
char *driver_self_exe(char **cause);

#endif
