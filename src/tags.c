/* Run tags and canonical values: see tags.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/sha256.h"
#include "tags.h"
#include "lib/util.h"

const char tag_help[] =
	"Run tags (the names xloop gives the runs it makes):\n"
	"\n"
	"  a change          VAR-VALUE          LR-0.05, MAX_DEPTH-2\n"
	"  the same again    VAR-VALUE--n2      --n3, ... (another parent, tag taken)\n"
	"  a replicate       B--r2              --r3, ...: a seed-only change of the\n"
	"                                       configuration whose first run is B\n"
	"  a sweep           N--VAR-VALUE       with `sweep --name N`; VAR-VALUE without\n"
	"  autopilot's run   VAR-V_VAR2-V2      its configuration: each variable of the\n"
	"                                       space whose value is not the baseline's,\n"
	"                                       the value as short as its grid allows\n"
	"                                       (LEARNING_RATE-0.013_MAX_DEPTH-4)\n"
	"\n"
	"A variable has one name in every tag of a study. The study abbreviates\n"
	"(the initials: LR-0.013_MD-4, and LR-0.05 for a change) when its space's\n"
	"longest configuration tag would not fit with whole names; that is decided\n"
	"once, at the first tag xloop makes with a space set, and kept. Never one\n"
	"abbreviation for two variables of a study: LEARNING_RATE and L2_REG are\n"
	"LERA and L2RE, and an abbreviation once used keeps its variable.\n"
	"\n"
	"At most 64 characters of letters, digits, '.', '_' and '-', starting with\n"
	"a letter or a digit. Parts are joined by \"--\", which a value never gives:\n"
	"in VALUE every other character becomes '-', runs of '-' fold to one, a\n"
	"leading '-' and trailing '-' or '.' are dropped, but the sign of a\n"
	"negative number is written \"neg\" (MAX_DEPTH=-1 gives MAX_DEPTH-neg1,\n"
	"never MAX_DEPTH-1). A value too long for 64 is cut and marked with .h\n"
	"and 6 hex digits of a hash of the whole value (MODEL-facebook-conv.h3f2a9c);\n"
	"the --nK and --rK suffixes are never cut. A tag given with `new T` or\n"
	"`next --tag T` is taken as it is.\n"
	"\n"
	"Values: a decimal number is compared by its value, so 0.05, 5e-2 and\n"
	"0.050 are one value (`plan add` refuses LR=0.050 when LR is 0.05 already);\n"
	"anything else, and numbers of more than 15 significant digits, as written.\n";

/* Append value to b sanitized for a tag: see tags.h. */
static void add_sanitized(struct buf *b, const char *value)
{
	size_t start = b->len;
	const char *p = value;

	/* a minus sign is kept as a word: LR=-1 is LR-neg1, never LR-1 */
	if (p[0] == '-' && (isdigit((unsigned char)p[1]) ||
			    (p[1] == '.' && isdigit((unsigned char)p[2])))) {
		buf_adds(b, "neg");
		p++;
	}
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (!isalnum(c) && c != '.' && c != '_')
			c = '-';
		if (c == '-' && (b->len == start || b->s[b->len - 1] == '-'))
			continue;
		buf_addc(b, (char)c);
	}
	while (b->len > start && (b->s[b->len - 1] == '-' || b->s[b->len - 1] == '.'))
		buf_setlen(b, b->len - 1);
}

/* ".h" and 6 hex digits of the sha256 of s. */
static void add_hash(struct buf *b, const char *s)
{
	char hex[65];

	sha256_hex(s, strlen(s), hex);
	buf_addf(b, ".h%.6s", hex);
}

/* Cut b to at most max bytes (a trailing '-' or '.' dropped), then mark it with s's hash. */
static void cut_and_hash(struct buf *b, size_t from, size_t max, const char *s)
{
	if (b->len > max)
		buf_setlen(b, max);
	while (b->len > from && (b->s[b->len - 1] == '-' || b->s[b->len - 1] == '.'))
		buf_setlen(b, b->len - 1);
	add_hash(b, s);
}

