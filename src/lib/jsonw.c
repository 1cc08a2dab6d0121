/* JSON text written as it is made, in json_dumps' indented layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/jsonw.h"

/* Write values at depth into out. */
void jsonw_init(struct jsonw *w, struct buf *out, int depth)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->depth = depth;
}

/* Room for n more bytes and the NUL: buf_grow only when the buffer is full. */
static inline void room(struct buf *out, size_t n)
{
	if (out->len + n + 1 > out->cap)
		buf_grow(out, n);
}

/* n bytes appended (buf_add without its call when they fit). */
static inline void add(struct buf *out, const char *p, size_t n)
{
	room(out, n);
	memcpy(out->s + out->len, p, n);
	out->len += n;
	out->s[out->len] = '\0';
}

/* ",\n" and the deepest indent; the separator before a value at depth d is
 * its first (comma) or second character and the 2 * d spaces after them */
static const char indent[] = ",\n                                ";
/* bytes member_room copies from indent: the longest separator */
#define SEP_MAX (sizeof(indent) - 2)

/* Bytes copied as they are: printable ASCII but '"' and '\\' (not NUL). */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1,	/* '"' 0x22, '\\' 0x5c */
};

/* s as a string literal: escapes as jansson writes them, non-ASCII as \uXXXX. */
void jsonw_quote(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	size_t n, i = 0, run = 0;

	/* the usual case: printable ASCII with nothing to escape, in one pass */
	while (plain[p[run]])
		run++;
	if (!p[run]) {
		room(out, run + 2);
		out->s[out->len++] = '"';
		memcpy(out->s + out->len, s, run);
		out->len += run;
		out->s[out->len++] = '"';
		out->s[out->len] = '\0';
		return;
	}
	n = run + strlen(s + run);
	buf_addc(out, '"');
	while (i < n) {
		unsigned c = p[i], cp, units[2];
		size_t k, u, nu;

		/* copy plain ASCII in one go */
		for (run = i; plain[p[run]]; run++)
			;
		if (run > i) {
			buf_add(out, p + i, run - i);
			i = run;
			continue;
		}
		switch (c) {
		case '"': buf_adds(out, "\\\""); i++; continue;
		case '\\': buf_adds(out, "\\\\"); i++; continue;
		case '\b': buf_adds(out, "\\b"); i++; continue;
		case '\f': buf_adds(out, "\\f"); i++; continue;
		case '\n': buf_adds(out, "\\n"); i++; continue;
		case '\r': buf_adds(out, "\\r"); i++; continue;
		case '\t': buf_adds(out, "\\t"); i++; continue;
		}
		k = utf8_seq(p + i, n - i);
		if (k == 0) {		/* not UTF-8: what utf8_clean() would show */
			buf_addc(out, '?');
			i++;
			continue;
		}
		if (k == 1)
			cp = c;
		else if (k == 2)
			cp = (c & 0x1fu) << 6 | (p[i + 1] & 0x3fu);
		else if (k == 3)
			cp = (c & 0x0fu) << 12 | (p[i + 1] & 0x3fu) << 6 | (p[i + 2] & 0x3fu);
		else
			cp = (c & 0x07u) << 18 | (p[i + 1] & 0x3fu) << 12 |
			     (p[i + 2] & 0x3fu) << 6 | (p[i + 3] & 0x3fu);
		i += k;
		nu = 1;
		units[0] = cp;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			units[0] = 0xd800 | (cp >> 10);
			units[1] = 0xdc00 | (cp & 0x3ff);
			nu = 2;
		}
		for (u = 0; u < nu; u++) {
			char e[6] = { '\\', 'u', hex[units[u] >> 12 & 15], hex[units[u] >> 8 & 15],
				      hex[units[u] >> 4 & 15], hex[units[u] & 15] };

			buf_add(out, e, sizeof(e));
		}
	}
	buf_addc(out, '"');
}

/* ",\n" and the indent of depth d (d < JSONW_MAX_DEPTH). */
static void newline(struct buf *out, int comma, int d)
{
	_Static_assert(SEP_MAX - 2 >= 2 * (JSONW_MAX_DEPTH - 1), "indent too short");
	add(out, indent + !comma, (size_t)(1 + comma + 2 * d));
}

/*
 * The separator, the indent and the key (k bytes; none when NULL) before a
 * value, with room for extra more bytes after them: where the value goes.
 * The separator is copied whole from indent (a fixed size: no call), then
 * cut to its length.
 */
static char *member_room(struct jsonw *w, const char *key, size_t k, size_t extra)
{
	int d = w->depth < JSONW_MAX_DEPTH ? w->depth : JSONW_MAX_DEPTH - 1;
	int comma;
	char *o;

	room(w->out, SEP_MAX + k + 3 + extra);
	o = w->out->s + w->out->len;
	if (d == 0)		/* the document itself */
		return o;
	comma = w->count[d]++ > 0;
	memcpy(o, indent + !comma, SEP_MAX);
	o += 1 + comma + 2 * d;
	if (key) {
		*o++ = '"';
		memcpy(o, key, k);
		memcpy(o + k, "\": ", 3);
		o += k + 3;
	}
	return o;
}

