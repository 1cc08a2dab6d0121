/* nodes.c - the nodes a study avoids, from its attempts' node failures. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/buf.h"
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

/* extra and the avoided nodes as one --exclude list, or NULL. */
char *runs_exclude_nodes(struct db *db, const char *study, const char *extra, time_t now,
			 long long nodes)
{
	struct avoided_node *v;
	struct buf b = BUF_INIT;
	long long k = 0;
	size_t n, i;

	if (extra && *extra) {
		buf_adds(&b, extra);
		k++;
	}
	if (nodes > 1 && runs_avoided_nodes(db, study, now, &v, &n) == 0) {
		for (i = 0; i < n && k + 1 < nodes; i++)
			if (!extra || strcmp(v[i].node, extra) != 0) {
				buf_addf(&b, "%s%s", b.len ? "," : "", v[i].node);
				k++;
			}
		avoided_nodes_free(v, n);
	}
	if (!b.len) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}
