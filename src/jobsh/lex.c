/* job.sh's lexer: words, quotes, substitutions, here-documents, comments. */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jobsh/jobsh-impl.h"
#include "lib/util.h"

/* Quotes and substitutions nested deeper than this are refused. */
#define MAX_NEST 100

/* True when c may start a shell variable name (C locale). */
static int is_name_start(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* True when c may appear in a shell variable name (C locale). */
int jobsh_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* True when c is an ASCII digit. */
static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Length of the name at the start of w[0, n), 0 when there is none. */
size_t jobsh_name_len(const char *w, size_t n)
{
	size_t i;

	if (n == 0 || !is_name_start((unsigned char)w[0]))
		return 0;
	for (i = 1; i < n && jobsh_name_char((unsigned char)w[i]); i++)
		;
	return i;
}

/* True when w[0, n) is NAME= or NAME+= (the start of an assignment word). */
static int is_assign_prefix(const char *w, size_t n)
{
	size_t k = jobsh_name_len(w, n);

	if (k == 0)
		return 0;
	if (k + 1 == n && w[k] == '=')
		return 1;
	return k + 2 == n && w[k] == '+' && w[k + 1] == '=';
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
 * *i at a backslash, a quote or a '$' (in_dq: inside "..." where ' is
 * plain): move past what it starts; 1, 0 when s[*i] starts none, -1.
 */
static int skip_quoting(struct lexer *lx, size_t *i, int in_dq, int nest)
{
	switch (lx->s[*i]) {
	case '\\':
		*i += 2;
		return 1;
	case '\'':
		if (in_dq) {
			(*i)++;
			return 1;
		}
		return skip_squote(lx, i) < 0 ? -1 : 1;
	case '"':
		return skip_dquote(lx, i, nest + 1) < 0 ? -1 : 1;
	case '`':
		return skip_bquote(lx, i) < 0 ? -1 : 1;
	case '$':
		return skip_dollar(lx, i, in_dq, nest + 1) < 0 ? -1 : 1;
	}
	return 0;
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
		int quoted = skip_quoting(lx, &i, 0, nest);

		if (quoted < 0)
			return -1;
		if (quoted)
			continue;
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
		int quoted = skip_quoting(lx, &i, in_dq, nest);

		if (quoted < 0)
			return -1;
		if (quoted)
			continue;
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
int jobsh_lex_next(struct lexer *lx, struct tok *t, int arith_ok)
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

/* Start lx at the beginning of s[0, len). */
void jobsh_lex_init(struct lexer *lx, const char *s, size_t len)
{
	memset(lx, 0, sizeof(*lx));
	lx->s = s;
	lx->len = len;
	lx->at_bol = 1;
	lx->line_no = 1;
}

/* Free the queued here-document delimiters (lx->err is the caller's). */
void jobsh_lex_release(struct lexer *lx)
{
	size_t i;

	for (i = 0; i < lx->hd_nr; i++)
		free(lx->hd[i].delim);
	free(lx->hd);
	lx->hd = NULL;
	lx->hd_nr = lx->hd_alloc = 0;
}
