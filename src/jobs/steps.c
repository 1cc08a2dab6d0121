/* A run's steps: names, paths, the run_step table, one variable per step. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobsh/directives.h"
#include "jobsh/jobsh.h"
#include "runs.h"
#include "search/confkey.h"
#include "jobs/steps.h"
#include "study.h"
#include "lib/util.h"

/* An empty set. */
void step_set_init(struct step_set *set)
{
	memset(set, 0, sizeof(*set));
}

/* Free a set's names, paths and texts. */
void step_set_release(struct step_set *set)
{
	size_t i;

	for (i = 0; i < set->nr; i++) {
		free(set->names[i]);
		free(set->paths[i]);
		buf_release(&set->texts[i]);
	}
	memset(set, 0, sizeof(*set));
}

/* Append a script; the set takes text over. */
void step_set_add(struct step_set *set, const char *name, const char *path,
		  struct buf *text)
{
	if (set->nr >= STEPS_MAX)
		BUG("more than %d steps", STEPS_MAX);
	set->names[set->nr] = xstrdup(name);
	set->paths[set->nr] = xstrdup(path);
	set->texts[set->nr] = *text;
	buf_init(text);
	set->nr++;
}

/* A step name: [a-z][a-z0-9_-]{0,31}, not job.sh's. */
int steps_valid_name(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= 32 && name[0] >= 'a' && name[0] <= 'z' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n &&
	       strcmp(name, STEP_FIRST) != 0;
}

/* Split NAME=SCRIPT. */
int steps_parse_arg(const char *arg, char **name, char **path, char **cause)
{
	const char *eq = strchr(arg, '=');

	*name = *path = NULL;
	if (!eq || eq == arg || !eq[1]) {
		*cause = xasprintf("invalid --step '%s': give NAME=SCRIPT, like eval=eval.sh",
				   arg);
		return XL_USAGE;
	}
	*name = xstrndup(arg, (size_t)(eq - arg));
	if (!steps_valid_name(*name)) {
		*cause = xasprintf("invalid step name '%s': 1-32 of [a-z0-9_-], starting "
				   "with a letter, not '%s' (job.sh's own)", *name, STEP_FIRST);
		FREE_AND_NULL(*name);
		return XL_USAGE;
	}
	*path = xstrdup(eq + 1);
	return 0;
}

/* runs/<study>/<tag>/<name>.sh */
char *step_path(const char *root, const char *study, const char *tag, const char *name)
{
	char *dir = run_dir(root, study, tag), *p = xasprintf("%s/%s.sh", dir, name);

	free(dir);
	return p;
}

/* slurm/attemptN.NAME.out */
char *step_log_path(const char *root, const char *study, const char *tag, long long n,
		    const char *name)
{
	char *dir = run_dir(root, study, tag);
	char *p = xasprintf("%s/slurm/attempt%lld.%s.out", dir, n, name);

	free(dir);
	return p;
}

/* Refuse a variable assigned at the top level of two scripts. */
int steps_check_vars(const struct step_set *set, char **cause)
{
	struct jobsh_vars vars[STEPS_MAX];
	size_t i, j, k, l;
	int rc = 0;

	for (i = 0; i < set->nr; i++)
		vars[i] = (struct jobsh_vars)JOBSH_VARS_INIT;
	for (i = 0; i < set->nr && rc == 0; i++)
		if (jobsh_scan(set->texts[i].s, set->texts[i].len, &vars[i], cause) < 0) {
			char *c = xasprintf("%s: %s", set->paths[i], *cause);

			free(*cause);
			*cause = c;
			rc = XL_DATAERR;
		}
	for (i = 0; i < set->nr && rc == 0; i++)
		for (j = i + 1; j < set->nr && rc == 0; j++)
			for (k = 0; k < vars[i].nr && rc == 0; k++)
				for (l = 0; l < vars[j].nr && rc == 0; l++) {
					const struct jobsh_var *a = &vars[i].v[k], *b = &vars[j].v[l];

					if (a->place != JOBSH_TOP || b->place != JOBSH_TOP ||
					    strcmp(a->name, b->name) != 0)
						continue;
					*cause = xasprintf("%s is assigned in step '%s' (%s line "
						"%d) and in step '%s' (%s line %d): a change "
						"could not say which; keep it in one step and "
						"pass it on (a file, or export it there)",
						a->name, set->names[i], set->paths[i], a->line,
						set->names[j], set->paths[j], b->line);
					rc = XL_DATAERR;
				}
	for (i = 0; i < set->nr; i++)
		jobsh_vars_release(&vars[i]);
	return rc;
}

/* The script assigning var at its top level; 0 when none. */
size_t steps_holder(const struct step_set *set, const char *var)
{
	size_t i, k;

	for (i = 1; i < set->nr; i++) {
		struct jobsh_vars vars = JOBSH_VARS_INIT;
		char *cause = NULL;
		int found = 0;

		if (jobsh_scan(set->texts[i].s, set->texts[i].len, &vars, &cause) == 0)
			for (k = 0; k < vars.nr && !found; k++)
				found = vars.v[k].place == JOBSH_TOP &&
					strcmp(vars.v[k].name, var) == 0;
		jobsh_vars_release(&vars);
		free(cause);
		if (found)
			return i;
	}
	return 0;
}

