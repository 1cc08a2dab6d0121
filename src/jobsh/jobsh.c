/* job.sh variables: the assignment scanner, shell quoting, the rewriter. */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jobsh/jobsh.h"
#include "util.h"

/* Quotes and substitutions nested deeper than this are refused. */
#define MAX_NEST 100
/* Line numbers listed in one message. */
#define MAX_LISTED 10

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

enum frame_kind { F_IF, F_LOOP, F_CASE, F_BRACE, F_PAREN };
enum case_state { CS_SUBJECT, CS_IN, CS_PATTERN, CS_BODY };

struct frame {
	enum frame_kind kind;
	enum case_state cs;
	const char *word;
	int line;
};

enum builtin { B_NONE, B_EXPORT, B_READONLY, B_DECLARE };

/* An assignment word of the current simple command. */
struct cand {
	size_t start, end;
	int line;
};

/* The simple command being read. */
struct cmd {
	int active;
	int has_word;		/* a command word was seen */
	enum builtin builtin;
	int bad_opts, redir;
	int first, indent, cont, joined;
	int line;
	size_t depth;
	struct cand *c;
	size_t nr, alloc;
};

struct parser {
	struct lexer lx;
	struct frame *st;
	size_t nr, alloc;
	struct cmd cmd;
	int pending_semi;	/* cmd ended with ';': alone if a newline follows */
	int list_cont;		/* the last command ended with && || | */
	int expect_target, expect_fname, dbracket, after_for;
	struct jobsh_vars *out;
};

/* Hand a message to the caller's cause (or drop it); returns -1. */
static int XL_PRINTF(2, 3) fail(char **cause, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (cause)
		*cause = msg;
	else
		free(msg);
	return -1;
}

