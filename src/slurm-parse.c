/*
 * Pure parsers for Slurm's command-line output. See slurm-parse.h for the
 * contract of each entry point; this file only explains how.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "slurm-parse.h"
#include "util.h"

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

/* Set *cause (when wanted) and return -1. */
static int XL_PRINTF(2, 3) fail(char **cause, const char *fmt, ...)
{
	va_list ap;

	if (cause) {
		va_start(ap, fmt);
		*cause = xvasprintf(fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A piece of a larger string: never NUL-terminated by itself. */
struct span {
	const char *s;
	size_t n;
};

/* Step through the lines of a string; '\r' before '\n' is dropped. */
static int next_line(const char **p, struct span *line)
{
	const char *s = *p, *nl;

	if (*s == '\0')
		return 0;
	nl = strchr(s, '\n');
	line->s = s;
	line->n = nl ? (size_t)(nl - s) : strlen(s);
	*p = nl ? nl + 1 : s + line->n;
	if (line->n && s[line->n - 1] == '\r')
		line->n--;
	return 1;
}

/* Drop blanks at both ends of a span. */
static struct span trim(struct span sp)
{
	while (sp.n && isspace((unsigned char)sp.s[0])) {
		sp.s++;
		sp.n--;
	}
	while (sp.n && isspace((unsigned char)sp.s[sp.n - 1]))
		sp.n--;
	return sp;
}

/* Span of a C string. */
static struct span span_of(const char *s)
{
	struct span sp = { s, strlen(s) };

	return sp;
}

/* True when the span holds exactly the string word, ignoring case. */
static int span_ieq(struct span sp, const char *word)
{
	size_t n = strlen(word);

	return sp.n == n && strncasecmp(sp.s, word, n) == 0;
}

/* True when the span starts with prefix (case-sensitive). */
static int span_starts(struct span sp, const char *prefix)
{
	size_t n = strlen(prefix);

	return sp.n >= n && memcmp(sp.s, prefix, n) == 0;
}

/* First occurrence of needle in hay, or NULL. */
static const char *mem_find(const char *hay, size_t n, const char *needle,
			    size_t m)
{
	size_t i;

	if (m == 0 || m > n)
		return NULL;
	for (i = 0; i + m <= n; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return hay + i;
	return NULL;
}

/* Last occurrence of needle in hay, or NULL. */
static const char *mem_rfind(const char *hay, size_t n, const char *needle,
			     size_t m)
{
	size_t i;

	if (m == 0 || m > n)
		return NULL;
	for (i = n - m + 1; i-- > 0;)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
			return hay + i;
	return NULL;
}

/* True when c is one of the characters of set (never for NUL). */
static int in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Parse a span of 1..18 decimal digits (nothing else) not above max. */
static int span_uint(struct span sp, long long max, long long *out)
{
	long long v = 0;
	size_t i;

	if (sp.n == 0 || sp.n > 18)
		return -1;
	for (i = 0; i < sp.n; i++) {
		if (!isdigit((unsigned char)sp.s[i]))
			return -1;
		v = v * 10 + (sp.s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/* True when the span is one of the words Slurm prints for "no value". */
static int is_no_value(struct span sp)
{
	static const char *const words[] = {
		"", "Unknown", "None", "N/A", "(null)", "NONE",
	};
	size_t i;

	sp = trim(sp);
	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (span_ieq(sp, words[i]))
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- states */

struct state_info {
	const char *name;
	const char *code;	/* squeue %t; NULL when it prints none */
	int final;
	int flag_order;		/* 0 base; 1.. flags in Slurm's order; 99 */
};

/* Indexed by enum slurm_state. */
static const struct state_info states[SLURM_STATE_NR] = {
	[SLURM_STATE_UNKNOWN] = { "UNKNOWN", "?", 0, 0 },
	[SLURM_STATE_PENDING] = { "PENDING", "PD", 0, 0 },
	[SLURM_STATE_RUNNING] = { "RUNNING", "R", 0, 0 },
	[SLURM_STATE_SUSPENDED] = { "SUSPENDED", "S", 0, 0 },
	[SLURM_STATE_COMPLETED] = { "COMPLETED", "CD", 1, 0 },
	[SLURM_STATE_CANCELLED] = { "CANCELLED", "CA", 1, 0 },
	[SLURM_STATE_FAILED] = { "FAILED", "F", 1, 0 },
	[SLURM_STATE_TIMEOUT] = { "TIMEOUT", "TO", 1, 0 },
	[SLURM_STATE_NODE_FAIL] = { "NODE_FAIL", "NF", 1, 0 },
	[SLURM_STATE_PREEMPTED] = { "PREEMPTED", "PR", 1, 0 },
	[SLURM_STATE_BOOT_FAIL] = { "BOOT_FAIL", "BF", 1, 0 },
	[SLURM_STATE_DEADLINE] = { "DEADLINE", "DL", 1, 0 },
	[SLURM_STATE_OUT_OF_MEMORY] = { "OUT_OF_MEMORY", "OOM", 1, 0 },
	[SLURM_STATE_COMPLETING] = { "COMPLETING", "CG", 0, 1 },
	[SLURM_STATE_STAGE_OUT] = { "STAGE_OUT", "SO", 0, 2 },
	[SLURM_STATE_CONFIGURING] = { "CONFIGURING", "CF", 0, 3 },
	[SLURM_STATE_EXPEDITING] = { "EXPEDITING", NULL, 0, 4 },
	[SLURM_STATE_RESIZING] = { "RESIZING", "RS", 0, 5 },
	[SLURM_STATE_REQUEUED] = { "REQUEUED", "RQ", 0, 6 },
	[SLURM_STATE_REQUEUE_FED] = { "REQUEUE_FED", "RF", 0, 7 },
	[SLURM_STATE_REQUEUE_HOLD] = { "REQUEUE_HOLD", "RH", 0, 8 },
	[SLURM_STATE_SPECIAL_EXIT] = { "SPECIAL_EXIT", "SE", 0, 9 },
	[SLURM_STATE_STOPPED] = { "STOPPED", "ST", 0, 10 },
	[SLURM_STATE_REVOKED] = { "REVOKED", "RV", 1, 11 },
	[SLURM_STATE_RESV_DEL_HOLD] = { "RESV_DEL_HOLD", "RD", 0, 12 },
	[SLURM_STATE_SIGNALING] = { "SIGNALING", "SI", 0, 13 },
	[SLURM_STATE_LAUNCH_FAILED] = { "LAUNCH_FAILED", NULL, 0, 99 },
	[SLURM_STATE_POWER_UP_NODE] = { "POWER_UP_NODE", NULL, 0, 99 },
	[SLURM_STATE_RECONFIG_FAIL] = { "RECONFIG_FAIL", NULL, 0, 99 },
	[SLURM_STATE_UPDATE_DB] = { "UPDATE_DB", NULL, 0, 99 },
};

/* Names and codes that are not the canonical ones of a state. */
static const struct {
	const char *name;
	const char *code;
	enum slurm_state st;
} state_aliases[] = {
	{ "REQUEUED_CRON", "RC", SLURM_STATE_REQUEUED },	/* 20.11 only */
};

/* One state word (no commas, no " by N") to the enum. */
static enum slurm_state state_word(struct span w, unsigned flags)
{
	enum slurm_state found = SLURM_STATE_UNKNOWN;
	int i, truncated = 0, matches = 0;
	size_t a;

	if (w.n && w.s[w.n - 1] == '+') {
		truncated = 1;
		w.n--;
	}
	if (w.n == 0)
		return SLURM_STATE_UNKNOWN;
	for (i = 1; i < SLURM_STATE_NR; i++) {
		if (span_ieq(w, states[i].name))
			return (enum slurm_state)i;
		if ((flags & SLURM_STATE_COMPACT) && !truncated &&
		    states[i].code && span_ieq(w, states[i].code))
			return (enum slurm_state)i;
	}
	for (a = 0; a < ARRAY_SIZE(state_aliases); a++) {
		if (span_ieq(w, state_aliases[a].name))
			return state_aliases[a].st;
		if ((flags & SLURM_STATE_COMPACT) && !truncated &&
		    span_ieq(w, state_aliases[a].code))
			return state_aliases[a].st;
	}
	if (!truncated)
		return SLURM_STATE_UNKNOWN;
	/* "OUT_OF_ME+": the one state whose name starts so */
	for (i = 1; i < SLURM_STATE_NR; i++) {
		if (strlen(states[i].name) >= w.n &&
		    strncasecmp(states[i].name, w.s, w.n) == 0 &&
		    found != (enum slurm_state)i) {
			found = (enum slurm_state)i;
			matches++;
		}
	}
	for (a = 0; a < ARRAY_SIZE(state_aliases); a++) {
		if (strlen(state_aliases[a].name) >= w.n &&
		    strncasecmp(state_aliases[a].name, w.s, w.n) == 0 &&
		    found != state_aliases[a].st) {
			found = state_aliases[a].st;
			matches++;
		}
	}
	return matches == 1 ? found : SLURM_STATE_UNKNOWN;
}

/* Map a printed state (see slurm-parse.h) to the enum. */
enum slurm_state slurm_state_parse(const char *s, unsigned flags)
{
	enum slurm_state base = SLURM_STATE_UNKNOWN, flag = SLURM_STATE_UNKNOWN;
	enum slurm_state other = SLURM_STATE_UNKNOWN;
	struct span all, item;
	const char *comma;
	size_t i;

	if (s == NULL)
		return SLURM_STATE_UNKNOWN;
	all = trim(span_of(s));
	while (all.n) {
		enum slurm_state st;

		comma = memchr(all.s, ',', all.n);
		item.s = all.s;
		item.n = comma ? (size_t)(comma - all.s) : all.n;
		all.s += item.n + (comma ? 1 : 0);
		all.n -= item.n + (comma ? 1 : 0);
		item = trim(item);
		/* "CANCELLED by 1000": the state is the first word */
		for (i = 0; i < item.n; i++)
			if (isspace((unsigned char)item.s[i]))
				item.n = i;
		st = state_word(item, flags);
		if (st == SLURM_STATE_UNKNOWN)
			continue;
		if (states[st].flag_order == 0) {
			if (base == SLURM_STATE_UNKNOWN)
				base = st;
		} else if (states[st].flag_order == 99) {
			if (other == SLURM_STATE_UNKNOWN)
				other = st;
		} else if (flag == SLURM_STATE_UNKNOWN ||
			   states[st].flag_order < states[flag].flag_order) {
			flag = st;
		}
	}
	if (flag != SLURM_STATE_UNKNOWN)
		return flag;
	if (base != SLURM_STATE_UNKNOWN)
		return base;
	return other;
}

/* Long name of a state. */
const char *slurm_state_name(enum slurm_state st)
{
	if ((int)st < 0 || st >= SLURM_STATE_NR)
		return "UNKNOWN";
	return states[st].name;
}

/* squeue's compact code of a state, "?" when none. */
const char *slurm_state_code(enum slurm_state st)
{
	if ((int)st < 0 || st >= SLURM_STATE_NR || states[st].code == NULL)
		return "?";
	return states[st].code;
}

/* True when the job will not run again by itself. */
int slurm_state_is_final(enum slurm_state st)
{
	if ((int)st < 0 || st >= SLURM_STATE_NR)
		return 0;
	return states[st].final;
}

/* ------------------------------------------------------- small values */

/* Parse "status:signal". */
int slurm_parse_exit_code(const char *s, int *status, int *signo,
			  char **cause)
{
	struct span all, a, b;
	const char *colon;
	long long x, y;

	all = trim(span_of(s ? s : ""));
	colon = memchr(all.s, ':', all.n);
	if (colon == NULL)
		return fail(cause, "bad exit code '%.*s': expected "
			    "'status:signal'", QLEN(all.n), all.s);
	a.s = all.s;
	a.n = (size_t)(colon - all.s);
	b.s = colon + 1;
	b.n = all.n - a.n - 1;
	if (span_uint(a, 255, &x) || span_uint(b, 255, &y))
		return fail(cause, "bad exit code '%.*s': expected two numbers "
			    "0-255 as 'status:signal'", QLEN(all.n), all.s);
	*status = (int)x;
	*signo = (int)y;
	return 0;
}

/* Read exactly n digits at s into *out. */
static int fixed_digits(const char *s, size_t n, int *out)
{
	size_t i;
	int v = 0;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Parse a Slurm timestamp in local time; no-value words give 0. */
int slurm_parse_time(const char *s, time_t *t, char **cause)
{
	struct span sp = trim(span_of(s ? s : ""));
	struct tm tm;
	int y, mo, d, h, mi, se;
	time_t r;

	if (is_no_value(sp)) {
		*t = 0;
		return 0;
	}
	/* YYYY-MM-DDTHH:MM:SS */
	if (sp.n != 19 || sp.s[4] != '-' || sp.s[7] != '-' || sp.s[10] != 'T' ||
	    sp.s[13] != ':' || sp.s[16] != ':' ||
	    fixed_digits(sp.s, 4, &y) || fixed_digits(sp.s + 5, 2, &mo) ||
	    fixed_digits(sp.s + 8, 2, &d) || fixed_digits(sp.s + 11, 2, &h) ||
	    fixed_digits(sp.s + 14, 2, &mi) || fixed_digits(sp.s + 17, 2, &se))
		return fail(cause, "bad time '%.*s': expected "
			    "YYYY-MM-DDTHH:MM:SS", QLEN(sp.n), sp.s);
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
	    mi > 59 || se > 60)
		return fail(cause, "bad time '%.*s': out of range",
			    QLEN(sp.n), sp.s);
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	r = mktime(&tm);
	if (r == (time_t)-1)
		return fail(cause, "bad time '%.*s': not representable",
			    QLEN(sp.n), sp.s);
	*t = r;
	return 0;
}

/* Format a time_t as Slurm prints it. */
char *slurm_format_time(time_t t)
{
	struct tm tm;
	char out[64];

	if (t == 0 || localtime_r(&t, &tm) == NULL)
		return xstrdup("");
	if (strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
		return xstrdup("");
	return xstrdup(out);
}

/* Parse a duration into seconds; limit words give -1. */
int slurm_parse_duration(const char *s, long long *secs, char **cause)
{
	static const char *const words[] = {
		"", "UNLIMITED", "INFINITE", "INVALID", "Partition_Limit",
		"N/A", "NONE",
	};
	struct span sp = trim(span_of(s ? s : "")), rest, part;
	long long days = 0, g[3], v;
	const char *dash, *colon, *dot;
	size_t i, ng = 0;
	int has_days = 0;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		if (span_ieq(sp, words[i])) {
			*secs = -1;
			return 0;
		}
	}
	rest = sp;
	dash = memchr(rest.s, '-', rest.n);
	if (dash) {
		part.s = rest.s;
		part.n = (size_t)(dash - rest.s);
		if (span_uint(part, 1000000, &days))
			goto bad;
		has_days = 1;
		rest.s = dash + 1;
		rest.n -= part.n + 1;
	}
	/* drop a fraction of a second: "00:24.041" */
	dot = memchr(rest.s, '.', rest.n);
	if (dot) {
		part.s = dot + 1;
		part.n = rest.n - (size_t)(dot - rest.s) - 1;
		if (span_uint(part, 999999999, &v))
			goto bad;
		rest.n = (size_t)(dot - rest.s);
	}
	while (ng < 3) {
		colon = memchr(rest.s, ':', rest.n);
		part.s = rest.s;
		part.n = colon ? (size_t)(colon - rest.s) : rest.n;
		if (span_uint(part, ng == 0 ? 100000000 : 59, &g[ng]))
			goto bad;
		ng++;
		if (!colon)
			break;
		rest.s = colon + 1;
		rest.n -= part.n + 1;
		if (ng == 3)
			goto bad;
	}
	if (has_days) {
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		if (g[0] > 23 || (dot && ng != 3))
			goto bad;
		v = days * 86400 + g[0] * 3600;
		if (ng > 1)
			v += g[1] * 60;
		if (ng > 2)
			v += g[2];
	} else if (ng == 3) {
		v = g[0] * 3600 + g[1] * 60 + g[2];
	} else if (ng == 2) {
		v = g[0] * 60 + g[1];
	} else {
		goto bad;
	}
	*secs = v;
	return 0;
bad:
	return fail(cause, "bad duration '%.*s': expected [D-]HH:MM:SS or "
		    "MM:SS", QLEN(sp.n), sp.s);
}

/* -------------------------------------------------------------- job ids */

/* Complete a step name cut by a column width ("bat+"). */
static char *complete_step(struct span st)
{
	static const char *const names[] = { "batch", "extern", "interactive" };
	const char *hit = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (strlen(names[i]) >= st.n &&
		    strncmp(names[i], st.s, st.n) == 0) {
			if (hit)
				return xstrndup(st.s, st.n);
			hit = names[i];
		}
	}
	return hit ? xstrdup(hit) : xstrndup(st.s, st.n);
}

/* Parse "36", "36_3", "36_[4-7%2]", "93+1", each with an optional ".step". */
int slurm_parse_jobid(const char *s, struct slurm_jobid *id, char **cause)
{
	struct span sp = trim(span_of(s ? s : "")), num, task = { NULL, 0 };
	struct span st;
	long long v, het = -1;
	size_t i = 0, j;

	memset(id, 0, sizeof(*id));
	id->het_offset = -1;
	id->id = -1;
	while (i < sp.n && isdigit((unsigned char)sp.s[i]))
		i++;
	num.s = sp.s;
	num.n = i;
	if (span_uint(num, 999999999999LL, &v) || v == 0)
		goto bad;
	if (i < sp.n && sp.s[i] == '_') {
		i++;
		if (i < sp.n && sp.s[i] == '[') {
			j = ++i;
			while (i < sp.n && (isdigit((unsigned char)sp.s[i]) ||
					    in_set(sp.s[i], ",-%:.")))
				i++;
			if (i >= sp.n || sp.s[i] != ']')
				return fail(cause, "truncated or bad array job "
					    "id '%.*s'", QLEN(sp.n), sp.s);
			task.s = sp.s + j;
			task.n = i - j;
			i++;
			if (task.n == 0)
				goto bad;
		} else {
			j = i;
			while (i < sp.n && isdigit((unsigned char)sp.s[i]))
				i++;
			task.s = sp.s + j;
			task.n = i - j;
			if (task.n == 0)
				goto bad;
		}
	}
	if (i < sp.n && sp.s[i] == '+') {
		i++;
		j = i;
		while (i < sp.n && isdigit((unsigned char)sp.s[i]))
			i++;
		num.s = sp.s + j;
		num.n = i - j;
		if (num.n == 0)
			return fail(cause, "truncated job id '%.*s'",
				    QLEN(sp.n), sp.s);
		if (span_uint(num, 999999, &het))
			goto bad;
	}
	j = i;
	if (i < sp.n) {
		if (sp.s[i] != '.' || i + 1 >= sp.n)
			goto bad;
		st.s = sp.s + i + 1;
		st.n = sp.n - i - 1;
		for (i = 0; i < st.n; i++)
			if (!isalnum((unsigned char)st.s[i]) &&
			    !in_set(st.s[i], "_+-"))
				goto bad;
		if (st.s[st.n - 1] == '+') {
			st.n--;
			if (st.n == 0)
				goto bad;
			id->step = complete_step(st);
			id->step_truncated = 1;
		} else {
			id->step = xstrndup(st.s, st.n);
		}
	}
	id->job = xstrndup(sp.s, j);
	id->id = v;
	id->het_offset = het;
	if (task.s)
		id->array_task = xstrndup(task.s, task.n);
	return 0;
bad:
	free(id->step);
	id->step = NULL;
	return fail(cause, "bad job id '%.*s'", QLEN(sp.n), sp.s);
}

/* Free a parsed job id. */
void slurm_jobid_release(struct slurm_jobid *id)
{
	free(id->job);
	free(id->array_task);
	free(id->step);
	memset(id, 0, sizeof(*id));
	id->id = -1;
	id->het_offset = -1;
}

/* ---------------------------------------------------------------- sbatch */

/* True when the line is "N" or "N;cluster" with a sane cluster name. */
static int sbatch_line(struct span line, long long *jobid, struct span *cl)
{
	const char *semi = memchr(line.s, ';', line.n);
	struct span num = line;
	size_t i;

	cl->s = NULL;
	cl->n = 0;
	if (semi) {
		num.n = (size_t)(semi - line.s);
		cl->s = semi + 1;
		cl->n = line.n - num.n - 1;
		if (cl->n == 0)
			return 0;
		for (i = 0; i < cl->n; i++)
			if (!isalnum((unsigned char)cl->s[i]) &&
			    !in_set(cl->s[i], "_-."))
				return 0;
	}
	return span_uint(num, 4294967294LL, jobid) == 0 && *jobid > 0;
}

/* "Submitted batch job N[ on cluster C]" from a wrapper. */
static int sbatch_human(struct span line, long long *jobid, struct span *cl)
{
	static const char pre[] = "Submitted batch job ";
	static const char on[] = " on cluster ";
	struct span num;
	const char *sp;

	if (!span_starts(line, pre))
		return 0;
	num.s = line.s + strlen(pre);
	num.n = line.n - strlen(pre);
	cl->s = NULL;
	cl->n = 0;
	sp = mem_find(num.s, num.n, on, strlen(on));
	if (sp) {
		cl->s = sp + strlen(on);
		cl->n = num.n - (size_t)(cl->s - num.s);
		num.n = (size_t)(sp - num.s);
		if (cl->n == 0 || memchr(cl->s, ' ', cl->n))
			return 0;
	}
	return span_uint(num, 4294967294LL, jobid) == 0 && *jobid > 0;
}

/* True when a line is a job id in either form sbatch prints. */
static int sbatch_id(struct span line, long long *jobid, struct span *cl)
{
	return sbatch_line(line, jobid, cl) || sbatch_human(line, jobid, cl);
}

/* Parse sbatch --parsable stdout. */
int slurm_parse_sbatch(const char *out, long long *jobid, char **cluster,
		       char **cause)
{
	const char *p = out ? out : "";
	struct span line, last = { NULL, 0 }, first_id = { NULL, 0 }, cl;
	long long v;

	if (cluster)
		*cluster = NULL;
	while (next_line(&p, &line)) {
		line = trim(line);
		if (line.n == 0)
			continue;
		if (sbatch_id(line, &v, &cl)) {
			if (first_id.s)
				return fail(cause, "sbatch printed more than "
					    "one job id: '%.*s' and '%.*s'",
					    QLEN(first_id.n), first_id.s,
					    QLEN(line.n), line.s);
			first_id = line;
		}
		last = line;
	}
	if (last.s == NULL)
		return fail(cause, "sbatch printed no job id");
	if (first_id.s && first_id.s != last.s)
		return fail(cause, "sbatch printed '%.*s' after job id '%.*s'",
			    QLEN(last.n), last.s, QLEN(first_id.n),
			    first_id.s);
	if (!sbatch_id(last, &v, &cl))
		return fail(cause, "sbatch printed '%.*s', not a job id",
			    QLEN(last.n), last.s);
	*jobid = v;
	if (cluster && cl.n)
		*cluster = xstrndup(cl.s, cl.n);
	return 0;
}

/* ------------------------------------------------------------ job struct */

/* Free an array of key/value pairs. */
static void kv_free(struct slurm_kv *kv, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

/* The first value of key among pairs, or NULL. */
static const char *kv_get(const struct slurm_kv *kv, size_t nr,
			  const char *key)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return NULL;
}

/* Append a key/value pair to an array of them. */
static void kv_add(struct slurm_kv **kv, size_t *nr, size_t *cap,
		   struct span k, struct span v)
{
	GROW(*kv, *nr, *cap);
	(*kv)[*nr].key = xstrndup(k.s, k.n);
	(*kv)[*nr].value = xstrndup(v.s, v.n);
	(*nr)++;
}

/* Empty a job: strings NULL until filled, numbers -1. */
static void job_init(struct slurm_job *j)
{
	memset(j, 0, sizeof(*j));
	j->id = -1;
	j->exit_code = j->exit_signal = -1;
	j->batch_flag = j->requeue = j->restarts = -1;
}

/* The string members of struct slurm_job, for filling and freeing. */
static const size_t job_string_offs[] = {
	offsetof(struct slurm_job, job_id),
	offsetof(struct slurm_job, array_job_id),
	offsetof(struct slurm_job, array_task_id),
	offsetof(struct slurm_job, name),
	offsetof(struct slurm_job, user),
	offsetof(struct slurm_job, state_raw),
	offsetof(struct slurm_job, reason),
	offsetof(struct slurm_job, comment),
	offsetof(struct slurm_job, partition),
	offsetof(struct slurm_job, nodes),
	offsetof(struct slurm_job, submit_time),
	offsetof(struct slurm_job, start_time),
	offsetof(struct slurm_job, end_time),
	offsetof(struct slurm_job, time_limit),
	offsetof(struct slurm_job, run_time),
	offsetof(struct slurm_job, std_out),
	offsetof(struct slurm_job, std_err),
	offsetof(struct slurm_job, work_dir),
	offsetof(struct slurm_job, dependency),
};

/* The i-th string member of a job. */
static char **job_string(struct slurm_job *j, size_t i)
{
	return (char **)(void *)((char *)j + job_string_offs[i]);
}

/* Give every NULL string member of a job the value "". */
static void job_fill_empty(struct slurm_job *j)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_string_offs); i++)
		if (*job_string(j, i) == NULL)
			*job_string(j, i) = xstrdup("");
}

/* Free one job's members. */
static void job_release(struct slurm_job *j)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_string_offs); i++)
		free(*job_string(j, i));
	kv_free(j->kv, j->nr_kv);
	job_init(j);
}

/* Free every job and the array. */
void slurm_jobs_release(struct slurm_jobs *jobs)
{
	size_t i;

	for (i = 0; i < jobs->nr; i++)
		job_release(&jobs->v[i]);
	free(jobs->v);
	jobs->v = NULL;
	jobs->nr = 0;
}

/* The job with this id. */
const struct slurm_job *slurm_jobs_find(const struct slurm_jobs *jobs, const char *id)
{
	size_t i;

	for (i = 0; id && *id && i < jobs->nr; i++)
		if (strcmp(jobs->v[i].job_id, id) == 0)
			return &jobs->v[i];
	return NULL;
}

/* First value printed for key. */
const char *slurm_job_get(const struct slurm_job *job, const char *key)
{
	return kv_get(job->kv, job->nr_kv, key);
}

/* Append a key/value pair to a job. */
static void job_add_kv(struct slurm_job *j, size_t *cap, struct span k,
		       struct span v)
{
	kv_add(&j->kv, &j->nr_kv, cap, k, v);
}

/* Replace *dst with a copy of v, "" for "(null)". */
static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v && strcmp(v, "(null)") != 0 ? v : "");
}

