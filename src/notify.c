/* Notifications: the outbox, the payloads, and the webhook POST (libcurl). */
#define _GNU_SOURCE	/* memmem */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lib/buf.h"
#include "notify.h"
#include "lib/util.h"

#define BUDGET_MS 20000		/* per flush or send, all tries included */
#define CONNECT_TIMEOUT_MS 3000
#define REQUEST_TIMEOUT_MS 8000
#define MIN_TRY_MS 1000		/* do not start a request with less time left */
#define MAX_TRIES 3		/* per event per flush */
#define MAX_RETRY_AFTER 5	/* seconds of a 429's Retry-After worth waiting */
#define MAX_TEXT 1900		/* bytes of text; Discord refuses over 2000 characters */
#define SNIPPET 160		/* bytes of an error answer kept in last_error */
#define FLUSH_MAX_ROWS 200
#define EXPIRE_SECS (24 * 3600)	/* queued longer than this: expired */
#define PRUNE_SECS (30 * 24 * 3600)	/* done rows older than this: deleted */

const char *const notify_kinds[] = {
	"job_ended", "failure", "new_best", "queue_empty", "one_left", "stale",
	"stuck", "breaker", "autopilot", "test", "stopped", NULL,
};

enum payload { P_JSON, P_DISCORD, P_SLACK, P_NTFY };

/* Where a flush or a send goes, and until when it may try. */
struct target {
	const char *url;
	char *shown;		/* the redacted URL */
	enum payload payload;
	long long deadline;	/* monotonic ms */
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
	struct buf answer;	/* the start of the response body */
};

enum outcome {
	SENT,
	LATER,		/* keep it queued; end this flush */
	GIVE_UP,	/* refused for good (4xx) */
};

/* One row of the outbox. */
struct queued {
	long long id, at;
	char *kind, *study, *tag, *text;
};

/* True when kind is a known event kind. */
int notify_valid_kind(const char *kind)
{
	const char *const *k;

	for (k = notify_kinds; *k; k++)
		if (strcmp(*k, kind) == 0)
			return 1;
	return 0;
}

/* Queue one event in the outbox. */
long long notify_queue(struct db *db, const struct notify_event *ev)
{
	struct stmt q;

	if (!notify_valid_kind(ev->kind))
		return error("unknown notification kind '%s'", ev->kind);
	if (db_prepare(db, &q, "INSERT INTO outbox (at, kind, study, tag, text) "
		       "VALUES (:at, :kind, :study, :tag, :text)") < 0)
		return -1;
	db_bind_int64(&q, ":at", (long long)time(NULL));
	db_bind_text(&q, ":kind", ev->kind);
	db_bind_text(&q, ":study", ev->study);
	db_bind_text(&q, ":tag", ev->tag ? ev->tag : "");
	db_bind_text(&q, ":text", ev->text);
	if (db_run(&q) < 0)
		return -1;
	return (long long)sqlite3_last_insert_rowid(db->h);
}

/* Number of queued rows. */
long long notify_pending(struct db *db)
{
	struct stmt q;
	long long n = -1;

	if (db_prepare(db, &q, "SELECT count(*) FROM outbox WHERE status = 'queued'") < 0)
		return -1;
	if (db_step(&q) == SQLITE_ROW)
		n = db_col_int64(&q, 0);
	db_finalize(&q);
	return n;
}

/* The webhook URL from the environment, or NULL. */
const char *notify_url(const struct config *cfg)
{
	const char *url;

	if (cfg->notify_url_env == NULL || *cfg->notify_url_env == '\0')
		return NULL;
	url = getenv(cfg->notify_url_env);
	return url && *url ? url : NULL;
}

/* Length of the scheme before "://", or 0 when url has none. */
static size_t scheme_len(const char *url)
{
	size_t n = strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "0123456789+.-");

	return n > 0 && n <= 16 && strncmp(url + n, "://", 3) == 0 ? n : 0;
}

