/* Reading cgroup memory files and sample files (pure). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "memsample.h"
#include "lib/util.h"

/* Cut path after its "/job_<digits>" component, if it has one. */
static void cut_at_job(char *path)
{
	char *p = path;

	while ((p = strstr(p, "/job_")) != NULL) {
		size_t d = strspn(p + 5, "0123456789");

		if (d > 0 && (p[5 + d] == '/' || p[5 + d] == '\0')) {
			p[5 + d] = '\0';
			return;
		}
		p += 5;
	}
}

/* Find the memory cgroup line. */
int mem_parse_proc_cgroup(const char *text, int *version, char **path)
{
	const char *line = text;
	char *v2 = NULL;

	*path = NULL;
	while (*line) {
		size_t len = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			size_t clen = (size_t)(c2 - c1 - 1);
			char *ctl = xstrndup(c1 + 1, clen), *tok, *save = NULL;
			int mem = 0;

			for (tok = strtok_r(ctl, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				mem |= strcmp(tok, "memory") == 0;
			free(ctl);
			if (mem) {
				free(v2);
				*version = 1;
				*path = xstrndup(c2 + 1, len - (size_t)(c2 + 1 - line));
				cut_at_job(*path);
				return 0;
			}
			if (clen == 0 && c1 - line == 1 && line[0] == '0' && !v2)
				v2 = xstrndup(c2 + 1, len - (size_t)(c2 + 1 - line));
		}
		line += len + (line[len] == '\n');
	}
	if (!v2)
		return -1;
	*version = 2;
	*path = v2;
	cut_at_job(*path);
	return 0;
}

/* Read memory.stat. */
int mem_parse_stat(const char *text, int version, long long *anon,
		   long long *shmem, long long *file)
{
	static const char *const v1[][2] = {
		{ "total_rss", "rss" }, { "total_shmem", "shmem" }, { "total_cache", "cache" },
	};
	static const char *const v2[] = { "anon", "shmem", "file" };
	long long *out[] = { anon, shmem, file }, vals[3][2];
	const char *line = text;
	int i, found = 0;

	for (i = 0; i < 3; i++)
		vals[i][0] = vals[i][1] = -1;
	while (*line) {
		size_t len = strcspn(line, "\n"), klen = strcspn(line, " \n");
		const char *errstr;
		long long x;
		char *num;

		if (klen < len) {
			num = xstrndup(line + klen + 1, len - klen - 1);
			if (parse_ll(num, 0, LLONG_MAX, &x, &errstr) == 0) {
				for (i = 0; i < 3; i++) {
					if (version == 1) {
						if (strlen(v1[i][0]) == klen &&
						    strncmp(line, v1[i][0], klen) == 0)
							vals[i][0] = x, found = 1;
						if (strlen(v1[i][1]) == klen &&
						    strncmp(line, v1[i][1], klen) == 0)
							vals[i][1] = x, found = 1;
					} else if (strlen(v2[i]) == klen &&
						   strncmp(line, v2[i], klen) == 0) {
						vals[i][0] = x, found = 1;
					}
				}
			}
			free(num);
		}
		line += len + (line[len] == '\n');
	}
	for (i = 0; i < 3; i++)
		*out[i] = vals[i][0] >= 0 ? vals[i][0] : vals[i][1];
	return found ? 0 : -1;
}

/* Which phase a log line speaks of. */
const char *mem_phase_of(const char *line)
{
	static const char *const eval[] = { "eval", "valid", "predict", "infer", "test" };
	static const char *const train[] = { "train", "fold", "epoch", "step" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(eval); i++)
		if (strcasestr(line, eval[i]))
			return "eval";
	for (i = 0; i < ARRAY_SIZE(train); i++)
		if (strcasestr(line, train[i]))
			return "train";
	return "-";
}

static void take_max(long long *m, long long v)
{
	if (v >= 0 && v > *m)
		*m = v;
}

/* Read a sample file. */
int mem_summarize(const char *text, struct mem_summary *s, char **cause)
{
	const char *line = text;
	int lineno = 0;

	memset(s, 0, sizeof(*s));
	s->peak_nonreclaim = s->peak_total = s->peak_gpu = -1;
	s->peak_train = s->peak_eval = -1;
	if (!starts_with(text, "# xloop-mem 1")) {
		*cause = xasprintf("not an xloop sample file (no '# xloop-mem 1' header)");
		return -1;
	}
	while (*line) {
		size_t len = strcspn(line, "\n");
		long long v[7];
		char phase[8] = "", *l;
		int got;

		lineno++;
		if (*line != '#' && len > 0) {
			l = xstrndup(line, len);
			got = sscanf(l, "%lld %lld %lld %lld %lld %lld %lld %7s", &v[0], &v[1],
				     &v[2], &v[3], &v[4], &v[5], &v[6], phase);
			free(l);
			if (got != 8) {
				/* the last line may be cut by the job's end */
				if (line[len] == '\0')
					break;
				*cause = xasprintf("sample file line %d is malformed", lineno);
				return -1;
			}
			if (!s->samples++)
				s->first_at = v[0];
			s->last_at = v[0];
			if (v[1] >= 0) {
				long long nr = v[1] + (v[2] > 0 ? v[2] : 0);

				take_max(&s->peak_nonreclaim, nr);
				if (strcmp(phase, "train") == 0)
					take_max(&s->peak_train, nr);
				else if (strcmp(phase, "eval") == 0)
					take_max(&s->peak_eval, nr);
			}
			take_max(&s->peak_total, v[4]);
			take_max(&s->peak_total, v[5]);
			take_max(&s->peak_gpu, v[6]);
		}
		line += len + (line[len] == '\n');
	}
	return 0;
}

/* Round up to a size worth asking for. */
long long mem_round_up_mb(long long mb)
{
	if (mb <= 0)
		return 256;
	if (mb < 4096)
		return (mb + 255) / 256 * 256;
	return (mb + 1023) / 1024 * 1024;
}

/* Format MB as Slurm reads it. */
char *mem_format_mb(long long mb)
{
	if (mb >= 1024 && mb % 1024 == 0)
		return xasprintf("%lldG", mb / 1024);
	return xasprintf("%lldM", mb);
}
