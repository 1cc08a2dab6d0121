/* Command-line options of one command: long options, positionals, --help. */
#ifndef XLOOP_OPTS_H
#define XLOOP_OPTS_H

enum opt_kind {
	OPT_FLAG,	/* --name: *(int *)out = 1 */
	OPT_STRING,	/* --name VALUE or --name=VALUE: *(const char **)out */
	OPT_LIST,	/* like OPT_STRING, repeatable: appended to a struct opt_list */
};

struct opt {
	const char *name;	/* without the leading "--"; one letter: "-x" form too */
	enum opt_kind kind;
	void *out;
};

struct opt_list {
	const char **v;
	int n;
};

#define OPT_END { NULL, OPT_FLAG, NULL }

struct cmd_entry;
struct xl_ctx;

/*
 * Parse argv (argv[0] is the command name) against opts, plus the options
 * every command takes (--json, --allow-root, --help). Positionals land in
 * *pos (NULL-terminated, caller frees the array only), their number in
 * *npos. Options and positionals may be mixed; "--" ends options.
 * Returns 0; 1 when --help was given (help printed); -1 on a usage error
 * (message printed: exit 2).
 */
int opts_parse(struct xl_ctx *ctx, const struct cmd_entry *cmd,
	       const struct opt *opts, int argc, char **argv,
	       char ***pos, int *npos);

/* Check the positional count is in [min, max]; prints a usage error if not. */
int opts_npos(const struct cmd_entry *cmd, char **pos, int npos, int min,
	      int max);

void opt_list_release(struct opt_list *l);

#endif