/* The host[:port] part of url (after the scheme, without user:password@). */
static const char *authority(const char *url, size_t *len)
{
	size_t sl = scheme_len(url), n;
	const char *host, *at;

	if (sl == 0) {
		*len = 0;
		return url;
	}
	host = url + sl + 3;
	n = strcspn(host, "/?#");
	for (at = host + n; at > host; at--)
		if (at[-1] == '@')
			break;
	*len = n - (size_t)(at - host);
	return at;
}

/* What may be shown of url: scheme and host, nothing of the path. */
char *notify_redact(const char *url)
{
	size_t sl = scheme_len(url), hl, i;
	const char *host = authority(url, &hl);
	char *out;

	if (sl == 0)
		return xstrdup("***");
	for (i = 0; i < hl; i++)
		if ((unsigned char)host[i] <= ' ' || (unsigned char)host[i] >= 0x7f)
			break;
	if (i < hl)
		out = xasprintf("%.*s://***", (int)sl, url);
	else
		out = xasprintf("%.*s://%.*s/***", (int)sl, url, (int)hl, host);
	for (i = 0; i < sl; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	return out;
}

/* An http:// or https:// URL with a host and no blanks. */
int notify_check_url(const char *url, char **cause)
{
	size_t sl = scheme_len(url), hl;
	const char *p;

	if (sl == 0) {
		*cause = xstrdup("the webhook URL must start with http:// or https://");
		return -1;
	}
	if (!((sl == 4 && strncasecmp(url, "http", 4) == 0) ||
	      (sl == 5 && strncasecmp(url, "https", 5) == 0))) {
		*cause = xasprintf("the webhook URL must start with http:// or https:// "
				   "(not %.*s://)", (int)sl, url);
		return -1;
	}
	for (p = url; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			*cause = xstrdup("the webhook URL contains a blank or a control character");
			return -1;
		}
	}
	authority(url, &hl);
	if (hl == 0) {
		*cause = xstrdup("the webhook URL has no host");
		return -1;
	}
	return 0;
}

/* s with every occurrence of needle (if not empty) replaced by with. */
static char *replace_all(const char *s, const char *needle, size_t nlen,
			 const char *with)
{
	struct buf b = BUF_INIT;
	const char *hit;

	if (nlen == 0)
		return xstrdup(s);
	while ((hit = memmem(s, strlen(s), needle, nlen)) != NULL) {
		buf_add(&b, s, (size_t)(hit - s));
		buf_adds(&b, with);
		s = hit + nlen;
	}
	buf_adds(&b, s);
	return buf_detach(&b, NULL);
}

/*
 * msg with the URL's secret parts removed: the whole URL becomes the
 * redacted one, then any trace of the path or the user:password part.
 */
static char *scrub(const struct target *t, const char *msg)
{
	size_t sl = scheme_len(t->url), hl;
	const char *host = authority(t->url, &hl), *path = host + hl;
	const char *user = t->url + sl + 3;
	char *a, *b, *c;

	a = replace_all(msg, t->url, strlen(t->url), t->shown);
	/* a path of one character ("/") tells nothing */
	b = replace_all(a, path, strlen(path) > 1 ? strlen(path) : 0, "/***");
	c = replace_all(b, user, sl && host > user ? (size_t)(host - user) : 0, "***@");
	free(a);
	free(b);
	return c;
}

/* One line of valid UTF-8, at most max bytes (then ending in "..."). */
static char *one_line(const char *s, size_t max)
{
	char *out = utf8_clean(s, strlen(s)), *p;
	size_t n;

	for (p = out; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = ' ';
	n = strlen(out);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)out[n] & 0xc0) == 0x80)
			n--;
		out[n] = '\0';
		p = xasprintf("%s...", out);
		free(out);
		out = p;
	}
	return out;
}

