/*
 * Internal to the slurm-parse*.c files (never included elsewhere): the
 * helpers and types they share. The public API is slurm-parse.h.
 */
#ifndef XLOOP_SLURM_PARSE_IMPL_H
#define XLOOP_SLURM_PARSE_IMPL_H

#include <stddef.h>
#include <time.h>

#include "slurm/parse.h"
#include "lib/util.h"

/* At most this many bytes of offending text are quoted in a cause. */
#define QUOTE_MAX 300
#define QLEN(n) ((int)((n) < QUOTE_MAX ? (n) : QUOTE_MAX))

/* Grow the array p (nr used, cap allocated) so one more element fits. */
#define GROW(p, nr, cap) do { \
	if ((nr) >= (cap)) { \
		(cap) = (cap) ? 2 * (cap) : 8; \
		(p) = xreallocarray((p), (cap), sizeof(*(p))); \
	} \
} while (0)

/* A piece of a larger string: never NUL-terminated by itself. */
struct span {
	const char *s;
	size_t n;
};

/* What a field's text must look like for a split to be believed. */
enum check {
	CHECK_NONE,
	CHECK_JOBID,
	CHECK_NUMBER,
	CHECK_STATE,
	CHECK_COMPACT_STATE,
	CHECK_TIME,
	CHECK_DURATION,
	CHECK_EXIT,
	CHECK_WORD,
};

/* One field of a line template. */
struct tfield {
	char *name;		/* "%i" or a sacct field name */
	enum check check;
	int absorb;		/* free-text preference, 0: never absorbs */
	char *sep;		/* literal after the field, "" or suffix */
};

/* A line template: prefix, then fields each followed by its separator. */
struct tmpl {
	char *prefix;
	struct tfield *f;
	size_t n;
};

/* Set *cause (when wanted) and return -1. */
int XL_PRINTF(2, 3) fail(char **cause, const char *fmt, ...);

/* Step through the lines of a string; '\r' before '\n' is dropped. */
int next_line(const char **p, struct span *line);

/* Drop blanks at both ends of a span. */
struct span trim(struct span sp);

/* Span of a C string. */
struct span span_of(const char *s);

/* True when the span holds exactly the string word, ignoring case. */
int span_ieq(struct span sp, const char *word);

/* True when the span starts with prefix (case-sensitive). */
int span_starts(struct span sp, const char *prefix);

/* First occurrence of needle in hay, or NULL. */
const char *mem_find(const char *hay, size_t n, const char *needle,
		     size_t m);

/* Last occurrence of needle in hay, or NULL. */
const char *mem_rfind(const char *hay, size_t n, const char *needle,
		      size_t m);

/* True when c is one of the characters of set (never for NUL). */
int in_set(char c, const char *set);

/* Parse a span of 1..18 decimal digits (nothing else) not above max. */
int span_uint(struct span sp, long long max, long long *out);

/* True when the span is one of the words Slurm prints for "no value". */
int is_no_value(struct span sp);

/* Free a template. */
void tmpl_release(struct tmpl *t);

/*
 * Split a line into the template's fields. With extra separators, the
 * free-text field to take them is the first by preference for which every
 * other field passes its check, else the first preferred one that splits.
 * Without a free-text field the separators must add up exactly.
 */
int tmpl_match(const struct tmpl *t, struct span line,
	       struct span *vals, char **cause);

/* Give every NULL string member of a job the value "". */
void job_fill_empty(struct slurm_job *j);

/* Append a key/value pair to a job. */
void job_add_kv(struct slurm_job *j, size_t *cap, struct span k,
		struct span v);

/* Replace *dst with a copy of v, "" for "(null)". */
void set_str(char **dst, const char *v);

/* Replace *dst with a copy of a time value, "" for the no-value words. */
void set_time(char **dst, const char *v);

/* Add an empty job to the list and return it. */
struct slurm_job *jobs_add(struct slurm_jobs *jobs, size_t *cap);

/* True for a squeue/sacct header line: the id column holds its title. */
int is_header(const struct tmpl *t, const struct span *vals);

#endif
