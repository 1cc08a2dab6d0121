/* The search space: parsing its forms, ordered values, neighbours. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobsh/jobsh.h"
#include "search/space.h"
#include "tags.h"
#include "lib/util.h"

#define SPACE_MAX_VALUES 1000

/* Free one variable. */
void space_var_release(struct space_var *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->values[i]);
	free(v->values);
	free(v->name);
	free(v->range);
	memset(v, 0, sizeof(*v));
}

/* Free a space. */
void space_release(struct space *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		space_var_release(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A whole finite number. */
static int parse_num(const char *s, double *out)
{
	char *end;

	if (!*s)
		return -1;
	*out = strtod(s, &end);
	return *end == '\0' && isfinite(*out) ? 0 : -1;
}

static void add_value(struct space_var *v, const char *val)
{
	v->values = xreallocarray(v->values, v->n + 1, sizeof(*v->values));
	v->values[v->n++] = value_canon(val);
}

/* Refuse a value given twice. */
static int check_unique(struct space_var *v, char **cause)
{
	size_t i, j;

	for (i = 0; i < v->n; i++)
		for (j = i + 1; j < v->n; j++)
			if (strcmp(v->values[i], v->values[j]) == 0) {
				*cause = xasprintf("%s: the value '%s' appears twice",
						   v->name, v->values[i]);
				return -1;
			}
	return 0;
}

/* Choices. */
int space_from_list(const char *name, const char *const *vals, size_t n,
		    struct space_var *out, char **cause)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->name = xstrdup(name);
	if (n == 0 || n > SPACE_MAX_VALUES) {
		*cause = xasprintf("%s: give 1 to %d values", name, SPACE_MAX_VALUES);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (!*vals[i] || !utf8_valid(vals[i], strlen(vals[i])) ||
		    strchr(vals[i], '\n')) {
			*cause = xasprintf("%s: value %zu is empty or not one line of text",
					   name, i + 1);
			goto fail;
		}
		add_value(out, vals[i]);
	}
	if (check_unique(out, cause) < 0)
		goto fail;
	return 0;
fail:
	space_var_release(out);
	return -1;
}

/*
 * The grid of a range anchored at v (lo < v < hi): the interior point
 * nearest v (on the grid's scale) becomes v, or v is added to a grid of
 * two; then each point but LO, HI and v is rounded to the fewest
 * significant digits (2 at least) that keep the grid strictly rising.
 */
static void anchor_grid(double *x, long long *n, double v, int is_log)
{
	double *r = xcalloc((size_t)*n + 1, sizeof(*r));
	long long i, best = -1, keep;
	int p;

	for (i = 0; i < *n; i++)
		if (x[i] == v)
			best = i;
	if (best < 0 && *n == 2) {
		x[2] = x[1];
		x[1] = v;
		*n = 3;
		best = 1;
	} else if (best < 0) {
		double d, bd = 0;

		for (i = 1; i + 1 < *n; i++) {
			d = is_log ? fabs(log(x[i]) - log(v)) : fabs(x[i] - v);
			if (best < 0 || d < bd) {
				best = i;
				bd = d;
			}
		}
		x[best] = v;
	}
	keep = best;
	for (p = 2; p <= 15; p++) {
		int rising = 1;

		for (i = 0; i < *n; i++) {
			char num[64];

			if (i == 0 || i == *n - 1 || i == keep) {
				r[i] = x[i];
				continue;
			}
			xsnprintf(num, sizeof(num), "%.*g", p, x[i]);
			r[i] = strtod(num, NULL);
		}
		for (i = 1; i < *n; i++)
			rising &= r[i] > r[i - 1];
		if (rising)
			break;
	}
	if (p <= 15)
		memcpy(x, r, (size_t)*n * sizeof(*x));
	free(r);
}

/* A range: LO..HI with :int, :log, :steps=N, :at=V. */
int space_from_range(const char *name, const char *range, struct space_var *out,
		     char **cause)
{
	char *copy = xstrdup(range), *opt, *dots, *save = NULL;
	double lo, hi;
	long long steps = 9;
	int is_int = 0, is_log = 0, given_steps = 0, anchored = 0;
	double at = 0, *x;
	long long i;

	memset(out, 0, sizeof(*out));
	out->name = xstrdup(name);
	out->range = xstrdup(range);
	dots = strstr(copy, "..");
	opt = strchr(copy, ':');
	if (dots == NULL || (opt && opt < dots))
		goto bad;
	if (opt)
		*opt++ = '\0';
	*dots = '\0';
	if (parse_num(copy, &lo) < 0 || parse_num(dots + 2, &hi) < 0 || !(lo < hi))
		goto bad;
	while (opt && *opt) {
		char *next = strchr(opt, ':');
		const char *err;

		if (next)
			*next++ = '\0';
		if (strcmp(opt, "int") == 0)
			is_int = 1;
		else if (strcmp(opt, "log") == 0)
			is_log = 1;
		else if (starts_with(opt, "steps=") &&
			 parse_ll(opt + 6, 2, SPACE_MAX_VALUES, &steps, &err) == 0)
			given_steps = 1;
		else if (starts_with(opt, "at=") && parse_num(opt + 3, &at) == 0)
			anchored = 1;
		else
			goto bad;
		opt = next;
	}
	(void)save;
	if (is_int && (is_log || given_steps || anchored || lo != floor(lo) ||
		       hi != floor(hi) || hi - lo + 1 > SPACE_MAX_VALUES))
		goto bad;
	if (anchored && !(lo <= at && at <= hi))
		goto bad;
	if (is_log && lo <= 0)
		goto bad;
	if (is_int) {
		for (i = (long long)lo; i <= (long long)hi; i++) {
			char num[32];

			xsnprintf(num, sizeof(num), "%lld", i);
			add_value(out, num);
		}
	} else {
		x = xcalloc((size_t)steps + 1, sizeof(*x));
		for (i = 0; i < steps; i++) {
			double f = (double)i / (double)(steps - 1);

			x[i] = is_log ? exp(log(lo) + f * (log(hi) - log(lo))) : lo + f * (hi - lo);
			if (i == steps - 1)
				x[i] = hi;
		}
		if (anchored)
			anchor_grid(x, &steps, at, is_log);
		for (i = 0; i < steps; i++) {
			char num[32];

			/* an anchored grid is rounded already; LO, HI and V as given */
			xsnprintf(num, sizeof(num), "%.*g", anchored ? 15 : 6, x[i]);
			add_value(out, num);
		}
		free(x);
	}
	free(copy);
	if (check_unique(out, cause) < 0) {
		space_var_release(out);
		return -1;
	}
	return 0;
bad:
	*cause = xasprintf("%s: '%s' is not LO..HI:int, LO..HI[:log][:steps=N][:at=V] "
			   "(LO < HI; log needs LO > 0; N from 2 to %d; LO <= V <= HI) "
			   "or V1,V2,...",
			   name, range, SPACE_MAX_VALUES);
	free(copy);
	space_var_release(out);
	return -1;
}

/* VAR=SPEC. */
int space_parse_arg(const char *arg, struct space_var *out, char **cause)
{
	char *name = NULL, *spec = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (jobsh_parse_setting(arg, &name, &spec, cause) < 0)
		return -1;
	if (strstr(spec, "..") && !strchr(spec, ',')) {
		rc = space_from_range(name, spec, out, cause);
	} else {
		const char **vals = NULL;
		char *p = spec;
		size_t n = 0;

		for (;;) {
			char *comma = strchr(p, ',');

			vals = xreallocarray(vals, n + 1, sizeof(*vals));
			vals[n++] = p;
			if (!comma)
				break;
			*comma = '\0';
			p = comma + 1;
		}
		rc = space_from_list(name, vals, n, out, cause);
		free(vals);
	}
	free(name);
	free(spec);
	return rc;
}

/* Where value sits. */
long space_index(const struct space_var *v, const char *value)
{
	char *c = value_canon(value);
	size_t i;
	long at = -1;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->values[i], c) == 0) {
			at = (long)i;
			break;
		}
	free(c);
	return at;
}

