/*
 * Run tags (the grammar in `help tags`) and canonical values. STAND-IN
 * (h17): issue 16's tags.c replaces this file; the names are the same.
 */
#ifndef XLOOP_TAGS_H
#define XLOOP_TAGS_H

struct xl_ctx;

enum tag_kind {
	TAG_CHANGE,	/* VAR-VALUE, VAR-VALUE--n2 ... */
	TAG_REPLICATE,	/* B--r2, B--r3 ... (base_or_prefix is B) */
};

/* A tag free in the study for kind (malloc'd). */
char *tag_make(struct xl_ctx *ctx, enum tag_kind kind, const char *base_or_prefix,
	       const char *var, const char *value);

/*
 * The canonical form of a job.sh value (malloc'd): a decimal number is
 * written in its shortest round-trip form ("0.050", "5e-2" -> "0.05",
 * "10.0" -> "10"); anything else is itself.
 */
char *value_canon(const char *v);

#endif
