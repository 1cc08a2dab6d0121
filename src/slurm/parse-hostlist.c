/*
 * Slurm's hostlist expressions ("node[1-2]", "gpu[01-16]", "a[1-3,7],b2"):
 * how many hosts one names, and the hosts themselves. See slurm/parse.h.
 */
#include <stdlib.h>
#include <string.h>

#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* Count the hosts of a hostlist expression. */
long slurm_hostlist_count(const char *list)
{
	long n = 0;
	const char *p = list;

	if (!list || !*list || strchr(list, ' '))
		return 0;
	while (*p) {
		const char *open = NULL, *end = p;

		/* one host expression: up to a comma outside brackets */
		while (*end && *end != ',') {
			if (*end == '[') {
				open = end;
				end += strcspn(end, "]");
				if (*end)
					end++;
				continue;
			}
			end++;
		}
		if (!open) {
			n += end > p;
		} else {
			/* "1-3,7" between the brackets */
			const char *q = open + 1;
			long in = 0;

			while (q < end && *q != ']') {
				char *e;
				long a = strtol(q, &e, 10), b = a;

				if (e == q)
					break;
				if (*e == '-') {
					q = e + 1;
					b = strtol(q, &e, 10);
					if (e == q || b < a)
						b = a;
				}
				in += b - a + 1;
				q = *e == ',' ? e + 1 : e;
				if (*e != ',' && *e != ']')
					break;
			}
			n += in > 0 ? in : 1;
		}
		p = *end ? end + 1 : end;
	}
	return n;
}

/* The hosts found so far, and at most how many may be. */
struct hosts {
	char **v;
	long n, max;
};

/* Add prefix + s[0..n) to h; -1 once there would be more than h->max. */
static int add_host(struct hosts *h, const char *prefix, const char *s, size_t n)
{
	if (h->n >= h->max)
		return -1;
	h->v = xreallocarray(h->v, (size_t)h->n + 1, sizeof(*h->v));
	h->v[h->n++] = xasprintf("%s%.*s", prefix, (int)n, s);
	return 0;
}

/*
 * Expand one host expression s[0..n) (no comma outside brackets) after
 * prefix: each bracket group in turn, numbers padded to their lower
 * bound's digits ("01-10": 01 .. 10). -1 with *why when it cannot.
 */
static int expand_one(struct hosts *h, const char *prefix, const char *s, size_t n,
		      const char **why)
{
	const char *open = memchr(s, '[', n), *close, *q;

	*why = NULL;
	if (memchr(s, ']', open ? (size_t)(open - s) : n)) {
		*why = "a ']' without its '['";
		return -1;
	}
	if (!open && add_host(h, prefix, s, n) < 0)
		*why = "too many hosts";
	if (!open)
		return *why ? -1 : 0;
	close = memchr(open, ']', n - (size_t)(open - s));
	for (q = open + 1; close && q < close; q++) {
		size_t da = strspn(q, "0123456789"), db = 0;
		long a, b, v;

		if (da == 0 || da > 9)
			break;
		a = b = strtol(q, NULL, 10);
		if (q[da] == '-') {
			db = strspn(q + da + 1, "0123456789");
			if (db == 0 || db > 9)
				break;
			b = strtol(q + da + 1, NULL, 10);
			db++;
		}
		if (b < a || (q[da + db] != ',' && q[da + db] != ']'))
			break;
		if (b - a >= h->max - h->n) {
			*why = "too many hosts";
			return -1;
		}
		for (v = a; v <= b; v++) {
			char *pre = xasprintf("%s%.*s%0*ld", prefix, (int)(open - s), s, (int)da, v);
			int rc = expand_one(h, pre, close + 1, n - (size_t)(close + 1 - s), why);

			free(pre);
			if (rc < 0)
				return -1;
		}
		q += da + db;
		if (*q == ',' && q + 1 == close)
			break;
	}
	if (!close || q != close + 1) {
		*why = !close ? "a '[' without its ']'" :
		       "a range that is not 'N', 'N-M' (M >= N) or a list of them";
		return -1;
	}
	return 0;
}

/* The hosts of a hostlist expression, in order. */
long slurm_hostlist_expand(const char *list, long max, char ***hosts, char **cause)
{
	struct hosts h = { NULL, 0, max };
	const char *p = list, *why = NULL;

	*hosts = NULL;
	if (!list || !*list || strcmp(list, "None assigned") == 0 || strcmp(list, "(null)") == 0)
		return 0;
	while (*p && !why) {
		size_t n = 0;
		int depth = 0;

		/* one host expression: up to a comma outside brackets */
		for (; p[n] && (depth > 0 || p[n] != ','); n++)
			depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
		if (n == 0)
			why = "an empty name";
		else if (strcspn(p, " \t\n") < n)
			why = "a space in a name";
		else if (expand_one(&h, "", p, n, &why) == 0)
			why = NULL;
		p += n;
		if (!why && *p == ',' && !*++p)
			why = "an empty name";
	}
	if (why) {
		slurm_hosts_free(h.v, h.n);
		if (strcmp(why, "too many hosts") == 0)
			return fail(cause, "hostlist '%.80s' names more than %ld hosts", list, max);
		return fail(cause, "'%.80s' is not a hostlist: %s", list, why);
	}
	*hosts = h.v;
	return h.n;
}

/* Free what slurm_hostlist_expand gave. */
void slurm_hosts_free(char **hosts, long n)
{
	long i;

	for (i = 0; i < n; i++)
		free(hosts[i]);
	free(hosts);
}