/* Character classes of names, in the C locale. */
static int is_name_start(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Length of the name at the start of w[0, n), 0 when there is none. */
static size_t name_len(const char *w, size_t n)
{
	size_t i;

	if (n == 0 || !is_name_start((unsigned char)w[0]))
		return 0;
	for (i = 1; i < n && is_name_char((unsigned char)w[i]); i++)
		;
	return i;
}

/* True when w[0, n) is NAME= or NAME+= (the start of an assignment word). */
static int is_assign_prefix(const char *w, size_t n)
{
	size_t k = name_len(w, n);

	if (k == 0)
		return 0;
	if (k + 1 == n && w[k] == '=')
		return 1;
	return k + 2 == n && w[k] == '+' && w[k + 1] == '=';
}

/* True when the word w[0, n) is an assignment: NAME=... or NAME+=... */
static int is_assignment(const char *w, size_t n)
{
	size_t k = name_len(w, n);

	if (k == 0 || k == n)
		return 0;
	if (w[k] == '=')
		return 1;
	return w[k] == '+' && k + 1 < n && w[k + 1] == '=';
}

/* True when the word w[0, n) is the literal keyword kw. */
static int word_is(const char *w, size_t n, const char *kw)
{
	return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

/* True when name is a shell variable name. */
int jobsh_valid_name(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && name_len(name, n) == n;
}

/* 1-based line of offset off (amortised linear for rising offsets). */
static int line_of(struct lexer *lx, size_t off)
{
	const char *p, *end, *q;

	if (off < lx->line_off) {
		lx->line_off = 0;
		lx->line_no = 1;
	}
	p = lx->s + lx->line_off;
	end = lx->s + off;
	while (p < end && (q = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		lx->line_no++;
		p = q + 1;
	}
	lx->line_off = off;
	return lx->line_no;
}

/* Record the first lexing error, "<what> at line N"; returns -1. */
static int lex_fail(struct lexer *lx, size_t off, const char *what)
{
	if (lx->err == NULL)
		lx->err = xasprintf("%s at line %d", what, line_of(lx, off));
	return -1;
}

static int skip_dollar(struct lexer *lx, size_t *p, int in_dq, int nest);
static int skip_dquote(struct lexer *lx, size_t *p, int nest);
static int read_heredoc_delim(struct lexer *lx, int strip_tabs);
static void skip_heredoc_bodies(struct lexer *lx, size_t from);

/* *p at an opening single quote: move past the closing one. */
static int skip_squote(struct lexer *lx, size_t *p)
{
	const char *q = memchr(lx->s + *p + 1, '\'', lx->len - *p - 1);

	if (q == NULL)
		return lex_fail(lx, *p, "unterminated single quote");
	*p = (size_t)(q - lx->s) + 1;
	return 0;
}

/* *p at $' (ANSI-C quoting, where \' does not end it): move past it. */
static int skip_ansi(struct lexer *lx, size_t *p)
{
	size_t i = *p + 2;

	while (i < lx->len) {
		if (lx->s[i] == '\\') {
			i += 2;
		} else if (lx->s[i] == '\'') {
			*p = i + 1;
			return 0;
		} else {
			i++;
		}
	}
	return lex_fail(lx, *p, "unterminated $'...' quote");
}

/* *p at an opening backquote: move past the closing one. */
static int skip_bquote(struct lexer *lx, size_t *p)
{
	size_t i = *p + 1;

	while (i < lx->len) {
		if (lx->s[i] == '\\') {
			i += 2;
		} else if (lx->s[i] == '`') {
			*p = i + 1;
			return 0;
		} else {
			i++;
		}
	}
	return lex_fail(lx, *p, "unterminated backquote");
}

/*
 * *p at '(': move past the matching ')', across quotes, substitutions,
 * comments and, unless arith (for $((...)) and ((...))), here-documents.
 */
static int skip_parens(struct lexer *lx, size_t *p, int nest, int arith)
{
	const char *s = lx->s;
	size_t i = *p, depth = 0, hd_base = lx->hd_nr;
	const char *q;

	if (nest > MAX_NEST)
		return lex_fail(lx, *p, "quotes and substitutions nested too deeply");
	while (i < lx->len) {
		switch (s[i]) {
		case '(':
			depth++;
			i++;
			break;
		case ')':
			i++;
			if (--depth == 0) {
				*p = i;
				return 0;
			}
			break;
		case '\\':
			i += 2;
			break;
		case '\'':
			if (skip_squote(lx, &i) < 0)
				return -1;
			break;
		case '"':
			if (skip_dquote(lx, &i, nest + 1) < 0)
				return -1;
			break;
		case '`':
			if (skip_bquote(lx, &i) < 0)
				return -1;
			break;
		case '$':
			if (skip_dollar(lx, &i, 0, nest + 1) < 0)
				return -1;
			break;
		case '#':
			if (strchr(" \t\n(;", s[i - 1]) == NULL) {
				i++;
				break;
			}
			q = memchr(s + i, '\n', lx->len - i);
			i = q ? (size_t)(q - s) : lx->len;
			break;
		case '<':
			if (arith || i + 1 >= lx->len || s[i + 1] != '<') {
				i++;
				break;
			}
			if (i + 2 < lx->len && s[i + 2] == '<') {
				i += 3;	/* a here-string: no body to skip */
				break;
			}
			lx->pos = i + 2;
			if (lx->pos < lx->len && s[lx->pos] == '-')
				lx->pos++;
			if (read_heredoc_delim(lx, s[lx->pos - 1] == '-') < 0)
				return -1;
			i = lx->pos;
			break;
		case '\n':
			i++;
			if (lx->hd_nr > hd_base) {
				lx->pos = i;
				skip_heredoc_bodies(lx, hd_base);
				i = lx->pos;
			}
			break;
		default:
			i++;
			break;
		}
	}
	return lex_fail(lx, *p, "unterminated '('");
}

/* *p at "${": move past the matching '}'. */
static int skip_braces(struct lexer *lx, size_t *p, int in_dq, int nest)
{
	const char *s = lx->s;
	size_t i = *p + 1, depth = 0;

	if (nest > MAX_NEST)
		return lex_fail(lx, *p, "quotes and substitutions nested too deeply");
	while (i < lx->len) {
		switch (s[i]) {
		case '{':
			depth++;
			i++;
			break;
		case '}':
			i++;
			if (--depth == 0) {
				*p = i;
				return 0;
			}
			break;
		case '\\':
			i += 2;
			break;
		case '\'':
			if (in_dq)
				i++;
			else if (skip_squote(lx, &i) < 0)
				return -1;
			break;
		case '"':
			if (skip_dquote(lx, &i, nest + 1) < 0)
				return -1;
			break;
		case '`':
			if (skip_bquote(lx, &i) < 0)
				return -1;
			break;
		case '$':
			if (skip_dollar(lx, &i, in_dq, nest + 1) < 0)
				return -1;
			break;
		default:
			i++;
			break;
		}
	}
	return lex_fail(lx, *p, "unterminated '${'");
}

/* *p at '$': move past $(...), $((...)), ${...}, $'...', $"..." or the '$'. */
static int skip_dollar(struct lexer *lx, size_t *p, int in_dq, int nest)
{
	size_t i = *p + 1;
	char c = i < lx->len ? lx->s[i] : '\0';

	if (nest > MAX_NEST)
		return lex_fail(lx, *p, "quotes and substitutions nested too deeply");
	if (c == '(') {
		int arith = i + 1 < lx->len && lx->s[i + 1] == '(';

		if (skip_parens(lx, &i, nest + 1, arith) < 0)
			return -1;
		*p = i;
	} else if (c == '{') {
		return skip_braces(lx, p, in_dq, nest + 1);
	} else if (c == '\'' && !in_dq) {
		return skip_ansi(lx, p);
	} else if (c == '"' && !in_dq) {
		if (skip_dquote(lx, &i, nest + 1) < 0)
			return -1;
		*p = i;
	} else {
		*p = i;
	}
	return 0;
}

/* *p at an opening double quote: move past the closing one. */
static int skip_dquote(struct lexer *lx, size_t *p, int nest)
{
	size_t i = *p + 1;

	if (nest > MAX_NEST)
		return lex_fail(lx, *p, "quotes and substitutions nested too deeply");
	while (i < lx->len) {
		switch (lx->s[i]) {
		case '\\':
			i += 2;
			break;
		case '"':
			*p = i + 1;
			return 0;
		case '`':
			if (skip_bquote(lx, &i) < 0)
				return -1;
			break;
		case '$':
			if (skip_dollar(lx, &i, 1, nest + 1) < 0)
				return -1;
			break;
		default:
			i++;
			break;
		}
	}
	return lex_fail(lx, *p, "unterminated double quote");
}

/* *p at the start of a word: move to its end. */
static int read_word(struct lexer *lx, size_t *p)
{
	const char *s = lx->s;
	size_t start = *p, i = *p;

	if ((s[i] == '<' || s[i] == '>') && i + 1 < lx->len && s[i + 1] == '(') {
		i++;	/* process substitution */
		if (skip_parens(lx, &i, 0, 0) < 0)
			return -1;
	}
	while (i < lx->len) {
		switch (s[i]) {
		case ' ': case '\t': case '\n':
		case ';': case '&': case '|': case '<': case '>': case ')':
			*p = i;
			return 0;
		case '(':
			if (!is_assign_prefix(s + start, i - start)) {
				*p = i;
				return 0;
			}
			if (skip_parens(lx, &i, 0, 0) < 0)	/* NAME=(...) */
				return -1;
			break;
		case '\r':
			if (i + 1 < lx->len && s[i + 1] == '\n') {
				*p = i;
				return 0;
			}
			i++;
			break;
		case '\\':
			i += 2;
			break;
		case '\'':
			if (skip_squote(lx, &i) < 0)
				return -1;
			break;
		case '"':
			if (skip_dquote(lx, &i, 0) < 0)
				return -1;
			break;
		case '`':
			if (skip_bquote(lx, &i) < 0)
				return -1;
			break;
		case '$':
			if (skip_dollar(lx, &i, 0, 0) < 0)
				return -1;
			break;
		default:
			i++;
			break;
		}
	}
	*p = lx->len;
	return 0;
}

/*
 * Blanks between tokens: spaces, tabs, the CR of CRLF, backslash-newline
 * (a backslash before CRLF escapes the CR, as in bash: no continuation).
 */
static void skip_blanks(struct lexer *lx)
{
	const char *s = lx->s;
	size_t n = lx->len;

	while (lx->pos < n) {
		size_t i = lx->pos;

		if (s[i] == ' ' || s[i] == '\t') {
			lx->pos++;
		} else if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') {
			lx->pos++;
		} else if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
			lx->pos += 2;
			lx->cont = 1;
		} else {
			break;
		}
	}
}

/* After a here-document operator: read and queue its delimiter. */
static int read_heredoc_delim(struct lexer *lx, int strip_tabs)
{
	const char *s = lx->s;
	size_t start, i;
	struct buf d = BUF_INIT;
	struct heredoc *h;

	while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t'))
		lx->pos++;
	start = lx->pos;
	if (start >= lx->len || strchr(";&|<>()\n\r", s[start]) != NULL)
		return lex_fail(lx, start, "missing here-document delimiter");
	if (read_word(lx, &lx->pos) < 0)
		return -1;
	for (i = start; i < lx->pos; i++) {
		if (s[i] == '\\' && i + 1 < lx->pos)
			buf_addc(&d, s[++i]);
		else if (s[i] != '\'' && s[i] != '"')
			buf_addc(&d, s[i]);
	}
	if (lx->hd_nr == lx->hd_alloc) {
		lx->hd_alloc = lx->hd_alloc ? 2 * lx->hd_alloc : 4;
		lx->hd = xreallocarray(lx->hd, lx->hd_alloc, sizeof(*lx->hd));
	}
	h = &lx->hd[lx->hd_nr++];
	h->delim = buf_detach(&d, NULL);
	h->strip_tabs = strip_tabs;
	return 0;
}

/* At the start of a line: skip the bodies queued since lx->hd[from]. */
static void skip_heredoc_bodies(struct lexer *lx, size_t from)
{
	const char *s = lx->s;
	size_t k;

	for (k = from; k < lx->hd_nr; k++) {
		const char *delim = lx->hd[k].delim;
		size_t dlen = strlen(delim);

		while (lx->pos < lx->len) {
			const char *nl = memchr(s + lx->pos, '\n', lx->len - lx->pos);
			size_t end = nl ? (size_t)(nl - s) : lx->len;
			size_t b = lx->pos, n;

			if (lx->hd[k].strip_tabs)
				while (b < end && s[b] == '\t')
					b++;
			n = end - b;
			if (n > 0 && s[b + n - 1] == '\r')
				n--;
			lx->pos = nl ? end + 1 : end;
			if (n == dlen && memcmp(s + b, delim, n) == 0)
				break;
		}
		free(lx->hd[k].delim);
	}
	lx->hd_nr = from;
}

/* Operator at lx->pos, or -1 when the next token is a word. */
static int read_op(struct lexer *lx, struct tok *t)
{
	const char *s = lx->s + lx->pos;
	size_t left = lx->len - lx->pos;
	char c1 = left > 1 ? s[1] : '\0', c2 = left > 2 ? s[2] : '\0';
	size_t n = 1;

	switch (s[0]) {
	case ';':
		t->op = OP_SEMI;
		if (c1 == ';') {
			t->op = OP_DSEMI;
			n = c2 == '&' ? 3 : 2;
		} else if (c1 == '&') {
			t->op = OP_DSEMI;
			n = 2;
		}
		break;
	case '&':
		t->op = OP_AMP;
		if (c1 == '&') {
			t->op = OP_LIST;
			n = 2;
		} else if (c1 == '>') {
			t->op = OP_REDIR;
			n = c2 == '>' ? 3 : 2;
		}
		break;
	case '|':
		t->op = OP_LIST;
		n = c1 == '|' || c1 == '&' ? 2 : 1;
		break;
	case '<':
		if (c1 == '(')
			return -1;
		t->op = OP_REDIR;
		if (c1 == '<' && c2 == '<') {
			n = 3;
		} else if (c1 == '<') {
			t->op = OP_HEREDOC;
			n = c2 == '-' ? 3 : 2;
		} else if (c1 == '&' || c1 == '>') {
			n = 2;
		}
		break;
	case '>':
		if (c1 == '(')
			return -1;
		t->op = OP_REDIR;
		n = c1 == '>' || c1 == '&' || c1 == '|' ? 2 : 1;
		break;
	case '(':
		t->op = OP_LPAREN;
		break;
	case ')':
		t->op = OP_RPAREN;
		break;
	default:
		return -1;
	}
	lx->pos += n;
	if (t->op == OP_HEREDOC)
		return read_heredoc_delim(lx, n == 3) < 0 ? -2 : 0;
	return 0;
}

/* The next token; arith_ok lets "((" start an arithmetic command. */
static int next_token(struct lexer *lx, struct tok *t, int arith_ok)
{
	const char *s = lx->s;
	int rc;

	for (;;) {
		const char *nl;

		skip_blanks(lx);
		if (lx->pos >= lx->len || s[lx->pos] != '#')
			break;
		nl = memchr(s + lx->pos, '\n', lx->len - lx->pos);
		lx->pos = nl ? (size_t)(nl - s) : lx->len;
	}
	t->start = lx->pos;
	t->first = lx->at_bol;
	t->indent = lx->at_bol && lx->pos > lx->bol;
	t->cont = lx->cont;
	t->line = line_of(lx, lx->pos);
	if (lx->pos >= lx->len) {
		t->type = T_END;
		t->end = lx->pos;
		return 0;
	}
	if (s[lx->pos] == '\n') {
		t->type = T_NEWLINE;
		lx->pos++;
		t->end = lx->pos;
		skip_heredoc_bodies(lx, 0);
		lx->at_bol = 1;
		lx->cont = 0;
		lx->bol = lx->pos;
		return 0;
	}
	lx->at_bol = 0;
	if (is_digit((unsigned char)s[lx->pos])) {
		size_t j = lx->pos;

		while (j < lx->len && is_digit((unsigned char)s[j]))
			j++;
		if (j < lx->len && (s[j] == '<' || s[j] == '>') &&
		    !(j + 1 < lx->len && s[j + 1] == '(')) {
			lx->pos = j;	/* 2>file: an fd number */
		}
	}
	if (arith_ok && s[lx->pos] == '(' && lx->pos + 1 < lx->len &&
	    s[lx->pos + 1] == '(') {
		t->type = T_ARITH;
		if (skip_parens(lx, &lx->pos, 0, 1) < 0)
			return -1;
		t->end = lx->pos;
		return 0;
	}
	rc = read_op(lx, t);
	if (rc == -2)
		return -1;
	if (rc == 0) {
		t->type = T_OP;
		t->end = lx->pos;
		return 0;
	}
	lx->pos = t->start;
	t->type = T_WORD;
	if (read_word(lx, &lx->pos) < 0)
		return -1;
	t->end = lx->pos;
	return 0;
}

/* Values: what bash assigns for the text of a value. */

/* Characters after '$' that start an expansion (outside double quotes). */
static int starts_expansion(int c, int in_dq)
{
	if (is_name_char(c))
		return 1;
	if (c == '\'' || c == '"')
		return !in_dq;
	return strchr("{(@*#?$!-", c) != NULL && c != '\0';
}

/* w[*i] is '"': decode up to the closing quote; -1 on an expansion. */
static int decode_dquote(const char *w, size_t n, size_t *i, struct buf *out)
{
	size_t j = *i + 1;

	while (j < n) {
		char c = w[j];

		if (c == '"') {
			*i = j + 1;
			return 0;
		}
		if (c == '`')
			return -1;
		if (c == '$' && j + 1 < n && starts_expansion((unsigned char)w[j + 1], 1))
			return -1;
		if (c == '\\' && j + 1 < n && strchr("$`\"\\\n", w[j + 1]) != NULL) {
			if (w[j + 1] != '\n')
				buf_addc(out, w[j + 1]);
			j += 2;
			continue;
		}
		buf_addc(out, c);
		j++;
	}
	return -1;
}

/* Value of the hex digit c, -1 when it is none. */
static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* w[*i] is "$'": decode ANSI-C quoting; -1 for escapes left unknown. */
static int decode_ansi(const char *w, size_t n, size_t *i, struct buf *out)
{
	static const char simple[] = "a\ab\be\033E\033f\fn\nr\rt\tv\v\\\\''\"\"??";
	size_t j = *i + 2;

	while (j < n) {
		char c = w[j], d;
		const char *e;
		int v, k;

		if (c == '\'') {
			*i = j + 1;
			return 0;
		}
		if (c != '\\') {
			buf_addc(out, c);
			j++;
			continue;
		}
		if (j + 1 >= n)
			return -1;
		d = w[j + 1];
		j += 2;
		for (e = simple; *e && *e != d; e += 2)
			;
		if (*e) {
			buf_addc(out, e[1]);
		} else if (d >= '0' && d <= '7') {
			v = d - '0';
			for (k = 0; k < 2 && j < n && w[j] >= '0' && w[j] <= '7'; k++)
				v = v * 8 + (w[j++] - '0');
			if (v == 0 || v > 255)
				return -1;
			buf_addc(out, (char)v);
		} else if (d == 'x') {
			v = 0;
			for (k = 0; k < 2 && j < n && hexval((unsigned char)w[j]) >= 0; k++)
				v = v * 16 + hexval((unsigned char)w[j++]);
			if (k == 0 || v == 0)
				return -1;
			buf_addc(out, (char)v);
		} else if (d == 'u' || d == 'U' || d == 'c') {
			return -1;	/* locale- or bash-version-dependent */
		} else {
			buf_addc(out, '\\');
			buf_addc(out, d);
		}
	}
	return -1;
}

/* Decode the value text w[0, n) into out; -1 when it needs expansions. */
static int decode_value(const char *w, size_t n, struct buf *out)
{
	size_t i = 0;
	const char *q;

	while (i < n) {
		char c = w[i];

		switch (c) {
		case '\\':
			if (i + 1 >= n) {
				buf_addc(out, c);
				i++;
			} else {
				if (w[i + 1] != '\n')
					buf_addc(out, w[i + 1]);
				i += 2;
			}
			break;
		case '\'':
			q = memchr(w + i + 1, '\'', n - i - 1);
			if (q == NULL)
				return -1;
			buf_add(out, w + i + 1, (size_t)(q - w) - i - 1);
			i = (size_t)(q - w) + 1;
			break;
		case '"':
			if (decode_dquote(w, n, &i, out) < 0)
				return -1;
			break;
		case '$':
			if (i + 1 < n && w[i + 1] == '\'') {
				if (decode_ansi(w, n, &i, out) < 0)
					return -1;
			} else if (i + 1 < n &&
				   starts_expansion((unsigned char)w[i + 1], 0)) {
				return -1;
			} else {
				buf_addc(out, c);
				i++;
			}
			break;
		case '`': case '*': case '?': case '[': case '~':
		case '{': case '}': case '(':
			return -1;	/* substitution, glob, tilde, braces */
		default:
			buf_addc(out, c);
			i++;
			break;
		}
	}
	return 0;
}

/* The parser: compound commands and simple commands. */

static void push(struct parser *p, enum frame_kind kind, const char *word,
		 int line)
{
	struct frame *f;

	if (p->nr == p->alloc) {
		p->alloc = p->alloc ? 2 * p->alloc : 8;
		p->st = xreallocarray(p->st, p->alloc, sizeof(*p->st));
	}
	f = &p->st[p->nr++];
	f->kind = kind;
	f->cs = CS_SUBJECT;
	f->word = word;
	f->line = line;
}

/* Close a frame of the given kind; a mismatch is an error. */
static int pop(struct parser *p, enum frame_kind kind, const struct tok *t)
{
	const char *w = p->lx.s + t->start;

	if (p->nr == 0 || p->st[p->nr - 1].kind != kind) {
		if (p->lx.err == NULL)
			p->lx.err = xasprintf("unexpected '%.*s' at line %d",
					      (int)(t->end - t->start), w, t->line);
		return -1;
	}
	p->nr--;
	return 0;
}

/* The innermost open compound command, NULL at top level. */
static struct frame *top_frame(struct parser *p)
{
	return p->nr ? &p->st[p->nr - 1] : NULL;
}

/* Begin a simple command at token t. */
static void start_cmd(struct parser *p, const struct tok *t)
{
	struct cmd *c = &p->cmd;

	c->active = 1;
	c->has_word = 0;
	c->builtin = B_NONE;
	c->bad_opts = 0;
	c->redir = 0;
	c->first = t->first;
	c->indent = t->indent;
	c->cont = t->cont;
	c->joined = p->list_cont;
	c->line = t->line;
	c->depth = p->nr;
	c->nr = 0;
	p->list_cont = 0;
}

/* Why the top-level assignment c of the current command cannot be rewritten. */
static const char *top_why(const struct cmd *cmd, const struct cand *c,
			   int append, int array, const char *raw, size_t rawlen,
			   int alone)
{
	if (append)
		return "it appends (+=)";
	if (array)
		return "it assigns an array";
	if (cmd->bad_opts)
		return "it is declared with options other than -x, -r, -g";
	if (memchr(raw, '\n', rawlen) != NULL)
		return "its value spans several lines";
	if (!cmd->first || !alone)
		return "its line holds other commands too";
	if (cmd->joined)
		return "it continues a &&, || or | list from the line above";
	if (cmd->cont || c->line != cmd->line)
		return "it is on a continued line";
	if (cmd->indent)
		return "its line is indented";
	if (cmd->redir)
		return "its command has a redirection";
	return NULL;
}

/* Turn candidate c of the finished command into a record. */
static void add_var(struct parser *p, const struct cand *c, int alone)
{
	const char *s = p->lx.s;
	const char *w = s + c->start;
	size_t wlen = c->end - c->start;
	size_t k = name_len(w, wlen);
	int append = w[k] == '+';
	size_t vstart = c->start + k + (append ? 2 : 1);
	int array = vstart < c->end && s[vstart] == '(';
	struct jobsh_vars *out = p->out;
	struct jobsh_var *v;
	struct buf b = BUF_INIT;

	if (out->nr == out->alloc) {
		out->alloc = out->alloc ? 2 * out->alloc : 16;
		out->v = xreallocarray(out->v, out->alloc, sizeof(*out->v));
	}
	v = &out->v[out->nr++];
	v->name = xstrndup(w, k);
	v->line = c->line;
	v->start = vstart;
	v->end = c->end;
	v->raw = xstrndup(s + vstart, c->end - vstart);
	v->value = NULL;
	if (!array && decode_value(s + vstart, c->end - vstart, &b) == 0 &&
	    strlen(b.s) == b.len)
		v->value = buf_detach(&b, NULL);
	buf_release(&b);
	if (p->cmd.depth > 0) {
		v->place = JOBSH_BLOCK;
		v->why = "it is inside a function or block";
	} else if (p->cmd.has_word && p->cmd.builtin == B_NONE) {
		v->place = JOBSH_PREFIX;
		v->why = "it only sets a command's environment";
	} else {
		v->place = JOBSH_TOP;
		v->why = top_why(&p->cmd, c, append, array, s + vstart,
				 c->end - vstart, alone);
	}
}

/* End the current simple command; alone: nothing follows on its line. */
static void finish_cmd(struct parser *p, int alone)
{
	size_t i;

	if (!p->cmd.active)
		return;
	for (i = 0; i < p->cmd.nr; i++)
		add_var(p, &p->cmd.c[i], alone);
	p->cmd.active = 0;
	p->cmd.nr = 0;
}

/* Remember assignment word t of the current command. */
static void add_cand(struct parser *p, const struct tok *t)
{
	struct cmd *c = &p->cmd;

	if (c->nr == c->alloc) {
		c->alloc = c->alloc ? 2 * c->alloc : 4;
		c->c = xreallocarray(c->c, c->alloc, sizeof(*c->c));
	}
	c->c[c->nr].start = t->start;
	c->c[c->nr].end = t->end;
	c->c[c->nr].line = t->line;
	c->nr++;
}

/* A word at the start of a command: 1 when it was a reserved word. */
static int on_keyword(struct parser *p, const struct tok *t)
{
	const char *w = p->lx.s + t->start;
	size_t n = t->end - t->start;

	if (word_is(w, n, "if")) {
		push(p, F_IF, "if", t->line);
	} else if (word_is(w, n, "while") || word_is(w, n, "until")) {
		push(p, F_LOOP, word_is(w, n, "while") ? "while" : "until", t->line);
	} else if (word_is(w, n, "for") || word_is(w, n, "select")) {
		push(p, F_LOOP, word_is(w, n, "for") ? "for" : "select", t->line);
		start_cmd(p, t);	/* its words are not commands */
		p->cmd.has_word = 1;
		p->after_for = 1;
	} else if (word_is(w, n, "case")) {
		push(p, F_CASE, "case", t->line);
	} else if (word_is(w, n, "{")) {
		push(p, F_BRACE, "{", t->line);
	} else if (word_is(w, n, "}")) {
		return pop(p, F_BRACE, t) < 0 ? -1 : 1;
	} else if (word_is(w, n, "fi")) {
		return pop(p, F_IF, t) < 0 ? -1 : 1;
	} else if (word_is(w, n, "done")) {
		return pop(p, F_LOOP, t) < 0 ? -1 : 1;
	} else if (word_is(w, n, "esac")) {
		return pop(p, F_CASE, t) < 0 ? -1 : 1;
	} else if (word_is(w, n, "function")) {
		p->expect_fname = 1;
	} else if (!word_is(w, n, "then") && !word_is(w, n, "else") &&
		   !word_is(w, n, "elif") && !word_is(w, n, "do") &&
		   !word_is(w, n, "!") && !word_is(w, n, "time")) {
		return 0;
	}
	return 1;
}

/* True when option word w[0, n) of a declaration builtin is a plain one. */
static int plain_option(enum builtin b, const char *w, size_t n)
{
	size_t i;

	if (b != B_DECLARE || n < 2 || w[0] != '-')
		return 0;
	for (i = 1; i < n; i++)
		if (strchr("xrg", w[i]) == NULL || w[i] == '\0')
			return 0;
	return 1;
}

/* A word (or ((...))): keyword, case syntax, assignment or argument. */
static int on_word(struct parser *p, const struct tok *t)
{
	const char *w = p->lx.s + t->start;
	size_t n = t->end - t->start;
	struct frame *f = top_frame(p);
	struct cmd *c = &p->cmd;
	int rc;

	if (p->expect_fname) {
		p->expect_fname = 0;
		return 0;
	}
	if (p->dbracket) {
		if (word_is(w, n, "]]"))
			p->dbracket = 0;
		return 0;
	}
	if (f && f->kind == F_CASE && f->cs != CS_BODY) {
		if (f->cs == CS_SUBJECT) {
			f->cs = CS_IN;
		} else if (f->cs == CS_IN) {
			if (!word_is(w, n, "in")) {
				p->lx.err = xasprintf("expected 'in' after 'case' at line %d",
						      t->line);
				return -1;
			}
			f->cs = CS_PATTERN;
		} else if (word_is(w, n, "esac")) {
			p->nr--;
		}
		return 0;
	}
	if (p->expect_target) {
		p->expect_target = 0;
		return 0;
	}
	if (!c->active && t->type == T_WORD) {
		rc = on_keyword(p, t);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	if (!c->active)
		start_cmd(p, t);
	if (t->type == T_ARITH) {
		c->has_word = 1;
		return 0;
	}
	if (!c->has_word) {
		if (is_assignment(w, n)) {
			add_cand(p, t);
			return 0;
		}
		c->has_word = 1;
		if (c->nr == 0) {
			if (word_is(w, n, "export"))
				c->builtin = B_EXPORT;
			else if (word_is(w, n, "readonly"))
				c->builtin = B_READONLY;
			else if (word_is(w, n, "declare") || word_is(w, n, "typeset"))
				c->builtin = B_DECLARE;
		}
		if (word_is(w, n, "[["))
			p->dbracket = 1;
		return 0;
	}
	if (c->builtin != B_NONE) {
		if (w[0] == '-' || w[0] == '+') {
			if (c->nr > 0 || !plain_option(c->builtin, w, n))
				c->bad_opts = 1;
		} else if (is_assignment(w, n)) {
			add_cand(p, t);
		}
	}
	return 0;
}

/* An operator: ends commands, opens/closes ( ), starts redirections. */
static int on_op(struct parser *p, const struct tok *t)
{
	struct frame *f = top_frame(p);

	if (p->dbracket)
		return 0;
	if (f && f->kind == F_CASE && f->cs != CS_BODY) {
		if (t->op == OP_RPAREN && f->cs == CS_PATTERN)
			f->cs = CS_BODY;
		return 0;	/* ( and | of patterns */
	}
	switch (t->op) {
	case OP_SEMI:
		if (p->cmd.active)
			p->pending_semi = 1;
		break;
	case OP_DSEMI:
		finish_cmd(p, 0);
		if (f == NULL || f->kind != F_CASE) {
			p->lx.err = xasprintf("unexpected ';;' at line %d", t->line);
			return -1;
		}
		f->cs = CS_PATTERN;
		break;
	case OP_AMP:
		finish_cmd(p, 0);
		break;
	case OP_LIST:
		finish_cmd(p, 0);
		p->list_cont = 1;
		break;
	case OP_LPAREN:
		finish_cmd(p, 0);
		push(p, F_PAREN, "(", t->line);
		break;
	case OP_RPAREN:
		finish_cmd(p, 0);
		if (pop(p, F_PAREN, t) < 0)
			return -1;
		break;
	case OP_REDIR:
	case OP_HEREDOC:
		if (!p->cmd.active)
			start_cmd(p, t);
		p->cmd.redir = 1;
		p->expect_target = t->op == OP_REDIR;
		break;
	}
	return 0;
}

/* Read the whole script, recording assignments as commands end. */
static int parse(struct parser *p)
{
	struct tok t;

	for (;;) {
		int arith_ok = p->after_for ||
			(!p->cmd.active && !p->expect_target &&
			 !p->expect_fname && !p->dbracket);

		if (next_token(&p->lx, &t, arith_ok) < 0)
			return -1;
		p->after_for = 0;
		if (p->pending_semi) {
			p->pending_semi = 0;
			finish_cmd(p, t.type == T_NEWLINE || t.type == T_END);
		}
		switch (t.type) {
		case T_END:
			finish_cmd(p, 1);
			if (p->nr > 0) {
				struct frame *f = &p->st[p->nr - 1];

				p->lx.err = xasprintf("'%s' at line %d is never closed",
						      f->word, f->line);
				return -1;
			}
			return 0;
		case T_NEWLINE:
			finish_cmd(p, 1);
			p->expect_target = 0;
			break;
		case T_OP:
			if (on_op(p, &t) < 0)
				return -1;
			break;
		case T_WORD:
		case T_ARITH:
			if (on_word(p, &t) < 0)
				return -1;
			break;
		}
	}
}

/* Free the records; vars is empty (and reusable) afterwards. */
void jobsh_vars_release(struct jobsh_vars *vars)
{
	size_t i;

	for (i = 0; i < vars->nr; i++) {
		free(vars->v[i].name);
		free(vars->v[i].raw);
		free(vars->v[i].value);
	}
	free(vars->v);
	vars->v = NULL;
	vars->nr = vars->alloc = 0;
}

/* Record every assignment of the script text[0, len). */
int jobsh_scan(const char *text, size_t len, struct jobsh_vars *out,
	       char **cause)
{
	struct parser p;
	const char *nul;
	size_t i;
	int rc;

	if (len >= INT_MAX)
		return fail(cause, "the script is too large (%zu bytes)", len);
	nul = memchr(text, '\0', len);
	if (nul != NULL) {
		int line = 1;

		for (i = 0; text + i < nul; i++)
			line += text[i] == '\n';
		return fail(cause, "a NUL byte at line %d", line);
	}
	memset(&p, 0, sizeof(p));
	p.lx.s = text;
	p.lx.len = len;
	p.lx.at_bol = 1;
	p.lx.line_no = 1;
	p.out = out;
	rc = parse(&p);
	for (i = 0; i < p.lx.hd_nr; i++)
		free(p.lx.hd[i].delim);
	free(p.lx.hd);
	free(p.st);
	free(p.cmd.c);
	if (rc < 0) {
		jobsh_vars_release(out);
		if (p.lx.err == NULL)
			p.lx.err = xstrdup("cannot parse the script");
		if (cause)
			*cause = p.lx.err;
		else
			free(p.lx.err);
		return -1;
	}
	return 0;
}

/* Append "line N" or "lines N, M, ..." for name's assignments in place. */
static void add_lines(struct buf *b, const struct jobsh_vars *vars,
		      const char *name, enum jobsh_place place, size_t count)
{
	size_t i, listed = 0;

	buf_adds(b, count == 1 ? "(line " : "(lines ");
	for (i = 0; i < vars->nr; i++) {
		const struct jobsh_var *v = &vars->v[i];

		if (v->place != place || strcmp(v->name, name) != 0)
			continue;
		if (listed == MAX_LISTED) {
			buf_adds(b, ", ...");
			break;
		}
		buf_addf(b, "%s%d", listed ? ", " : "", v->line);
		listed++;
	}
	buf_addc(b, ')');
}

/* The one rewritable top-level assignment of name, or why there is none. */
int jobsh_find(const struct jobsh_vars *vars, const char *name,
	       const struct jobsh_var **out, char **cause)
{
	const struct jobsh_var *only = NULL;
	size_t i, ntop = 0, nblock = 0, nprefix = 0;
	struct buf b = BUF_INIT;

	*out = NULL;
	for (i = 0; i < vars->nr; i++) {
		const struct jobsh_var *v = &vars->v[i];

		if (strcmp(v->name, name) != 0)
			continue;
		if (v->place == JOBSH_TOP) {
			if (ntop++ == 0)
				only = v;
		} else if (v->place == JOBSH_BLOCK) {
			nblock++;
		} else {
			nprefix++;
		}
	}
	if (ntop == 1 && only->why == NULL) {
		*out = only;
		return 0;
	}
	if (ntop == 1)
		return fail(cause, "'%s' at line %d cannot be rewritten: %s",
			    name, only->line, only->why);
	if (ntop > 1) {
		buf_addf(&b, "'%s' is assigned %zu times at top level ", name, ntop);
		add_lines(&b, vars, name, JOBSH_TOP, ntop);
	} else if (nblock || nprefix) {
		buf_addf(&b, "'%s' is only assigned ", name);
		if (nblock) {
			buf_adds(&b, "inside a function/block ");
			add_lines(&b, vars, name, JOBSH_BLOCK, nblock);
		}
		if (nblock && nprefix)
			buf_adds(&b, " and ");
		if (nprefix) {
			buf_adds(&b, "as a command's environment prefix ");
			add_lines(&b, vars, name, JOBSH_PREFIX, nprefix);
		}
	} else {
		buf_addf(&b, "'%s' is not assigned at top level", name);
	}
	if (cause)
		*cause = buf_detach(&b, NULL);
	buf_release(&b);
	return -1;
}

/* True when c may appear in a bare word. */
static int bare_char(int c)
{
	return is_name_char(c) || (c != '\0' && strchr("./:,+@%-", c) != NULL);
}

/* A one-line shell word that bash reads as exactly value. */
char *jobsh_quote(const char *value)
{
	const unsigned char *v = (const unsigned char *)value;
	struct buf b = BUF_INIT;
	int bare = *v != '\0', ctl = 0;
	size_t i;

	for (i = 0; v[i]; i++) {
		if (!bare_char(v[i]))
			bare = 0;
		if (v[i] < 0x20 || v[i] == 0x7f)
			ctl = 1;
	}
	if (bare)
		return xstrdup(value);
	if (!ctl) {
		buf_addc(&b, '\'');
		for (i = 0; v[i]; i++) {
			if (v[i] == '\'')
				buf_adds(&b, "'\\''");
			else
				buf_addc(&b, (char)v[i]);
		}
		buf_addc(&b, '\'');
		return buf_detach(&b, NULL);
	}
	buf_adds(&b, "$'");
	for (i = 0; v[i]; i++) {
		switch (v[i]) {
		case '\n':
			buf_adds(&b, "\\n");
			break;
		case '\r':
			buf_adds(&b, "\\r");
			break;
		case '\t':
			buf_adds(&b, "\\t");
			break;
		case '\\':
			buf_adds(&b, "\\\\");
			break;
		case '\'':
			buf_adds(&b, "\\'");
			break;
		default:
			if (v[i] < 0x20 || v[i] == 0x7f)
				buf_addf(&b, "\\x%02x", v[i]);
			else
				buf_addc(&b, (char)v[i]);
			break;
		}
	}
	buf_addc(&b, '\'');
	return buf_detach(&b, NULL);
}

/* Free what a change holds; ch is empty afterwards. */
void jobsh_change_release(struct jobsh_change *ch)
{
	FREE_AND_NULL(ch->name);
	FREE_AND_NULL(ch->old_raw);
	FREE_AND_NULL(ch->old_value);
	FREE_AND_NULL(ch->new_value);
	FREE_AND_NULL(ch->new_text);
	ch->line = 0;
}

/* Defence: out holds only the one change and reads back as value. */
static int check_rewrite(const char *text, size_t len, const struct buf *out,
			 const char *name, const char *value, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *why = NULL;
	int n = jobsh_lines_differ(text, len, out->s, out->len, NULL);

	if (n != 1)
		return fail(cause, "internal error: rewriting '%s' changed %d lines",
			    name, n);
	if (jobsh_scan(out->s, out->len, &vars, &why) < 0 ||
	    jobsh_find(&vars, name, &v, &why) < 0) {
		fail(cause, "internal error: the rewritten script does not scan: %s",
		     why);
		free(why);
		jobsh_vars_release(&vars);
		return -1;
	}
	if (v->value == NULL || strcmp(v->value, value) != 0) {
		jobsh_vars_release(&vars);
		return fail(cause, "internal error: the new '%s' does not read back",
			    name);
	}
	jobsh_vars_release(&vars);
	return 0;
}

/* Copy text with the value of name's one top-level assignment replaced. */
int jobsh_rewrite(const char *text, size_t len, const char *name,
		  const char *value, struct buf *out,
		  struct jobsh_change *change, char **cause)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const struct jobsh_var *v;
	char *quoted;

	buf_reset(out);
	if (!jobsh_valid_name(name))
		return fail(cause, "'%s' is not a valid variable name", name);
	if (jobsh_scan(text, len, &vars, cause) < 0)
		return -1;
	if (jobsh_find(&vars, name, &v, cause) < 0) {
		jobsh_vars_release(&vars);
		return -1;
	}
	quoted = jobsh_quote(value);
	if (v->value ? strcmp(v->value, value) == 0 : strcmp(v->raw, quoted) == 0) {
		fail(cause, "'%s' already has the value %s (line %d)", name,
		     quoted, v->line);
		free(quoted);
		jobsh_vars_release(&vars);
		return -1;
	}
	buf_add(out, text, v->start);
	buf_adds(out, quoted);
	buf_add(out, text + v->end, len - v->end);
	if (check_rewrite(text, len, out, name, value, cause) < 0) {
		buf_reset(out);
		free(quoted);
		jobsh_vars_release(&vars);
		return -1;
	}
	change->name = xstrdup(name);
	change->line = v->line;
	change->old_raw = xstrdup(v->raw);
	change->old_value = v->value ? xstrdup(v->value) : NULL;
	change->new_value = xstrdup(value);
	change->new_text = quoted;
	jobsh_vars_release(&vars);
	return 0;
}

/* Count the lines that differ between a and b, position by position. */
int jobsh_lines_differ(const char *a, size_t alen, const char *b, size_t blen,
		       int *first)
{
	size_t ia = 0, ib = 0;
	int line = 1, n = 0;

	if (first)
		*first = 0;
	while (ia < alen || ib < blen) {
		const char *ea = ia < alen ? memchr(a + ia, '\n', alen - ia) : NULL;
		const char *eb = ib < blen ? memchr(b + ib, '\n', blen - ib) : NULL;
		size_t la = ea ? (size_t)(ea - a) + 1 - ia : alen - ia;
		size_t lb = eb ? (size_t)(eb - b) + 1 - ib : blen - ib;

		if (la != lb || memcmp(a + ia, b + ib, la) != 0) {
			if (first && *first == 0)
				*first = line;
			if (n < INT_MAX)
				n++;
		}
		ia += la;
		ib += lb;
		if (line < INT_MAX)
			line++;
	}
	return n;
}

/* Whether (and on which line) text contains needle. */
int jobsh_mentions(const char *text, const char *needle, int *line)
{
	const char *hit, *p;
	int n = 1;

	if (*needle == '\0' || (hit = strstr(text, needle)) == NULL)
		return 0;
	for (p = text; (p = memchr(p, '\n', (size_t)(hit - p))) != NULL; p++)
		if (n < INT_MAX)
			n++;
	*line = n;
	return 1;
}

/* Split a VAR=VALUE argument. */
int jobsh_parse_setting(const char *arg, char **name, char **value,
			char **cause)
{
	const char *eq = strchr(arg, '=');
	char *n;

	*name = *value = NULL;
	if (eq == NULL)
		return fail(cause, "'%s' is not VAR=VALUE", arg);
	if (eq == arg)
		return fail(cause, "'%s' has no variable name before '='", arg);
	n = xstrndup(arg, (size_t)(eq - arg));
	if (!jobsh_valid_name(n)) {
		fail(cause, "'%s' is not a valid variable name (letters, digits "
		     "and '_', not starting with a digit)", n);
		free(n);
		return -1;
	}
	if (!utf8_valid(eq + 1, strlen(eq + 1))) {
		fail(cause, "the value of %s is not valid UTF-8 text", n);
		free(n);
		return -1;
	}
	*name = n;
	*value = xstrdup(eq + 1);
	return 0;
}
