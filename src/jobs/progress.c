/* What a job reports as it trains, and the plainest stop rule: see progress.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/progress.h"
#include "lib/util.h"

#define MAX_WORDS 4

/* Split line (len bytes) into at most MAX_WORDS words (copied into buf); the count. */
static int words(const char *line, size_t len, char *buf, size_t bufsz, char *w[MAX_WORDS],
		 const char **rest)
{
	size_t i = 0, o = 0;
	int n = 0;

	*rest = NULL;
	while (i < len && n < MAX_WORDS) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i == len)
			break;
		if (n == 3)
			*rest = line + i;
		w[n++] = buf + o;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
		       o + 1 < bufsz)
			buf[o++] = line[i++];
		buf[o++] = '\0';
		if (o >= bufsz)
			break;
	}
	return n;
}

/* s as a whole number (nan and inf included): 0, or -1. */
static int number(const char *s, double *out)
{
	char *end;

	*out = strtod(s, &end);
	return end != s && *end == '\0' ? 0 : -1;
}

/* Whether v is no better than chance c. */
static int at_chance(double v, double c, int goal_max)
{
	double tol = fabs(c) * 0.01;

	return goal_max ? v <= c + tol : v >= c - tol;
}

/*
 * The next whole line of *s as words (*n of them), *s moved past it; 0 at
 * the end (a last line without its newline is still being written).
 */
static int next_line(const char **s, char *buf, size_t bufsz, char *w[MAX_WORDS], int *n)
{
	const char *nl, *rest;

	if (!*s || !(nl = strchr(*s, '\n')))
		return 0;
	*n = words(*s, (size_t)(nl - *s), buf, bufsz, w, &rest);
	*s = nl + 1;
	return 1;
}

/* Whether the words are an "epoch K VALUE" line: its K and VALUE. */
static int epoch_line(char *w[MAX_WORDS], int n, long long *k, double *v)
{
	const char *e;

	return n >= 3 && strcmp(w[0], "epoch") == 0 &&
	       parse_ll(w[1], 0, 1000000000, k, &e) == 0 && number(w[2], v) == 0;
}

/* Read a progress file's text and apply the plainest rule. */
void progress_parse(const char *text, int goal_max, long long runs, struct progress *p)
{
	const char *s = text, *e;
	long long running = 0, k;
	char buf[256], *w[MAX_WORDS];
	double v;
	int n;

	memset(p, 0, sizeof(*p));
	while (next_line(&s, buf, sizeof(buf), w, &n)) {
		if (n == 2 && strcmp(w[0], "epochs") == 0 &&
		    parse_ll(w[1], 1, 1000000000, &k, &e) == 0)
			p->planned = k;
		else if (n == 2 && strcmp(w[0], "chance") == 0 && number(w[1], &v) == 0 &&
			 isfinite(v)) {
			p->has_chance = 1;
			p->chance = v;
		} else if (!p->stop && epoch_line(w, n, &k, &v)) {
			p->epochs++;
			p->last_epoch = k;
			p->last_value = v;
			if (!isfinite(v)) {
				p->stop = 1;
				p->stop_epoch = k;
				p->why = isnan(v) ? "the value is NaN" : "the value is infinite";
				continue;
			}
			running = p->has_chance && at_chance(v, p->chance, goal_max) ?
				  running + 1 : 0;
			if (runs >= 1 && running >= runs) {
				p->stop = 1;
				p->stop_epoch = k;
				p->why = "the value is at chance";
			}
		}
	}
}

/* A stop record's text: "attempt N epoch K WHY". */
int progress_parse_record(const char *text, long long *attempt, long long *epoch,
			  char **why)
{
	const char *nl = strchr(text, '\n'), *rest = NULL, *e;
	size_t len = nl ? (size_t)(nl - text) : strlen(text);
	char buf[256], *w[MAX_WORDS];
	int n = words(text, len, buf, sizeof(buf), w, &rest);

	*why = NULL;
	if (n < 4 || strcmp(w[0], "attempt") != 0 || strcmp(w[2], "epoch") != 0 ||
	    parse_ll(w[1], 0, 1000000000, attempt, &e) < 0)
		return -1;
	/* the fourth word is K, the rest WHY */
	{
		char kbuf[32];
		const char *k = rest, *sp;
		size_t kl;

		sp = k + strcspn(k, " \t\r\n");
		kl = (size_t)(sp - k);
		if (kl == 0 || kl >= sizeof(kbuf))
			return -1;
		memcpy(kbuf, k, kl);
		kbuf[kl] = '\0';
		if (parse_ll(kbuf, 0, 1000000000, epoch, &e) < 0)
			return -1;
		sp += strspn(sp, " \t");
		len -= (size_t)(sp - text);
		while (len > 0 && (sp[len - 1] == '\r' || sp[len - 1] == ' '))
			len--;
		*why = len ? xstrndup(sp, len) : xstrdup("no reason given");
	}
	return 0;
}

/* The verdict's reason for a stop record. */
char *progress_stopped_reason(long long epoch, const char *why)
{
	return xasprintf("stopped early at epoch %lld (%s)", epoch, why);
}

/* The "epoch K VALUE" lines of a progress file's text, in order. */
size_t progress_series(const char *text, size_t max, struct progress_point **out)
{
	const char *s = text;
	char buf[256], *w[MAX_WORDS];
	size_t n = 0;
	long long k;
	double v;
	int nw;

	*out = NULL;
	while (n < max && next_line(&s, buf, sizeof(buf), w, &nw)) {
		if (!epoch_line(w, nw, &k, &v))
			continue;
		*out = xreallocarray(*out, n + 1, sizeof(**out));
		(*out)[n].epoch = k;
		(*out)[n].value = v;
		n++;
	}
	return n;
}

/* The run time a stop at epoch K saved, at the pace of the epochs it ran. */
double progress_saved_secs(long long epoch, long long planned, long long ran_secs)
{
	if (epoch <= 0 || planned <= epoch || ran_secs <= 0)
		return 0;
	return (double)ran_secs * (double)(planned - epoch) / (double)epoch;
}
