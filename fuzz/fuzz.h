/*
 * Helpers shared by the libFuzzer targets in fuzz/fuzz_*.c: a C string
 * from the fuzzer's bytes, and contract checks that abort (libFuzzer then
 * saves the input as a crash artifact).
 */
#ifndef XLOOP_FUZZ_H
#define XLOOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with a message when cond is false: a broken contract is a crash. */
#define FUZZ_CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, \
			__LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

/* The bytes up to the first NUL (or all of them) as a malloc'd string. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	return xstrndup((const char *)data, size);
}

/*
 * Split off leading "#X value" directive lines (X one of the letters in
 * keys): *rest points after them, vals[i] gets the value of keys[i] (a
 * malloc'd string, NULL when absent). Lets a corpus file choose the
 * parser's arguments while plain Slurm output stays a valid seed.
 */
static inline void fuzz_directives(const char *in, const char *keys,
				   char **vals, const char **rest)
{
	const char *p = in, *k;

	while (p[0] == '#' && p[1] && (k = strchr(keys, p[1])) != NULL &&
	       (p[2] == ' ' || p[2] == '\n' || p[2] == '\0')) {
		size_t n = strcspn(p, "\n");
		size_t i = (size_t)(k - keys);

		free(vals[i]);
		vals[i] = p[2] == ' ' ? xstrndup(p + 3, n - 3) : xstrdup("");
		p += n;
		if (*p)
			p++;
	}
	*rest = p;
}

#endif
