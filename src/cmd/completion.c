/*
 * xloop completion bash|zsh: the shell completion, made from the command
 * table (commands, subcommands, options, and what each value or
 * positional is). Run tags and space variables come from the study at
 * completion time, through the hidden `xloop complete-words`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "runs.h"
#include "search/space.h"

/* What a value or a positional is, from its name in usage. */
enum word_kind {
	WORD_NONE,	/* nothing to offer */
	WORD_TAGS,	/* a run's tag: "T" */
	WORD_PARENT,	/* a run's tag or best: "P|best" */
	WORD_VARS,	/* a space variable: "VAR" */
	WORD_ASSIGN,	/* "VAR=" of a space variable: "VAR=VALUE" */
	WORD_FILES,	/* a path */
	WORD_CHOICES,	/* the words of "max|min" */
	WORD_COMMANDS,	/* a command name (help) */
};

/* The kind of a usage name ("T", "[T]", "P|best", "VAR=VALUE...", "claude|codex"). */
static enum word_kind word_kind(const char *spec)
{
	char w[64];
	size_t n, i;
	int lower = 1;

	if (spec == NULL || !*spec)
		return WORD_NONE;
	while (*spec == '[')
		spec++;
	n = strcspn(spec, " ]");
	if (n >= sizeof(w))
		return WORD_NONE;
	memcpy(w, spec, n);
	w[n] = '\0';
	if (strncmp(w, "VAR=", 4) == 0)
		return WORD_ASSIGN;
	if (strcmp(w, "VAR") == 0)
		return WORD_VARS;
	if (strcmp(w, "T") == 0)
		return WORD_TAGS;
	if (strcmp(w, "P|best") == 0)
		return WORD_PARENT;
	if (strcmp(w, "COMMAND") == 0)
		return WORD_COMMANDS;
	if (strcmp(w, "PATH") == 0 || strcmp(w, "FILE") == 0 || strcmp(w, "SCRIPT") == 0 ||
	    strcmp(w, "DIR") == 0 || strcmp(w, "F.html") == 0 || strcmp(w, "F") == 0)
		return WORD_FILES;
	for (i = 0; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '|' || w[i] == '-'))
			lower = 0;
	return lower && strchr(w, '|') ? WORD_CHOICES : WORD_NONE;
}

/* The shell words that offer kind (spec's words for choices), ending the arm. */
static void offer(struct buf *b, enum word_kind kind, const char *spec)
{
	const struct cmd_entry *const *c;
	size_t n;

	switch (kind) {
	case WORD_TAGS:
		buf_adds(b, "_xloop_dyn \"$c\" tags");
		break;
	case WORD_PARENT:
		buf_adds(b, "_xloop_dyn \"$c\" tags; echo best");
		break;
	case WORD_VARS:
		buf_adds(b, "_xloop_dyn \"$c\" vars");
		break;
	case WORD_ASSIGN:
		buf_adds(b, "_xloop_dyn \"$c\" assignments");
		break;
	case WORD_FILES:
		buf_adds(b, "echo :files");
		break;
	case WORD_CHOICES:
		while (*spec == '[')
			spec++;
		n = strcspn(spec, " ]");
		buf_adds(b, "echo");
		while (n) {
			size_t k = strcspn(spec, "|");

			if (k > n)
				k = n;
			buf_addf(b, " %.*s", (int)k, spec);
			spec += k;
			n -= k;
			if (n && *spec == '|')
				spec++, n--;
		}
		break;
	case WORD_COMMANDS:
		buf_adds(b, "echo tags best logs glossary");
		for (c = cmd_table; *c; c++)
			if (!((*c)->flags & CMD_HIDDEN))
				buf_addf(b, " %s", (*c)->name);
		break;
	case WORD_NONE:
		buf_adds(b, ":");
		break;
	}
}

/* "--name" of an option as typed. */
static void opt_word(struct buf *b, const struct opt *o)
{
	buf_addf(b, "-%s%s", o->name[1] ? "-" : "", o->name);
}

