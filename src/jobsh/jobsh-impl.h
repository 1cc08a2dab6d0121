/*
 * Inside the job.sh scanner (src/jobsh/ only): the lexer's tokens, which
 * lex.c reads from the text as bash would, and the parser's entry, which
 * parse.c drives over them to record the assignments for jobsh.c's API.
 */
#ifndef XLOOP_JOBSH_IMPL_H
#define XLOOP_JOBSH_IMPL_H

#include <stddef.h>

struct jobsh_vars;

enum tok_type { T_END, T_NEWLINE, T_WORD, T_ARITH, T_OP };

enum op {
	OP_SEMI,	/* ; */
	OP_DSEMI,	/* ;; ;& ;;& */
	OP_AMP,		/* & */
	OP_LIST,	/* && || | |& */
	OP_LPAREN,
	OP_RPAREN,
	OP_REDIR,	/* < > >> <& >& <> >| &> &>> <<<, a word follows */
	OP_HEREDOC,	/* << <<- with its delimiter */
};

struct tok {
	enum tok_type type;
	enum op op;
	size_t start, end;
	int line;
	int first;	/* the first token since the last newline token */
	int indent;	/* a first token with blanks before it */
	int cont;	/* a backslash-newline since the last newline token */
};

struct heredoc {
	char *delim;
	int strip_tabs;
};

struct lexer {
	const char *s;
	size_t len, pos;
	size_t bol;		/* offset after the last newline token */
	int at_bol, cont;
	struct heredoc *hd;	/* here-documents whose body comes next */
	size_t hd_nr, hd_alloc;
	size_t line_off;	/* line_of()'s cursor: offset and its line */
	int line_no;
	char *err;
};

/* True when c may appear in a shell variable name (C locale). */
int jobsh_name_char(int c);

/* Length of the name at the start of w[0, n), 0 when there is none. */
size_t jobsh_name_len(const char *w, size_t n);

/* Start lx at the beginning of s[0, len). */
void jobsh_lex_init(struct lexer *lx, const char *s, size_t len);

/*
 * The next token of lx into t; arith_ok lets "((" start an arithmetic
 * command. -1 on a script it cannot follow (lx->err says why).
 */
int jobsh_lex_next(struct lexer *lx, struct tok *t, int arith_ok);

/* Free the queued here-document delimiters (lx->err is the caller's). */
void jobsh_lex_release(struct lexer *lx);

/*
 * Record the assignments of text[0, len) (no NUL byte) in out; -1 and
 * *err (malloc'd) when the script cannot be followed.
 */
int jobsh_parse(const char *text, size_t len, struct jobsh_vars *out,
		char **err);

#endif
