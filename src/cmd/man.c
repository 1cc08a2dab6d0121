/*
 * The manual pages, in roff, made from the command table: xloop(1) lists
 * the commands by group, xloop-NAME(1) is one command's usage, prose and
 * options. Nothing here is written by hand twice: help, manual and
 * completion read the same entries.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "glossary.h"

#ifndef XLOOP_VERSION
#define XLOOP_VERSION "0.1.0-dev"
#endif

/* s escaped for roff text: backslashes, hyphens (so options copy as typed). */
static void roff_text(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\')
			buf_adds(b, "\\e");
		else if (s[i] == '-')
			buf_adds(b, "\\-");
		else if (s[i] == '\t')
			buf_addc(b, ' ');
		else
			buf_addc(b, s[i]);
	}
}

/* One source line of text: a leading . or ' would be a request, \& keeps it text. */
static void roff_line(struct buf *b, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		buf_adds(b, "\\&");
	roff_text(b, s, n);
	buf_addc(b, '\n');
}

/* Whether a paragraph of help prose is laid out by hand (indents, columns). */
static int preformatted(const char *s, size_t n)
{
	size_t i;
	int bol = 1;

	for (i = 0; i < n; i++) {
		if (bol && (s[i] == ' ' || s[i] == '\t'))
			return 1;
		if (s[i] == ' ' && i + 1 < n && s[i + 1] == ' ')
			return 1;	/* "on      switch ...": a column */
		bol = s[i] == '\n';
	}
	return 0;
}

/*
 * Help prose as roff: paragraphs at blank lines, filled; one laid out by
 * hand is kept as it is (no-fill).
 */
static void roff_prose(struct buf *b, const char *s)
{
	while (s && *s) {
		const char *end = strstr(s, "\n\n"), *p, *nl;
		size_t n = end ? (size_t)(end - s) : strlen(s);
		int nf = preformatted(s, n);

		buf_adds(b, nf ? ".PP\n.nf\n" : ".PP\n");
		for (p = s; p < s + n; p = nl + 1) {
			nl = memchr(p, '\n', (size_t)(s + n - p));
			if (nl == NULL)
				nl = s + n;
			if (nl > p)
				roff_line(b, p, (size_t)(nl - p));
			else if (nf)
				buf_adds(b, "\n");
			if (nl == s + n)
				break;
		}
		if (nf)
			buf_adds(b, ".fi\n");
		s = end ? end + 2 : s + n;
		while (*s == '\n')
			s++;
	}
}

/* The page's name for a command: "xloop-agent-setup". */
static void page_name(struct buf *b, const struct cmd_entry *cmd)
{
	buf_adds(b, "xloop-");
	buf_adds(b, cmd->name);
}

/* .TH and NAME of a page. */
static void page_head(struct buf *b, const char *name, const char *what)
{
	size_t i;

	buf_adds(b, ".TH \"");
	for (i = 0; name[i]; i++)
		buf_addc(b, name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 32) : name[i]);
	buf_addf(b, "\" 1 \"\" \"xloop %s\" \"xloop manual\"\n.SH NAME\n", XLOOP_VERSION);
	roff_text(b, name, strlen(name));
	buf_adds(b, " \\- ");
	roff_line(b, what, strlen(what));
}

/* One option as a tagged paragraph: the option in bold, its value in italics. */
static void roff_opt(struct buf *b, const char *prefix, const struct opt *o)
{
	buf_adds(b, ".TP\n\\fB");
	if (prefix) {
		roff_text(b, prefix, strlen(prefix));
		buf_addc(b, ' ');
	}
	buf_adds(b, o->name[1] ? "\\-\\-" : "\\-");
	roff_text(b, o->name, strlen(o->name));
	buf_adds(b, "\\fR");
	if (o->arg) {
		buf_adds(b, " \\fI");
		roff_text(b, o->arg, strlen(o->arg));
		buf_adds(b, "\\fR");
	}
	buf_addc(b, '\n');
	roff_line(b, o->help ? o->help : "", o->help ? strlen(o->help) : 0);
}

/* The page of one command (its subcommands included). */
void cmd_man_page(struct buf *b, const struct cmd_entry *cmd)
{
	const struct cmd_entry *s;
	const struct opt *o;
	struct buf n;
	int head = 0;

	buf_init(&n);
	page_name(&n, cmd);
	page_head(b, n.s, cmd->summary);
	buf_adds(b, ".SH SYNOPSIS\n.nf\n");
	for (s = cmd_shown(cmd, NULL); s; s = cmd_shown(cmd, s)) {
		buf_reset(&n);
		cmd_usage_line(&n, s);
		roff_line(b, n.s, n.len);
	}
	buf_adds(b, ".fi\n.SH DESCRIPTION\n");
	roff_prose(b, cmd->summary);
	roff_prose(b, cmd->help);
	for (s = cmd_shown(cmd, NULL); s; s = cmd_shown(cmd, s))
		for (o = s->opts; o && o->name; o++) {
			if (!head++)
				buf_adds(b, ".SH OPTIONS\n");
			roff_opt(b, cmd->subs && strchr(s->name, ' ') ? cmd_sub_word(s) : NULL, o);
		}
	buf_adds(b, ".SH COMMON OPTIONS\nEvery command takes these:\n");
	for (o = opts_common; o->name; o++)
		roff_opt(b, NULL, o);
	buf_adds(b, ".SH EXIT STATUS\n"
		 "0 ok, 2 usage, 65 bad input data, 66 unknown tag or missing file,\n"
		 "69 Slurm not found, 70 a bug in xloop, 75 try later, 77 refused (root),\n"
		 "78 bad config, 1 any other error.\n"
		 ".SH SEE ALSO\n\\fBxloop\\fR(1)\n");
	buf_release(&n);
}