/* Replace *dst with a copy of a time value, "" for the no-value words. */
static void set_time(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v && !is_no_value(span_of(v)) ? v : "");
}

/* Parse a small number into *out, or fail naming key. */
static int set_int(int *out, const char *key, const char *v, char **cause)
{
	long long x;

	if (span_uint(trim(span_of(v)), 1000000000, &x))
		return fail(cause, "bad %s '%.*s': not a number", key,
			    QLEN(strlen(v)), v);
	*out = (int)x;
	return 0;
}

/* -------------------------------------------------------------- scontrol */

/*
 * Keys scontrol prints, in the order it prints them (union of 14.11 to
 * 25.11). KEY_TEXT: the value is free text that may hold spaces and "X=";
 * KEY_REPEAT: printed once per node group by -d, the others once a record.
 */
#define KEY_TEXT 1
#define KEY_REPEAT 2
static const struct scontrol_key {
	const char *key;
	int flags;
} scontrol_keys[] = {
	{ "JobId", 0 }, { "ArrayJobId", 0 }, { "ArrayTaskId", 0 },
	{ "ArrayTaskThrottle", 0 }, { "HetJobId", 0 }, { "HetJobOffset", 0 },
	{ "JobName", KEY_TEXT }, { "HetJobIdSet", 0 }, { "UserId", 0 },
	{ "GroupId", 0 }, { "MCS_label", 0 }, { "Priority", 0 }, { "Nice", 0 },
	{ "Account", 0 }, { "QOS", 0 }, { "WCKey", 0 }, { "JobState", 0 },
	{ "Reason", KEY_TEXT }, { "FailedNode", 0 }, { "Dependency", 0 },
	{ "Requeue", 0 }, { "Restarts", 0 }, { "BatchFlag", 0 },
	{ "Reboot", 0 }, { "ExitCode", 0 }, { "DerivedExitCode", 0 },
	{ "RunTime", 0 }, { "TimeLimit", 0 }, { "TimeMin", 0 },
	{ "SubmitTime", 0 }, { "EligibleTime", 0 }, { "AccrueTime", 0 },
	{ "ResizeTime", 0 }, { "StartTime", 0 }, { "EndTime", 0 },
	{ "Deadline", 0 }, { "CronJob", 0 }, { "CrontabSpec", KEY_TEXT },
	{ "PreemptEligibleTime", 0 }, { "PreemptTime", 0 },
	{ "SuspendTime", 0 }, { "SecsPreSuspend", 0 }, { "LastSchedEval", 0 },
	{ "Scheduler", 0 }, { "Partition", 0 }, { "AllocNode:Sid", 0 },
	{ "ReqNodeList", 0 }, { "ExcNodeList", 0 }, { "NodeList", 0 },
	{ "SchedNodeList", 0 }, { "BatchFeatures", 0 }, { "BatchHost", 0 },
	{ "StepMgrEnabled", 0 }, { "FedOrigin", 0 },
	{ "FedViableSiblings", 0 }, { "FedActiveSiblings", 0 },
	{ "NumNodes", 0 }, { "NumCPUs", 0 }, { "NumTasks", 0 },
	{ "CPUs/Task", 0 }, { "ReqB:S:C:T", 0 }, { "TRES", 0 },
	{ "ReqTRES", 0 }, { "AllocTRES", 0 }, { "Socks/Node", 0 },
	{ "NtasksPerN:B:S:C", 0 }, { "CoreSpec", 0 }, { "ThreadSpec", 0 },
	{ "JOB_GRES", 0 }, { "Nodes", KEY_REPEAT }, { "CPU_IDs", KEY_REPEAT },
	{ "Mem", KEY_REPEAT }, { "GRES", KEY_REPEAT },
	{ "GRES_IDX", KEY_REPEAT }, { "MinCPUsNode", 0 },
	{ "MinMemoryNode", 0 }, { "MinMemoryCPU", 0 }, { "MinMemoryTRES", 0 },
	{ "MinTmpDiskNode", 0 }, { "Features", 0 }, { "DelayBoot", 0 },
	{ "ClusterFeatures", 0 }, { "Prefer", 0 }, { "Gres", 0 },
	{ "Reservation", 0 }, { "OverSubscribe", 0 }, { "Exclusive", 0 },
	{ "Contiguous", 0 }, { "Licenses", 0 }, { "LicensesAlloc", 0 },
	{ "Network", 0 }, { "Command", KEY_TEXT }, { "SubmitLine", KEY_TEXT },
	{ "WorkDir", KEY_TEXT }, { "AdminComment", KEY_TEXT },
	{ "SystemComment", KEY_TEXT }, { "Comment", KEY_TEXT },
	{ "Extra", KEY_TEXT }, { "StdErr", 0 }, { "StdIn", 0 },
	{ "StdOut", 0 }, { "Switches", 0 }, { "BurstBuffer", 0 },
	{ "BurstBufferState", 0 }, { "CpuFreqMin", 0 }, { "CpuFreqMax", 0 },
	{ "CpuFreqGov", 0 }, { "Power", 0 }, { "GresAllowTaskSharing", 0 },
	{ "GresEnforceBind", 0 }, { "GresOneTaskPerSharing", 0 },
	{ "KillOInInvalidDependent", 0 }, { "KillOnInvalidDependent", 0 },
	{ "SpreadJob", 0 }, { "OOMKillStep", 0 }, { "CpusPerTres", 0 },
	{ "MemPerTres", 0 }, { "TresBind", 0 }, { "TresFreq", 0 },
	{ "TresPerJob", 0 }, { "TresPerNode", 0 }, { "TresPerSocket", 0 },
	{ "TresPerTask", 0 }, { "MailUser", 0 }, { "MailType", 0 },
	{ "NtasksPerTRES", 0 }, { "Container", 0 }, { "ContainerID", 0 },
	{ "SELinuxContext", 0 }, { "ResvPorts", 0 },
};

