/*
 * Pure parsers for Slurm's command-line output, one file per tool
 * (slurm-parse-<tool>.c); this one holds what they share: the helpers,
 * job states, small values, job ids, and the line templates behind squeue
 * and sacct. See slurm-parse.h for the contract of each entry point.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "slurm/parse-impl.h"
#include "lib/util.h"

/* Set *cause (when wanted) and return -1. */
int XL_PRINTF(2, 3) fail(char **cause, const char *fmt, ...)
{
	va_list ap;

	if (cause) {
		va_start(ap, fmt);
		*cause = xvasprintf(fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Step through the lines of a string; '\r' before '\n' is dropped. */
int next_line(const char **p, struct span *line)
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
struct span trim(struct span sp)
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
struct span span_of(const char *s)
{
	struct span sp = { s, strlen(s) };

	return sp;
}

/* True when the span holds exactly the string word, ignoring case. */
int span_ieq(struct span sp, const char *word)
{
	size_t n = strlen(word);

	return sp.n == n && strncasecmp(sp.s, word, n) == 0;
}

/* True when the span starts with prefix (case-sensitive). */
int span_starts(struct span sp, const char *prefix)
{
	size_t n = strlen(prefix);

	return sp.n >= n && memcmp(sp.s, prefix, n) == 0;
}

/* First occurrence of needle in hay, or NULL. */
const char *mem_find(const char *hay, size_t n, const char *needle,
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
const char *mem_rfind(const char *hay, size_t n, const char *needle,
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
int in_set(char c, const char *set)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Parse a span of 1..18 decimal digits (nothing else) not above max. */
int span_uint(struct span sp, long long max, long long *out)
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
int is_no_value(struct span sp)
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


/* -------------------------------------------------------------- templates */

/* Free a template. */
void tmpl_release(struct tmpl *t)
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
int tmpl_match(const struct tmpl *t, struct span line,
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

/* True for a squeue/sacct header line: the id column holds its title. */
int is_header(const struct tmpl *t, const struct span *vals)
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
