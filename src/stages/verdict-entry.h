/* The decision entries of verdicts (verdict-entry.c; reconcile stores the verdicts). */
#ifndef XLOOP_VERDICT_ENTRY_H
#define XLOOP_VERDICT_ENTRY_H

#include <stddef.h>

#include "ctx.h"

/* The best before a verdict in words, into buf (*key: its configuration, malloc'd, or NULL). */
void verdict_best_before(struct xl_ctx *ctx, char *buf, size_t n, char **key);

/*
 * Append the decision entry of a judged attempt (and of a promotion its
 * verdict made) to ops/decisions.md, commit it, and mark it written;
 * repair: the entry a crash left unwritten (written once, whatever came
 * before the crash).
 */
void verdict_entry_write(struct xl_ctx *ctx, long long attempt_id, const char *best,
			 const char *best_key, int repair);

/* Write the decision entries that a crash left unwritten, oldest first. */
void verdict_entries_repair(struct xl_ctx *ctx);

#endif