/* xloop(1): what xloop is, the global options, the commands by group. */
void cmd_man_index(struct buf *b)
{
	const struct cmd_entry *const *c;
	const struct opt *o;
	const char *t, *nl;
	struct buf n;
	int g;

	buf_init(&n);
	page_head(b, "xloop", "runs the experiment loop of an ML project on Slurm");
	buf_adds(b, ".SH SYNOPSIS\n.nf\n"
		 "\\fBxloop\\fR [\\-\\-host \\fIHOST\\fR] [\\-C \\fIDIR\\fR] [\\-\\-json] "
		 "[\\-\\-allow\\-root] [\\-\\-allow\\-secret] \\fICOMMAND\\fR [\\fIARGS\\fR]\n"
		 "\\fBxloop help\\fR [\\fICOMMAND\\fR]\n"
		 "\\fBxloop \\-\\-version\\fR\n.fi\n");
	buf_adds(b, ".SH DESCRIPTION\n");
	roff_prose(b, "xloop keeps the GPU busy with one-change-at-a-time experiments: it\n"
		   "clones a proven job.sh with exactly one variable changed, submits it with\n"
		   "attempt-numbered logs, chains jobs so the GPU never idles, and calls a run\n"
		   "a success only when Slurm says COMPLETED with ExitCode 0:0 and the job\n"
		   "wrote a valid cv.json; a run that is going nowhere (NaN, or at chance, in\n"
		   "the epochs it reports) is stopped on the node and judged \"stopped early\".\n"
		   "Everything it knows lives in the repository (the\n"
		   "state DB in .xloop/ and decisions committed to git), so a new agent session\n"
		   "picks up with `xloop resume`.\n\n"
		   "A first study: xloop init; xloop adopt train.sh --tag base; xloop plan add\n"
		   "VAR=VALUE (or xloop space set and xloop auto on); xloop next.\n");
	buf_adds(b, ".SH GLOBAL OPTIONS\n"
		 ".TP\n\\fB\\-C\\fR \\fIDIR\\fR\n"
		 "run as if xloop was started in DIR (as in git): relative paths given after\n"
		 "it are taken from DIR; \\-C A \\-C B is A/B\n"
		 ".TP\n\\fB\\-\\-host\\fR \\fIHOST\\fR\n"
		 "run the command on HOST over ssh (also XLOOP_HOST, remote.host)\n"
		 ".TP\n\\fB\\-\\-here\\fR\n"
		 "never forward the command to a remote host\n"
		 ".TP\n\\fB\\-\\-version\\fR\n"
		 "print the version of xloop and its libraries\n");
	for (o = opts_common; o->name; o++)
		roff_opt(b, NULL, o);
	buf_adds(b, ".SH COMMANDS\n");
	for (g = CMD_GROUP_START; g < CMD_GROUP_COUNT; g++) {
		buf_adds(b, ".SS \"");
		roff_text(b, cmd_group_title[g], strlen(cmd_group_title[g]));
		buf_adds(b, "\"\n");
		for (c = cmd_table; *c; c++) {
			if (((*c)->flags & CMD_HIDDEN) || (int)(*c)->group != g)
				continue;
			buf_reset(&n);
			page_name(&n, *c);
			buf_adds(b, ".TP\n\\fB");
			roff_text(b, n.s, n.len);
			buf_adds(b, "\\fR(1)\n");
			roff_line(b, (*c)->summary, strlen((*c)->summary));
		}
	}
	buf_adds(b, ".SH TOPICS\n"
		 "\\fBxloop help tags\\fR: the names xloop gives the runs it makes.\n"
		 "\\fBxloop help best\\fR: what \"best\" means (configurations, noise, the rule).\n"
		 "\\fBxloop help glossary\\fR: the words xloop uses, each in one sense (below).\n");
	/* the glossary, each term once (help glossary) */
	buf_adds(b, ".SH GLOSSARY\n");
	for (g = 0; g < (int)glossary_n; g++) {
		buf_adds(b, ".TP\n\\fB");
		roff_text(b, glossary[g].term, strlen(glossary[g].term));
		buf_adds(b, "\\fR\n");
		for (t = glossary[g].text; *t; t = nl + 1) {
			nl = strchr(t, '\n');
			if (nl == NULL)
				nl = t + strlen(t) - 1;
			roff_line(b, t, (size_t)(nl - t));
		}
	}
	buf_adds(b, ".SH EXIT STATUS\n"
		 "0 ok, 2 usage, 65 bad input data, 66 unknown tag or missing file,\n"
		 "69 Slurm not found, 70 a bug in xloop, 75 try later, 77 refused (root),\n"
		 "78 bad config, 1 any other error.\n"
		 ".SH FILES\n"
		 ".TP\n\\fIxloop.json\\fR\nthe study's configuration (schemas/config.schema.json)\n"
		 ".TP\n\\fI.xloop/state.db\\fR\nthe state DB: runs, attempts, events (git\\-ignored)\n"
		 ".TP\n\\fIruns/STUDY/TAG/job.sh\\fR\none run's job script, committed\n"
		 ".TP\n\\fIops/decisions.md\\fR\nthe decision log, one commit per entry\n"
		 ".SH SEE ALSO\n\\fBsbatch\\fR(1), \\fBsqueue\\fR(1), \\fBgit\\fR(1)\n");
	buf_release(&n);
}
