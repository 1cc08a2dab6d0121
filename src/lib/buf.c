/* Growable strings. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"

char buf_empty[1];

/* Initialise an empty buffer. */
void buf_init(struct buf *b)
{
	b->s = buf_empty;
	b->len = 0;
	b->cap = 0;
}

/* Free the bytes; b stays usable. */
void buf_release(struct buf *b)
{
	if (b->cap)
		free(b->s);
	buf_init(b);
}

/* Make room for extra more bytes plus the NUL. */
void buf_grow(struct buf *b, size_t extra)
{
	size_t need;

	if (extra > (size_t)-1 - b->len - 1)
		BUG("buf_grow: size overflow");
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->s = NULL;
	b->cap = b->cap ? b->cap : 64;
	while (b->cap < need)
		b->cap = b->cap > (size_t)-1 / 2 ? need : b->cap * 2;
	b->s = xreallocarray(b->s, b->cap, 1);
	if (b->len == 0)
		b->s[0] = '\0';
}

/* Append n bytes. */
void buf_add(struct buf *b, const void *data, size_t n)
{
	if (n == 0)
		return;
	buf_grow(b, n);
	memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = '\0';
}

/* Append a C string. */
void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* Append one byte. */
void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/* Append formatted text. */
void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	size_t n = xvformat_len(fmt, ap);

	buf_grow(b, n);
	vsnprintf(b->s + b->len, n + 1, fmt, ap);
	b->len += n;
}

/* Append formatted text. */
void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

/* Empty the buffer, keeping its allocation. */
void buf_reset(struct buf *b)
{
	buf_setlen(b, 0);
}

/* Truncate to n bytes. */
void buf_setlen(struct buf *b, size_t n)
{
	if (n > b->len)
		BUG("buf_setlen: %zu beyond length %zu", n, b->len);
	b->len = n;
	if (b->cap)
		b->s[n] = '\0';
}

/* Drop trailing whitespace. */
void buf_rtrim(struct buf *b)
{
	size_t n = b->len;

	while (n > 0 && isspace((unsigned char)b->s[n - 1]))
		n--;
	buf_setlen(b, n);
}

/* Give the bytes to the caller. */
char *buf_detach(struct buf *b, size_t *len)
{
	char *s;

	if (len)
		*len = b->len;
	s = b->cap ? b->s : xstrdup("");
	buf_init(b);
	return s;
}
