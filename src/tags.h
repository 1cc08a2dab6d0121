/*
 * Run tags: the one grammar for every run xloop names (plan entries,
 * `next --set`, sweeps, replicates, autopilot proposals), and the canonical
 * form of a variable's value, by which two spellings of one number are one
 * value. `xloop help tags` prints tag_help.
 *
 * A tag is at most TAG_MAX characters of [A-Za-z0-9._-], starting with a
 * letter or digit. Parts are joined by "--", which a value never yields:
 *
 *   change     VAR-VALUE             (LR-0.05, MAX_DEPTH-2)
 *   again      VAR-VALUE--n2, --n3   (the same change, the tag taken)
 *   replicate  B--r2, B--r3          (seed-only change of B's configuration)
 *   sweep      N--VAR-VALUE          (sweep --name N; VAR-VALUE without it)
 *   config     VAR-V_VAR2-V2         (autopilot: the space's values that are
 *                                    not the baseline's, short; tag_config)
 *
 * A study writes each variable's name whole or abbreviated in every tag,
 * decided once (tag_study_abbreviates; loop.c keeps it).
 *
 * VALUE is sanitized: characters outside the set become '-', runs of '-'
 * fold to one, a leading '-' and trailing '-' or '.' are dropped; the sign
 * of a negative number is written "neg" (LR=-1 is LR-neg1, not LR-1). Too long:
 * VALUE is cut and ".h" plus 6 hex digits of a hash of the full value
 * follow it; the "--nK" and "--rK" suffixes are never cut.
 */
#ifndef XLOOP_TAGS_H
#define XLOOP_TAGS_H

#include <stddef.h>

#define TAG_MAX 64

enum tag_kind {
	TAG_CHANGE,	/* VAR-VALUE, then --n2, --n3, ... */
	TAG_REPLICATE,	/* base--r2, base--r3, ... (r1 is the base itself) */
	TAG_SWEEP,	/* prefix--VAR-VALUE (VAR-VALUE when prefix is NULL) */
};

/*
 * Candidate k of a tag (malloc'd, pure): k = 1 is the plain form, k >= 2
 * carries the suffix ("--nK", or "--rK" for a replicate, whose k starts at
 * 2). base_or_prefix: the replicate's base tag, the sweep's name; unused
 * (NULL) for a change. var and value: unused for a replicate.
 */
char *tag_compose(enum tag_kind kind, const char *base_or_prefix, const char *var,
		  const char *value, int k);

/* A variable of a configuration's tag: its value and the grid it comes from. */
struct tag_part {
	const char *var;
	const char *value;
	const char *const *grid;	/* the space's values of var (canonical) */
	size_t ngrid;
	const char *abbr;	/* its abbreviation in the study (tag_abbrevs), or NULL */
};

/*
 * Abbreviation m (>= 1) of a variable's name (malloc'd, pure): the first m
 * letters or digits of each of its '_'-separated words (m = 1: the
 * initials, LEARNING_RATE is LR; m = 2: LERA); a name without '_' is
 * itself (DEPTH).
 */
char *tag_abbrev(const char *var, int m);

/*
 * One abbreviation per variable of vars[0, n) (the study's space) into
 * out[] (malloc'd each, pure), no two alike: a variable the study's tags
 * abbreviated already (rec_var[j], as rec_abbr[j]) keeps its abbreviation;
 * the others start from their initials, and while two clash (with each
 * other or with an abbreviation the study used for another variable),
 * every one of them that can grows by a letter per word, up to the full
 * name. A name without '_' is itself and never grows.
 */
void tag_abbrevs(const char *const *vars, size_t n, const char *const *rec_abbr,
		 const char *const *rec_var, size_t nrec, char **out);

/*
 * Candidate k of the tag of a configuration (autopilot's runs; malloc'd,
 * pure): "VAR-V_VAR2-V2" over v (the variables whose value is not the
 * baseline's), each value with the fewest significant digits (two at
 * least) that tell it from the rest of its grid, then "--nK" for k >= 2.
 * Variable names are written whole, or abbreviated (LEARNING_RATE: LR;
 * v[i].abbr when given, else tag_abbrevs over the tag's own variables,
 * so no two alike) when that does not leave room for a --rK suffix; NULL
 * when even that does not fit, or n is 0: the caller names it the old way.
 */
char *tag_config(const struct tag_part *v, size_t n, int k);
/* The same; *abbreviated (when not NULL): 1 when the names are abbreviated. */
char *tag_config_abbr(const struct tag_part *v, size_t n, int k, int *abbreviated);

/*
 * Candidate k of a configuration's tag (malloc'd, pure) with whole names
 * (abbreviate 0) or v[i].abbr (1; tag_abbrevs over the tag's own variables
 * where NULL): NULL when it leaves no room for a --rK suffix, or n is 0.
 */
char *tag_config_as(const struct tag_part *v, size_t n, int k, int abbreviate);

/*
 * Whether a study whose space is all[0, n) (each variable with its grid)
 * writes variable names abbreviated in its tags (pure): 1 when the longest
 * configuration tag the space can give (every variable, each at the
 * longest short value of its grid) does not fit with whole names. The
 * caller decides it once per study and keeps it (issue 44: a variable has
 * one name in every tag of a study, not whole in one and initials in the
 * next because one tag was longer).
 */
int tag_study_abbreviates(const struct tag_part *all, size_t n);

/*
 * The canonical form of a value (malloc'd, pure): a decimal number is
 * written one way ("0.05", "5e-2", "0.050", "+.05" are all "0.05"; "10",
 * "10.0", "1e1" are "10"; "-0" is "0"); anything else, and a number of more
 * than 15 significant digits, stays as written.
 */
char *value_canon(const char *value);

/* 1 when a and b are the same value in canonical form. */
int value_same(const char *a, const char *b);

/* The grammar, for `xloop help tags`. */
extern const char tag_help[];

#endif
