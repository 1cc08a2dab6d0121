/*
 * Parser for sinfo -R output (node reasons).
 * See slurm-parse.h for the contract of each entry point.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* ----------------------------------------------------------------- sinfo */

/* Free the node reasons. */
void slurm_node_reasons_release(struct slurm_node_reasons *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		free(r->v[i].node);
		free(r->v[i].reason);
		free(r->v[i].user);
		free(r->v[i].timestamp);
	}
	free(r->v);
	r->v = NULL;
	r->nr = 0;
}

/* Column starts of sinfo -R's default header; -1 for absent columns. */
struct sinfo_cols {
	long reason, user, timestamp, nodelist;
};

/* Find the columns of a "REASON  USER  TIMESTAMP  NODELIST" header. */
static int sinfo_header(struct span h, struct sinfo_cols *c)
{
	size_t i = 0, start;

	c->reason = c->user = c->timestamp = c->nodelist = -1;
	while (i < h.n) {
		struct span w;

		while (i < h.n && h.s[i] == ' ')
			i++;
		start = i;
		while (i < h.n && h.s[i] != ' ')
			i++;
		w.s = h.s + start;
		w.n = i - start;
		if (w.n == 0)
			break;
		if (span_ieq(w, "REASON"))
			c->reason = (long)start;
		else if (span_ieq(w, "USER"))
			c->user = (long)start;
		else if (span_ieq(w, "TIMESTAMP"))
			c->timestamp = (long)start;
		else if (span_ieq(w, "NODELIST"))
			c->nodelist = (long)start;
		else
			return -1;
	}
	return c->reason == 0 && c->nodelist > 0 ? 0 : -1;
}

/* The text of the column starting at col, up to the next column. */
static struct span column(struct span line, const struct sinfo_cols *c,
			  long col)
{
	long cols[] = { c->reason, c->user, c->timestamp, c->nodelist };
	long next = (long)line.n;
	struct span v = { line.s, 0 };
	size_t i;

	if (col < 0 || (size_t)col >= line.n)
		return v;
	for (i = 0; i < ARRAY_SIZE(cols); i++)
		if (cols[i] > col && cols[i] < next)
			next = cols[i];
	if (next > (long)line.n)
		next = (long)line.n;
	v.s = line.s + col;
	v.n = (size_t)(next - col);
	return v;
}

/* Add one node reason. */
static void reasons_add(struct slurm_node_reasons *r, size_t *cap,
			struct span node, struct span reason, struct span user,
			struct span ts, int truncated)
{
	struct slurm_node_reason *nr;

	GROW(r->v, r->nr, *cap);
	nr = &r->v[r->nr++];
	nr->node = xstrndup(node.s, node.n);
	nr->reason = xstrndup(reason.s, reason.n);
	nr->user = xstrndup(user.s, user.n);
	nr->timestamp = xstrndup(ts.s, ts.n);
	nr->truncated = truncated;
}

/* Parse sinfo -R output, '%n|%E|%H' or the default table. */
int slurm_parse_sinfo_reasons(const char *out, struct slurm_node_reasons *r,
			      char **cause)
{
	struct slurm_node_reasons res = SLURM_NODE_REASONS_INIT;
	const char *p = out ? out : "";
	struct sinfo_cols cols;
	struct span line, none = { "", 0 };
	size_t cap = 0;
	int table = 0;

	r->v = NULL;
	r->nr = 0;
	while (next_line(&p, &line)) {
		struct span t = trim(line), node, reason, user, ts;
		const char *b1, *b2;
		time_t when;
		char *s;

		if (t.n == 0)
			continue;
		if (span_starts(t, "sinfo: error:") ||
		    span_starts(t, "sinfo: fatal:") ||
		    span_starts(t, "slurm_load_node error:")) {
			fail(cause, "sinfo failed: '%.*s'", QLEN(t.n), t.s);
			goto err;
		}
		if (!table && res.nr == 0 && span_starts(line, "REASON ")) {
			if (sinfo_header(line, &cols)) {
				fail(cause, "unknown sinfo header '%.*s'",
				     QLEN(t.n), t.s);
				goto err;
			}
			table = 1;
			continue;
		}
		if (table) {
			long width = (cols.user > 0 ? cols.user :
				      cols.timestamp > 0 ? cols.timestamp :
				      cols.nodelist) - 1;

			reason = trim(column(line, &cols, cols.reason));
			node = trim(column(line, &cols, cols.nodelist));
			user = trim(column(line, &cols, cols.user));
			ts = trim(column(line, &cols, cols.timestamp));
			reasons_add(&res, &cap, node, reason, user, ts,
				    (long)reason.n >= width);
			continue;
		}
		b1 = memchr(line.s, '|', line.n);
		b2 = mem_rfind(line.s, line.n, "|", 1);
		if (b1 == NULL || b1 == b2) {
			fail(cause, "sinfo line '%.*s' is not "
			     "'node|reason|timestamp'", QLEN(line.n), line.s);
			goto err;
		}
		node.s = line.s;
		node.n = (size_t)(b1 - line.s);
		reason.s = b1 + 1;
		reason.n = (size_t)(b2 - reason.s);
		ts.s = b2 + 1;
		ts.n = line.n - (size_t)(ts.s - line.s);
		node = trim(node);
		ts = trim(ts);
		s = xstrndup(ts.s, ts.n);
		if (node.n == 0 || slurm_parse_time(s, &when, NULL)) {
			free(s);
			fail(cause, "sinfo line '%.*s' is not "
			     "'node|reason|timestamp'", QLEN(line.n), line.s);
			goto err;
		}
		free(s);
		user = none;
		reasons_add(&res, &cap, node, reason, user, ts, 0);
	}
	*r = res;
	return 0;
err:
	slurm_node_reasons_release(&res);
	return -1;
}

