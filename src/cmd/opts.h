/*
 * Command-line options: each command's table (cmd.h's struct cmd_entry
 * carries it), the parser, and the getters a command reads its arguments
 * with. Usage lines and the Options: part of help are made from the same
 * table, so what help says is what is parsed.
 */
#ifndef XLOOP_OPTS_H
#define XLOOP_OPTS_H

enum opt_kind {
	OPT_FLAG,	/* --name */
	OPT_STRING,	/* --name VALUE or --name=VALUE; the last one given counts */
	OPT_LIST,	/* like OPT_STRING, repeatable: every value kept in order */
};

enum {
	OPT_REQUIRED = 1 << 0,	/* the command cannot run without it */
};

struct opt {
	const char *name;	/* without the leading "--"; one letter: "-x" form too */
	enum opt_kind kind;
	const char *arg;	/* the value's name in usage ("K"); NULL for a flag */
	const char *help;	/* one line for the Options: list */
	int flags;		/* OPT_REQUIRED */
};

#define OPT_END { NULL, OPT_FLAG, NULL, NULL, 0 }

struct opt_list {
	const char **v;
	int n;
};

struct run;

/* One command's parsed arguments. */
struct cmd_args {
	const struct opt *opts;	/* the table parsed against (may be NULL) */
	int nopts;
	const char **val;	/* per option: its value; a flag given: "" */
	struct opt_list *list;	/* per option: an OPT_LIST's values */
	char **pos;		/* the positionals, NULL-terminated (into argv) */
	int npos;
	int json, allow_root, allow_secret, help;	/* the options every command takes */
	struct run *run;	/* the target run (CMD_TARGET_RUN), else NULL; released
				 * after the command unless it takes it (sets NULL) */
};

/* The options every command takes (--help, --json, --allow-root, --allow-secret). */
extern const struct opt opts_common[];

/*
 * Parse argv (argv[0] is the command name) against opts, plus the options
 * every command takes (--json, --allow-root, --allow-secret, --help).
 * Options and positionals may be mixed; "--" ends options. Returns 0, or
 * -1 with *cause naming the mistake. Release a with cmd_args_release
 * either way.
 */
int opts_parse(const struct opt *opts, int argc, char **argv, struct cmd_args *a,
	       char **cause);

/* The positional count is in [min, max] (max -1: no limit); -1 with *cause if not. */
int opts_check_npos(const struct cmd_args *a, int min, int max, char **cause);

/* Every OPT_REQUIRED option was given; -1 with *cause naming one if not. */
int opts_check_required(const struct cmd_args *a, char **cause);

void cmd_args_release(struct cmd_args *a);

/*
 * The getters: the value of option name (NULL: not given), whether a flag
 * was given, a list's values. A name that is not in the command's table,
 * or of another kind, is a bug: it aborts, so a typo cannot pass silently.
 */
const char *args_get(const struct cmd_args *a, const char *name);
int args_flag(const struct cmd_args *a, const char *name);
const struct opt_list *args_list(const struct cmd_args *a, const char *name);

/* The table entry a name (n bytes) names, or NULL. */
const struct opt *opts_find(const struct opt *opts, const char *name, size_t n);

#endif