/* Slack wants &, < and > escaped in message text. */
static char *slack_escape(const char *s)
{
	struct buf b = BUF_INIT;

	for (; *s; s++) {
		if (*s == '&')
			buf_adds(&b, "&amp;");
		else if (*s == '<')
			buf_adds(&b, "&lt;");
		else if (*s == '>')
			buf_adds(&b, "&gt;");
		else
			buf_addc(&b, *s);
	}
	return buf_detach(&b, NULL);
}

static enum payload payload_of(const struct config *cfg)
{
	const char *k = cfg->notify_kind ? cfg->notify_kind : "json";

	if (strcmp(k, "discord") == 0)
		return P_DISCORD;
	if (strcmp(k, "slack") == 0)
		return P_SLACK;
	if (strcmp(k, "ntfy") == 0)
		return P_NTFY;
	return P_JSON;
}

/* The request body for ev; the text is cleaned and clipped first. */
static char *build_body(enum payload pl, const struct notify_event *ev,
			long long id, long long at)
{
	char *text = one_line(ev->text, MAX_TEXT), *kind, *study, *tag, *esc, *out;
	json_t *doc = NULL;

	switch (pl) {
	case P_NTFY:
		return text;
	case P_DISCORD:
		/* no @everyone or role pings from a job's text */
		doc = json_pack("{s:s, s:{s:[]}}", "content", text,
				"allowed_mentions", "parse");
		break;
	case P_SLACK:
		esc = slack_escape(text);
		doc = json_pack("{s:s}", "text", esc);
		free(esc);
		break;
	case P_JSON:
		kind = one_line(ev->kind, 64);
		study = one_line(ev->study, 256);
		tag = one_line(ev->tag ? ev->tag : "", 256);
		doc = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "kind", kind,
				"study", study, "tag", tag, "text", text,
				"at", (json_int_t)at, "id", (json_int_t)id);
		free(kind);
		free(study);
		free(tag);
		break;
	}
	free(text);
	out = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(doc);
	if (out == NULL)
		BUG("unable to encode a notification");
	return out;
}

/* The request headers for ev. */
static struct curl_slist *build_headers(enum payload pl, const struct notify_event *ev)
{
	struct curl_slist *h = NULL;
	char *study, *title;

	/* no "Expect: 100-continue" round trip for larger bodies */
	h = curl_slist_append(h, "Expect:");
	if (pl != P_NTFY)
		return curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Content-Type: text/plain; charset=utf-8");
	study = one_line(ev->study, 200);
	title = xasprintf("Title: xloop %s", study);
	h = curl_slist_append(h, title);
	free(title);
	free(study);
	return h;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Keep the first SNIPPET bytes of the answer, for error messages. */
static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = size * n;

	if (b->len < SNIPPET)
		buf_add(b, p, len < SNIPPET - b->len ? len : SNIPPET - b->len);
	return len;
}

/* Failures worth another try right away: nothing reached the server. */
static int transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* "HTTP 404: <start of the answer>" */
static char *http_error(struct target *t, long status, const char *what)
{
	char *body = one_line(t->answer.s, SNIPPET), *msg;

	msg = xasprintf("HTTP %ld%s%s%s", status, what, *body ? ": " : "", body);
	free(body);
	return msg;
}

/*
 * POST ev to the target: up to MAX_TRIES tries within the deadline, with
 * backoff on connect errors and 5xx and Retry-After on 429. *tries counts
 * the requests made; *err is set (scrubbed) unless SENT.
 */
