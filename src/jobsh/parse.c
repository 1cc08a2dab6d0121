/* job.sh's parser: commands and blocks, the assignments and their values. */
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jobsh/jobsh.h"
#include "jobsh/jobsh-impl.h"
#include "lib/util.h"

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

/* True when the word w[0, n) is an assignment: NAME=... or NAME+=... */
static int is_assignment(const char *w, size_t n)
{
	size_t k = jobsh_name_len(w, n);

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

/* Values: what bash assigns for the text of a value. */

/* Characters after '$' that start an expansion (outside double quotes). */
static int starts_expansion(int c, int in_dq)
{
	if (jobsh_name_char(c))
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

/* Open a compound command (a frame) of kind at word, line. */
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

/*
 * Whether raw (a value with expansions) holds a here-document operator:
 * `X=$(cat <<EOF)` takes its body from the lines below, so a new value
 * would leave them to be read as commands.
 */
static int opens_heredoc(const char *raw, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (raw[i] != '<' || raw[i + 1] != '<')
			continue;
		if (i + 2 < len && raw[i + 2] == '<')
			i += 2;	/* a here-string */
		else
			return 1;
	}
	return 0;
}

/* Turn candidate c of the finished command into a record. */
static void add_var(struct parser *p, const struct cand *c, int alone)
{
	const char *s = p->lx.s;
	const char *w = s + c->start;
	size_t wlen = c->end - c->start;
	size_t k = jobsh_name_len(w, wlen);
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
		if (!v->why && !v->value && opens_heredoc(v->raw, strlen(v->raw)))
			v->why = "its value opens a here-document";
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

		if (jobsh_lex_next(&p->lx, &t, arith_ok) < 0)
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

/* Record the assignments of text[0, len) in out, or say why not. */
int jobsh_parse(const char *text, size_t len, struct jobsh_vars *out,
		char **err)
{
	struct parser p;
	int rc;

	memset(&p, 0, sizeof(p));
	jobsh_lex_init(&p.lx, text, len);
	p.out = out;
	rc = parse(&p);
	jobsh_lex_release(&p.lx);
	free(p.st);
	free(p.cmd.c);
	if (rc < 0) {
		*err = p.lx.err ? p.lx.err : xstrdup("cannot parse the script");
		return -1;
	}
	return 0;
}
