/*
 * The words a user meets in status, next, resume and the report, each
 * once and in one sense (`xloop help glossary`, the GLOSSARY section of
 * xloop(1)); pure data. A test (t0025) reads every user-facing text for
 * "proven" outside the sense given here.
 */
#ifndef XLOOP_GLOSSARY_H
#define XLOOP_GLOSSARY_H

#include <stddef.h>

struct glossary_term {
	const char *term;
	const char *text;	/* lines of at most 72 characters, each ending in '\n' */
};

/* The terms, in the order `help glossary` prints them. */
extern const struct glossary_term glossary[];
extern const size_t glossary_n;

#endif
