/* Allocation, error reporting and number parsing. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/util.h"

/*
 * A long study's status --json or next writes 10 to 20 MB of heap, a page
 * fault for each 4 kB page first touched; on a VM a fault costs several
 * microseconds (issue 47: status --json on 10,000 runs, 4,673 faults).
 * So the heap's first 64 MB are taken at once (address space: pages come
 * when touched) and asked for in 2 MB pages (852 faults, a third less
 * CPU); the heap is not trimmed until 128 MB are free, and blocks
 * up to 32 MB stay in it rather than in mmaps of their own. Where malloc
 * is not glibc's own (the sanitizers') mallopt fails and nothing changes.
 */
void heap_huge_pages(void)
{
#ifdef MADV_HUGEPAGE
	enum { RESERVE = 64 << 20 };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
	void *volatile p;	/* a malloc the compiler may not leave out */

	if (mallopt(M_MMAP_THRESHOLD, RESERVE / 2) != 1 || mallopt(M_TOP_PAD, RESERVE) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, 2 * RESERVE) != 1)
		return;
	lo = (uintptr_t)sbrk(0);
	p = malloc(1 << 20);	/* more than the heap has: it grows by RESERVE */
	free(p);
	hi = (uintptr_t)sbrk(0);
	lo = (lo + page - 1) & ~(page - 1);
	hi &= ~(page - 1);
	if (lo != (uintptr_t)-1 && hi > lo)
		madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
}

static XL_NORETURN void oom(size_t n)
{
	fprintf(stderr, "xloop: fatal: out of memory allocating %zu bytes\n", n);
	exit(XL_ERR);
}

/* malloc that never returns NULL. */
void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom(n);
	return p;
}

/* calloc that never returns NULL. */
void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		oom(nmemb * size);
	return p;
}

/* realloc of nmemb * size with an overflow check. */
void *xreallocarray(void *p, size_t nmemb, size_t size)
{
	void *q;

	if (size && nmemb > SIZE_MAX / size)
		BUG("allocation overflow (%zu * %zu)", nmemb, size);
	q = realloc(p, nmemb * size > 0 ? nmemb * size : 1);
	if (q == NULL)
		oom(nmemb * size);
	return q;
}

/* strdup that never returns NULL. */
char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* Free a string array. */
void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* strndup that never returns NULL. */
char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* The length fmt formats to (ap is left for the caller to use). */
size_t xvformat_len(const char *fmt, va_list ap)
{
	va_list cp;
	char probe[1];
	int n;

	if (fmt == NULL)
		BUG("NULL format");
	va_copy(cp, ap);
	n = vsnprintf(probe, sizeof(probe), fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed for format '%s'", fmt);
	return (size_t)n;
}

/* vasprintf that never fails. */
char *xvasprintf(const char *fmt, va_list ap)
{
	size_t n = xvformat_len(fmt, ap);
	char *p = xmalloc(n + 1);

	vsnprintf(p, n + 1, fmt, ap);
	return p;
}

/* asprintf that never fails. */
char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

/* snprintf that treats truncation as a bug. */
void xsnprintf(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(dst, n, fmt, ap);
	va_end(ap);
	if (r < 0 || (size_t)r >= n)
		BUG("xsnprintf: output of '%s' truncated", fmt);
}

#define REPORT_MAX 1000	/* bytes of a message shown; the middle of a longer one is left out */

/*
 * msg on one line of f, whatever it holds: control bytes (a newline in a
 * tag, a terminal escape) shown as \n or \xNN, the middle of a huge one cut.
 */
void fput_one_line(FILE *f, const char *msg)
{
	size_t len = strlen(msg), i;

	while (len && msg[len - 1] == '\n')
		len--;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)msg[i];

		if (len > REPORT_MAX && i == REPORT_MAX / 2) {
			fprintf(f, " [... %zu bytes left out ...] ", len - REPORT_MAX);
			i += len - REPORT_MAX - 1;
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fprintf(f, "\\x%02x", c);
		} else {
			fputc(c, f);
		}
	}
}

static XL_PRINTF(2, 0) void report(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = xvasprintf(fmt, ap);

	fflush(stdout);
	fprintf(stderr, "xloop: %s", prefix);
	fput_one_line(stderr, msg);
	fputc('\n', stderr);
	free(msg);
}

/* Print an error and return -1. */
int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

/* Print a warning. */
void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("warning: ", fmt, ap);
	va_end(ap);
}

/* Print a fatal error and exit 1. */
void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("fatal: ", fmt, ap);
	va_end(ap);
	exit(XL_ERR);
}

/* Report a broken invariant and end the process (BUG()). */
void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "xloop: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
#ifdef XLOOP_TEST_BUILD
	abort();
#else
	exit(XL_SOFTWARE);
#endif
}

/* Parse a whole decimal integer within bounds. */
int parse_ll(const char *s, long long min, long long max, long long *out,
	     const char **errstr)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '\t') {
		*errstr = "not a number";
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0') {
		*errstr = "not a number";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return -1;
	}
	if ((errno == ERANGE && v == LLONG_MAX) || v > max) {
		*errstr = "too large";
		return -1;
	}
	*out = v;
	return 0;
}

/* True when s starts with prefix. */
int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return s[0] ? 1 : 0;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Whether s[0, len) is valid UTF-8 without NUL bytes. */
int utf8_valid(const char *s, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		k = utf8_seq((const unsigned char *)s + i, len - i);
		if (k == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* Copy with invalid UTF-8 replaced. */
char *utf8_clean(const char *s, size_t len)
{
	char *out = xmalloc(len + 1);
	size_t i = 0, o = 0;

	while (i < len) {
		size_t k = utf8_seq((const unsigned char *)s + i, len - i);

		if (k == 0) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, s + i, k);
		o += k;
		i += k;
	}
	out[o] = '\0';
	return out;
}

#ifdef XLOOP_TEST_BUILD
static char *crash_at;	/* XLOOP_CRASH_AT, taken out of the environment */

/* With XLOOP_CRASH_ONCE set, XLOOP_CRASH_AT is this process's only. */
void crash_init(void)
{
	const char *v = getenv("XLOOP_CRASH_AT");

	if (v && getenv("XLOOP_CRASH_ONCE")) {
		crash_at = xstrdup(v);
		unsetenv("XLOOP_CRASH_AT");
		unsetenv("XLOOP_CRASH_ONCE");
	}
}

/* Die here if the test asked for it. */
void crash_point(const char *name)
{
	const char *want = crash_at ? crash_at : getenv("XLOOP_CRASH_AT");

	if (want && strcmp(want, name) == 0) {
		fflush(NULL);
		raise(SIGKILL);
	}
}
#endif
