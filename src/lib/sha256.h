/* SHA-256 of a buffer, as hex digits. Pure: no DB, no process, no file. */
#ifndef XLOOP_SHA256_H
#define XLOOP_SHA256_H

#include <stddef.h>

/* sha256 of bytes as 64 hex digits (and a NUL). */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