/* Index of a known key in print order, or -1. */
static int scontrol_rank(struct span k)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(scontrol_keys); i++)
		if (strlen(scontrol_keys[i].key) == k.n &&
		    memcmp(scontrol_keys[i].key, k.s, k.n) == 0)
			return (int)i;
	return -1;
}

/*
 * A key at p: [A-Za-z][A-Za-z0-9_:/]* then '=', or 20.11's
 * "NtasksPerTRES:". Returns its length (0: none) and where the value starts.
 */
static size_t key_at(const char *p, const char *end, const char **vstart)
{
	static const char colon_key[] = "NtasksPerTRES:";
	const char *q = p;

	if (q >= end || !isalpha((unsigned char)*q))
		return 0;
	while (q < end && (isalnum((unsigned char)*q) || *q == '_' ||
			   *q == ':' || *q == '/'))
		q++;
	if (q < end && *q == '=') {
		*vstart = q + 1;
		return (size_t)(q - p);
	}
	if ((size_t)(end - p) > strlen(colon_key) &&
	    memcmp(p, colon_key, strlen(colon_key)) == 0) {
		*vstart = p + strlen(colon_key);
		return strlen(colon_key) - 1;
	}
	return 0;
}

/* Keys of one record seen so far, so that a value's text cannot repeat one. */
struct seen {
	unsigned char key[ARRAY_SIZE(scontrol_keys)];
};

