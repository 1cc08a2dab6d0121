/* The command table and help output. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "jsonw.h"

extern const struct cmd_entry cmd_adjust_entry;
extern const struct cmd_entry cmd_adopt_entry;
extern const struct cmd_entry cmd_agent_setup_entry;
extern const struct cmd_entry cmd_auto_entry;
extern const struct cmd_entry cmd_breaker_entry;
extern const struct cmd_entry cmd_cancel_entry;
extern const struct cmd_entry cmd_cron_line_entry;
extern const struct cmd_entry cmd_decide_entry;
extern const struct cmd_entry cmd_diff_entry;
extern const struct cmd_entry cmd_doctor_entry;
extern const struct cmd_entry cmd_driver_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_init_entry;
extern const struct cmd_entry cmd_judge_entry;
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

/* Sorted by name; hidden test commands last. */
const struct cmd_entry *const cmd_table[] = {
	&cmd_adjust_entry,
	&cmd_adopt_entry,
	&cmd_agent_setup_entry,
	&cmd_auto_entry,
	&cmd_breaker_entry,
	&cmd_cancel_entry,
	&cmd_cron_line_entry,
	&cmd_decide_entry,
	&cmd_diff_entry,
	&cmd_doctor_entry,
	&cmd_driver_entry,
	&cmd_help_entry,
	&cmd_init_entry,
	&cmd_judge_entry,
	&cmd_mem_entry,
	&cmd_new_entry,
	&cmd_next_entry,
	&cmd_notify_entry,
	&cmd_plan_entry,
	&cmd_prioritize_entry,
	&cmd_remote_entry,
	&cmd_replicate_entry,
	&cmd_report_entry,
	&cmd_resume_entry,
	&cmd_retry_entry,
	&cmd_sample_entry,
	&cmd_show_entry,
	&cmd_space_entry,
	&cmd_status_entry,
	&cmd_submit_entry,
	&cmd_sweep_entry,
	&cmd_tick_entry,
	&cmd_version_entry,
	&cmd_watch_entry,
	&cmd_why_entry,
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

/* Print a command's full help. */
void cmd_print_help(const struct cmd_entry *cmd)
{
	printf("usage: xloop %s%s%s\n\n%s\n", cmd->name, *cmd->usage ? " " : "",
	       cmd->usage, cmd->summary);
	if (cmd->help && *cmd->help)
		printf("\n%s", cmd->help);
}

/* Print a usage error naming the mistake. */
int cmd_usage_error(const struct cmd_entry *cmd, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	fflush(stdout);
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	fprintf(stderr, "xloop %s: ", cmd->name);
	fput_one_line(stderr, msg);
	free(msg);
	fprintf(stderr, "\nusage: xloop %s%s%s\n", cmd->name, *cmd->usage ? " " : "",
		cmd->usage);
	return -1;
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
