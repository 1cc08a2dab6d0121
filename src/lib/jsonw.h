/*
 * JSON text written as it is made, without building a json_t: for lists
 * too large to hold (status --json of a study with 50,000 attempts). The
 * output is byte for byte what json_dumps() gives for the same document
 * with JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII, the flags
 * of every other --json document (test_jsonw checks this against jansson).
 * Pure: appends to a buf.
 */
#ifndef XLOOP_JSONW_H
#define XLOOP_JSONW_H

#include <string.h>

#include "lib/buf.h"

struct json_t;

#define JSONW_MAX_DEPTH 16
/* json_dumps flags of every --json document (cmd_emit_json) */
#define JSONW_DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

struct jsonw {
	struct buf *out;
	int depth;			/* containers open around the next value */
	size_t count[JSONW_MAX_DEPTH];	/* values written at each depth */
};

/*
 * Start writing values at depth (0: a whole document; 2: the items of an
 * array that is a member of the top-level object).
 */
void jsonw_init(struct jsonw *w, struct buf *out, int depth);

/*
 * Each value is a member named key inside an object, or an item (key NULL).
 * Keys are written as they are: plain words of ours, never user data. The
 * *_k forms take the key's length k; the inline forms below pass it.
 */
void jsonw_open_k(struct jsonw *w, const char *key, size_t k, char bracket);
void jsonw_close(struct jsonw *w, char bracket);			/* '}' ']' */
void jsonw_str_k(struct jsonw *w, const char *key, size_t k, const char *s);
void jsonw_str_or_null_k(struct jsonw *w, const char *key, size_t k, const char *s);
void jsonw_int_k(struct jsonw *w, const char *key, size_t k, long long v);
void jsonw_real_k(struct jsonw *w, const char *key, size_t k, double v);
void jsonw_bool_k(struct jsonw *w, const char *key, size_t k, int v);
void jsonw_null_k(struct jsonw *w, const char *key, size_t k);

/* The key's length: a constant for a literal (status writes 1.1 million keys). */
#define JSONW_KLEN(key) ((key) ? strlen(key) : 0)

/* '{' or '[' as the next value. */
static inline void jsonw_open(struct jsonw *w, const char *key, char bracket)
{
	jsonw_open_k(w, key, JSONW_KLEN(key), bracket);
}

/* A string value. */
static inline void jsonw_str(struct jsonw *w, const char *key, const char *s)
{
	jsonw_str_k(w, key, JSONW_KLEN(key), s);
}

/* s, or null when s is NULL or "". */
static inline void jsonw_str_or_null(struct jsonw *w, const char *key, const char *s)
{
	jsonw_str_or_null_k(w, key, JSONW_KLEN(key), s);
}

/* An integer value. */
static inline void jsonw_int(struct jsonw *w, const char *key, long long v)
{
	jsonw_int_k(w, key, JSONW_KLEN(key), v);
}

/* A real value (jansson's digits), null if not finite. */
static inline void jsonw_real(struct jsonw *w, const char *key, double v)
{
	jsonw_real_k(w, key, JSONW_KLEN(key), v);
}

/* true or false. */
static inline void jsonw_bool(struct jsonw *w, const char *key, int v)
{
	jsonw_bool_k(w, key, JSONW_KLEN(key), v);
}

/* null. */
static inline void jsonw_null(struct jsonw *w, const char *key)
{
	jsonw_null_k(w, key, JSONW_KLEN(key));
}

/*
 * n items written elsewhere, by a jsonw started (jsonw_init) at the depth
 * of the container w has open: text is appended as it is.
 */
void jsonw_items(struct jsonw *w, const char *text, size_t len, size_t n);

/*
 * A document too large to build: head's members (dumped by jansson), then
 * key: [ ... ] whose items the caller writes with w (at depth 2), then end.
 * head is not freed. key is a plain word ("runs").
 */
void jsonw_stream_begin(struct jsonw *w, struct buf *out, const struct json_t *head,
			const char *key);
void jsonw_stream_end(struct jsonw *w);

/* The string s as a JSON string literal (quoted, escaped, ASCII only). */
void jsonw_quote(struct buf *out, const char *s);

#endif