/*
 * Where the value starting at v ends: at the first " Key=" when the value
 * is plain and Key is known or capitalised; for a free-text value, at the
 * first " Key=" of the earliest-printed known key that scontrol prints
 * after this one (scontrol prints keys in a fixed order, so that is the
 * real next key even when the text itself holds later keys). A key the
 * record already had is text. Each free-text key occurs once a record, so
 * a line costs at most a dozen scans.
 */
static const char *value_end(int cur, const struct seen *seen, const char *v,
			     const char *end)
{
	const char *q, *best = end, *v2;
	int best_rank = -1;

	for (q = v; q < end; q++) {
		struct span cand;
		int r;

		if (*q != ' ')
			continue;
		cand.s = q + 1;
		cand.n = key_at(q + 1, end, &v2);
		if (cand.n == 0)
			continue;
		r = scontrol_rank(cand);
		if (r >= 0 && seen->key[r] &&
		    !(scontrol_keys[r].flags & KEY_REPEAT))
			continue;	/* a key this record already had */
		if (cur < 0 || !(scontrol_keys[cur].flags & KEY_TEXT)) {
			if (r >= 0 || isupper((unsigned char)cand.s[0]))
				return q;
			continue;
		}
		if (r > cur && (best_rank < 0 || r < best_rank)) {
			best = q;
			best_rank = r;
		}
	}
	return best;
}

/*
 * Split one line of key=value pairs into kv. With seen NULL (not a job),
 * every value is plain. 0, or -1: not such a line.
 */
static int scontrol_line(struct span line, struct slurm_kv **kv, size_t *nr,
			 size_t *cap, struct seen *seen)
{
	static const struct seen none;
	const char *p = line.s, *end = line.s + line.n, *v, *q;
	struct span k, val;
	size_t klen;
	int rank;

	while (p < end && isspace((unsigned char)*p))
		p++;
	klen = key_at(p, end, &v);
	if (klen == 0)
		return -1;
	for (;;) {
		k.s = p;
		k.n = klen;
		rank = seen ? scontrol_rank(k) : -1;
		if (rank >= 0)
			seen->key[rank] = 1;
		q = value_end(rank, seen ? seen : &none, v, end);
		val.s = v;
		val.n = (size_t)(q - v);
		while (val.n && isspace((unsigned char)val.s[val.n - 1]))
			val.n--;
		kv_add(kv, nr, cap, k, val);
		if (q >= end)
			break;
		p = q + 1;
		klen = key_at(p, end, &v);
	}
	return 0;
}

/* True for "Job 36_5 not found" (scontrol, an id it does not know). */
static int is_job_not_found(struct span line)
{
	static const char tail[] = " not found";
	size_t n = strlen(tail);

	return span_starts(line, "Job ") && line.n > 4 + n &&
	       memcmp(line.s + line.n - n, tail, n) == 0 &&
	       isdigit((unsigned char)line.s[4]);
}

/* Fill the named members of a job from its scontrol pairs. */
static int scontrol_fill(struct slurm_job *j, char **cause)
{
	const char *jobid = slurm_job_get(j, "JobId");
	const char *ajob = slurm_job_get(j, "ArrayJobId");
	const char *atask = slurm_job_get(j, "ArrayTaskId");
	const char *het = slurm_job_get(j, "HetJobId");
	const char *hoff = slurm_job_get(j, "HetJobOffset");
	const char *v;
	long long x;
	int a, b;

	if (jobid == NULL)
		return fail(cause, "scontrol record without JobId: '%.*s=%.*s'",
			    QLEN(strlen(j->kv[0].key)), j->kv[0].key,
			    QLEN(strlen(j->kv[0].value)), j->kv[0].value);
	if (span_uint(span_of(jobid), 999999999999LL, &x))
		return fail(cause, "bad JobId '%.*s'", QLEN(strlen(jobid)),
			    jobid);
	j->id = x;
	if (ajob && atask && strcmp(ajob, "0") != 0) {
		set_str(&j->array_job_id, ajob);
		set_str(&j->array_task_id, atask);
		if (span_uint(span_of(atask), 999999999, &x) == 0)
			j->job_id = xasprintf("%s_%s", ajob, atask);
		else
			j->job_id = xasprintf("%s_[%s]", ajob, atask);
	} else if (het && hoff && strcmp(het, "0") != 0) {
		j->job_id = xasprintf("%s+%s", het, hoff);
	} else {
		j->job_id = xstrdup(jobid);
	}
	set_str(&j->name, slurm_job_get(j, "JobName"));
	if ((v = slurm_job_get(j, "UserId"))) {
		const char *paren = strchr(v, '(');

		j->user = xstrndup(v, paren ? (size_t)(paren - v) : strlen(v));
	}
	if ((v = slurm_job_get(j, "JobState"))) {
		j->state = slurm_state_parse(v, 0);
		set_str(&j->state_raw, v);
	}
	set_str(&j->reason, slurm_job_get(j, "Reason"));
	if ((v = slurm_job_get(j, "ExitCode"))) {
		if (slurm_parse_exit_code(v, &a, &b, cause))
			return -1;
		j->exit_code = a;
		j->exit_signal = b;
	}
	set_str(&j->comment, slurm_job_get(j, "Comment"));
	set_str(&j->partition, slurm_job_get(j, "Partition"));
	set_str(&j->nodes, slurm_job_get(j, "NodeList"));
	set_time(&j->submit_time, slurm_job_get(j, "SubmitTime"));
	set_time(&j->start_time, slurm_job_get(j, "StartTime"));
	set_time(&j->end_time, slurm_job_get(j, "EndTime"));
	set_str(&j->time_limit, slurm_job_get(j, "TimeLimit"));
	set_str(&j->run_time, slurm_job_get(j, "RunTime"));
	set_str(&j->std_out, slurm_job_get(j, "StdOut"));
	set_str(&j->std_err, slurm_job_get(j, "StdErr"));
	set_str(&j->work_dir, slurm_job_get(j, "WorkDir"));
	set_str(&j->dependency, slurm_job_get(j, "Dependency"));
	if ((v = slurm_job_get(j, "BatchFlag")) &&
	    set_int(&j->batch_flag, "BatchFlag", v, cause))
		return -1;
	if ((v = slurm_job_get(j, "Requeue")) &&
	    set_int(&j->requeue, "Requeue", v, cause))
		return -1;
	if ((v = slurm_job_get(j, "Restarts")) &&
	    set_int(&j->restarts, "Restarts", v, cause))
		return -1;
	job_fill_empty(j);
	return 0;
}

/* Add an empty job to the list and return it. */
static struct slurm_job *jobs_add(struct slurm_jobs *jobs, size_t *cap)
{
	GROW(jobs->v, jobs->nr, *cap);
	job_init(&jobs->v[jobs->nr]);
	return &jobs->v[jobs->nr++];
}

