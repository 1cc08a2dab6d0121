/* The command table and help output. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "lib/jsonw.h"
#include "loop.h"
#include "runs.h"
#include "jobs/submit.h"

extern const struct cmd_entry cmd_adjust_entry;
extern const struct cmd_entry cmd_adopt_entry;
extern const struct cmd_entry cmd_agent_setup_entry;
extern const struct cmd_entry cmd_auto_entry;
extern const struct cmd_entry cmd_breaker_entry;
extern const struct cmd_entry cmd_cancel_entry;
extern const struct cmd_entry cmd_config_entry;
extern const struct cmd_entry cmd_complete_words_entry;
extern const struct cmd_entry cmd_completion_entry;
extern const struct cmd_entry cmd_cron_line_entry;
extern const struct cmd_entry cmd_decide_entry;
extern const struct cmd_entry cmd_diff_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_driver_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_init_entry;
extern const struct cmd_entry cmd_judge_entry;
extern const struct cmd_entry cmd_mcp_entry;
extern const struct cmd_entry cmd_mem_entry;
extern const struct cmd_entry cmd_new_entry;
extern const struct cmd_entry cmd_next_entry;
extern const struct cmd_entry cmd_notify_entry;
extern const struct cmd_entry cmd_plan_entry;
extern const struct cmd_entry cmd_prioritize_entry;
extern const struct cmd_entry cmd_remote_entry;
extern const struct cmd_entry cmd_replicate_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_retry_entry;
extern const struct cmd_entry cmd_stop_entry;
extern const struct cmd_entry cmd_sample_entry;
extern const struct cmd_entry cmd_show_entry;
extern const struct cmd_entry cmd_space_entry;
extern const struct cmd_entry cmd_status_entry;
extern const struct cmd_entry cmd_submit_entry;
extern const struct cmd_entry cmd_sweep_entry;
extern const struct cmd_entry cmd_tick_entry;
extern const struct cmd_entry cmd_version_entry;
extern const struct cmd_entry cmd_watch_entry;
extern const struct cmd_entry cmd_why_entry;
extern const struct cmd_entry cmd_test_parse_entry;
extern const struct cmd_entry cmd_test_search_entry;
extern const struct cmd_entry cmd_test_slurm_entry;

const char *const cmd_group_title[CMD_GROUP_COUNT] = {
	[CMD_GROUP_START] = "start a study (a first study needs these six)",
	[CMD_GROUP_LOOP] = "run the loop by hand",
	[CMD_GROUP_LOOK] = "look at the study",
	[CMD_GROUP_FIX] = "fix a bad night",
	[CMD_GROUP_UNATTENDED] = "keep it going without you",
	[CMD_GROUP_AGENTS] = "agents and remote sites",
	[CMD_GROUP_ABOUT] = "help, completion and version",
};

/*
 * Each command names its group in its entry (.group); within a group, help
 * lists them in this order: a first study's order of use, then the rest.
 * Hidden commands last.
 */
const struct cmd_entry *const cmd_table[] = {
	&cmd_init_entry,
	&cmd_adopt_entry,
	&cmd_plan_entry,
	&cmd_space_entry,
	&cmd_auto_entry,
	&cmd_next_entry,
	&cmd_new_entry,
	&cmd_submit_entry,
	&cmd_sweep_entry,
	&cmd_replicate_entry,
	&cmd_judge_entry,
	&cmd_decide_entry,
	&cmd_config_entry,
	&cmd_status_entry,
	&cmd_show_entry,
	&cmd_diff_entry,
	&cmd_report_entry,
	&cmd_export_entry,
	&cmd_watch_entry,
	&cmd_why_entry,
	&cmd_doctor_entry,
	&cmd_breaker_entry,
	&cmd_retry_entry,
	&cmd_cancel_entry,
	&cmd_stop_entry,
	&cmd_adjust_entry,
	&cmd_prioritize_entry,
	&cmd_mem_entry,
	&cmd_sample_entry,
	&cmd_tick_entry,
	&cmd_driver_entry,
	&cmd_cron_line_entry,
	&cmd_notify_entry,
	&cmd_resume_entry,
	&cmd_agent_setup_entry,
	&cmd_mcp_entry,
	&cmd_remote_entry,
	&cmd_help_entry,
	&cmd_completion_entry,
	&cmd_version_entry,
	&cmd_complete_words_entry,
	&cmd_test_parse_entry,
	&cmd_test_search_entry,
	&cmd_test_slurm_entry,
	NULL,
};