/*
 * The case arm labelled label ("plan add", or "init " for a command with
 * no subcommand named): e's options, their values and e's positionals;
 * with subs_of, that command's subcommands come first as positionals.
 */
static void entry_arm(struct buf *b, const char *label, const struct cmd_entry *e,
		      const struct cmd_entry *subs_of)
{
	const struct cmd_entry *s;
	const struct opt *o;
	enum word_kind kind;
	int any = 0;

	buf_addf(b, "\t\"%s\")\n", label);
	for (o = e->opts; o && o->name; o++) {
		if (o->kind == OPT_FLAG)
			continue;
		buf_adds(b, any++ ? "\t\t" : "\t\tcase $prev in\n\t\t");
		opt_word(b, o);
		buf_adds(b, ") ");
		/* --tag T names a new run (adopt, next) or any (notify): no list */
		offer(b, strcmp(o->name, "tag") == 0 ? WORD_NONE : word_kind(o->arg), o->arg);
		buf_adds(b, "; return ;;\n");
	}
	if (any)
		buf_adds(b, "\t\tesac\n");
	buf_adds(b, "\t\to=\"");
	any = 0;
	for (o = e->opts; o && o->name; o++) {
		if (any++)
			buf_addc(b, ' ');
		opt_word(b, o);
	}
	buf_adds(b, "\"\n");
	kind = e->max == 0 ? WORD_NONE : e->target == CMD_TARGET_RUN ? WORD_TAGS :
	       word_kind(e->args);
	/* with nothing else to offer, a word that is not an option gets the options */
	if (!subs_of && kind == WORD_NONE) {
		buf_adds(b, "\t\t;;\n");
		return;
	}
	buf_adds(b, "\t\tcase $cur in -*) ;; *) ");
	if (subs_of) {
		buf_adds(b, "echo");
		for (s = cmd_shown(subs_of, NULL); s; s = cmd_shown(subs_of, s))
			if (strchr(s->name, ' '))
				buf_addf(b, " %s", cmd_sub_word(s));
		buf_adds(b, "; ");
	}
	offer(b, kind, e->args);
	buf_adds(b, "; return ;; esac ;;\n");
}

/*
 * The part both shells share: _xloop_words CUR WORDS... prints what may
 * come at CUR, one a line (":files" and ":dirs" ask for the shell's own).
 */
