/* Doctor's results: recording a check, printing them, as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "doctor/doctor-impl.h"
#include "lib/util.h"

static const char *const status_names[] = { "ok", "warn", "fail" };

/* Text from Slurm as one line of valid UTF-8; frees s. */
static char *one_line(char *s)
{
	char *clean = utf8_clean(s, strlen(s)), *p;

	for (p = clean; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	free(s);
	return clean;
}

/* Record one check; detail and fix are taken over (fix may be NULL). */
void doctor_add(struct doctor_checks *c, const char *name, enum doctor_status st,
		char *detail, char *fix)
{
	if (c->nr == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
	}
	c->v[c->nr].name = name;
	c->v[c->nr].st = st;
	c->v[c->nr].detail = one_line(detail);
	c->v[c->nr].fix = one_line(fix ? fix : xstrdup(""));
	c->nr++;
}

/* One line per check, the fix indented below a warning or failure. */
void doctor_print(const struct doctor_checks *c, const char *indent)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		printf("%s%-5s %-12s %s\n", indent, status_names[c->v[i].st], c->v[i].name,
		       c->v[i].detail);
		if (*c->v[i].fix)
			printf("%s%-5s %-12s fix: %s\n", indent, "", "", c->v[i].fix);
	}
}

/* The checks as a JSON array. */
json_t *doctor_checks_json(const struct doctor_checks *c)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < c->nr; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}",
			"name", c->v[i].name, "status", status_names[c->v[i].st],
			"detail", c->v[i].detail, "fix", c->v[i].fix));
	return arr;
}

/* Whether a check failed. */
int doctor_failed(const struct doctor_checks *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->v[i].st == DOCTOR_FAIL)
			return 1;
	return 0;
}

/* Free the checks. */
void doctor_checks_release(struct doctor_checks *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		free(c->v[i].detail);
		free(c->v[i].fix);
	}
	free(c->v);
}