/* Find a command by exact name. */
const struct cmd_entry *cmd_find(const char *name)
{
	const struct cmd_entry *const *c;

	for (c = cmd_table; *c; c++)
		if (strcmp((*c)->name, name) == 0)
			return *c;
	return NULL;
}

/* The word after "PARENT " in a subcommand's name. */
const char *cmd_sub_word(const struct cmd_entry *sub)
{
	const char *sp = strrchr(sub->name, ' ');

	return sp ? sp + 1 : sub->name;
}

/* Whether cmd is that subcommand. */
int cmd_is(const struct cmd_entry *cmd, const char *word)
{
	return strcmp(cmd_sub_word(cmd), word) == 0;
}

/* The next entry cmd stands for: see cmd.h. */
const struct cmd_entry *cmd_each(const struct cmd_entry *cmd, const struct cmd_entry *prev)
{
	if (!cmd->subs)
		return prev ? NULL : cmd;
	prev = prev ? prev + 1 : cmd->subs;
	return prev->name ? prev : NULL;
}

/* Whether option arg (no "=") takes the next argument in any of cmd's tables. */
static int takes_value(const struct cmd_entry *cmd, const char *arg)
{
	const char *name = arg + (arg[1] == '-' ? 2 : 1);
	const struct cmd_entry *s;
	const struct opt *o;

	if (strchr(name, '='))
		return 0;
	for (s = cmd_each(cmd, NULL); s; s = cmd_each(cmd, s))
		if ((o = opts_find(s->opts, name, strlen(name))) && o->kind != OPT_FLAG)
			return 1;
	return 0;
}

/* Find the subcommand: the first positional, options skipped. */
const struct cmd_entry *cmd_sub(const struct cmd_entry *cmd, int argc, char **argv,
				int *at)
{
	const struct cmd_entry *s;
	int i;

	*at = 0;
	if (!cmd->subs)
		return cmd;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (takes_value(cmd, a))
			i++;
	}
	if (i >= argc)
		return cmd->dflt;
	for (s = cmd->subs; s->name; s++)
		if (strchr(s->name, ' ') && strcmp(cmd_sub_word(s), argv[i]) == 0) {
			*at = i;
			return s;
		}
	if (cmd->dflt && cmd->dflt->max != 0)
		return cmd->dflt;
	*at = i;	/* the unknown word */
	return NULL;
}

/* The names of cmd's visible subcommands: "ls, add, rm" (sep ", "). */
static void sub_names(struct buf *b, const struct cmd_entry *cmd, const char *sep)
{
	const struct cmd_entry *s;

	for (s = cmd->subs; s && s->name; s++)
		if (!(s->flags & CMD_HIDDEN) && strchr(s->name, ' '))
			buf_addf(b, "%s%s", b->len ? sep : "", cmd_sub_word(s));
}

/* "--opt ARG" */
void cmd_opt_spec(struct buf *b, const struct opt *o)
{
	buf_addf(b, "-%s%s%s%s", o->name[1] ? "-" : "", o->name, o->arg ? " " : "",
		 o->arg ? o->arg : "");
}

/* "NAME [--opt ARG]... ARGS" */
void cmd_usage_line(struct buf *b, const struct cmd_entry *cmd)
{
	const struct opt *o;

	buf_addf(b, "xloop %s", cmd->name);
	if (cmd->subs && !cmd->opts && (!cmd->args || !*cmd->args)) {
		struct buf n;

		buf_init(&n);
		sub_names(&n, cmd, " | ");
		buf_addf(b, " %s%s%s ...", cmd->dflt ? "[" : "{", n.s, cmd->dflt ? "]" : "}");
		buf_release(&n);
		return;
	}
	for (o = cmd->opts; o && o->name; o++) {
		int req = o->flags & OPT_REQUIRED;

		buf_adds(b, req ? " " : " [");
		cmd_opt_spec(b, o);
		buf_addf(b, "%s%s", req ? "" : "]", o->kind == OPT_LIST ? "..." : "");
	}
	if (cmd->args && *cmd->args)
		buf_addf(b, " %s", cmd->args);
}

