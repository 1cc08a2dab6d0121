/* Run tags and canonical values (stand-in until issue 16's tags.c lands). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "loop.h"
#include "tags.h"

/* 1 when v is a plain decimal number: [+-]digits[.digits][e[+-]digits]. */
static int decimal_syntax(const char *v)
{
	const char *p = v;
	int digits = 0;

	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits++;
		}
	}
	if (!digits)
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
	return *p == '\0';
}

/* The canonical form of a value. */
char *value_canon(const char *v)
{
	char out[64];
	double d;
	int prec;

	if (!decimal_syntax(v))
		return xstrdup(v);
	d = strtod(v, NULL);
	if (!isfinite(d))
		return xstrdup(v);
	if (d == 0)
		return xstrdup("0");
	if (d == floor(d) && fabs(d) < 1e15) {
		xsnprintf(out, sizeof(out), "%.0f", d);
		return xstrdup(out);
	}
	for (prec = 1; prec <= 17; prec++) {
		xsnprintf(out, sizeof(out), "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return xstrdup(out);
}

/* VAR-VALUE made tag-safe. */
static char *change_base(const char *var, const char *value)
{
	struct buf b = BUF_INIT;
	const char *p;
	char *base;

	buf_adds(&b, var);
	buf_addc(&b, '-');
	for (p = value; *p && b.len < 48; p++) {
		unsigned char c = (unsigned char)*p;

		if (isalnum(c) || c == '.' || c == '_')
			buf_addc(&b, (char)c);
		else if (b.len && b.s[b.len - 1] != '-')
			buf_addc(&b, '-');
	}
	while (b.len && (b.s[b.len - 1] == '-' || b.s[b.len - 1] == '.'))
		buf_setlen(&b, b.len - 1);
	base = buf_detach(&b, NULL);
	if (!valid_name(base)) {
		free(base);
		base = xstrdup("run");
	}
	return base;
}

/* A free tag of the given kind. */
char *tag_make(struct xl_ctx *ctx, enum tag_kind kind, const char *base_or_prefix,
	       const char *var, const char *value)
{
	char *base, *tag;
	int i;

	if (kind == TAG_REPLICATE)
		base = xstrndup(base_or_prefix, 56);
	else
		base = change_base(var, value);
	tag = kind == TAG_REPLICATE ? xasprintf("%s--r2", base) : xstrdup(base);
	for (i = kind == TAG_REPLICATE ? 3 : 2;; i++) {
		char *cause = NULL;

		if (loop_check_new_tag(ctx, tag, &cause) == 0)
			break;
		free(cause);
		free(tag);
		tag = xasprintf("%s--%c%d", base, kind == TAG_REPLICATE ? 'r' : 'n', i);
	}
	free(base);
	return tag;
}
