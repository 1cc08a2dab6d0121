/*
 * The GPUs a job was given, node by node, as `scontrol -d show job` prints
 * them ("Nodes=node2 ... GRES=gpu:1(IDX:1)"), and the maps xloop keeps of
 * them in attempt.gpus. See slurm/parse.h.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* The IDX list of the gpu entry of a GRES allocation. */
char *slurm_gres_gpu_idx(const char *gres)
{
	const char *p = gres;

	while (p && *p) {
		const char *idx = strstr(p, "(IDX:"), *end;

		if (!idx)
			return NULL;
		/* the entry this IDX belongs to starts after the last ',' before "(" */
		end = idx;
		while (end > p && end[-1] != ',')
			end--;
		if (strncmp(end, "gpu", 3) == 0 && (end[3] == ':' || end[3] == '(')) {
			size_t n = strcspn(idx + 5, ")");

			if (n && idx[5 + n] == ')' && strspn(idx + 5, "0123456789,-") == n)
				return xstrndup(idx + 5, n);
			return NULL;
		}
		p = strchr(idx, ')');
		if (p)
			p++;
	}
	return NULL;
}

/* The GPUs each node of a job was given, from its node lines. */
char *slurm_job_gpu_map(const struct slurm_record *rec)
{
	struct buf b = BUF_INIT;
	const char *nodes = "";
	char *first = NULL;
	size_t i;
	int same = 1;

	for (i = 0; i < rec->nr_kv; i++) {
		const struct slurm_kv *kv = &rec->kv[i];
		char *idx;

		if (strcmp(kv->key, "Nodes") == 0) {
			nodes = kv->value;
			continue;
		}
		if (strcmp(kv->key, "GRES") != 0 && strcmp(kv->key, "GRES_IDX") != 0)
			continue;
		idx = slurm_gres_gpu_idx(kv->value);
		if (!idx)
			continue;	/* a node without GPUs, or one it cannot read */
		if (!first)
			first = xstrdup(idx);
		else if (strcmp(first, idx) != 0)
			same = 0;
		buf_addf(&b, "%s%s=%s", b.len ? ";" : "", nodes, idx);
		free(idx);
	}
	if (!first || same) {
		buf_release(&b);
		return first;
	}
	free(first);
	return buf_detach(&b, NULL);
}

/* Does hostlist hl[0..n) name host? */
static int names_host(const char *hl, size_t n, const char *host)
{
	char *list, **hosts = NULL;
	long nh, k;
	int found = 0;

	if (strlen(host) == n && memcmp(hl, host, n) == 0)
		return 1;
	if (!memchr(hl, '[', n) && !memchr(hl, ',', n))
		return 0;
	list = xstrndup(hl, n);
	nh = slurm_hostlist_expand(list, SLURM_GPU_MAP_HOSTS, &hosts, NULL);
	for (k = 0; k < nh && !found; k++)
		found = strcmp(hosts[k], host) == 0;
	slurm_hosts_free(hosts, nh > 0 ? nh : 0);
	free(list);
	return found;
}

/* The hosts a map of slurm_job_gpu_map names, added to hosts unless there (at most max). */
long slurm_gpu_map_hosts(const char *map, long max, char ***hosts, long n)
{
	const char *p = map;

	if (!map || !strchr(map, '='))
		return n;	/* one list for every node: it names none */
	while (*p) {
		size_t len = strcspn(p, ";");
		const char *eq = memchr(p, '=', len);
		char *list = eq ? xstrndup(p, (size_t)(eq - p)) : NULL, **more = NULL;
		long nm = list ? slurm_hostlist_expand(list, max, &more, NULL) : 0, k, i;

		for (k = 0; k < nm; k++) {
			for (i = 0; i < n && strcmp((*hosts)[i], more[k]) != 0; i++)
				;
			if (i < n || n >= max)
				continue;
			*hosts = xreallocarray(*hosts, (size_t)n + 1, sizeof(**hosts));
			(*hosts)[n++] = xstrdup(more[k]);
		}
		slurm_hosts_free(more, nm > 0 ? nm : 0);
		free(list);
		p += len;
		if (*p)
			p++;
	}
	return n;
}

/* The GPU index list of node in a map of slurm_job_gpu_map. */
const char *slurm_gpu_map_find(const char *map, const char *node, size_t *len)
{
	const char *p = map;

	*len = 0;
	if (!map || !*map)
		return NULL;
	if (!strchr(map, '=')) {
		*len = strlen(map);
		return map;	/* the same on every node */
	}
	while (*p) {
		size_t n = strcspn(p, ";");
		const char *eq = memchr(p, '=', n);

		if (eq && node && names_host(p, (size_t)(eq - p), node)) {
			*len = n - (size_t)(eq + 1 - p);
			return eq + 1;
		}
		p += n;
		if (*p)
			p++;
	}
	return NULL;
}

/* The indexes of an IDX list ("0,2-3,5"), at most max of them. */
long slurm_idx_list(const char *s, size_t n, long long *out, long max)
{
	const char *p = s, *end = s + n;
	long nr = 0;

	if (n == 0 || strspn(s, "0123456789,-") < n)
		return -1;
	while (p < end) {
		char *e;
		long long a = strtoll(p, &e, 10), b = a;

		if (e == p || e > end || a < 0)
			return -1;
		if (e < end && *e == '-') {
			p = e + 1;
			b = strtoll(p, &e, 10);
			if (e == p || e > end || b < a)
				return -1;
		}
		for (; a <= b && nr < max; a++)
			out[nr++] = a;
		if (e < end && *e != ',')
			return -1;
		p = e < end ? e + 1 : e;
		if (e + 1 == end)
			return -1;	/* a trailing ',' */
	}
	return nr;
}
