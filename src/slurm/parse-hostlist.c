/*
 * Slurm's hostlist expressions ("node[1-2]", "gpu[01-16]", "a[1-3,7],b2"):
 * how many hosts one names, and the hosts themselves. See slurm/parse.h.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/*
 * The hosts found so far and at most how many may be; with keep, their
 * names too (expanding), else only their number (counting, which never
 * makes a name: "gpu[1-100000]" costs what "gpu[1-2]" does).
 */
struct hosts {
	char **v;
	long n, max;
	int keep;
};

/* Add mult hosts (keep: the one named prefix + s[0..n)); -1 past h->max. */
static int add_hosts(struct hosts *h, long mult, const char *prefix, const char *s, size_t n)
{
	if (mult > h->max - h->n)
		return -1;
	if (h->keep) {
		h->v = xreallocarray(h->v, (size_t)h->n + 1, sizeof(*h->v));
		h->v[h->n] = xasprintf("%s%.*s", prefix, (int)n, s);
	}
	h->n += mult;
	return 0;
}

/*
 * Walk one host expression s[0..n) (no comma outside brackets) after
 * prefix: each bracket group in turn, numbers padded to their lower
 * bound's digits ("01-10": 01 .. 10); each host it names counts mult
 * times. Expanding, each number of a range is walked on its own (mult
 * 1); counting, the rest is walked once per range, mult times its size.
 * -1 with *why when it cannot.
 */
static int walk_one(struct hosts *h, const char *prefix, long mult, const char *s, size_t n,
		    const char **why)
{
	const char *open = memchr(s, '[', n), *close, *q;

	*why = NULL;
	if (memchr(s, ']', open ? (size_t)(open - s) : n)) {
		*why = "a ']' without its '['";
		return -1;
	}
	if (!open && add_hosts(h, mult, prefix, s, n) < 0)
		*why = "too many hosts";
	if (!open)
		return *why ? -1 : 0;
	close = memchr(open, ']', n - (size_t)(open - s));
	for (q = open + 1; close && q < close; q++) {
		size_t da = strspn(q, "0123456789"), db = 0;
		size_t rest = n - (size_t)(close + 1 - s);
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
		if (b - a + 1 > (h->max - h->n) / mult) {
			*why = "too many hosts";
			return -1;
		}
		if (!h->keep && walk_one(h, NULL, mult * (b - a + 1), close + 1, rest, why) < 0)
			return -1;
		for (v = a; h->keep && v <= b; v++) {
			char *pre = xasprintf("%s%.*s%0*ld", prefix, (int)(open - s), s, (int)da, v);
			int rc = walk_one(h, pre, 1, close + 1, rest, why);

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

/*
 * Walk a hostlist, its expressions in order, into h: NULL, or why it is
 * not one. Lenient (counting only): an expression it cannot read is one
 * host, an empty one none, and the walk goes on.
 */
static const char *walk_list(struct hosts *h, const char *list, int lenient)
{
	const char *p = list, *why = NULL;

	while (*p && !why) {
		size_t n = 0;
		long before = h->n;
		int depth = 0;

		/* one host expression: up to a comma outside brackets */
		for (; p[n] && (depth > 0 || p[n] != ','); n++)
			depth += p[n] == '[' ? 1 : p[n] == ']' ? -1 : 0;
		if (n == 0)
			why = "an empty name";
		else if (strcspn(p, " \t\n") < n)
			why = "a space in a name";
		else if (walk_one(h, "", 1, p, n, &why) == 0)
			why = NULL;
		if (why && lenient) {
			h->n = before + (n > 0);
			why = NULL;
		}
		p += n;
		if (!why && *p == ',' && !*++p && !lenient)
			why = "an empty name";
	}
	return why;
}

/* Count the hosts of a hostlist expression. */
long slurm_hostlist_count(const char *list)
{
	struct hosts h = { NULL, 0, LONG_MAX, 0 };

	if (!list || !*list || strchr(list, ' '))
		return 0;
	walk_list(&h, list, 1);
	return h.n;
}

/* Of two NodeLists of one job, the one naming more hosts (a unless b names more). */
const char *slurm_wider_nodes(const char *a, const char *b)
{
	if (!b || strcmp(b, "(null)") == 0)
		return a;
	return slurm_hostlist_count(b) > slurm_hostlist_count(a) ? b : a;
}

/* The hosts of a hostlist expression, in order. */
long slurm_hostlist_expand(const char *list, long max, char ***hosts, char **cause)
{
	struct hosts h = { NULL, 0, max, 1 };
	const char *why;

	*hosts = NULL;
	if (!list || !*list || strcmp(list, "None assigned") == 0 || strcmp(list, "(null)") == 0)
		return 0;
	why = walk_list(&h, list, 0);
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