static void words_function(struct buf *b)
{
	const struct cmd_entry *const *c, *s;
	const struct opt *o;
	int any = 0;

	buf_adds(b, "# the study's run tags and space variables, from the study in\n"
		 "# the current directory (or -C DIR): one a line\n"
		 "_xloop_dyn() {\n"
		 "\tif [ -n \"$1\" ]; then \"$_xloop_bin\" -C \"$1\" complete-words \"$2\"\n"
		 "\telse \"$_xloop_bin\" complete-words \"$2\"; fi 2>/dev/null\n"
		 "}\n\n"
		 "# _xloop_words CUR WORD...: what may come at CUR after the words\n"
		 "# before it (xloop's own name left out), one a line\n"
		 "_xloop_words() {\n"
		 "\tlocal cur=\"$1\" cmd= sub= prev= c= w o\n"
		 "\tshift\n"
		 "\twhile [ $# -gt 0 ]; do\n"
		 "\t\tw=$1\n"
		 "\t\tshift\n"
		 "\t\tif [ -z \"$cmd\" ] && { [ \"$w\" = -C ] || [ \"$w\" = --host ]; }; then\n"
		 "\t\t\tif [ $# -eq 0 ]; then prev=$w; break; fi\n"
		 "\t\t\t[ \"$w\" = -C ] && c=$1\n"
		 "\t\t\tshift\n"
		 "\t\t\tcontinue\n"
		 "\t\tfi\n"
		 "\t\tcase $w in\n"
		 "\t\t-*) ;;\n"
		 "\t\t*) if [ -z \"$cmd\" ]; then cmd=$w\n"
		 "\t\t\telif [ -z \"$sub\" ]; then\n"
		 "\t\t\t\tcase \"$cmd $w\" in\n\t\t\t\t");
	for (c = cmd_table; *c; c++)
		for (s = (*c)->subs ? cmd_shown(*c, NULL) : NULL; s; s = cmd_shown(*c, s))
			if (!((*c)->flags & CMD_HIDDEN) && strchr(s->name, ' '))
				buf_addf(b, "%s\"%s\"", any++ ? "|" : "", s->name);
	buf_adds(b, ") sub=$w ;;\n"
		 "\t\t\t\tesac\n"
		 "\t\t\tfi ;;\n"
		 "\t\tesac\n"
		 "\t\tprev=$w\n"
		 "\tdone\n"
		 "\tif [ -z \"$cmd\" ]; then\n"
		 "\t\tcase $prev in -C) echo :dirs; return ;; --host) return ;; esac\n"
		 "\t\tcase $cur in\n"
		 "\t\t-*) echo -C --host --here --version");
	for (o = opts_common; o->name; o++)
		buf_addf(b, " --%s", o->name);
	buf_adds(b, " ;;\n\t\t*) echo");
	for (c = cmd_table; *c; c++)
		if (!((*c)->flags & CMD_HIDDEN))
			buf_addf(b, " %s", (*c)->name);
	buf_adds(b, " ;;\n\t\tesac\n\t\treturn\n\tfi\n"
		 "\tcase \"$cmd $sub\" in\n");
	for (c = cmd_table; *c; c++) {
		struct buf label;

		if ((*c)->flags & CMD_HIDDEN)
			continue;
		buf_init(&label);
		buf_addf(&label, "%s ", (*c)->name);
		if (!(*c)->subs)
			entry_arm(b, label.s, *c, NULL);
		else
			entry_arm(b, label.s, (*c)->dflt ? (*c)->dflt : *c, *c);
		buf_release(&label);
		for (s = (*c)->subs ? cmd_shown(*c, NULL) : NULL; s; s = cmd_shown(*c, s))
			if (strchr(s->name, ' '))
				entry_arm(b, s->name, s, NULL);
	}
	/* printf, not echo: "-n" is an option of replicate, and of echo */
	buf_adds(b, "\t*) return ;;\n\tesac\n"
		 "\tprintf '%s\\n' $o");
	for (o = opts_common; o->name; o++)
		buf_addf(b, " --%s", o->name);
	buf_adds(b, "\n}\n");
}

/* The completion script for bash or zsh: see cmd.h. */
int cmd_completion_script(struct buf *b, const char *shell)
{
	int zsh = strcmp(shell, "zsh") == 0;

	if (!zsh && strcmp(shell, "bash") != 0)
		return -1;
	buf_addf(b, "%s# %s completion for xloop, made by `xloop completion %s` from the\n"
		 "# command table of this xloop: source it, or let ./build.sh install put it\n"
		 "# where %s finds it. Tags and space variables come from the study.\n\n",
		 zsh ? "#compdef xloop\n" : "", shell, shell, shell);
	words_function(b);
	if (zsh) {
		buf_adds(b, "\n_xloop() {\n"
			 "\tlocal r\n"
			 "\tlocal -a w eq plain\n"
			 "\t_xloop_bin=${words[1]}\n"
			 "\tr=$(_xloop_words \"${words[CURRENT]}\" \"${(@)words[2,CURRENT-1]}\")\n"
			 "\tcase $r in\n"
			 "\t:files) _files; return ;;\n"
			 "\t:dirs) _files -/; return ;;\n"
			 "\tesac\n"
			 "\tw=(${=r})\n"
			 "\teq=(${(M)w:#*=})\n"
			 "\tplain=(${w:#*=})\n"
			 "\t(( $#plain )) && compadd -a plain\n"
			 "\t(( $#eq )) && compadd -S '' -a eq\n"
			 "\treturn 0\n"
			 "}\n\n"
			 "if [ \"$funcstack[1]\" = _xloop ]; then _xloop \"$@\"; "
			 "else compdef _xloop xloop; fi\n");
		return 0;
	}
	buf_adds(b, "\n_xloop() {\n"
		 "\tlocal cur words cword r\n"
		 "\tif declare -F _get_comp_words_by_ref >/dev/null; then\n"
		 "\t\t_get_comp_words_by_ref -n =: cur words cword\n"
		 "\telse\n"
		 "\t\tcur=${COMP_WORDS[COMP_CWORD]} words=(\"${COMP_WORDS[@]}\") cword=$COMP_CWORD\n"
		 "\tfi\n"
		 "\t_xloop_bin=${words[0]}\n"
		 "\tr=$(_xloop_words \"$cur\" \"${words[@]:1:cword-1}\")\n"
		 "\tcase $r in\n"
		 "\t:files) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
		 "\t:dirs) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n"
		 "\tesac\n"
		 "\tCOMPREPLY=($(compgen -W \"$r\" -- \"$cur\"))\n"
		 "\tcase ${COMPREPLY[*]} in *=) compopt -o nospace 2>/dev/null ;; esac\n"
		 "}\n"
		 "complete -F _xloop xloop\n");
	return 0;
}