/* The value's end at o: the buffer's length and its NUL. */
static inline void member_end(struct jsonw *w, char *o)
{
	*o = '\0';
	w->out->len = (size_t)(o - w->out->s);
}

/* The separator, the indent and the key before a value. */
static void member(struct jsonw *w, const char *key, size_t k)
{
	member_end(w, member_room(w, key, k, 0));
}

/* "{" or "[" as the next value. */
void jsonw_open_k(struct jsonw *w, const char *key, size_t k, char bracket)
{
	char *o = member_room(w, key, k, 1);

	*o++ = bracket;
	member_end(w, o);
	if (++w->depth < JSONW_MAX_DEPTH)
		w->count[w->depth] = 0;
}

/* Items another jsonw wrote at this depth, appended as they are. */
void jsonw_items(struct jsonw *w, const char *text, size_t len, size_t n)
{
	int d = w->depth < JSONW_MAX_DEPTH ? w->depth : JSONW_MAX_DEPTH - 1;

	buf_add(w->out, text, len);
	w->count[d] += n;
}

/* The closing bracket, on its own line unless the container is empty. */
void jsonw_close(struct jsonw *w, char bracket)
{
	int d = w->depth < JSONW_MAX_DEPTH ? w->depth : JSONW_MAX_DEPTH - 1;

	w->depth--;
	if (w->count[d])
		newline(w->out, 0, d - 1);
	add(w->out, &bracket, 1);
}

/* A string value: a plain one copied in one go after its key. */
void jsonw_str_k(struct jsonw *w, const char *key, size_t k, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t run = 0;
	char *o;

	while (plain[p[run]])
		run++;
	if (p[run]) {		/* something to escape */
		member(w, key, k);
		jsonw_quote(w->out, s);
		return;
	}
	o = member_room(w, key, k, run + 2);
	*o++ = '"';
	memcpy(o, s, run);
	o += run;
	*o++ = '"';
	member_end(w, o);
}

/* A string, or null for "" or NULL. */
void jsonw_str_or_null_k(struct jsonw *w, const char *key, size_t k, const char *s)
{
	if (s && *s)
		jsonw_str_k(w, key, k, s);
	else
		jsonw_null_k(w, key, k);
}

/* "00" to "99" */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* An integer value: its digits two at a time, without printf. */
void jsonw_int_k(struct jsonw *w, const char *key, size_t k, long long v)
{
	char tmp[24], *e = tmp + sizeof(tmp), *p = e, *o;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	while (u >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * u, 2);
	} else {
		*--p = (char)('0' + u);
	}
	if (v < 0)
		*--p = '-';
	o = member_room(w, key, k, sizeof(tmp));
	memcpy(o, p, (size_t)(e - p));
	member_end(w, o + (e - p));
}

/* A real, in jansson's own digits. */
void jsonw_real_k(struct jsonw *w, const char *key, size_t k, double v)
{
	json_t *j = isfinite(v) ? json_real(v) : NULL;
	char tmp[64];
	size_t n = j ? json_dumpb(j, tmp, sizeof(tmp), JSON_ENCODE_ANY) : 0;

	member(w, key, k);
	/* jansson's own digits, so that a score reads the same as elsewhere */
	if (n > 0 && n < sizeof(tmp))
		buf_add(w->out, tmp, n);
	else
		buf_adds(w->out, "null");
	json_decref(j);
}

/* true or false. */
void jsonw_bool_k(struct jsonw *w, const char *key, size_t k, int v)
{
	char *o = member_room(w, key, k, 5);

	memcpy(o, v ? "true" : "false", v ? 4 : 5);
	member_end(w, o + (v ? 4 : 5));
}

/* null. */
void jsonw_null_k(struct jsonw *w, const char *key, size_t k)
{
	char *o = member_room(w, key, k, 4);

	memcpy(o, "null", 4);
	member_end(w, o + 4);
}

/* head's members and key: [ (see jsonw.h). */
void jsonw_stream_begin(struct jsonw *w, struct buf *out, const json_t *head, const char *key)
{
	char *s = json_dumps(head, JSONW_DUMP_FLAGS);
	size_t len = s ? strlen(s) : 0;

	if (len <= 2)		/* "{}" */
		buf_adds(out, "{");
	else
		buf_add(out, s, len - 2);	/* without the closing "\n}" */
	free(s);
	jsonw_init(w, out, 1);
	w->count[1] = len > 2;
	jsonw_open(w, key, '[');
}

/* The closing ] and }. */
void jsonw_stream_end(struct jsonw *w)
{
	jsonw_close(w, ']');
	jsonw_close(w, '}');
}