/* True when the line (after any indentation) starts with a key. */
static int is_key_line(struct span line)
{
	const char *p = line.s, *end = line.s + line.n, *v;

	while (p < end && isspace((unsigned char)*p))
		p++;
	return key_at(p, end, &v) != 0;
}

/* Add the lines held in more to the last value, which went on. */
static void flush_more(struct slurm_kv *kv, size_t nr, struct buf *more)
{
	char *joined;

	if (kv == NULL || nr == 0 || more->len == 0)
		return;
	joined = xasprintf("%s%s", kv[nr - 1].value, more->s);
	free(kv[nr - 1].value);
	kv[nr - 1].value = joined;
	buf_reset(more);
}

/*
 * Parse scontrol show job output. A record starts with a "JobId=" line at
 * column 0 (every -o line is one), or with any key line after a blank line;
 * indented lines continue it; a blank line ends it.
 */
int slurm_parse_scontrol(const char *out, struct slurm_jobs *jobs,
			 char **cause)
{
	const char *p = out ? out : "";
	struct slurm_jobs res = SLURM_JOBS_INIT;
	struct slurm_job *cur = NULL;
	struct buf more = BUF_INIT;
	size_t cap = 0, kvcap = 0, i;
	struct seen seen;
	struct span line, t;
	int unknown = 0;

	jobs->v = NULL;
	jobs->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0) {
			if (cur)
				flush_more(cur->kv, cur->nr_kv, &more);
			cur = NULL;
			continue;
		}
		if (is_key_line(line)) {
			if (cur)
				flush_more(cur->kv, cur->nr_kv, &more);
			if (cur == NULL || span_starts(line, "JobId=")) {
				cur = jobs_add(&res, &cap);
				kvcap = 0;
				memset(&seen, 0, sizeof(seen));
			}
			scontrol_line(line, &cur->kv, &cur->nr_kv, &kvcap,
				      &seen);
			continue;
		}
		if (cur) {
			/* a value that went on over a newline */
			buf_addc(&more, '\n');
			buf_add(&more, line.s, line.n);
			continue;
		}
		if (mem_find(t.s, t.n, "Invalid job id specified", 24) ||
		    is_job_not_found(t)) {
			unknown = 1;
		} else if (!span_ieq(t, "No jobs in the system")) {
			fail(cause, "unexpected scontrol output '%.*s'",
			     QLEN(t.n), t.s);
			goto err;
		}
	}
	if (cur)
		flush_more(cur->kv, cur->nr_kv, &more);
	buf_release(&more);
	if (unknown) {
		slurm_jobs_release(&res);
		return SLURM_PARSE_UNKNOWN_JOB;
	}
	for (i = 0; i < res.nr; i++)
		if (scontrol_fill(&res.v[i], cause))
			goto err;
	*jobs = res;
	return 0;
err:
	buf_release(&more);
	slurm_jobs_release(&res);
	return -1;
}

/* ------------------------------------------------------- other records */

/* Free the records. */
void slurm_records_release(struct slurm_records *recs)
{
	size_t i;

	for (i = 0; i < recs->nr; i++)
		kv_free(recs->v[i].kv, recs->v[i].nr_kv);
	free(recs->v);
	recs->v = NULL;
	recs->nr = 0;
}

/* The first value of key in a record. */
const char *slurm_record_get(const struct slurm_record *rec, const char *key)
{
	return kv_get(rec->kv, rec->nr_kv, key);
}

/* True when a comma list holds item exactly. */
int slurm_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	if (list == NULL || n == 0)
		return 0;
	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && memcmp(p, item, n) == 0)
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* Parse scontrol show records of any entity, one-line or multi-line. */
int slurm_parse_records(const char *out, struct slurm_records *recs,
			char **cause)
{
	struct slurm_records res = SLURM_RECORDS_INIT;
	struct slurm_record *cur = NULL;
	const char *p = out ? out : "";
	struct buf more = BUF_INIT;
	size_t cap = 0, kvcap = 0;
	struct span line, t;
	int not_found = 0;

	recs->v = NULL;
	recs->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (cur && (t.n == 0 || is_key_line(line)))
			flush_more(cur->kv, cur->nr_kv, &more);
		if (t.n == 0) {
			cur = NULL;
			continue;
		}
		if (is_key_line(line)) {
			if (cur == NULL || !isspace((unsigned char)line.s[0])) {
				GROW(res.v, res.nr, cap);
				cur = &res.v[res.nr++];
				memset(cur, 0, sizeof(*cur));
				kvcap = 0;
			}
			scontrol_line(line, &cur->kv, &cur->nr_kv, &kvcap,
				      NULL);
			continue;
		}
		if (cur) {
			buf_addc(&more, '\n');
			buf_add(&more, line.s, line.n);
			continue;
		}
		if (t.n > 10 && memcmp(t.s + t.n - 10, " not found", 10) == 0) {
			not_found = 1;
		} else if (!(span_starts(t, "No ") &&
			     mem_find(t.s, t.n, " in the system", 14))) {
			fail(cause, "unexpected scontrol output '%.*s'",
			     QLEN(t.n), t.s);
			buf_release(&more);
			slurm_records_release(&res);
			return -1;
		}
	}
	buf_release(&more);
	if (not_found) {
		slurm_records_release(&res);
		return SLURM_PARSE_NOT_FOUND;
	}
	*recs = res;
	return 0;
}

/* -------------------------------------------------------------- templates */

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

/* Free a template. */
static void tmpl_release(struct tmpl *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->f[i].name);
		free(t->f[i].sep);
	}
	free(t->f);
	free(t->prefix);
	memset(t, 0, sizeof(*t));
}

/* True when a field's text passes its check. */
static int check_ok(enum check c, struct span v)
{
	struct slurm_jobid id;
	long long x;
	time_t t;
	int a, b, ok;
	char *s;

	if (c == CHECK_NONE)
		return 1;
	s = xstrndup(v.s, v.n);
	switch (c) {
	case CHECK_JOBID:
		ok = slurm_parse_jobid(s, &id, NULL) == 0;
		if (ok)
			slurm_jobid_release(&id);
		break;
	case CHECK_NUMBER:
		ok = v.n == 0 || span_uint(v, 999999999999LL, &x) == 0;
		break;
	case CHECK_STATE:
		ok = v.n == 0 || slurm_state_parse(s, 0) != SLURM_STATE_UNKNOWN;
		break;
	case CHECK_COMPACT_STATE:
		ok = slurm_state_parse(s, SLURM_STATE_COMPACT) !=
		     SLURM_STATE_UNKNOWN;
		break;
	case CHECK_TIME:
		ok = slurm_parse_time(s, &t, NULL) == 0;
		break;
	case CHECK_DURATION:
		ok = slurm_parse_duration(s, &x, NULL) == 0;
		break;
	case CHECK_EXIT:
		ok = v.n == 0 || slurm_parse_exit_code(s, &a, &b, NULL) == 0;
		break;
	case CHECK_WORD:
		ok = memchr(v.s, ' ', v.n) == NULL;
		break;
	default:
		ok = 1;
		break;
	}
	free(s);
	return ok;
}

/* Split a line with field k taking any extra separators. */
static int tmpl_split(const struct tmpl *t, struct span line, size_t k,
		      struct span *vals)
{
	size_t plen = strlen(t->prefix), slen = strlen(t->f[t->n - 1].sep);
	const char *pos, *end, *hit;
	size_t i, m;

	if (line.n < plen + slen || memcmp(line.s, t->prefix, plen) != 0 ||
	    memcmp(line.s + line.n - slen, t->f[t->n - 1].sep, slen) != 0)
		return -1;
	pos = line.s + plen;
	end = line.s + line.n - slen;
	for (i = 0; i < k; i++) {
		m = strlen(t->f[i].sep);
		hit = mem_find(pos, (size_t)(end - pos), t->f[i].sep, m);
		if (hit == NULL)
			return -1;
		vals[i].s = pos;
		vals[i].n = (size_t)(hit - pos);
		pos = hit + m;
	}
	for (i = t->n - 1; i > k; i--) {
		m = strlen(t->f[i - 1].sep);
		hit = mem_rfind(pos, (size_t)(end - pos), t->f[i - 1].sep, m);
		if (hit == NULL)
			return -1;
		vals[i].s = hit + m;
		vals[i].n = (size_t)(end - vals[i].s);
		end = hit;
	}
	vals[k].s = pos;
	vals[k].n = (size_t)(end - pos);
	return 0;
}

/*
 * Split a line into the template's fields. With extra separators, the
 * free-text field to take them is the first by preference for which every
 * other field passes its check, else the first preferred one that splits.
 * Without a free-text field the separators must add up exactly.
 */
static int tmpl_match(const struct tmpl *t, struct span line,
		      struct span *vals, char **cause)
{
	struct span *tmp;
	size_t i, k;
	int pref, max = 0, have = 0;

	for (k = 0; k < t->n; k++)
		if (t->f[k].absorb > max)
			max = t->f[k].absorb;
	if (max == 0) {
		k = t->n - 1;
		if (tmpl_split(t, line, k, vals) == 0 &&
		    (k == 0 || !mem_find(vals[k].s, vals[k].n, t->f[k - 1].sep,
					 strlen(t->f[k - 1].sep))))
			return 0;
		goto bad;
	}
	tmp = xreallocarray(NULL, t->n, sizeof(*tmp));
	for (pref = 1; pref <= max; pref++) {
		for (k = 0; k < t->n; k++) {
			if (t->f[k].absorb != pref ||
			    tmpl_split(t, line, k, tmp))
				continue;
			if (!have)
				memcpy(vals, tmp, t->n * sizeof(*tmp));
			have = 1;
			for (i = 0; i < t->n; i++)
				if (i != k && !check_ok(t->f[i].check, tmp[i]))
					break;
			if (i == t->n) {
				memcpy(vals, tmp, t->n * sizeof(*tmp));
				free(tmp);
				return 0;
			}
		}
	}
	free(tmp);
	if (have)
		return 0;
bad:
	return fail(cause, "line '%.*s' does not have the %zu fields asked "
		    "for", QLEN(line.n), line.s, t->n);
}

/* ---------------------------------------------------------------- squeue */

