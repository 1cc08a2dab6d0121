/* nodes.c - the nodes a study avoids, from its attempts' node failures. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "stages/nodes.h"
#include "lib/util.h"

/* The study's avoided nodes: NODE_AVOID_FAILS node failures within NODE_AVOID_SECS. */
int runs_avoided_nodes(struct db *db, const char *study, time_t now,
		       struct avoided_node **v, size_t *n)
{
	struct stmt q;
	int rc;

	*v = NULL;
	*n = 0;
	if (db_prepare(db, &q, "SELECT t.node, count(*), max(t.ended_at)"
		       " FROM attempt t JOIN run r ON r.id = t.run_id"
		       " WHERE +r.study = :study AND t.state IN ('NODE_FAIL', 'BOOT_FAIL')"
		       " AND coalesce(t.node, '') != '' AND t.ended_at >= :since"
		       " GROUP BY t.node HAVING count(*) >= :min ORDER BY t.node") < 0)
		return -1;
	db_bind_text(&q, ":study", study);
	db_bind_int64(&q, ":since", (long long)now - NODE_AVOID_SECS);
	db_bind_int64(&q, ":min", NODE_AVOID_FAILS);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		*v = xreallocarray(*v, *n + 1, sizeof(**v));
		(*v)[*n].node = xstrdup(db_col_text(&q, 0));
		(*v)[*n].fails = db_col_int64(&q, 1);
		(*v)[*n].last = db_col_int64(&q, 2);
		(*n)++;
	}
	db_finalize(&q);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Free what runs_avoided_nodes gave. */
void avoided_nodes_free(struct avoided_node *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].node);
	free(v);
}

/* Add host to the list (n names in b) unless it is there already. */
static void add_host(struct buf *b, long long *n, const char *host)
{
	const char *p;
	size_t len = strlen(host);

	for (p = b->s; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (strncmp(p, host, len) == 0 && (p[len] == ',' || !p[len]))
			return;
	buf_addf(b, "%s%s", b->len ? "," : "", host);
	(*n)++;
}

/* extra's hosts and the avoided nodes as one --exclude list, or NULL. */
char *runs_exclude_nodes(struct db *db, const char *study, const char *extra, time_t now,
			 long long nodes)
{
	struct avoided_node *v;
	struct buf b = BUF_INIT;
	char **hosts = NULL, *cause = NULL;
	long long k = 0;
	long nh = 0, i;
	size_t n, j;

	if (extra && *extra && (nh = slurm_hostlist_expand(extra, 4096, &hosts, &cause)) < 0) {
		buf_adds(&b, extra);	/* not a list we can read: as it is */
		k++;
	}
	/* first named, first kept: never every node of the partition */
	for (i = 0; i < nh && (nodes <= 1 || k + 1 < nodes); i++)
		add_host(&b, &k, hosts[i]);
	if (nodes > 1 && runs_avoided_nodes(db, study, now, &v, &n) == 0) {
		for (j = 0; j < n && k + 1 < nodes; j++)
			add_host(&b, &k, v[j].node);
		avoided_nodes_free(v, n);
	}
	slurm_hosts_free(hosts, nh > 0 ? nh : 0);
	free(cause);
	if (!b.len) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

/* The kv key of a partition's TotalNodes. */
static char *nodes_key(const char *partition)
{
	return xasprintf("limit.nodes.%s", partition);
}

/* The partition's TotalNodes as the last preflight saw it (-1: unknown). */
long long runs_partition_nodes(struct db *db, const char *partition)
{
	char *k = nodes_key(partition);
	long long n = db_kv_get(db, k);

	free(k);
	return n > 0 ? n : -1;
}

/* Remember the partition's TotalNodes (a preflight read it). */
void runs_remember_partition_nodes(struct db *db, const char *partition, long long n)
{
	char *k = nodes_key(partition);

	db_kv_set(db, k, n);
	free(k);
}