/* One candidate tag. */
char *tag_compose(enum tag_kind kind, const char *base_or_prefix, const char *var,
		  const char *value, int k)
{
	struct buf b = BUF_INIT, suffix = BUF_INIT;
	size_t head, lead;
	char *whole;

	if (k >= 2 || kind == TAG_REPLICATE)
		buf_addf(&suffix, "--%c%d", kind == TAG_REPLICATE ? 'r' : 'n', k < 2 ? 2 : k);
	if (kind == TAG_REPLICATE) {
		buf_adds(&b, base_or_prefix);	/* a tag already: its "--" stay */
		if (b.len + suffix.len > TAG_MAX)
			cut_and_hash(&b, 0, TAG_MAX - suffix.len - 8, base_or_prefix);
	} else {
		if (kind == TAG_SWEEP && base_or_prefix && *base_or_prefix) {
			add_sanitized(&b, base_or_prefix);
			buf_adds(&b, "--");
		}
		add_sanitized(&b, var);
		head = b.len;
		buf_addc(&b, '-');
		add_sanitized(&b, value);
		if (b.len == head + 1)
			buf_setlen(&b, head);	/* an empty value: VAR alone */
		if (b.len + suffix.len > TAG_MAX) {
			if (head + 1 + 1 + 8 + suffix.len <= TAG_MAX) {
				cut_and_hash(&b, head + 1, TAG_MAX - suffix.len - 8, value);
			} else {
				/* not even VAR fits: cut everything, hash everything */
				whole = xasprintf("%s\n%s\n%s", base_or_prefix ?
						  base_or_prefix : "", var, value);
				cut_and_hash(&b, 0, TAG_MAX - suffix.len - 8, whole);
				free(whole);
			}
		}
	}
	/* a tag starts with a letter or a digit (VAR may start with '_') */
	for (lead = 0; lead < b.len && !isalnum((unsigned char)b.s[lead]); lead++)
		;
	if (lead == b.len) {
		buf_reset(&b);
		buf_adds(&b, "run");
	} else if (lead) {
		memmove(b.s, b.s + lead, b.len - lead + 1);
		b.len -= lead;
	}
	buf_adds(&b, suffix.s);
	buf_release(&suffix);
	return buf_detach(&b, NULL);
}

/* v to p significant digits, canonical (malloc'd); v itself when not a number. */
static char *round_sig(const char *v, int p)
{
	char buf[64], *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (!*v || *end || errno == ERANGE || !isfinite(d))
		return xstrdup(v);
	xsnprintf(buf, sizeof(buf), "%.*g", p, d);
	return value_canon(buf);
}

/*
 * The value as short as its grid allows: the fewest significant digits
 * (two at least) that still tell it from every other value of the grid;
 * a value not in the grid, or not a number, stays as it is.
 */
static char *short_value(const char *v, const char *const *grid, size_t ngrid)
{
	char *canon = value_canon(v);
	size_t i;
	int p, in = 0;

	for (i = 0; i < ngrid; i++)
		in |= value_same(grid[i], canon);
	for (p = 2; in && p <= 15; p++) {
		char *mine = round_sig(canon, p);
		int clash = strlen(mine) >= strlen(canon);

		for (i = 0; i < ngrid && !clash; i++) {
			char *other;

			if (value_same(grid[i], canon))
				continue;
			other = round_sig(grid[i], p);
			clash = strcmp(other, mine) == 0;
			free(other);
		}
		if (!clash) {
			free(canon);
			return mine;
		}
		free(mine);
	}
	return canon;
}

/* Abbreviation m of a variable: see tags.h (tag_abbrev). */
char *tag_abbrev(const char *var, int m)
{
	struct buf b = BUF_INIT;
	const char *p;
	int taken = 0;

	if (!strchr(var, '_')) {
		add_sanitized(&b, var);
		return buf_detach(&b, NULL);
	}
	for (p = var; *p; p++) {
		if (*p == '_') {
			taken = 0;
			continue;
		}
		if (isalnum((unsigned char)*p) && taken++ < m)
			buf_addc(&b, *p);
	}
	return buf_detach(&b, NULL);
}