/* Order configuration lines by their name (confkey's order). */
static int line_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strcspn(x, ":="), ny = strcspn(y, ":=");
	int c = strncmp(x, y, nx < ny ? nx : ny);

	return c ? c : (nx > ny) - (nx < ny);
}

/* Merge every script's configuration. */
int steps_config(const struct step_set *set, char **out, char **cause)
{
	struct buf all = BUF_INIT, b = BUF_INIT;
	char **lines = NULL, *p;
	size_t i, n = 0;

	*out = NULL;
	if (set->nr <= 1)
		return confkey_config(set->texts[0].s, set->texts[0].len, out, cause);
	for (i = 0; i < set->nr; i++) {
		char *c = NULL;

		if (confkey_config(set->texts[i].s, set->texts[i].len, &c, cause) < 0) {
			buf_release(&all);
			return -1;
		}
		buf_adds(&all, c);
		if (*c && c[strlen(c) - 1] != '\n')
			buf_addc(&all, '\n');
		free(c);
	}
	for (p = all.s; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0')) {
		lines = xreallocarray(lines, n + 1, sizeof(*lines));
		lines[n++] = xstrndup(p, strcspn(p, "\n"));
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (i = 0; i < n; i++) {
		buf_addf(&b, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	buf_release(&all);
	*out = buf_detach(&b, NULL);
	return 0;
}

/* The names of a run's later steps. */
int steps_names(struct db *db, long long run_id, char **names, size_t *n)
{
	struct stmt q;
	int rc;

	*n = 0;
	if (db_prepare_cached(db, &q, "SELECT name FROM run_step WHERE run_id = :id"
			      " ORDER BY k") < 0)
		return -1;
	db_bind_int64(&q, ":id", run_id);
	while ((rc = db_step(&q)) == SQLITE_ROW && *n < STEPS_MAX - 1)
		names[(*n)++] = xstrdup(db_col_text(&q, 0));
	db_finalize(&q);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* Record steps 2.. of a run. */
int steps_insert(struct db *db, long long run_id, const struct step_set *set)
{
	size_t i;

	for (i = 1; i < set->nr; i++) {
		struct stmt q;

		if (db_prepare(db, &q, "INSERT INTO run_step (run_id, k, name)"
			       " VALUES (:id, :k, :name)") < 0)
			return -1;
		db_bind_int64(&q, ":id", run_id);
		db_bind_int64(&q, ":k", (long long)i + 1);
		db_bind_text(&q, ":name", set->names[i]);
		if (db_run(&q) < 0)
			return -1;
	}
	return 0;
}

/* Read one script into the set. */
static int read_one(struct step_set *set, const char *name, char *path, char **cause)
{
	struct buf text = BUF_INIT;
	int err;

	if (study_read_script(path, &text, &err, cause) < 0) {
		buf_release(&text);
		free(path);
		return err == ENOENT ? XL_NOINPUT : XL_DATAERR;
	}
	step_set_add(set, name, path, &text);
	free(path);
	return 0;
}

/* A run's scripts, job.sh first. */
int steps_read(struct db *db, const char *root, const char *study, long long run_id,
	       const char *tag, struct step_set *set, char **cause)
{
	char *names[STEPS_MAX];
	size_t n = 0, i;
	int rc;

	step_set_init(set);
	if (steps_names(db, run_id, names, &n) < 0) {
		*cause = xasprintf("unable to read the steps of run '%s'", tag);
		return XL_ERR;
	}
	rc = read_one(set, STEP_FIRST, run_job_path(root, study, tag), cause);
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = read_one(set, names[i], step_path(root, study, tag, names[i]), cause);
		free(names[i]);
	}
	if (rc)
		step_set_release(set);
	return rc;
}

/* Whether the #SBATCH lines of text give option. */
static int has_directive(const char *text, const char *option)
{
	struct sbatch_directives d;
	size_t i;
	int has = 0;

	sbatch_directives_parse(text, &d);
	for (i = 0; i < d.nr; i++)
		has |= strcmp(d.v[i].option, option) == 0;
	sbatch_directives_release(&d);
	return has;
}

/* A later step's request: the run's resources where its own #SBATCH is silent. */
void steps_fill_request(const struct config *c, const char *root, const char *text,
			const char *mem, const char *time_, long long cpus, const char *dep,
			struct slurm_submit *req)
{
	slurm_fill_request(c, root, req, has_directive(text, "mem") ? NULL :
			   mem && *mem ? mem : c->res.mem, has_directive(text, "time") ? NULL :
			   time_ && *time_ ? time_ : c->res.time, dep);
	req->gres = NULL;	/* a GPU only when its own #SBATCH --gres asks */
	if (has_directive(text, "cpus-per-task"))
		req->cpus = 0;
	else if (cpus > 0)
		req->cpus = cpus;
}