/* ------------------------------------------------------- sinfo GPUs */

/* GPUs of one node's GRES ("gpu:8(S:0-1)", "gpu:a100:4,mps:400"), 0 none. */
static long long node_gpus(const char *gres)
{
	const char *p = gres, *errstr;
	long long total = 0, v;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len > 4 && strncmp(p, "gpu:", 4) == 0) {
			/* the count is the last ':' field before any '(' */
			size_t end = strcspn(p, ",(");
			const char *c = p + end;
			char num[24];

			while (c > p && c[-1] != ':')
				c--;
			if ((size_t)(p + end - c) < sizeof(num)) {
				memcpy(num, c, (size_t)(p + end - c));
				num[p + end - c] = '\0';
				if (parse_ll(num, 1, LLONG_MAX / 1024, &v, &errstr) == 0)
					total += v;
			}
		}
		p += len;
		/* a '(' list may hold commas: skip to the entry after its ')' */
		if (memchr(p - len, '(', len) && !memchr(p - len, ')', len)) {
			const char *close = strchr(p, ')');

			p = close ? close + 1 : p + strlen(p);
			p += strcspn(p, ",");
		}
		if (*p == ',')
			p++;
	}
	return total;
}

/* Jobs of per_job GPUs the partition's nodes hold at once, from sinfo. */
long long slurm_sinfo_gpus(const char *text, long long per_job)
{
	const char *p = text, *errstr;
	long long total = 0;

	while (*p) {
		size_t len = strcspn(p, "\n");
		const char *bar = memchr(p, '|', len);
		char num[24], *gres;
		long long nodes;

		if (len == 0) {
			p++;
			continue;
		}
		if (!bar || (size_t)(bar - p) >= sizeof(num))
			return -1;
		memcpy(num, p, (size_t)(bar - p));
		num[bar - p] = '\0';
		if (parse_ll(num, 0, 1 << 20, &nodes, &errstr) < 0)
			return -1;
		gres = xstrndup(bar + 1, len - (size_t)(bar + 1 - p));
		total += nodes * (node_gpus(gres) / (per_job > 0 ? per_job : 1));
		free(gres);
		p += len;
		if (*p)
			p++;
	}
	return total;
}

/* GPUs a node of a job asks for in a --gres request. */
long long slurm_gres_request_gpus(const char *gres)
{
	const char *p = gres, *errstr;
	long long total = 0, v;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (strncmp(p, "gpu", 3) == 0 && (len == 3 || p[3] == ':')) {
			/* "gpu[:type][:count]": a last field that is no number is a type */
			const char *c = p + len;
			char num[24];

			while (c > p && c[-1] != ':')
				c--;
			v = 1;
			if (c > p && (size_t)(p + len - c) < sizeof(num)) {
				memcpy(num, c, (size_t)(p + len - c));
				num[p + len - c] = '\0';
				if (parse_ll(num, 0, LLONG_MAX / 1024, &v, &errstr) < 0)
					v = 1;
			}
			total += v;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return total;
}

/* The GPUs a node of a job is charged for: its --gres request's, at least 1. */
long long slurm_gres_charged_gpus(const char *gres)
{
	long long n = slurm_gres_request_gpus(gres);

	return n > 0 ? n : 1;
}
