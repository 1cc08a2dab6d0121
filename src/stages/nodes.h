/* nodes.h - the nodes a study avoids (issue 34): the DB's view of node failures. */
#ifndef XLOOP_NODES_H
#define XLOOP_NODES_H

#include <stddef.h>
#include <time.h>

#include "db.h"

/*
 * A node that failed NODE_AVOID_FAILS of the study's attempts (NODE_FAIL,
 * BOOT_FAIL) within NODE_AVOID_SECS is avoided: every submission excludes
 * it until its failures are that old (issue 34).
 */
#define NODE_AVOID_FAILS 2
#define NODE_AVOID_SECS 3600
struct avoided_node {
	char *node;		/* as Slurm named it (NodeList) */
	long long fails;	/* the study's attempts it failed in the window */
	long long last;		/* the latest of them ended (Unix seconds) */
};
/* The study's avoided nodes at now (*v malloc'd; avoided_nodes_free). 0 or -1. */
int runs_avoided_nodes(struct db *db, const char *study, time_t now,
		       struct avoided_node **v, size_t *n);
void avoided_nodes_free(struct avoided_node *v, size_t n);
/*
 * What a submission excludes: extra's hosts (a NodeList or several, comma-
 * separated: the node a retry's attempt failed on, a segment's lost node
 * and its attempt's own --exclude; NULL none) and the avoided nodes, each
 * once, comma-separated (malloc'd), or NULL for none; never all of the
 * partition's nodes, extra's first kept first (nodes: its TotalNodes, -1
 * unknown: then only extra).
 */
char *runs_exclude_nodes(struct db *db, const char *study, const char *extra, time_t now,
			 long long nodes);
/* The partition's TotalNodes as the last preflight saw it (-1: unknown). */
long long runs_partition_nodes(struct db *db, const char *partition);
/* Remember the partition's TotalNodes, read by a preflight. */
void runs_remember_partition_nodes(struct db *db, const char *partition, long long n);

#endif