/* What slurm_parse_squeue knows about a format letter. */
static void squeue_field_kind(char c, enum check *check, int *absorb)
{
	static const char *const prefs = "kjrREZo";
	const char *p = strchr(prefs, c);

	*absorb = p ? (int)(p - prefs) + 1 : 0;
	switch (c) {
	case 'i':
		*check = CHECK_JOBID;
		break;
	case 'A': case 'C': case 'D':
		*check = CHECK_NUMBER;
		break;
	case 'T':
		*check = CHECK_STATE;
		break;
	case 't':
		*check = CHECK_COMPACT_STATE;
		break;
	case 'S': case 'e': case 'V':
		*check = CHECK_TIME;
		break;
	case 'M': case 'l':
		*check = CHECK_DURATION;
		break;
	case 'P': case 'u':
		*check = CHECK_WORD;
		break;
	default:
		*check = CHECK_NONE;
		break;
	}
}

/* Turn a squeue -o format into a template. */
static int squeue_tmpl(const char *format, struct tmpl *t, char **cause)
{
	struct buf lit = BUF_INIT;
	const char *p = format;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	while (*p) {
		const char *start = p;

		if (*p != '%') {
			buf_addc(&lit, *p++);
			continue;
		}
		p++;
		if (*p == '%') {
			buf_addc(&lit, *p++);
			continue;
		}
		if (*p == '.')
			p++;
		while (isdigit((unsigned char)*p))
			p++;
		if (!isalpha((unsigned char)*p)) {
			buf_release(&lit);
			tmpl_release(t);
			return fail(cause, "bad squeue format '%s' at '%s'",
				    format, start);
		}
		if (t->n == 0) {
			t->prefix = buf_detach(&lit, NULL);
		} else {
			if (lit.len == 0) {
				buf_release(&lit);
				tmpl_release(t);
				return fail(cause, "squeue format '%s' has no "
					    "separator before '%s'", format,
					    start);
			}
			t->f[t->n - 1].sep = buf_detach(&lit, NULL);
		}
		GROW(t->f, t->n, cap);
		memset(&t->f[t->n], 0, sizeof(t->f[t->n]));
		t->f[t->n].name = xasprintf("%%%c", *p);
		squeue_field_kind(*p, &t->f[t->n].check, &t->f[t->n].absorb);
		t->n++;
		p++;
	}
	if (t->n == 0) {
		buf_release(&lit);
		return fail(cause, "squeue format '%s' has no fields", format);
	}
	t->f[t->n - 1].sep = buf_detach(&lit, NULL);
	return 0;
}

/* Fill a job's named members from one squeue line's fields. */
static int squeue_fill(struct slurm_job *j, const struct tmpl *t,
		       const struct span *vals, char **cause)
{
	size_t i, cap = 0;
	long long x;

	for (i = 0; i < t->n; i++)
		job_add_kv(j, &cap, span_of(t->f[i].name), vals[i]);
	for (i = 0; i < t->n; i++) {
		const char *v = j->kv[i].value;
		struct slurm_jobid id;

		switch (t->f[i].name[1]) {
		case 'i':
			if (slurm_parse_jobid(v, &id, cause))
				return -1;
			set_str(&j->job_id, v);
			if (id.array_task) {
				j->array_job_id = xasprintf("%lld", id.id);
				set_str(&j->array_task_id, id.array_task);
			} else if (j->id < 0 && id.het_offset < 0) {
				j->id = id.id;
			}
			slurm_jobid_release(&id);
			break;
		case 'A':
			if (span_uint(span_of(v), 999999999999LL, &x))
				return fail(cause, "bad job id '%.*s'",
					    QLEN(strlen(v)), v);
			j->id = x;
			break;
		case 'F':
			if (!j->array_job_id)
				set_str(&j->array_job_id, v);
			break;
		case 'K':
			if (!j->array_task_id && !is_no_value(span_of(v)))
				set_str(&j->array_task_id, v);
			break;
		case 'j':
			set_str(&j->name, v);
			break;
		case 'u':
			set_str(&j->user, v);
			break;
		case 'T':
			j->state = slurm_state_parse(v, 0);
			set_str(&j->state_raw, v);
			break;
		case 't':
			j->state = slurm_state_parse(v, SLURM_STATE_COMPACT);
			set_str(&j->state_raw, v);
			break;
		case 'r':
			set_str(&j->reason, v);
			break;
		case 'R':
			if (strlen(v) >= 2 && v[0] == '(' &&
			    v[strlen(v) - 1] == ')') {
				free(j->reason);
				j->reason = xstrndup(v + 1, strlen(v) - 2);
			} else {
				set_str(&j->nodes, v);
			}
			break;
		case 'N':
			set_str(&j->nodes, v);
			break;
		case 'S':
			set_time(&j->start_time, v);
			break;
		case 'e':
			set_time(&j->end_time, v);
			break;
		case 'V':
			set_time(&j->submit_time, v);
			break;
		case 'k':
			set_str(&j->comment, v);
			break;
		case 'P':
			set_str(&j->partition, v);
			break;
		case 'M':
			set_str(&j->run_time, v);
			break;
		case 'l':
			set_str(&j->time_limit, v);
			break;
		case 'E':
			set_str(&j->dependency, v);
			break;
		case 'Z':
			set_str(&j->work_dir, v);
			break;
		default:
			break;
		}
	}
	job_fill_empty(j);
	return 0;
}

/* True for a squeue/sacct header line: the id column holds its title. */
static int is_header(const struct tmpl *t, const struct span *vals)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		struct span v = trim(vals[i]);

		if ((t->f[i].check == CHECK_JOBID ||
		     strcmp(t->f[i].name, "%A") == 0) &&
		    (span_ieq(v, "JOBID") || span_ieq(v, t->f[i].name)))
			return 1;
	}
	return 0;
}

/* Parse squeue -h -o FORMAT output. */
int slurm_parse_squeue(const char *out, const char *format,
		       struct slurm_jobs *jobs, char **cause)
{
	struct slurm_jobs res = SLURM_JOBS_INIT;
	const char *p = out ? out : "";
	struct span line, *vals;
	struct tmpl t;
	size_t cap = 0;
	int unknown = 0;

	jobs->v = NULL;
	jobs->nr = 0;
	if (squeue_tmpl(format ? format : SLURM_SQUEUE_FORMAT, &t, cause))
		return -1;
	vals = xreallocarray(NULL, t.n, sizeof(*vals));
	while (next_line(&p, &line)) {
		struct span tl = trim(line);

		if (tl.n == 0)
			continue;
		if (span_starts(tl, "squeue: error:") ||
		    span_starts(tl, "slurm_load_jobs error:") ||
		    span_starts(tl, "squeue: fatal:")) {
			if (mem_find(tl.s, tl.n, "Invalid job id specified",
				     24)) {
				unknown = 1;
				continue;
			}
			fail(cause, "squeue failed: '%.*s'", QLEN(tl.n), tl.s);
			goto err;
		}
		if (tmpl_match(&t, line, vals, cause))
			goto err;
		if (res.nr == 0 && is_header(&t, vals))
			continue;
		if (squeue_fill(jobs_add(&res, &cap), &t, vals, cause))
			goto err;
	}
	free(vals);
	tmpl_release(&t);
	if (unknown) {
		slurm_jobs_release(&res);
		return SLURM_PARSE_UNKNOWN_JOB;
	}
	*jobs = res;
	return 0;
err:
	free(vals);
	tmpl_release(&t);
	slurm_jobs_release(&res);
	return -1;
}

/* ----------------------------------------------------------------- sinfo */

/* Free the node reasons. */
void slurm_node_reasons_release(struct slurm_node_reasons *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		free(r->v[i].node);
		free(r->v[i].reason);
		free(r->v[i].user);
		free(r->v[i].timestamp);
	}
	free(r->v);
	r->v = NULL;
	r->nr = 0;
}

/* Column starts of sinfo -R's default header; -1 for absent columns. */
struct sinfo_cols {
	long reason, user, timestamp, nodelist;
};

/* Find the columns of a "REASON  USER  TIMESTAMP  NODELIST" header. */
static int sinfo_header(struct span h, struct sinfo_cols *c)
{
	size_t i = 0, start;

	c->reason = c->user = c->timestamp = c->nodelist = -1;
	while (i < h.n) {
		struct span w;

		while (i < h.n && h.s[i] == ' ')
			i++;
		start = i;
		while (i < h.n && h.s[i] != ' ')
			i++;
		w.s = h.s + start;
		w.n = i - start;
		if (w.n == 0)
			break;
		if (span_ieq(w, "REASON"))
			c->reason = (long)start;
		else if (span_ieq(w, "USER"))
			c->user = (long)start;
		else if (span_ieq(w, "TIMESTAMP"))
			c->timestamp = (long)start;
		else if (span_ieq(w, "NODELIST"))
			c->nodelist = (long)start;
		else
			return -1;
	}
	return c->reason == 0 && c->nodelist > 0 ? 0 : -1;
}

/* The text of the column starting at col, up to the next column. */
static struct span column(struct span line, const struct sinfo_cols *c,
			  long col)
{
	long cols[] = { c->reason, c->user, c->timestamp, c->nodelist };
	long next = (long)line.n;
	struct span v = { line.s, 0 };
	size_t i;

	if (col < 0 || (size_t)col >= line.n)
		return v;
	for (i = 0; i < ARRAY_SIZE(cols); i++)
		if (cols[i] > col && cols[i] < next)
			next = cols[i];
	if (next > (long)line.n)
		next = (long)line.n;
	v.s = line.s + col;
	v.n = (size_t)(next - col);
	return v;
}

/* Add one node reason. */
static void reasons_add(struct slurm_node_reasons *r, size_t *cap,
			struct span node, struct span reason, struct span user,
			struct span ts, int truncated)
{
	struct slurm_node_reason *nr;

	GROW(r->v, r->nr, *cap);
	nr = &r->v[r->nr++];
	nr->node = xstrndup(node.s, node.n);
	nr->reason = xstrndup(reason.s, reason.n);
	nr->user = xstrndup(user.s, user.n);
	nr->timestamp = xstrndup(ts.s, ts.n);
	nr->truncated = truncated;
}

