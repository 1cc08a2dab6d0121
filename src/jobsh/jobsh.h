/*
 * job.sh variables: find the top-level shell assignments of a job script
 * and rewrite exactly one of them, every other byte kept (SPEC.md rule 1).
 *
 * Nothing here does I/O, spawns, prints or exits. A function that fails
 * returns -1 and, when cause is not NULL, sets *cause to a malloc'd
 * lowercase message (the caller frees it); outputs are then left empty.
 *
 * What counts. The scanner reads the script as bash would tokenise it
 * (quotes, $(...), ${...}, backquotes, comments, here-documents, line
 * continuations, if/for/while/until/select/case/{ }/( )/functions) and
 * records every assignment word it meets:
 *
 *   NAME=value   export NAME=value   readonly NAME=value
 *   declare [-x|-r|-g...] NAME=value  typeset ...  (several per command too)
 *
 * Each record has a place. JOBSH_BLOCK: inside a function body, a compound
 * command (if, loops, case), a { } group or a ( ) subshell. JOBSH_PREFIX:
 * `NAME=value cmd`, which only sets cmd's environment. JOBSH_TOP: it runs
 * in the main script; all of these count when looking a name up, but only
 * the plain ones can be rewritten (why == NULL). A top-level assignment is
 * not rewritable (why says so) when it is an array (NAME=(...)), an
 * append (NAME+=...), declared with other options than -x, -r, -g, has a
 * value that spans lines, sits on an indented or continued line, shares
 * its line with another command (`A=1; B=2`, `A=1 && x`, `x || A=1`,
 * `A=1 &`, also a command continued after && || | from the line above),
 * or carries a redirection. A trailing comment or a lone trailing `;` is
 * fine: `LR=0.1  # learning rate` is rewritable, its value is `0.1`.
 * Assignments made by eval, read, printf -v, ${A:=x}, arithmetic or
 * `declare` with a quoted or computed name are not seen at all.
 *
 * A script the scanner cannot follow (unterminated quote or $(, an
 * unbalanced fi/done/esac/}/), a NUL byte) is refused rather than guessed.
 */
#ifndef XLOOP_JOBSH_H
#define XLOOP_JOBSH_H

#include <stddef.h>

struct buf;

/* Where an assignment runs. */
enum jobsh_place {
	JOBSH_TOP,	/* in the main script: counts for jobsh_find() */
	JOBSH_BLOCK,	/* inside a function, compound command, group, subshell */
	JOBSH_PREFIX,	/* NAME=value cmd: the command's environment only */
};

/* One assignment as written. Strings belong to the record. */
struct jobsh_var {
	char *name;
	int line;		/* 1-based line of the assignment */
	size_t start, end;	/* the value's bytes [start, end) in the text */
	char *raw;		/* those bytes */
	char *value;		/* what bash assigns; NULL when it has expansions
				   ($VAR, $(...), `...`, ~, globs, braces) or is
				   an array */
	enum jobsh_place place;
	const char *why;	/* static reason it cannot be rewritten; NULL
				   for a rewritable JOBSH_TOP assignment */
};

/* The assignments of one script, in text order. */
struct jobsh_vars {
	struct jobsh_var *v;
	size_t nr, alloc;
};
#define JOBSH_VARS_INIT { NULL, 0, 0 }

void jobsh_vars_release(struct jobsh_vars *vars);

/* What jobsh_rewrite() changed. */
struct jobsh_change {
	char *name;
	int line;		/* 1-based line that differs */
	char *old_raw;		/* the old value as written */
	char *old_value;	/* its decoded value; NULL when unknown */
	char *new_value;	/* the value asked for */
	char *new_text;		/* jobsh_quote(new_value), as written now */
};
#define JOBSH_CHANGE_INIT { NULL, 0, NULL, NULL, NULL, NULL }

void jobsh_change_release(struct jobsh_change *ch);

/* True when name is [A-Za-z_][A-Za-z0-9_]*. */
int jobsh_valid_name(const char *name);

/*
 * Split "VAR=VALUE" at the first '='. VAR must be a valid name; VALUE may
 * be empty and may hold further '=', but must be UTF-8 (it is shown in JSON).
 * *name and *value are malloc'd.
 */
int jobsh_parse_setting(const char *arg, char **name, char **value,
			char **cause);

/*
 * Record the assignments of text[0, len) in out (initialised, empty). Any
 * byte may appear except NUL; CRLF line ends are understood (the CR is not
 * part of a value).
 */
int jobsh_scan(const char *text, size_t len, struct jobsh_vars *out,
	       char **cause);

/*
 * Point *out at the one rewritable top-level assignment of name. Fails
 * when there is none, when there are several, or when the only one cannot
 * be rewritten; the cause names the lines.
 */
int jobsh_find(const struct jobsh_vars *vars, const char *name,
	       const struct jobsh_var **out, char **cause);

/*
 * A malloc'd shell word that bash reads back as exactly value, on one
 * line: a bare word when value is all [A-Za-z0-9_./:,+@%-], '...' (with
 * '\'' for quotes) otherwise, and $'...' when it holds a control byte
 * (newline, CR, tab, ...).
 */
char *jobsh_quote(const char *value);

/*
 * Rewrite the value of name's one rewritable top-level assignment to
 * value. out is replaced by text with only the value's bytes changed;
 * change (initialised) says what changed. Refuses when name is not
 * assigned exactly once at top level, when the value would not change
 * (for an old value with expansions: when its text would not change), and,
 * as a defence, when the result differs in other than one line or does
 * not scan back to value. Running `bash -n` on out is the caller's part.
 */
int jobsh_rewrite(const char *text, size_t len, const char *name,
		  const char *value, struct buf *out,
		  struct jobsh_change *change, char **cause);

/*
 * The number of lines that differ between a and b, compared line by line
 * (a line includes its '\n'; lines only one side has count as different).
 * *first (when not NULL) gets the first such line, 0 when none.
 */
int jobsh_lines_differ(const char *a, size_t alen, const char *b, size_t blen,
		       int *first);

/*
 * 1 and *line set when text contains needle literally (first occurrence),
 * else 0. An empty needle is never found.
 */
int jobsh_mentions(const char *text, const char *needle, int *line);

#endif
