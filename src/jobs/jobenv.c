/* The environment of every job of a run: one place builds it. */
#include <stdlib.h>
#include <string.h>

#include "jobs/jobenv.h"
#include "jobsh/jobsh.h"
#include "lib/util.h"

/* Append one "NAME=VALUE" (malloc'd) to e. */
static void add(struct jobenv *e, char *kv)
{
	if (e->n >= JOBENV_MAX)
		BUG("too many variables in a job's environment");
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
}

/* Fill e for job j. */
void jobenv_init(struct jobenv *e, const struct config *c, const char *root,
		 const struct jobenv_job *j)
{
	size_t i;

	memset(e, 0, sizeof(*e));
	add(e, xasprintf("XLOOP_RUN_DIR=%s/runs/%s/%s", root, c->study, j->tag));
	add(e, xasprintf("XLOOP_TAG=%s", j->tag));
	add(e, xasprintf("XLOOP_ATTEMPT=%lld", j->attempt));
	add(e, xasprintf("XLOOP_STUDY=%s", c->study));
	add(e, xasprintf("XLOOP_ROOT=%s", root));
	add(e, xasprintf("XLOOP_STEP=%s", j->step));
	add(e, xasprintf("XLOOP_SEGMENT=%lld", j->segment));
	add(e, xasprintf("XLOOP_RUN_ID=%s", j->run_id));
	for (i = 0; i < c->tracker.nid; i++)
		add(e, xasprintf("%s=%s", c->tracker.id_vars[i], j->run_id));
	for (i = 0; i < c->tracker.nenv; i++)
		add(e, xstrdup(c->tracker.env[i]));
}

/* The entries, NULL-terminated. */
const char *const *jobenv_vec(const struct jobenv *e)
{
	return (const char *const *)e->v;
}

/* Free the entries. */
void jobenv_release(struct jobenv *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	memset(e, 0, sizeof(*e));
}

/* Export lines for XLOOP_RUN_ID ($rid) and the tracker's variables. */
void jobenv_shell(const struct config *c, struct buf *b)
{
	size_t i;

	buf_adds(b, "export XLOOP_RUN_ID=\"$rid\"\n");
	for (i = 0; i < c->tracker.nid; i++)
		buf_addf(b, "export %s=\"$rid\"\n", c->tracker.id_vars[i]);
	for (i = 0; i < c->tracker.nenv; i++) {
		const char *eq = strchr(c->tracker.env[i], '=');
		char *q = jobsh_quote(eq + 1);

		buf_addf(b, "export %.*s=%s\n", (int)(eq - c->tracker.env[i]),
			 c->tracker.env[i], q);
		free(q);
	}
}
