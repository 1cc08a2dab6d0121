/*
 * Memory right-sizing (seed 000): what a job really needed is its peak
 * non-reclaimable memory (anon + shmem), not memory.peak, which counts
 * page cache the kernel would have given back. `xloop sample` writes one
 * line per interval from the job's cgroup; these pure functions read the
 * cgroup files and those lines, and size --mem from them.
 *
 * The sample file: a "# xloop-mem 1 ..." header, then per line
 *   <epoch> <anon> <shmem> <file> <current> <peak> <gpu> <phase>
 * in bytes (-1: not known), phase "train", "eval" or "-".
 */
#ifndef XLOOP_MEMSAMPLE_H
#define XLOOP_MEMSAMPLE_H

#define MEM_MARGIN 1.2		/* --mem = measured peak x this, rounded up */
#define MEM_OOM_GROWTH 1.5	/* after an OOM: the limit (or peak) x this */

/*
 * The memory cgroup of a process from /proc/PID/cgroup: *version 1 (the
 * "memory" controller's line) or 2 (the "0::" line), *path cut after its
 * "job_<id>" component when there is one, so the whole job is measured.
 * 0, or -1 when neither line is there.
 */
int mem_parse_proc_cgroup(const char *text, int *version, char **path);

/*
 * anon, shmem and file bytes from memory.stat: v1 total_rss, total_shmem,
 * total_cache (rss, shmem, cache without hierarchy); v2 anon, shmem, file.
 * Missing keys are -1. Returns 0, or -1 when no key was found.
 */
int mem_parse_stat(const char *text, int version, long long *anon,
		   long long *shmem, long long *file);

/* "train", "eval" or "-" for a job's log line. */
const char *mem_phase_of(const char *line);

struct mem_summary {
	size_t samples;
	long long first_at, last_at;	/* epoch seconds */
	long long peak_nonreclaim;	/* max of anon + shmem, bytes; -1 unknown */
	long long peak_total;		/* max of peak / current, bytes; -1 */
	long long peak_gpu;		/* bytes; -1 unknown */
	long long peak_train, peak_eval;	/* anon + shmem by phase; -1 */
};

/* Read a sample file. 0, or -1 with *cause (no header, a malformed line). */
int mem_summarize(const char *text, struct mem_summary *s, char **cause);

/* MB rounded up: to 256M below 4G, to whole G above. */
long long mem_round_up_mb(long long mb);

/* "768M", "5G" (malloc'd). */
char *mem_format_mb(long long mb);

#endif