/* 1 when the name of variable i is taken by another: see tag_abbrevs. */
static int abbrev_clash(char **out, const char *const *vars, size_t n, size_t i,
			const char *const *rec_abbr, const char *const *rec_var, size_t nrec)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (j != i && strcmp(out[j], out[i]) == 0)
			return 1;
	for (j = 0; j < nrec; j++)
		if (strcmp(rec_abbr[j], out[i]) == 0 && strcmp(rec_var[j], vars[i]) != 0)
			return 1;
	return 0;
}

/* The abbreviations of a study's variables: see tags.h. */
void tag_abbrevs(const char *const *vars, size_t n, const char *const *rec_abbr,
		 const char *const *rec_var, size_t nrec, char **out)
{
	int *level = xcalloc(n ? n : 1, sizeof(*level)), *fixed = xcalloc(n ? n : 1, sizeof(*fixed));
	size_t i, j;
	int moved = 1;

	for (i = 0; i < n; i++) {
		out[i] = NULL;
		for (j = 0; j < nrec && !out[i]; j++)
			if (strcmp(rec_var[j], vars[i]) == 0)
				out[i] = xstrdup(rec_abbr[j]);	/* the study's already */
		fixed[i] = out[i] != NULL || !strchr(vars[i], '_');
		level[i] = 1;
		if (!out[i])
			out[i] = tag_abbrev(vars[i], 1);
	}
	/* every variable of a clash that can grow grows, one letter per word */
	while (moved) {
		int *clash = xcalloc(n ? n : 1, sizeof(*clash));

		moved = 0;
		for (i = 0; i < n; i++)
			clash[i] = !fixed[i] && abbrev_clash(out, vars, n, i, rec_abbr, rec_var, nrec);
		for (i = 0; i < n; i++) {
			char *next;

			if (!clash[i])
				continue;
			next = tag_abbrev(vars[i], ++level[i]);
			if (strcmp(next, out[i]) == 0) {
				/* whole words already: the full name (it has a '_',
				 * which no abbreviation has) */
				free(next);
				next = xstrdup(vars[i]);
				fixed[i] = 1;
			}
			free(out[i]);
			out[i] = next;
			moved = 1;
		}
		free(clash);
	}
	free(level);
	free(fixed);
}

/* One candidate of a configuration tag, with full names or abbreviations. */
static void config_tag(struct buf *b, const struct tag_part *v, size_t n, int initials)
{
	const char **vars = xcalloc(n ? n : 1, sizeof(*vars));
	char **abbr = xcalloc(n ? n : 1, sizeof(*abbr));
	size_t i;

	/* abbreviations told apart within the tag, unless the caller gave them */
	for (i = 0; i < n; i++)
		vars[i] = v[i].var;
	if (initials)
		tag_abbrevs(vars, n, NULL, NULL, 0, abbr);
	for (i = 0; i < n; i++) {
		char *val = short_value(v[i].value, v[i].grid, v[i].ngrid);

		if (i)
			buf_addc(b, '_');
		if (initials)
			add_sanitized(b, v[i].abbr ? v[i].abbr : abbr[i]);
		else
			add_sanitized(b, v[i].var);
		buf_addc(b, '-');
		add_sanitized(b, val);
		free(val);
		free(abbr[i]);
	}
	free(abbr);
	free(vars);
}

/* Candidate k of a configuration's tag, and whether it abbreviates: see tags.h. */
char *tag_config_abbr(const struct tag_part *v, size_t n, int k, int *abbreviated)
{
	struct buf b = BUF_INIT;
	char suffix[16] = "";
	int initials;

	if (k >= 2)
		xsnprintf(suffix, sizeof(suffix), "--n%d", k);
	/* room for a replicate's --rK or --nK after it, then full names or initials */
	for (initials = 0; n && initials < 2; initials++) {
		buf_reset(&b);
		config_tag(&b, v, n, initials);
		if (b.len && isalnum((unsigned char)b.s[0]) && b.len + 8 <= TAG_MAX) {
			buf_adds(&b, suffix);
			if (abbreviated)
				*abbreviated = initials;
			return buf_detach(&b, NULL);
		}
	}
	buf_release(&b);
	return NULL;
}