/* Parse sinfo -R output, '%n|%E|%H' or the default table. */
int slurm_parse_sinfo_reasons(const char *out, struct slurm_node_reasons *r,
			      char **cause)
{
	struct slurm_node_reasons res = SLURM_NODE_REASONS_INIT;
	const char *p = out ? out : "";
	struct sinfo_cols cols;
	struct span line, none = { "", 0 };
	size_t cap = 0;
	int table = 0;

	r->v = NULL;
	r->nr = 0;
	while (next_line(&p, &line)) {
		struct span t = trim(line), node, reason, user, ts;
		const char *b1, *b2;
		time_t when;
		char *s;

		if (t.n == 0)
			continue;
		if (span_starts(t, "sinfo: error:") ||
		    span_starts(t, "sinfo: fatal:") ||
		    span_starts(t, "slurm_load_node error:")) {
			fail(cause, "sinfo failed: '%.*s'", QLEN(t.n), t.s);
			goto err;
		}
		if (!table && res.nr == 0 && span_starts(line, "REASON ")) {
			if (sinfo_header(line, &cols)) {
				fail(cause, "unknown sinfo header '%.*s'",
				     QLEN(t.n), t.s);
				goto err;
			}
			table = 1;
			continue;
		}
		if (table) {
			long width = (cols.user > 0 ? cols.user :
				      cols.timestamp > 0 ? cols.timestamp :
				      cols.nodelist) - 1;

			reason = trim(column(line, &cols, cols.reason));
			node = trim(column(line, &cols, cols.nodelist));
			user = trim(column(line, &cols, cols.user));
			ts = trim(column(line, &cols, cols.timestamp));
			reasons_add(&res, &cap, node, reason, user, ts,
				    (long)reason.n >= width);
			continue;
		}
		b1 = memchr(line.s, '|', line.n);
		b2 = mem_rfind(line.s, line.n, "|", 1);
		if (b1 == NULL || b1 == b2) {
			fail(cause, "sinfo line '%.*s' is not "
			     "'node|reason|timestamp'", QLEN(line.n), line.s);
			goto err;
		}
		node.s = line.s;
		node.n = (size_t)(b1 - line.s);
		reason.s = b1 + 1;
		reason.n = (size_t)(b2 - reason.s);
		ts.s = b2 + 1;
		ts.n = line.n - (size_t)(ts.s - line.s);
		node = trim(node);
		ts = trim(ts);
		s = xstrndup(ts.s, ts.n);
		if (node.n == 0 || slurm_parse_time(s, &when, NULL)) {
			free(s);
			fail(cause, "sinfo line '%.*s' is not "
			     "'node|reason|timestamp'", QLEN(line.n), line.s);
			goto err;
		}
		free(s);
		user = none;
		reasons_add(&res, &cap, node, reason, user, ts, 0);
	}
	*r = res;
	return 0;
err:
	slurm_node_reasons_release(&res);
	return -1;
}

/* ----------------------------------------------------------------- sacct */

/* The field list xloop asks sacct for. */
static const char *const xloop_sacct_fields[] = {
	"JobID", "JobIDRaw", "JobName", "State", "ExitCode", "Start", "End",
	"Elapsed", "MaxRSS", "ReqMem", "Comment", "NodeList", "Partition",
	"Submit",
};

/* The sacct fields xloop asks for, as an array. */
const char *const *slurm_sacct_fields(size_t *nr)
{
	*nr = ARRAY_SIZE(xloop_sacct_fields);
	return xloop_sacct_fields;
}

/* What slurm_parse_sacct knows about a field name. */
static void sacct_field_kind(const char *name, enum check *check, int *absorb)
{
	static const struct {
		const char *name;
		enum check check;
	} checks[] = {
		{ "JobID", CHECK_JOBID }, { "JobIDRaw", CHECK_JOBID },
		{ "State", CHECK_STATE }, { "ExitCode", CHECK_EXIT },
		{ "DerivedExitCode", CHECK_EXIT }, { "Start", CHECK_TIME },
		{ "End", CHECK_TIME }, { "Submit", CHECK_TIME },
		{ "Eligible", CHECK_TIME }, { "Elapsed", CHECK_DURATION },
		{ "Timelimit", CHECK_DURATION }, { "TotalCPU", CHECK_DURATION },
		{ "CPUTime", CHECK_DURATION }, { "UserCPU", CHECK_DURATION },
		{ "SystemCPU", CHECK_DURATION }, { "NNodes", CHECK_NUMBER },
		{ "NCPUS", CHECK_NUMBER }, { "AllocCPUS", CHECK_NUMBER },
		{ "NTasks", CHECK_NUMBER }, { "TimelimitRaw", CHECK_NUMBER },
		{ "ElapsedRaw", CHECK_NUMBER }, { "Partition", CHECK_WORD },
		{ "User", CHECK_WORD }, { "Account", CHECK_WORD },
		{ "Cluster", CHECK_WORD },
	};
	static const char *const prefs[] = {
		"Comment", "AdminComment", "SystemComment", "Extra",
		"SubmitLine", "JobName", "WorkDir", "Constraints", "Reason",
		"Container", "StdOut", "StdErr", "StdIn",
	};
	size_t i;

	*check = CHECK_NONE;
	*absorb = 0;
	for (i = 0; i < ARRAY_SIZE(checks); i++)
		if (strcasecmp(name, checks[i].name) == 0)
			*check = checks[i].check;
	for (i = 0; i < ARRAY_SIZE(prefs); i++)
		if (strcasecmp(name, prefs[i]) == 0)
			*absorb = (int)i + 1;
}

/* Free the rows and field names. */
void slurm_acct_release(struct slurm_acct *acct)
{
	size_t i, f;

	for (i = 0; i < acct->nr; i++) {
		slurm_jobid_release(&acct->rows[i].id);
		for (f = 0; f < acct->nr_fields; f++)
			free(acct->rows[i].values[f]);
		free(acct->rows[i].values);
	}
	free(acct->rows);
	for (f = 0; f < acct->nr_fields; f++)
		free(acct->fields[f]);
	free(acct->fields);
	memset(acct, 0, sizeof(*acct));
}

/* Index of field in the request (case-insensitive), or -1. */
static long field_index(const struct slurm_acct *acct, const char *field)
{
	size_t i;

	for (i = 0; i < acct->nr_fields; i++)
		if (strcasecmp(acct->fields[i], field) == 0)
			return (long)i;
	return -1;
}

/* A row's value of field, or NULL. */
const char *slurm_acct_get(const struct slurm_acct *acct,
			   const struct slurm_acct_row *row, const char *field)
{
	long i = field_index(acct, field);

	return i < 0 ? NULL : row->values[i];
}

/* Build the sacct line template for the requested fields. */
static void sacct_tmpl(const struct slurm_acct *acct, const char *delim,
		       unsigned flags, struct tmpl *t)
{
	size_t i;

	t->prefix = xstrdup("");
	t->n = acct->nr_fields;
	t->f = xcalloc(t->n, sizeof(*t->f));
	for (i = 0; i < t->n; i++) {
		t->f[i].name = xstrdup(acct->fields[i]);
		sacct_field_kind(acct->fields[i], &t->f[i].check,
				 &t->f[i].absorb);
		if (i + 1 < t->n || (flags & SLURM_SACCT_TRAILING_DELIM))
			t->f[i].sep = xstrdup(delim);
		else
			t->f[i].sep = xstrdup("");
	}
}

/* Fill a row from its field values. */
static int sacct_row(struct slurm_acct *acct, struct slurm_acct_row *row,
		     const struct span *vals, char **cause)
{
	long jid = field_index(acct, "JobID");
	long raw = field_index(acct, "JobIDRaw");
	long st = field_index(acct, "State");
	long ec = field_index(acct, "ExitCode");
	struct slurm_jobid rid;
	size_t f;

	row->raw_id = -1;
	row->exit_code = row->exit_signal = -1;
	row->values = xcalloc(acct->nr_fields, sizeof(*row->values));
	for (f = 0; f < acct->nr_fields; f++)
		row->values[f] = xstrndup(vals[f].s, vals[f].n);
	if (slurm_parse_jobid(row->values[jid >= 0 ? jid : raw], &row->id,
			      cause))
		return -1;
	if (raw >= 0) {
		if (slurm_parse_jobid(row->values[raw], &rid, cause))
			return -1;
		row->raw_id = rid.id;
		slurm_jobid_release(&rid);
	}
	if (st >= 0)
		row->state = slurm_state_parse(row->values[st], 0);
	if (ec >= 0 && row->values[ec][0] &&
	    slurm_parse_exit_code(row->values[ec], &row->exit_code,
				  &row->exit_signal, cause))
		return -1;
	return 0;
}

/* Parse sacct -P/-p output for the requested fields. */
int slurm_parse_sacct(const char *out, const char *const *fields,
		      size_t nr_fields, const char *delim, unsigned flags,
		      struct slurm_acct *acct, char **cause)
{
	struct slurm_acct res = SLURM_ACCT_INIT;
	const char *p = out ? out : "";
	struct span line, *vals = NULL;
	struct tmpl t;
	size_t i, cap = 0;
	int ret = -1;

	memset(acct, 0, sizeof(*acct));
	memset(&t, 0, sizeof(t));
	if (delim == NULL)
		delim = "|";
	if (nr_fields == 0 || *delim == '\0')
		return fail(cause, "sacct needs fields and a delimiter");
	res.nr_fields = nr_fields;
	res.fields = xcalloc(nr_fields, sizeof(*res.fields));
	for (i = 0; i < nr_fields; i++) {
		const char *pct = strchr(fields[i], '%');

		res.fields[i] = xstrndup(fields[i], pct ? (size_t)(pct -
					 fields[i]) : strlen(fields[i]));
	}
	if (field_index(&res, "JobID") < 0 &&
	    field_index(&res, "JobIDRaw") < 0) {
		fail(cause, "sacct fields need JobID or JobIDRaw");
		goto out;
	}
	sacct_tmpl(&res, delim, flags, &t);
	vals = xreallocarray(NULL, t.n, sizeof(*vals));
	while (next_line(&p, &line)) {
		struct span tl = trim(line);
		struct slurm_acct_row *row;

		if (tl.n == 0)
			continue;
		if (span_starts(tl, "Slurm accounting storage is disabled")) {
			ret = SLURM_PARSE_NO_ACCOUNTING;
			slurm_acct_release(&res);
			goto out;
		}
		if (span_starts(tl, "sacct: error:") ||
		    span_starts(tl, "sacct: fatal:")) {
			fail(cause, "sacct failed: '%.*s'", QLEN(tl.n), tl.s);
			goto out;
		}
		if (tmpl_match(&t, line, vals, cause))
			goto out;
		if (res.nr == 0 && is_header(&t, vals))
			continue;
		GROW(res.rows, res.nr, cap);
		row = &res.rows[res.nr++];
		memset(row, 0, sizeof(*row));
		if (sacct_row(&res, row, vals, cause))
			goto out;
	}
	*acct = res;
	memset(&res, 0, sizeof(res));
	ret = 0;
out:
	free(vals);
	tmpl_release(&t);
	slurm_acct_release(&res);
	return ret;
}

