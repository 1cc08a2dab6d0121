/* Parsing the user's Slurm limits (sacctmgr) and the refusals they cause. */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "slurm/parse.h"
#include "lib/util.h"

/* No limit anywhere. */
void slurm_limits_none(struct slurm_limits *l)
{
	l->max_jobs = l->max_submit = l->max_gpus = -1;
}

/* Lower *have to v when v is a limit tighter than it. */
static void tighten(long long *have, long long v)
{
	if (v >= 0 && (*have < 0 || v < *have))
		*have = v;
}

/* A count field: -1 when empty. */
static long long count_field(const char *s)
{
	long long v;
	const char *errstr;

	if (!*s || parse_ll(s, 0, LLONG_MAX, &v, &errstr) < 0)
		return -1;
	return v;
}

/* The GPUs in a TRES list: gres/gpu=N, else the sum of the typed counts. */
long long slurm_tres_gpus(const char *tres)
{
	const char *p = tres;
	long long total = -1, typed = -1, v;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		char num[24];

		if (eq && len > 8 && strncmp(p, "gres/gpu", 8) == 0 && (p[8] == '=' || p[8] == ':') &&
		    (size_t)(p + len - eq - 1) < sizeof(num)) {
			memcpy(num, eq + 1, (size_t)(p + len - eq - 1));
			num[p + len - eq - 1] = '\0';
			v = count_field(num);
			if (p[8] == '=')
				total = v;
			else if (v >= 0)
				typed = (typed < 0 ? 0 : typed) + v;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return total >= 0 ? total : typed;
}

/* One parsed table: the header's names and the rows, split at '|'. */
struct table {
	char *text;
	char **cell;		/* rows x cols */
	size_t rows, cols;
};

/* Split sacctmgr --parsable2 output; -1 when it has no header. */
static int table_split(const char *text, const char *first_col, struct table *t, char **cause)
{
	char *line, *save = NULL;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->text = xstrdup(text);
	for (line = strtok_r(t->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n = 1;
		char *p;

		if (*line == '\0')
			continue;
		for (p = line; *p; p++)
			n += *p == '|';
		if (t->cols == 0) {
			if (strncmp(line, first_col, strlen(first_col)) != 0 ||
			    (line[strlen(first_col)] != '|' && line[strlen(first_col)])) {
				*cause = xasprintf("sacctmgr printed no '%s' header: '%.60s'",
						   first_col, line);
				return -1;
			}
			t->cols = n;
		} else if (n != t->cols) {
			*cause = xasprintf("sacctmgr row with %zu fields, header has %zu: '%.60s'",
					   n, t->cols, line);
			return -1;
		}
		t->cell = xreallocarray(t->cell, (t->rows + 1) * t->cols, sizeof(*t->cell));
		for (i = 0, p = line; i < n; i++) {
			t->cell[t->rows * t->cols + i] = p;
			p += strcspn(p, "|");
			if (*p)
				*p++ = '\0';
		}
		t->rows++;
	}
	if (t->cols == 0) {
		*cause = xasprintf("sacctmgr printed nothing (no '%s' header)", first_col);
		return -1;
	}
	return 0;
}

/* The cell of row r under the header name, "" when there is no such column. */
static const char *cell(const struct table *t, size_t r, const char *name)
{
	size_t i;

	for (i = 0; i < t->cols; i++)
		if (strcasecmp(t->cell[i], name) == 0)
			return t->cell[r * t->cols + i];
	return "";
}

static void table_release(struct table *t)
{
	free(t->text);
	free(t->cell);
	memset(t, 0, sizeof(*t));
}

/* 1 when name is in the comma-separated list. */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

/* The user's association limits and QOS names. */
int slurm_parse_sacctmgr_assoc(const char *text, const char *account, const char *partition,
			       struct slurm_limits *l, char **qos, char **cause)
{
	struct table t;
	struct buf names = BUF_INIT;
	size_t r;

	*qos = NULL;
	if (table_split(text, "User", &t, cause) < 0) {
		table_release(&t);
		return -1;
	}
	for (r = 1; r < t.rows; r++) {
		const char *acc = cell(&t, r, "Account"), *part = cell(&t, r, "Partition");
		const char *q = cell(&t, r, "QOS"), *p;

		if ((*account && strcmp(acc, account) != 0) ||
		    (*partition && *part && strcmp(part, partition) != 0))
			continue;
		tighten(&l->max_jobs, count_field(cell(&t, r, "MaxJobs")));
		tighten(&l->max_submit, count_field(cell(&t, r, "MaxSubmit")));
		tighten(&l->max_gpus, slurm_tres_gpus(cell(&t, r, "GrpTRES")));
		for (p = q; *p;) {
			size_t len = strcspn(p, ",");
			char *one = xstrndup(p, len);

			if (!in_list(names.s, one))
				buf_addf(&names, "%s%s", names.len ? "," : "", one);
			free(one);
			p += len;
			if (*p)
				p++;
		}
	}
	table_release(&t);
	*qos = buf_detach(&names, NULL);
	return 0;
}

/* The limits of the QOS in the list. */
int slurm_parse_sacctmgr_qos(const char *text, const char *qos, struct slurm_limits *l,
			     char **cause)
{
	struct table t;
	size_t r;

	if (table_split(text, "Name", &t, cause) < 0) {
		table_release(&t);
		return -1;
	}
	for (r = 1; r < t.rows; r++) {
		if (!in_list(qos, cell(&t, r, "Name")))
			continue;
		tighten(&l->max_jobs, count_field(cell(&t, r, "MaxJobsPU")));
		tighten(&l->max_submit, count_field(cell(&t, r, "MaxSubmitPU")));
		tighten(&l->max_gpus, slurm_tres_gpus(cell(&t, r, "MaxTRESPU")));
		/* the QOS's own totals hold for everyone in it, this user too */
		tighten(&l->max_jobs, count_field(cell(&t, r, "GrpJobs")));
		tighten(&l->max_submit, count_field(cell(&t, r, "GrpSubmit")));
		tighten(&l->max_gpus, slurm_tres_gpus(cell(&t, r, "GrpTRES")));
	}
	table_release(&t);
	return 0;
}

/* The limit reasons sbatch prints when it refuses a job at submission. */
static const char *const refusals[] = {
	"QOSMaxSubmitJobPerUserLimit", "QOSMaxSubmitJobPerAccountLimit",
	"QOSGrpSubmitJobsLimit", "AssocMaxSubmitJobLimit", "AssocGrpSubmitJobsLimit",
	"QOSMaxGRESPerUser", "QOSMaxGRESPerJob", "QOSMaxGRESPerAccount",
	"QOSMaxJobsPerUserLimit", "AssocMaxJobsLimit", "QOSGrpGRES", "AssocGrpGRES",
	"AssocMaxGRESPerJob",
};

/* Which limit refused the submission, from sbatch's stderr. */
const char *slurm_limit_refusal(const char *err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(refusals); i++) {
		const char *p = strstr(err, refusals[i]);
		size_t n = strlen(refusals[i]);

		/* a whole word: QOSMaxGRESPerUser, not a longer name */
		if (p && !isalnum((unsigned char)p[n]))
			return refusals[i];
	}
	return NULL;	/* (a job that no limit will ever let in is a failure) */
}