static enum outcome deliver(struct target *t, const struct notify_event *ev,
			    long long id, long long at, int *tries, char **err)
{
	char *body = build_body(t->payload, ev, id, at), *msg = NULL;
	struct curl_slist *hdrs = build_headers(t->payload, ev);
	enum outcome res = LATER;
	long long left, wait;
	long status, timeout;
	curl_off_t retry_after, connected;
	CURLcode rc;

	*tries = 0;
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(t->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(t->h, CURLOPT_POSTFIELDS, body);
	for (;;) {
		left = t->deadline - now_ms();
		if (left < MIN_TRY_MS) {
			free(msg);
			msg = xasprintf("out of time (%d s for all tries)", BUDGET_MS / 1000);
			break;
		}
		timeout = left < REQUEST_TIMEOUT_MS ? (long)left : REQUEST_TIMEOUT_MS;
		curl_easy_setopt(t->h, CURLOPT_TIMEOUT_MS, timeout);
		curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT_MS,
				 timeout < CONNECT_TIMEOUT_MS ? timeout : CONNECT_TIMEOUT_MS);
		buf_reset(&t->answer);
		t->errbuf[0] = '\0';
		rc = curl_easy_perform(t->h);
		(*tries)++;
		FREE_AND_NULL(msg);
		wait = -1;	/* no retry unless set below */
		status = 0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &status);
		if (rc == CURLE_OK && status >= 200 && status < 300) {
			res = SENT;
			break;
		} else if (rc == CURLE_OK && status == 429) {
			retry_after = 0;
			curl_easy_getinfo(t->h, CURLINFO_RETRY_AFTER, &retry_after);
			if (retry_after > 0)
				msg = xasprintf("rate limited (HTTP 429, Retry-After %ld s)",
						(long)retry_after);
			else
				msg = xstrdup("rate limited (HTTP 429)");
			if (retry_after <= MAX_RETRY_AFTER)
				wait = retry_after > 0 ? retry_after * 1000 : 500LL * *tries;
		} else if (rc == CURLE_OK && (status >= 500 || status == 408)) {
			msg = http_error(t, status, "");
			wait = 500LL * *tries;
		} else if (rc == CURLE_OK) {
			msg = http_error(t, status, status >= 300 && status < 400 ?
					 " (redirects are not followed)" : "");
			res = GIVE_UP;
			break;
		} else if (rc == CURLE_OPERATION_TIMEDOUT) {
			connected = 0;
			curl_easy_getinfo(t->h, CURLINFO_CONNECT_TIME_T, &connected);
			if (connected > 0) {
				/* it may have arrived: do not repeat it now */
				msg = xasprintf("no answer within %ld s", (timeout + 999) / 1000);
			} else {
				long ct = timeout < CONNECT_TIMEOUT_MS ? timeout :
					  CONNECT_TIMEOUT_MS;

				msg = xasprintf("no connection within %ld s", (ct + 999) / 1000);
				wait = 500LL * *tries;
			}
		} else {
			msg = xstrdup(t->errbuf[0] ? t->errbuf : curl_easy_strerror(rc));
			if (transient(rc))
				wait = 500LL * *tries;
		}
		if (wait < 0 || *tries >= MAX_TRIES)
			break;
		if (now_ms() + wait + MIN_TRY_MS > t->deadline)
			break;
		sleep_ms(wait);
	}
	curl_easy_setopt(t->h, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(t->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(body);
	if (res != SENT) {
		char *line = one_line(msg ? msg : "unknown error", 400);

		*err = scrub(t, line);
		free(line);
	}
	free(msg);
	return res;
}

static void target_release(struct target *t)
{
	if (t->h)
		curl_easy_cleanup(t->h);
	curl_global_cleanup();
	buf_release(&t->answer);
	free(t->shown);
}

/*
 * Set up libcurl for url (checked already). Returns 0, or -1 with *cause;
 * target_release() either way.
 */
static int target_init(struct target *t, const struct config *cfg, const char *url,
		       char **cause)
{
	memset(t, 0, sizeof(*t));
	buf_init(&t->answer);
	t->url = url;
	t->shown = notify_redact(url);
	t->payload = payload_of(cfg);
	t->deadline = now_ms() + BUDGET_MS;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (t->h = curl_easy_init()) == NULL) {
		*cause = xstrdup("unable to start libcurl");
		return -1;
	}
	if (curl_easy_setopt(t->h, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(t->h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(t->h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK) {
		*cause = xasprintf("libcurl refuses the webhook URL %s", t->shown);
		return -1;
	}
	curl_easy_setopt(t->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(t->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(t->h, CURLOPT_POST, 1L);
	curl_easy_setopt(t->h, CURLOPT_USERAGENT, "xloop/" XLOOP_VERSION);
	curl_easy_setopt(t->h, CURLOPT_ERRORBUFFER, t->errbuf);
	curl_easy_setopt(t->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(t->h, CURLOPT_WRITEDATA, &t->answer);
	return 0;
}

/* Send one event now. */
int notify_send_now(const struct config *cfg, const struct notify_event *ev,
		    char **cause)
{
	const char *url = notify_url(cfg);
	struct target t;
	char *err = NULL;
	int tries, rc = -1;

	if (url == NULL) {
		*cause = *cfg->notify_url_env ?
			xasprintf("no webhook URL: %s is not set", cfg->notify_url_env) :
			xstrdup("notifications are off (notify.url_env is \"\")");
		return -1;
	}
	if (notify_check_url(url, cause) < 0)
		return -1;
	if (target_init(&t, cfg, url, cause) == 0) {
		if (deliver(&t, ev, 0, (long long)time(NULL), &tries, &err) == SENT)
			rc = 0;
		else
			*cause = xasprintf("%s: %s", t.shown, err);
	}
	free(err);
	target_release(&t);
	return rc;
}

/* Run one UPDATE/DELETE with :now and :cut bound; the rows changed or -1. */
static int housekeep(struct db *db, const char *sql, long long now, long long cut)
{
	struct stmt q;
	int rc;

	if (db_prepare(db, &q, sql) < 0)
		return -1;
	if (strstr(sql, ":now"))
		db_bind_int64(&q, ":now", now);
	if (strstr(sql, ":cut"))
		db_bind_int64(&q, ":cut", cut);
	rc = db_step(&q);
	db_finalize(&q);
	return rc == SQLITE_DONE ? sqlite3_changes(db->h) : -1;
}

/* Record what happened to row id. */
static int mark(struct db *db, long long id, const char *status, int tries,
		const char *err)
{
	struct stmt q;

	if (db_prepare(db, &q, "UPDATE outbox SET status = :status, "
		       "attempts = attempts + :tries, last_error = :err, "
		       "done_at = CASE WHEN :status = 'queued' THEN NULL ELSE :now END "
		       "WHERE id = :id") < 0)
		return -1;
	db_bind_text(&q, ":status", status);
	db_bind_int64(&q, ":tries", tries);
	db_bind_text(&q, ":err", err);
	db_bind_int64(&q, ":now", (long long)time(NULL));
	db_bind_int64(&q, ":id", id);
	return db_run(&q);
}

/* The oldest queued rows, at most FLUSH_MAX_ROWS. */
static int load_queued(struct db *db, struct queued **out, size_t *n)
{
	struct stmt q;
	struct queued *v = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	if (db_prepare(db, &q, "SELECT id, at, kind, study, tag, text FROM outbox "
		       "WHERE status = 'queued' ORDER BY id LIMIT :max") < 0)
		return -1;
	db_bind_int64(&q, ":max", FLUSH_MAX_ROWS);
	while ((rc = db_step(&q)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[*n].id = db_col_int64(&q, 0);
		v[*n].at = db_col_int64(&q, 1);
		v[*n].kind = xstrdup(db_col_text(&q, 2));
		v[*n].study = xstrdup(db_col_text(&q, 3));
		v[*n].tag = xstrdup(db_col_text(&q, 4));
		v[*n].text = xstrdup(db_col_text(&q, 5));
		(*n)++;
	}
	db_finalize(&q);
	*out = v;
	return rc == SQLITE_DONE ? 0 : -1;
}

static void queued_free(struct queued *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].study);
		free(v[i].tag);
		free(v[i].text);
	}
	free(v);
}

/* Append "; "-separated parts to the warning line. */
static void note(struct buf *w, const char *fmt, ...) XL_PRINTF(2, 3);
static void note(struct buf *w, const char *fmt, ...)
{
	va_list ap;

	if (w->len)
		buf_adds(w, "; ");
	va_start(ap, fmt);
	buf_vaddf(w, fmt, ap);
	va_end(ap);
}

/* Send the outbox. */
int notify_flush(struct db *db, const struct config *cfg, char **warning)
{
	const char *url = notify_url(cfg);
	long long now = (long long)time(NULL), pending;
	struct buf w = BUF_INIT;
	struct queued *rows = NULL;
	struct target t;
	size_t n = 0, i;
	char *cause = NULL, *err = NULL, *first_err = NULL;
	int sent = 0, failed = 0, tries, expired, started = 0;
	enum outcome res;

	*warning = NULL;
	if (db->txn_depth > 0) {
		*warning = xstrdup("nothing sent (flush called inside a transaction)");
		return 0;
	}
	expired = housekeep(db, "UPDATE outbox SET status = 'expired', done_at = :now "
			    "WHERE status = 'queued' AND at < :cut", now, now - EXPIRE_SECS);
	if (expired > 0)
		note(&w, "%d unsent for 24 h expired", expired);
	/* the newest row stays: a new row's id (the event id receivers dedupe
	 * by) then never repeats one sent before */
	housekeep(db, "DELETE FROM outbox WHERE status != 'queued' AND done_at < :cut"
		  " AND id < (SELECT max(id) FROM outbox)", now, now - PRUNE_SECS);
	if (url == NULL) {
		/* notifications are off: drop, so the outbox does not grow */
		housekeep(db, "UPDATE outbox SET status = 'no_url', done_at = :now "
			  "WHERE status = 'queued'", now, 0);
		goto out;
	}
	if (notify_check_url(url, &cause) < 0) {
		pending = notify_pending(db);
		if (pending > 0)
			note(&w, "%s (in %s); %lld stay queued", cause,
			     cfg->notify_url_env, pending);
		goto out;
	}
	if (load_queued(db, &rows, &n) < 0) {
		note(&w, "unable to read the outbox");
		goto out;
	}
	if (n == 0)
		goto out;
	started = 1;
	if (target_init(&t, cfg, url, &cause) < 0) {
		note(&w, "%s", cause);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct notify_event ev = { rows[i].kind, rows[i].study, rows[i].tag,
					   rows[i].text };

		if (t.deadline - now_ms() < MIN_TRY_MS) {
			if (!first_err)
				first_err = xstrdup("out of time");
			break;
		}
		res = deliver(&t, &ev, rows[i].id, rows[i].at, &tries, &err);
		if (mark(db, rows[i].id, res == SENT ? "sent" : res == GIVE_UP ?
			 "failed" : "queued", tries, err) < 0)
			note(&w, "unable to record notification %lld", rows[i].id);
		if (res == SENT)
			sent++;
		else if (res == GIVE_UP)
			failed++;
		if (err && !first_err)
			first_err = xstrdup(err);
		FREE_AND_NULL(err);
		if (res == LATER)
			break;	/* keep the order; the next flush goes on */
	}
	pending = notify_pending(db);
	if (failed || pending > 0) {
		struct buf what = BUF_INIT;

		if (failed)
			buf_addf(&what, "%d refused for good", failed);
		if (pending > 0)
			buf_addf(&what, "%s%lld kept for the next try", failed ? ", " : "",
				 pending);
		note(&w, "%s (%s: %s)", what.s, t.shown, first_err ? first_err : "?");
		buf_release(&what);
	}
out:
	if (started)
		target_release(&t);
	queued_free(rows, n);
	free(first_err);
	free(cause);
	*warning = w.len ? buf_detach(&w, NULL) : NULL;
	buf_release(&w);
	return sent;
}