/* The next entry help shows for cmd: cmd_each without hidden subcommands. */
const struct cmd_entry *cmd_shown(const struct cmd_entry *cmd, const struct cmd_entry *prev)
{
	do
		prev = cmd_each(cmd, prev);
	while (prev && prev != cmd && (prev->flags & CMD_HIDDEN));
	return prev;
}

/* The Options: list of cmd (and its subcommands). */
static void print_options(const struct cmd_entry *cmd)
{
	const struct cmd_entry *s;
	const struct opt *o;
	struct buf b;
	int head = 0;

	buf_init(&b);
	for (s = cmd_shown(cmd, NULL); s; s = cmd_shown(cmd, s)) {
		for (o = s->opts; o && o->name; o++) {
			buf_reset(&b);
			if (cmd->subs && strchr(s->name, ' '))
				buf_addf(&b, "%s ", cmd_sub_word(s));
			cmd_opt_spec(&b, o);
			if (!head++)
				printf("\nOptions:\n");
			printf("  %-22s %s\n", b.s, o->help ? o->help : "");
		}
	}
	buf_release(&b);
}

/* Print a command's full help. */
void cmd_print_help(const struct cmd_entry *cmd)
{
	const struct cmd_entry *s;
	struct buf b;
	int n = 0;

	buf_init(&b);
	for (s = cmd_shown(cmd, NULL); s; s = cmd_shown(cmd, s)) {
		buf_reset(&b);
		cmd_usage_line(&b, s);
		printf("%s%s\n", n++ ? "   or: " : "usage: ", b.s);
	}
	buf_release(&b);
	printf("\n%s\n", cmd->summary);
	if (cmd->help && *cmd->help)
		printf("\n%s", cmd->help);
	print_options(cmd);
}

/* The command list of `xloop help`, under the group headings. */
void cmd_print_groups(void)
{
	const struct cmd_entry *const *c;
	int g, width = 0;

	for (c = cmd_table; *c; c++)
		if (!((*c)->flags & CMD_HIDDEN) && (int)strlen((*c)->name) > width)
			width = (int)strlen((*c)->name);
	for (g = CMD_GROUP_START; g < CMD_GROUP_COUNT; g++) {
		printf("\n%s:\n", cmd_group_title[g]);
		for (c = cmd_table; *c; c++)
			if (!((*c)->flags & CMD_HIDDEN) && (int)(*c)->group == g)
				printf("  %-*s %s\n", width, (*c)->name, (*c)->summary);
	}
}

/* Every option of every command: what t0001 checks has a help text. */
void cmd_print_all_options(void)
{
	const struct cmd_entry *const *c, *s;
	const struct opt *o;
	struct buf b;

	buf_init(&b);
	for (c = cmd_table; *c; c++)
		for (s = cmd_each(*c, NULL); s; s = cmd_each(*c, s))
			for (o = s->opts; o && o->name; o++) {
				buf_reset(&b);
				cmd_opt_spec(&b, o);
				printf("%s\t%s\t%s\n", s->name, b.s, o->help ? o->help : "");
			}
	buf_release(&b);
}

/* Print a usage error naming the mistake. */
int cmd_usage_error(const struct cmd_entry *cmd, const char *fmt, ...)
{
	const char *sp = strchr(cmd->name, ' ');
	struct buf b;
	va_list ap;
	char *msg;

	fflush(stdout);
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* a subcommand's errors are its command's: "xloop plan: ..." */
	fprintf(stderr, "xloop %.*s: ", sp ? (int)(sp - cmd->name) : (int)strlen(cmd->name),
		cmd->name);
	fput_one_line(stderr, msg);
	free(msg);
	buf_init(&b);
	cmd_usage_line(&b, cmd);
	fprintf(stderr, "\nusage: %s\n", b.s);
	buf_release(&b);
	return -1;
}

/* argv without argv[at] (the subcommand's word); argv[0] stays. */
static char **drop_arg(int argc, char **argv, int at)
{
	char **v = xcalloc((size_t)argc + 1, sizeof(*v));
	int i, n = 0;

	for (i = 0; i < argc; i++)
		if (i != at)
			v[n++] = argv[i];
	return v;
}