/* Candidate k of a configuration's tag with the names asked for: see tags.h. */
char *tag_config_as(const struct tag_part *v, size_t n, int k, int abbreviate)
{
	struct buf b = BUF_INIT;

	if (n == 0)
		return NULL;
	config_tag(&b, v, n, abbreviate != 0);
	if (b.len && isalnum((unsigned char)b.s[0]) && b.len + 8 <= TAG_MAX) {
		if (k >= 2)
			buf_addf(&b, "--n%d", k);
		return buf_detach(&b, NULL);
	}
	buf_release(&b);
	return NULL;
}

/* Whether a study of these variables abbreviates: see tags.h. */
int tag_study_abbreviates(const struct tag_part *all, size_t n)
{
	struct buf b = BUF_INIT;
	size_t i, j, total = 0;

	for (i = 0; i < n; i++) {
		size_t longest = 0;

		buf_reset(&b);
		add_sanitized(&b, all[i].var);
		total += b.len + 1 + (i > 0);	/* VAR, '-', the '_' before it */
		for (j = 0; j < all[i].ngrid; j++) {
			char *val = short_value(all[i].grid[j], all[i].grid, all[i].ngrid);

			buf_reset(&b);
			add_sanitized(&b, val);
			if (b.len > longest)
				longest = b.len;
			free(val);
		}
		total += longest;
	}
	buf_release(&b);
	return total + 8 > TAG_MAX;
}

/* Candidate k of a configuration's tag: see tags.h. */
char *tag_config(const struct tag_part *v, size_t n, int k)
{
	return tag_config_abbr(v, n, k, NULL);
}

/* Parse a plain decimal number: 1 and its significant digit count, or 0. */
static int is_decimal(const char *s, int *sig)
{
	const char *p = s;
	int digits = 0, first = -1, last = -1, pos = 0;

	if (*p == '+' || *p == '-')
		p++;
	for (; isdigit((unsigned char)*p) || *p == '.'; p++) {
		if (*p == '.') {
			if (pos < 0)
				return 0;	/* a second point */
			pos = -1;
			continue;
		}
		if (*p != '0') {
			if (first < 0)
				first = digits;
			last = digits;
		}
		digits++;
	}
	if (digits == 0)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	*sig = first < 0 ? 0 : last - first + 1;
	return *p == '\0';
}

/* A value written one way. */
char *value_canon(const char *value)
{
	struct buf b = BUF_INIT;
	char digits[32], e[40];
	double d;
	int sig, p, exp10, n;
	char *end;

	if (!is_decimal(value, &sig) || sig > 15)
		return xstrdup(value);
	errno = 0;
	d = strtod(value, &end);
	if (*end || errno == ERANGE || !isfinite(d))
		return xstrdup(value);
	if (d == 0)
		return xstrdup("0");
	/* the fewest significant digits that read back as d */
	for (p = 1; p <= 17; p++) {
		xsnprintf(e, sizeof(e), "%.*e", p - 1, d);
		if (strtod(e, NULL) == d)
			break;
	}
	/* e is "-d.ddde+XX": its digits and its exponent */
	n = 0;
	for (end = e; *end && *end != 'e'; end++)
		if (isdigit((unsigned char)*end))
			digits[n++] = *end;
	digits[n] = '\0';
	exp10 = (int)strtol(end + 1, NULL, 10);
	if (d < 0)
		buf_addc(&b, '-');
	if (exp10 >= 21 || exp10 < -7) {
		buf_addf(&b, "%c%s%se%d", digits[0], n > 1 ? "." : "", digits + 1, exp10);
	} else if (exp10 >= 0) {
		int i;

		for (i = 0; i < n || i <= exp10; i++) {
			if (i == exp10 + 1)
				buf_addc(&b, '.');
			buf_addc(&b, i < n ? digits[i] : '0');
		}
	} else {
		buf_adds(&b, "0.");
		for (p = -1; p > exp10; p--)
			buf_addc(&b, '0');
		buf_adds(&b, digits);
	}
	return buf_detach(&b, NULL);
}

/* Two values, compared canonically. */
int value_same(const char *a, const char *b)
{
	char *ca, *cb;
	int same;

	if (strcmp(a, b) == 0)
		return 1;
	ca = value_canon(a);
	cb = value_canon(b);
	same = strcmp(ca, cb) == 0;
	free(ca);
	free(cb);
	return same;
}