/* The values next to value. */
size_t space_neighbours(const struct space_var *v, const char *value,
			const char *out[2])
{
	long at = space_index(v, value);
	double x, y;
	size_t i, n = 0;

	if (at >= 0) {
		if (at > 0)
			out[n++] = v->values[at - 1];
		if ((size_t)at + 1 < v->n)
			out[n++] = v->values[at + 1];
		return n;
	}
	if (v->n == 0)
		return 0;
	if (v->range == NULL || parse_num(value, &x) < 0) {
		out[0] = v->values[0];
		return 1;
	}
	/* a number between grid points: the two around it */
	for (i = 0; i < v->n; i++) {
		if (parse_num(v->values[i], &y) == 0 && y > x) {
			if (i > 0)
				out[n++] = v->values[i - 1];
			out[n++] = v->values[i];
			return n;
		}
	}
	out[0] = v->values[v->n - 1];
	return 1;
}

/* Look a variable up. */
const struct space_var *space_find(const struct space *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0)
			return &s->v[i];
	return NULL;
}

/* A fresh seed. */
char *space_fresh_seed(const char *const *used, size_t n)
{
	long long top = 0, v;
	const char *err;
	size_t i;

	for (i = 0; i < n; i++)
		if (parse_ll(used[i], -(1LL << 53), 1LL << 53, &v, &err) == 0 && v > top)
			top = v;
	return xasprintf("%lld", top + 1);
}
