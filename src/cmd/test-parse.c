/*
 * xloop test-parse KIND < INPUT: run one of the pure Slurm parsers on
 * standard input and print what it understood as JSON, so that every
 * parser can be checked from the shell and fuzzed as a black box.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/buf.h"
#include "cmd/cmd.h"
#include "slurm/json.h"

static const struct opt test_parse_opts[] = {
	{ "format", OPT_STRING, "F", "the squeue -o format or the sacct field list" },
	{ "delimiter", OPT_STRING, "D", "the field delimiter (sacct -P: |)" },
	{ "trailing", OPT_FLAG, NULL, "each line ends with a delimiter" },
	{ "summarize", OPT_STRING, "JOB", "sacct: also the summary of job JOB" },
	OPT_END,
};

#define MAX_INPUT ((size_t)64 << 20)

static int read_stdin(struct buf *b)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(0, chunk, sizeof(chunk))) != 0) {
		if (n < 0)
			return error("unable to read standard input");
		if (b->len + (size_t)n > MAX_INPUT)
			return error("standard input is larger than %zu bytes", MAX_INPUT);
		buf_add(b, chunk, (size_t)n);
	}
	if (memchr(b->s, '\0', b->len))
		return error("standard input contains a NUL byte");
	return 0;
}

/* Split "a,b,c" into a NULL-terminated vector pointing into copy. */
static const char **split_fields(char *copy, size_t *n)
{
	const char **v = xcalloc(strlen(copy) + 2, sizeof(*v));
	char *p = copy;

	*n = 0;
	for (;;) {
		char *c = strchr(p, ',');

		v[(*n)++] = p;
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	return v;
}

static json_t *parse_sacct(const char *in, const char *fields, const char *delim,
			   int trailing, const char *job, char **cause, int *rc)
{
	struct slurm_acct acct = SLURM_ACCT_INIT;
	struct slurm_acct_summary sum;
	char *copy = xstrdup(fields ? fields : SLURM_SACCT_FIELDS);
	size_t n, i;
	const char **f = split_fields(copy, &n);
	json_t *doc = NULL, *rows;
	int r = slurm_parse_sacct(in, f, n, delim, trailing ? SLURM_SACCT_TRAILING_DELIM : 0,
				  &acct, cause);

	if (r < 0)
		goto out;
	rows = json_array();
	for (i = 0; i < acct.nr; i++)
		json_array_append_new(rows, slurm_acct_row_json(&acct, &acct.rows[i]));
	doc = json_pack("{s:b, s:o}", "no_accounting", r == SLURM_PARSE_NO_ACCOUNTING,
			"rows", rows);
	if (job) {
		if (slurm_acct_summarize(&acct, job, &sum, cause) < 0) {
			json_decref(doc);
			doc = NULL;
			goto out;
		}
		json_object_set_new(doc, "summary", slurm_acct_summary_json(&sum));
	}
out:
	*rc = doc ? XL_OK : XL_DATAERR;
	slurm_acct_release(&acct);
	free(f);
	free(copy);
	return doc;
}

static json_t *parse_kind(const char *kind, const char *in, const char *format,
			  const char *delim, int trailing, const char *job,
			  char **cause, int *rc)
{
	struct slurm_jobs jobs = SLURM_JOBS_INIT;
	json_t *doc = NULL;
	int r;

	*rc = XL_DATAERR;
	if (strcmp(kind, "sbatch") == 0) {
		long long id;
		char *cluster = NULL;

		if (slurm_parse_sbatch(in, &id, &cluster, cause) < 0)
			return NULL;
		doc = json_pack("{s:I, s:o}", "job_id", (json_int_t)id, "cluster",
				cluster ? json_string(cluster) : json_null());
		free(cluster);
	} else if (strcmp(kind, "scontrol") == 0 || strcmp(kind, "squeue") == 0) {
		r = kind[1] == 'c' ? slurm_parse_scontrol(in, &jobs, cause) :
			slurm_parse_squeue(in, format ? format : SLURM_SQUEUE_FORMAT,
					   &jobs, cause);
		if (r < 0)
			return NULL;
		doc = json_pack("{s:b, s:o}", "unknown_job", r == SLURM_PARSE_UNKNOWN_JOB,
				"jobs", slurm_jobs_json(&jobs));
		slurm_jobs_release(&jobs);
	} else if (strcmp(kind, "sacct") == 0) {
		return parse_sacct(in, format, delim, trailing, job, cause, rc);
	} else if (strcmp(kind, "sinfo") == 0) {
		struct slurm_node_reasons nr = SLURM_NODE_REASONS_INIT;
		size_t i;

		if (slurm_parse_sinfo_reasons(in, &nr, cause) < 0)
			return NULL;
		doc = json_array();
		for (i = 0; i < nr.nr; i++)
			json_array_append_new(doc, json_pack("{s:s, s:s, s:s, s:s, s:b}",
				"node", nr.v[i].node, "reason", nr.v[i].reason,
				"user", nr.v[i].user, "timestamp", nr.v[i].timestamp,
				"truncated", nr.v[i].truncated));
		slurm_node_reasons_release(&nr);
	} else if (strcmp(kind, "state") == 0) {
		const char *p = in;

		doc = json_array();
		while (*p) {
			size_t n = strcspn(p, "\n");
			char *line = xstrndup(p, n);
			enum slurm_state st = slurm_state_parse(line, SLURM_STATE_COMPACT);

			json_array_append_new(doc, json_pack("{s:s, s:s, s:b}", "input", line,
				"state", slurm_state_name(st), "final", slurm_state_is_final(st)));
			free(line);
			p += n;
			if (*p)
				p++;
		}
	} else {
		*rc = XL_USAGE;
		*cause = xasprintf("unknown kind '%s' (sbatch, scontrol, squeue, sacct, "
				   "sinfo, state)", kind);
		return NULL;
	}
	*rc = XL_OK;
	return doc;
}

/* Parse standard input as KIND and print the result. */
static int cmd_test_parse(struct xl_ctx *ctx, const struct cmd_entry *self,
			  struct cmd_args *args)
{
	const char *format = args_get(args, "format"), *delim = args_get(args, "delimiter");
	const char *job = args_get(args, "summarize");
	int trailing = args_flag(args, "trailing"), rc;
	struct buf in = BUF_INIT;
	char **pos = args->pos, *cause = NULL;
	json_t *doc;

	(void)ctx;
	(void)self;
	if (read_stdin(&in) < 0) {
		buf_release(&in);
		return XL_DATAERR;
	}
	doc = parse_kind(pos[0], in.s, format, delim, trailing, job, &cause, &rc);
	if (doc)
		cmd_emit_json(doc);
	else
		error("%s", cause ? cause : "unparseable input");
	free(cause);
	buf_release(&in);
	return rc;
}

const struct cmd_entry cmd_test_parse_entry = {
	.name = "test-parse", .opts = test_parse_opts, .args = "KIND < INPUT", .min = 1, .max = 1,
	.target = CMD_TARGET_NONE,
	.summary = "parse Slurm output from standard input and print it as JSON (for tests)",
	.help = "KIND is sbatch, scontrol, squeue, sacct, sinfo or state. --format is the\n"
	"squeue -o format or the sacct field list; exit 65 when the input does not\n"
	"parse.\n",
	.flags = CMD_HIDDEN, .exec = cmd_test_parse,
};
