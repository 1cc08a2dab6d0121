/*
 * Notifications: events are queued in the outbox table (inside the
 * transaction that made them) and sent afterwards to one webhook, at least
 * once: a receiver may see the same event twice after a crash between the
 * POST and the row update (the json payload carries the row id to dedupe).
 *
 * The URL lives only in the environment variable named by notify.url_env
 * (default XLOOP_NOTIFY_URL), never in the repository, and is never printed:
 * every message shows only its scheme and host, the rest as "***" (see
 * notify_redact). notify.kind picks the
 * payload: discord {"content"}, slack {"text"}, ntfy (plain text with a
 * Title header) or json (the event document of schemas/event.schema.json).
 *
 * Sending never fails the caller: it is bounded in time (about 20 s per
 * flush) and its problems come back as one warning line. libcurl's global
 * state is set up and torn down around each flush or send, so main need not
 * know about it (xloop runs no other threads meanwhile).
 */
#ifndef XLOOP_NOTIFY_H
#define XLOOP_NOTIFY_H

#include "config.h"
#include "db.h"

struct notify_event {
	const char *kind;	/* one of notify_kinds[] */
	const char *study;
	const char *tag;	/* may be "" */
	const char *text;	/* one human line, e.g. "lr-0.1 attempt 1 failed: OUT_OF_MEMORY" */
};

/* The event kinds (NULL-terminated), as in schemas/event.schema.json. */
extern const char *const notify_kinds[];

/* True when kind is one of notify_kinds[]. */
int notify_valid_kind(const char *kind);

/*
 * Queue an event in the outbox (inside the caller's transaction or not).
 * Returns the row id, or -1 (unknown kind, or a database error; printed).
 */
long long notify_queue(struct db *db, const struct notify_event *ev);

/*
 * Send what is queued, oldest first, to the webhook; call it after COMMIT
 * (inside a transaction it sends nothing and says so in *warning).
 * - sent rows become 'sent'; a 4xx answer (other than 408 and 429) makes a
 *   row 'failed' so it is not retried forever;
 * - a transient failure (connect error, timeout, 5xx, 429 with a long
 *   Retry-After) leaves the row queued, with attempts and last_error (URL
 *   redacted), and ends this flush so the order is kept: the next flush
 *   tries again. Rows still queued after 24 h become 'expired';
 * - no URL configured (variable unset or empty, or url_env ""): every
 *   queued row becomes 'no_url', so the outbox does not grow forever while
 *   notifications are off; no warning;
 * - rows that left the queue more than 30 days ago are deleted, but for
 *   the newest row, so that ids (the payload's event id) never repeat.
 * At most 3 tries per event, about 20 s in all. Returns the number sent;
 * *warning is NULL or one malloc'd line for the tick log (without a
 * "notify:" prefix).
 */
int notify_flush(struct db *db, const struct config *cfg, char **warning);

/*
 * Send one event now (`xloop notify test`), with the same retries as a
 * flush. Returns 0, or -1 with *cause allocated (URL redacted).
 */
int notify_send_now(const struct config *cfg, const struct notify_event *ev,
		    char **cause);

/* The configured webhook URL, or NULL when the variable is unset or empty. */
const char *notify_url(const struct config *cfg);

/* 0 when url is an http:// or https:// URL with a host; -1 with *cause. */
int notify_check_url(const char *url, char **cause);

/*
 * What may be shown of url: "scheme://host[:port]" then a slash and "***"
 * (no user, password, path or query). Caller frees.
 */
char *notify_redact(const char *url);

/* Number of queued rows, or -1 on a database error. */
long long notify_pending(struct db *db);

#endif
