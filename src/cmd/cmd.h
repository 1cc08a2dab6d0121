/*
 * Commands: each cmd-<name>.c exports one struct cmd_entry; cmd.c holds
 * the table. Flags on the entry decide the setup main() does before the
 * command runs, so commands never repeat it.
 */
#ifndef XLOOP_CMD_H
#define XLOOP_CMD_H

#include "cmd/opts.h"
#include "ctx.h"
#include "lib/jsonw.h"
#include "lib/util.h"

enum {
	CMD_REPO = 1 << 0,	/* find the study root (xloop.json) and load the config */
	CMD_DB = 1 << 1,	/* open .xloop/state.db (implies CMD_REPO) */
	CMD_NOROOT = 1 << 2,	/* refuse to run as root unless --allow-root */
	CMD_LOCAL = 1 << 7,	/* always runs here, never on --host */
	CMD_HIDDEN = 1 << 3,	/* test-* commands: not listed by help */
	CMD_LOCK = 1 << 4,	/* hold .xloop/lock (implies CMD_DB): one writer at a time */
	CMD_LOCK_NOWAIT = 1 << 5,	/* with CMD_LOCK: if held, exit 75 at once, quietly */
};

/* What pos[0] is, resolved by cmd_run before the command runs. */
enum cmd_target {
	CMD_TARGET_NONE,
	CMD_TARGET_RUN,		/* a run's tag: args->run (loop_find_run) */
};

/*
 * What a user is doing when they reach for a command: `xloop help` lists
 * the commands under these headings, in this order (cmd_group_title), each
 * group in cmd_table's order. Every command names its group in its entry.
 */
enum cmd_group {
	CMD_GROUP_NONE,		/* hidden commands and subcommands */
	CMD_GROUP_START,	/* a first study: init, adopt, plan, space, auto, next */
	CMD_GROUP_LOOP,		/* run the loop by hand */
	CMD_GROUP_LOOK,		/* look at the study */
	CMD_GROUP_FIX,		/* fix a bad night */
	CMD_GROUP_UNATTENDED,	/* keep it going without you */
	CMD_GROUP_AGENTS,	/* agents and remote sites */
	CMD_GROUP_ABOUT,	/* help, completion, version */
	CMD_GROUP_COUNT,
};

/* The heading of each group in `xloop help` and xloop(1). */
extern const char *const cmd_group_title[CMD_GROUP_COUNT];

/*
 * A command, or a subcommand (name "plan add"). cmd_run parses argv
 * against opts, checks the positional bounds, resolves the target and only
 * then calls exec: commands never repeat that. Usage lines and the
 * Options: list are made from opts and args.
 */
struct cmd_entry {
	const char *name;
	const struct opt *opts;	/* OPT_END-terminated, or NULL: none */
	const char *args;	/* the positionals in usage ("T"), or NULL */
	int min, max;		/* how many positionals; max -1: no limit */
	enum cmd_target target;
	const char *summary;	/* one line for the command list */
	const char *help;	/* the prose of `xloop help NAME` */
	int flags;		/* of a command; a subcommand's: CMD_HIDDEN only */
	enum cmd_group group;	/* of a visible command; CMD_GROUP_NONE otherwise */
	int (*exec)(struct xl_ctx *ctx, const struct cmd_entry *self,
		    struct cmd_args *args);	/* returns an exit code */
	const struct cmd_entry *subs;	/* subcommands, ended by one without a name */
	const struct cmd_entry *dflt;	/* what runs when no subcommand is named */
};

extern const struct cmd_entry *const cmd_table[];

/* The entry named name, or NULL. */
const struct cmd_entry *cmd_find(const char *name);

/*
 * The subcommand argv names (its word at argv[*at]; *at 0 when the default
 * one runs), cmd itself when it has none, NULL for an unknown word.
 */
const struct cmd_entry *cmd_sub(const struct cmd_entry *cmd, int argc, char **argv,
				int *at);

/* Whether cmd is the subcommand word ("plan add" is "add"). */
int cmd_is(const struct cmd_entry *cmd, const char *word);

/* The entries cmd stands for, one a call: its subcommands, or itself; then NULL. */
const struct cmd_entry *cmd_each(const struct cmd_entry *cmd, const struct cmd_entry *prev);

/* Parse, check and resolve argv for cmd, then run it; returns an exit code. */
int cmd_run(struct xl_ctx *ctx, const struct cmd_entry *cmd, int argc, char **argv);

/* Print the usage lines, summary, help and options of cmd to stdout. */
void cmd_print_help(const struct cmd_entry *cmd);
/* Every option of every command (hidden ones too), one a line: NAME<TAB>--OPT ARG<TAB>HELP. */
void cmd_print_all_options(void);
/* The commands under their group headings: the list `xloop help` shows. */
void cmd_print_groups(void);
/* "xloop NAME [--opt ARG]... ARGS" of one entry, appended to b. */
void cmd_usage_line(struct buf *b, const struct cmd_entry *cmd);
/* "--opt ARG" (or "-x ARG") of one option, appended to b. */
void cmd_opt_spec(struct buf *b, const struct opt *o);
/* The next entry help shows for cmd: cmd_each without hidden subcommands. */
const struct cmd_entry *cmd_shown(const struct cmd_entry *cmd, const struct cmd_entry *prev);
/* The word after "PARENT " in a subcommand's name ("add" of "plan add"). */
const char *cmd_sub_word(const struct cmd_entry *sub);

/* The manual page (roff) of one command, xloop-NAME(1), appended to b. */
void cmd_man_page(struct buf *b, const struct cmd_entry *cmd);
/* xloop(1): the global options and the commands by group, appended to b. */
void cmd_man_index(struct buf *b);
/* The completion script for shell ("bash", "zsh"), appended to b; -1: no such shell. */
int cmd_completion_script(struct buf *b, const char *shell);

/* Print a usage error for cmd (exit code XL_USAGE follows). */
int cmd_usage_error(const struct cmd_entry *cmd, const char *fmt, ...)
	XL_PRINTF(2, 3);

/*
 * The submission options (--mem, --time, --segments, --after, --no-chain)
 * that cmd's table has, into a zeroed o.
 */
struct submit_opts;
void cmd_submit_opts(const struct cmd_args *args, struct submit_opts *o);

/* Apply --nice N (NULL: not given) to ctx->cfg.nice; -1 after a usage error. */
int cmd_apply_nice(struct xl_ctx *ctx, const struct cmd_entry *cmd, const char *v);

/* Print doc as the command's one JSON document on stdout and free it. */
struct json_t;
void cmd_emit_json(struct json_t *doc);

/*
 * The same layout streamed, for lists too large to build whole: begin
 * prints head's members (and frees head) and opens key: [; the caller
 * writes each item with js->w (jsonw.h) and flushes it; end closes.
 */
struct json_stream {
	struct buf out;
	struct jsonw w;
};
void cmd_json_begin(struct json_stream *js, struct json_t *head, const char *key);
void cmd_json_flush(struct json_stream *js);
void cmd_json_end(struct json_stream *js);

#endif