/* How telling a final state is when steps and allocation disagree. */
static int failure_rank(enum slurm_state st)
{
	switch (st) {
	case SLURM_STATE_OUT_OF_MEMORY:
		return 5;
	case SLURM_STATE_NODE_FAIL:
	case SLURM_STATE_BOOT_FAIL:
		return 4;
	case SLURM_STATE_TIMEOUT:
	case SLURM_STATE_DEADLINE:
	case SLURM_STATE_PREEMPTED:
		return 3;
	case SLURM_STATE_FAILED:
		return 2;
	case SLURM_STATE_REVOKED:
	case SLURM_STATE_CANCELLED:
		return 1;
	default:
		return 0;
	}
}

/* True when a row belongs to job (by JobID or JobIDRaw). */
static int row_is_job(const struct slurm_acct_row *row, const char *job,
		      long long num)
{
	if (strcmp(row->id.job, job) == 0)
		return 1;
	return num > 0 && row->raw_id == num;
}

/* Fold the rows of one job into a verdict-ready summary. */
int slurm_acct_summarize(const struct slurm_acct *acct, const char *job,
			 struct slurm_acct_summary *sum, char **cause)
{
	long long num = -1;
	size_t i;

	memset(sum, 0, sizeof(*sum));
	sum->exit_code = sum->exit_signal = -1;
	if (span_uint(span_of(job), 999999999999LL, &num))
		num = -1;
	for (i = 0; i < acct->nr; i++) {
		const struct slurm_acct_row *row = &acct->rows[i];

		if (!row_is_job(row, job, num))
			continue;
		if (row->id.step == NULL) {
			/* with -D, a later run starts over */
			sum->alloc = row;
			sum->worst_step = NULL;
			sum->nr_steps = 0;
			continue;
		}
		sum->nr_steps++;
		if (slurm_state_is_final(row->state) &&
		    row->state != SLURM_STATE_COMPLETED &&
		    (sum->worst_step == NULL || failure_rank(row->state) >
		     failure_rank(sum->worst_step->state)))
			sum->worst_step = row;
	}
	if (sum->alloc == NULL)
		return fail(cause, "sacct has no allocation row for job '%s'",
			    job);
	sum->alloc_state = sum->state = sum->alloc->state;
	sum->exit_code = sum->alloc->exit_code;
	sum->exit_signal = sum->alloc->exit_signal;
	if (sum->worst_step == NULL || !slurm_state_is_final(sum->state))
		return 0;
	if (failure_rank(sum->worst_step->state) > failure_rank(sum->state))
		sum->state = sum->worst_step->state;
	if (sum->exit_code <= 0 && sum->exit_signal <= 0) {
		sum->exit_code = sum->worst_step->exit_code;
		sum->exit_signal = sum->worst_step->exit_signal;
	}
	return 0;
}

/* ----------------------------------------------------------- show config */

/* Free one record's pairs. */
void slurm_record_release(struct slurm_record *rec)
{
	kv_free(rec->kv, rec->nr_kv);
	rec->kv = NULL;
	rec->nr_kv = 0;
}

/* Parse `scontrol show config`: its "Key = Value" lines. */
int slurm_parse_config(const char *out, struct slurm_record *conf,
		       char **cause)
{
	struct slurm_record res = { NULL, 0 };
	const char *p = out ? out : "";
	struct span line, t, k, v;
	size_t cap = 0, i;
	const char *eq;

	conf->kv = NULL;
	conf->nr_kv = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0)
			continue;
		if (mem_find(t.s, t.n, " error:", 7) || span_starts(t, "error:")) {
			fail(cause, "scontrol show config failed: '%.*s'",
			     QLEN(t.n), t.s);
			slurm_record_release(&res);
			return -1;
		}
		eq = memchr(t.s, '=', t.n);
		if (eq == NULL)
			continue;	/* a title, a section, a ping line */
		k.s = t.s;
		k.n = (size_t)(eq - t.s);
		k = trim(k);
		for (i = 0; i < k.n && !isspace((unsigned char)k.s[i]); i++)
			;
		if (k.n == 0 || i < k.n)
			continue;	/* not "Key = Value" */
		v.s = eq + 1;
		v.n = (size_t)(t.s + t.n - v.s);
		kv_add(&res.kv, &res.nr_kv, &cap, k, trim(v));
	}
	if (res.nr_kv == 0)
		return fail(cause, "no 'Key = Value' line in scontrol show "
			    "config output");
	*conf = res;
	return 0;
}

/* ------------------------------------------------------------------ ping */

/* Free the controllers. */
void slurm_ping_release(struct slurm_ping *ping)
{
	size_t i;

	for (i = 0; i < ping->nr; i++) {
		free(ping->v[i].role);
		free(ping->v[i].host);
	}
	free(ping->v);
	ping->v = NULL;
	ping->nr = 0;
}

/* The i-th '/'-separated piece of sp; empty when there are fewer pieces. */
static struct span slash_piece(struct span sp, size_t i)
{
	const char *p = sp.s, *end = sp.s + sp.n, *q;
	struct span r;

	for (;;) {
		q = memchr(p, '/', (size_t)(end - p));
		if (i == 0) {
			r.s = p;
			r.n = q ? (size_t)(q - p) : (size_t)(end - p);
			return r;
		}
		if (q == NULL) {
			r.s = end;
			r.n = 0;
			return r;
		}
		p = q + 1;
		i--;
	}
}

/* Parse `scontrol ping`. */
int slurm_parse_ping(const char *out, struct slurm_ping *ping, char **cause)
{
	struct slurm_ping res = { NULL, 0 };
	const char *p = out ? out : "";
	struct span line, t, role, host, state;
	const char *open, *close, *at, *is;
	size_t cap = 0, i;

	ping->v = NULL;
	ping->nr = 0;
	while (next_line(&p, &line)) {
		t = trim(line);
		if (t.n == 0 || t.s[0] == '*')
			continue;	/* the "RESTORE SLURMCTLD" banner */
		open = span_starts(t, "Slurmctld(") ? t.s + 9 : NULL;
		close = open ? memchr(open, ')', (size_t)(t.s + t.n - open)) : NULL;
		at = close ? mem_find(close, (size_t)(t.s + t.n - close), ") at ", 5) : NULL;
		is = at ? mem_rfind(at, (size_t)(t.s + t.n - at), " is ", 4) : NULL;
		if (is == NULL && at)
			is = mem_rfind(at, (size_t)(t.s + t.n - at), " are ", 5);
		/* "at is UP": no host between them (found by fuzzing) */
		if (at != close || is == NULL || is < at + 5) {
			fail(cause, "unexpected scontrol ping output '%.*s'",
			     QLEN(t.n), t.s);
			slurm_ping_release(&res);
			return -1;
		}
		role.s = open + 1;
		role.n = (size_t)(close - role.s);
		host.s = at + 5;
		host.n = (size_t)(is - host.s);
		state.s = is + (is[1] == 'i' ? 4 : 5);
		state.n = (size_t)(t.s + t.n - state.s);
		/* before 20.02: "Slurmctld(primary/backup) at a/b are UP/DOWN" */
		for (i = 0; i == 0 || slash_piece(role, i).n; i++) {
			struct span r = trim(slash_piece(role, i));
			struct span h = trim(slash_piece(host, i));
			struct span s = trim(slash_piece(state, i));
			struct slurm_ping_ctld *c;

			if (h.n == 0 || span_ieq(h, "(null)"))
				continue;	/* no backup configured */
			if (!span_ieq(s, "UP") && !span_ieq(s, "DOWN")) {
				fail(cause, "unexpected scontrol ping state "
				     "'%.*s'", QLEN(s.n), s.s);
				slurm_ping_release(&res);
				return -1;
			}
			GROW(res.v, res.nr, cap);
			c = &res.v[res.nr++];
			c->role = xstrndup(r.s, r.n);
			c->host = xstrndup(h.s, h.n);
			c->up = span_ieq(s, "UP");
		}
	}
	if (res.nr == 0)
		return fail(cause, "no controller in scontrol ping output");
	*ping = res;
	return 0;
}

/* When sbatch --test-only expects the job to start. */
int slurm_parse_test_only(const char *out, time_t *start, char **cause)
{
	const char *p = strstr(out, " to start at ");
	const char *err = strstr(out, "error: ");
	char *when;
	size_t n;
	int rc;

	if (!p) {
		if (err) {
			n = strcspn(err + 7, "\n");
			return fail(cause, "%.*s", QLEN(n), err + 7);
		}
		return fail(cause, "no start time in sbatch --test-only's answer '%.*s'",
			    QLEN(strcspn(out, "\n")), out);
	}
	p += strlen(" to start at ");
	n = strcspn(p, " \n");
	when = xstrndup(p, n);
	rc = slurm_parse_time(when, start, NULL);
	free(when);
	if (rc < 0 || *start == 0)
		return fail(cause, "bad start time in '%.*s'", QLEN(strcspn(p, "\n")), p);
	return 0;
}

/* The job ids of a dependency list. */
void slurm_dependency_ids(const char *dep, char ***ids, size_t *n)
{
	const char *p = dep ? dep : "";

	*ids = NULL;
	*n = 0;
	while (*p) {
		size_t clause = strcspn(p, ",?");
		const char *colon = memchr(p, ':', clause), *end = p + clause;

		/* "type:id[+time][:id...][(state)]" */
		while (colon && colon < end) {
			const char *id = colon + 1;
			size_t len = strspn(id, "0123456789_");

			if (len && len <= 40 && id + len <= end) {
				*ids = xreallocarray(*ids, *n + 1, sizeof(**ids));
				(*ids)[(*n)++] = xstrndup(id, len);
			}
			colon = memchr(id, ':', (size_t)(end - id));
		}
		p = *end ? end + 1 : end;
	}
}
