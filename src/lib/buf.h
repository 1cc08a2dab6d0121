/*
 * A growable string. buf.s is never NULL and always NUL-terminated; the one
 * way to take ownership of the bytes is buf_detach().
 */
#ifndef XLOOP_BUF_H
#define XLOOP_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "lib/util.h"

struct buf {
	char *s;
	size_t len;
	size_t cap;	/* 0 while s points at the shared empty string */
};

extern char buf_empty[];
#define BUF_INIT { buf_empty, 0, 0 }

void buf_init(struct buf *b);
/* Free the bytes and make b empty again (usable afterwards). */
void buf_release(struct buf *b);
/* Make sure len + extra bytes (and a NUL) fit. */
void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...) XL_PRINTF(2, 3);
void buf_vaddf(struct buf *b, const char *fmt, va_list ap) XL_PRINTF(2, 0);
/* Keep the allocation, drop the contents. */
void buf_reset(struct buf *b);
/* Shorten to n bytes (n <= len). */
void buf_setlen(struct buf *b, size_t n);
/* Remove trailing whitespace. */
void buf_rtrim(struct buf *b);
/* Hand the malloc'd bytes to the caller; b becomes empty. */
char *buf_detach(struct buf *b, size_t *len);

#endif
