/* The plan: an ordered queue of intended one-variable changes (DB module). */
#ifndef XLOOP_PLAN_H
#define XLOOP_PLAN_H

#include "db.h"

struct plan_entry {
	long long id;
	char *parent;		/* a tag or "best" */
	char *var;
	char *value;
	char *status;		/* queued, done, skipped, removed */
	char *run_tag;		/* the run it became, "" */
	char *skip_reason;
	long long added_at;
};

int plan_add(struct db *db, const char *study, const char *parent, const char *var,
	     const char *value, long long *id);
/* Entries of the study; only queued ones when queued_only. */
int plan_list(struct db *db, const char *study, int queued_only,
	      struct plan_entry **v, size_t *n);
/* Mark an entry done (run_id), skipped (reason) or removed: 0, 1 not found/not queued, -1. */
int plan_mark(struct db *db, const char *study, long long id, const char *status,
	      long long run_id, const char *reason);
void plan_entries_free(struct plan_entry *v, size_t n);

#endif