/* The caller's half of every command: see cmd.h. */
int cmd_run(struct xl_ctx *ctx, const struct cmd_entry *cmd, int argc, char **argv)
{
	const struct cmd_entry *sub;
	struct cmd_args a;
	struct run r;
	char *cause = NULL, **v = NULL;
	int rc, at;

	sub = cmd_sub(cmd, argc, argv, &at);
	if (sub == NULL) {
		struct buf n;

		buf_init(&n);
		sub_names(&n, cmd, ", ");
		if (at)
			cmd_usage_error(cmd, "unknown subcommand '%s' (%s)", argv[at], n.s);
		else
			cmd_usage_error(cmd, "missing subcommand (%s)", n.s);
		buf_release(&n);
		return XL_USAGE;
	}
	if (at) {
		v = drop_arg(argc, argv, at);
		argv = v;
		argc--;
	}
	rc = opts_parse(sub->opts, argc, argv, &a, &cause);
	ctx->json |= a.json;
	ctx->allow_root |= a.allow_root;
	ctx->allow_secret |= a.allow_secret;
	if (rc == 0 && a.help) {
		cmd_print_help(at ? sub : cmd);
		rc = XL_OK;
		goto out;
	}
	if (rc == 0)
		rc = opts_check_npos(&a, sub->min, sub->max, &cause);
	if (rc == 0)
		rc = opts_check_required(&a, &cause);
	if (rc < 0) {
		cmd_usage_error(sub, "%s", cause);
		rc = XL_USAGE;
		goto out;
	}
	if (sub->target == CMD_TARGET_RUN) {
		rc = loop_find_run(ctx, a.pos[0], &r, &cause);
		if (rc) {
			error("%s", cause);
			goto out;
		}
		a.run = &r;
	}
	rc = sub->exec(ctx, sub, &a);
	if (a.run)
		run_release(a.run);
out:
	cmd_args_release(&a);
	free(cause);
	free(v);
	return rc;
}

/* Read the submission options a command's table has. */
void cmd_submit_opts(const struct cmd_args *args, struct submit_opts *o)
{
	static const char *const str[] = { "mem", "time", "segments", "after" };
	const char **dst[] = { &o->mem, &o->time, &o->segments, &o->after };
	size_t i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < sizeof(str) / sizeof(*str); i++)
		if (opts_find(args->opts, str[i], strlen(str[i])))
			*dst[i] = args_get(args, str[i]);
	if (opts_find(args->opts, "no-chain", 8))
		o->no_chain = args_flag(args, "no-chain");
}

/* --nice N: this invocation's sbatch --nice (xloop.json slurm.nice otherwise). */
int cmd_apply_nice(struct xl_ctx *ctx, const struct cmd_entry *cmd, const char *v)
{
	const char *errstr;
	long long n;

	if (!v)
		return 0;
	if (parse_ll(v, 0, 2147483645, &n, &errstr) < 0)
		return cmd_usage_error(cmd, "--nice wants a number from 0 (users can only "
				       "lower their priority, not raise it)");
	ctx->cfg.nice = n;
	return 0;
}

/* Print one JSON document. */
void cmd_emit_json(json_t *doc)
{
	char *s = doc ? json_dumps(doc, JSONW_DUMP_FLAGS) : NULL;

	if (s == NULL)
		die("unable to encode JSON output");
	puts(s);
	free(s);
	json_decref(doc);
}

/* A streamed document: see cmd.h. */
void cmd_json_begin(struct json_stream *js, json_t *head, const char *key)
{
	buf_init(&js->out);
	jsonw_stream_begin(&js->w, &js->out, head, key);
	json_decref(head);
	cmd_json_flush(js);
}

void cmd_json_flush(struct json_stream *js)
{
	fwrite(js->out.s, 1, js->out.len, stdout);
	buf_reset(&js->out);
}

void cmd_json_end(struct json_stream *js)
{
	jsonw_stream_end(&js->w);
	buf_addc(&js->out, '\n');
	cmd_json_flush(js);
	buf_release(&js->out);
}
