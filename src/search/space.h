/*
 * The search space (pure): for each job.sh variable autopilot may change,
 * its ordered values. Forms (command line and xloop.json search.space):
 *
 *   V1,V2,...                  choices, in this order (a JSON list of strings)
 *   LO..HI:int                 every integer from LO to HI (at most 1000)
 *   LO..HI[:log][:steps=N]     N points (default 9, 2 to 1000), linear or log
 *     [:at=V]                  anchored: the grid holds V (the interior point
 *                              nearest it becomes V; a grid of 2 gains it),
 *                              the other points rounded to the fewest
 *                              significant digits (2 at least) that keep
 *                              them apart (0.01..0.3:log:at=0.1 is 0.01,
 *                              0.015, 0.023, 0.036, 0.055, 0.1, 0.13, 0.2,
 *                              0.3); `space set` adds at= for the baseline
 *
 * Values are kept canonical (value_canon). Neighbours of a value are the
 * values next to it in that order.
 */
#ifndef XLOOP_SPACE_H
#define XLOOP_SPACE_H

#include <stddef.h>

struct space_var {
	char *name;
	char *range;		/* the LO..HI form, or NULL for choices */
	char **values;		/* canonical, in order */
	size_t n;
};

struct space {
	struct space_var *v;
	size_t n;
};

/* "VAR=SPEC" from the command line into out; -1 with *cause. */
int space_parse_arg(const char *arg, struct space_var *out, char **cause);
/* A range form ("0.01..1:log:steps=5") for name; -1 with *cause. */
int space_from_range(const char *name, const char *range, struct space_var *out,
		     char **cause);
/* Choices for name; -1 with *cause (empty, duplicates). */
int space_from_list(const char *name, const char *const *vals, size_t n,
		    struct space_var *out, char **cause);

/* The position of value in v (canonical compare), or -1. */
long space_index(const struct space_var *v, const char *value);
/*
 * The neighbours of value: the values on each side of it (for a value not
 * in the list, the numbers around it, or the first choice). Returns how
 * many (0 to 2) went into out (pointers into v).
 */
size_t space_neighbours(const struct space_var *v, const char *value,
			const char *out[2]);

/* The variable called name, or NULL. */
const struct space_var *space_find(const struct space *s, const char *name);

/*
 * A seed value not in used[0, n): the smallest integer above every integer
 * in used (1 when there is none). malloc'd.
 */
char *space_fresh_seed(const char *const *used, size_t n);

void space_var_release(struct space_var *v);
void space_release(struct space *s);

#endif
