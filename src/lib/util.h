/* Small helpers every module uses: allocation, errors, numbers. */
#ifndef XLOOP_UTIL_H
#define XLOOP_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>

/* Exit codes of the command contract (SPEC.md, sysexits). */
enum {
	XL_OK = 0,
	XL_ERR = 1,		/* any other error */
	XL_USAGE = 2,		/* bad command line */
	XL_DATAERR = 65,	/* bad input data: job.sh, cv.json, VAR=VALUE */
	XL_NOINPUT = 66,	/* unknown tag or missing file */
	XL_UNAVAILABLE = 69,	/* Slurm commands not found */
	XL_SOFTWARE = 70,	/* a bug in xloop (BUG()) */
	XL_TEMPFAIL = 75,	/* try later: controller unreachable, lock held */
	XL_NOPERM = 77,		/* refused (root) */
	XL_CONFIG = 78,		/* bad config */
};

#define XL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define XL_NORETURN __attribute__((noreturn))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *p, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Free n malloc'd strings and the array that holds them. */
void strv_free(char **v, size_t n);
char *xasprintf(const char *fmt, ...) XL_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap) XL_PRINTF(1, 0);
/* How many bytes fmt formats to (a bad format is a BUG); ap stays usable. */
size_t xvformat_len(const char *fmt, va_list ap) XL_PRINTF(1, 0);
/* msg on one line of f: control bytes escaped, the middle of a huge one cut. */
void fput_one_line(FILE *f, const char *msg);

/* snprintf that treats truncation as a bug and dies. */
void xsnprintf(char *dst, size_t n, const char *fmt, ...) XL_PRINTF(3, 4);

/* "xloop: error: ..." on stderr; returns -1 so callers can `return error(...)`. */
int error(const char *fmt, ...) XL_PRINTF(1, 2);
void warning(const char *fmt, ...) XL_PRINTF(1, 2);
/*
 * die(): the user's or the machine's fault (bad input the caller could not
 * turn into an error, a failed system call); exits 1. Only main and the
 * commands end the process for such a cause.
 */
XL_NORETURN void die(const char *fmt, ...) XL_PRINTF(1, 2);
/*
 * BUG(): a broken invariant, xloop's own fault, anywhere (as git's usage.c):
 * "xloop: BUG: file:line: ..." and exit 70 (EX_SOFTWARE); the test build
 * aborts instead, for the sanitizers' stack trace.
 */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
XL_NORETURN void bug_at(const char *file, int line, const char *fmt, ...) XL_PRINTF(3, 4);

/*
 * Parse a whole decimal integer in [min, max]. Returns 0, or -1 with *errstr
 * set to a static description ("not a number", "too small", "too large").
 */
int parse_ll(const char *s, long long min, long long max, long long *out,
	     const char **errstr);

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_seq(const unsigned char *s, size_t n);
/* 1 when s[0, len) is valid UTF-8 (and holds no NUL byte), else 0. */
int utf8_valid(const char *s, size_t len);

/* A copy of s[0, len) that is valid UTF-8: bad bytes become '?', NUL too. */
char *utf8_clean(const char *s, size_t len);

/*
 * The heap in 2 MB pages where the kernel gives them on request
 * (transparent_hugepage "madvise"), first thing in main: see util.c.
 */
void heap_huge_pages(void);

/*
 * Crash-safety tests: in the test build, die by SIGKILL at the named point
 * when XLOOP_CRASH_AT names it. Compiled out of the shipped binary.
 * Jobs xloop submits inherit it (a feeder, through --export=ALL: t1960
 * kills feeders so), unless XLOOP_CRASH_ONCE is set too: then crash_init
 * (first thing in main) takes both out of the environment and only this
 * process dies there (tests/soak's killed ticks).
 */
#ifdef XLOOP_TEST_BUILD
void crash_init(void);
void crash_point(const char *name);
#else
#define crash_init() ((void)0)
#define crash_point(name) ((void)0)
#endif

/* True when s starts with prefix. */
int starts_with(const char *s, const char *prefix);

/* Free and NULL a pointer. */
#define FREE_AND_NULL(p) do { free(p); (p) = NULL; } while (0)

#include "lib/banned.h"

#endif