/* Print the completion script for a shell. */
static int cmd_completion(struct xl_ctx *ctx, const struct cmd_entry *self,
			  struct cmd_args *args)
{
	struct buf b;

	(void)ctx;
	buf_init(&b);
	if (cmd_completion_script(&b, args->pos[0]) < 0) {
		buf_release(&b);
		cmd_usage_error(self, "no completion for '%s' (bash, zsh)", args->pos[0]);
		return XL_USAGE;
	}
	fwrite(b.s, 1, b.len, stdout);
	buf_release(&b);
	return XL_OK;
}

const struct cmd_entry cmd_completion_entry = {
	.name = "completion", .opts = NULL, .args = "bash|zsh", .min = 1, .max = 1,
	.group = CMD_GROUP_ABOUT,
	.target = CMD_TARGET_NONE,
	.summary = "print the shell completion for bash or zsh",
	.help = "The script completes commands, subcommands and options (all made from\n"
	"the same table as help and the manual pages), and run tags and space\n"
	"variables from the study in the current directory (or -C DIR).\n"
	"\n"
	"To try it: source <(xloop completion bash). ./build.sh install PREFIX puts\n"
	"both where bash-completion and zsh look (PREFIX/share/bash-completion/\n"
	"completions/xloop, PREFIX/share/zsh/site-functions/_xloop).\n",
	.flags = CMD_LOCAL, .exec = cmd_completion,
};

/* Print the study's words of one kind, one a line, for the completion. */
static int cmd_complete_words(struct xl_ctx *ctx, const struct cmd_entry *self,
			      struct cmd_args *args)
{
	const char *kind = args->pos[0];
	const struct space *sp = &ctx->cfg.search.space;
	struct run *v = NULL;
	size_t n = 0, i;

	if (strcmp(kind, "tags") == 0) {
		if (runs_list(&ctx->db, ctx->cfg.study, &v, &n) < 0)
			return XL_ERR;
		for (i = 0; i < n; i++)
			printf("%s\n", v[i].tag);
		runs_free(v, n);
		return XL_OK;
	}
	if (strcmp(kind, "vars") != 0 && strcmp(kind, "assignments") != 0) {
		cmd_usage_error(self, "unknown kind '%s' (tags, vars, assignments)", kind);
		return XL_USAGE;
	}
	for (i = 0; i < sp->n; i++)
		printf("%s%s\n", sp->v[i].name, kind[0] == 'a' ? "=" : "");
	if (ctx->cfg.search.seed && *ctx->cfg.search.seed && !space_find(sp, ctx->cfg.search.seed))
		printf("%s%s\n", ctx->cfg.search.seed, kind[0] == 'a' ? "=" : "");
	return XL_OK;
}

const struct cmd_entry cmd_complete_words_entry = {
	.name = "complete-words", .opts = NULL, .args = "tags|vars|assignments", .min = 1, .max = 1,
	.target = CMD_TARGET_NONE,
	.summary = "the study's run tags or space variables, one a line (for the completion)",
	.help = "",
	.flags = CMD_HIDDEN | CMD_DB | CMD_NOROOT, .exec = cmd_complete_words,
};
