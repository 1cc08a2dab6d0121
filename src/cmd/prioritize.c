/*
 * xloop prioritize T: move the run's queued job to the front of its line.
 * The chain stays one afterany line (R <- X1 <- ... <- Xk <- T <- Y becomes
 * R <- T <- X1 <- ... <- Xk <- Y), changed in place with `scontrol update
 * jobid=ID Dependency=...`: nothing is cancelled, every job keeps its id.
 * X1 is held while T and X1 swap, so when R ends in between only T can
 * start, never both; a circular dependency is never asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobs/chain.h"
#include "cmd/cmd.h"
#include "loop.h"

/* The run's queued attempt, refusing what cannot move. 0 or an exit code. */
static int queued_attempt(struct xl_ctx *ctx, const char *tag, struct run *r,
			  struct attempt *a)
{
	char *cause = NULL, *sweep;
	int rc = loop_find_run(ctx, tag, r, &cause);

	if (rc) {
		error("%s", cause);
		free(cause);
		return rc;
	}
	sweep = sweeps_of_run(&ctx->db, r->id);
	if (sweep) {
		error("%s is a task of sweep %s: its array is one job, its tasks cannot move "
		      "one by one", r->tag, sweep);
		free(sweep);
		run_release(r);
		return XL_DATAERR;
	}
	rc = attempts_latest(&ctx->db, r->id, a);
	if (rc != 0) {
		error("%s was never submitted: `xloop submit %s` queues it", r->tag, r->tag);
		run_release(r);
		return rc < 0 ? XL_ERR : XL_DATAERR;
	}
	if (*a->verdict || !*a->job_id || a->ended_at) {
		error("%s's attempt %lld is not queued (%s): nothing to move", r->tag, a->n,
		      *a->verdict ? a->verdict : *a->job_id ? "ended" : a->phase);
		attempt_release(a);
		run_release(r);
		return XL_DATAERR;
	}
	return 0;
}

/* Record a chain job's new dependency on its attempt (this study's single jobs). */
static void record_after(struct xl_ctx *ctx, const struct chain_job *cj, const char *after)
{
	if (cj->attempt_id)
		attempts_set_after(&ctx->db, cj->attempt_id, after);
}

/* Set what job id waits for: "afterany:AFTER", or nothing. */
static int set_dep(struct slurm *s, const char *id, const char *after, char **cause)
{
	char *dep = *after ? xasprintf("afterany:%s", after) : xstrdup("");
	int rc = slurm_scontrol_update(s, id, "Dependency", dep, cause);

	free(dep);
	return rc;
}

/*
 * The moves of one prioritize: job ids[i] is to wait for afters[i] ("":
 * nothing) instead of prev[i]; done: how many Slurm has been asked for.
 */
struct moves {
	const char *ids[3];
	const char *afters[3];
	const char *prev[3];
	size_t n, done;
};

/*
 * Read the line back (one squeue call): the moved jobs still pending whose
 * dependency is not the one asked (marked in wrong[]), as text (malloc'd),
 * or NULL when Slurm has every one as asked (or cannot be asked). A job
 * that started or ended meanwhile is fine.
 */
static char *line_differs(struct xl_ctx *ctx, struct slurm *s, const struct moves *m,
			  int *wrong)
{
	struct chain c;
	struct buf b = BUF_INIT;
	char *cause = NULL;
	size_t i;

	memset(wrong, 0, sizeof(*wrong) * m->n);
	if (chain_load(ctx, s, &c, &cause) != 0) {
		warning("the new line could not be read back (%s): `xloop why` shows it",
			cause ? cause : "?");
		free(cause);
		return NULL;
	}
	for (i = 0; i < m->n; i++) {
		struct chain_job *cj = chain_find(&c, m->ids[i]);

		if (!cj || cj->running || strcmp(cj->after, m->afters[i]) == 0)
			continue;
		wrong[i] = 1;
		buf_addf(&b, "%sjob %s waits for %s%s, not %s%s", b.len ? "; " : "", cj->id,
			 *cj->after ? "job " : "nothing", cj->after,
			 *m->afters[i] ? "job " : "nothing", m->afters[i]);
	}
	chain_release(&c);
	return b.len ? buf_detach(&b, NULL) : (buf_release(&b), NULL);
}

/*
 * Make Slurm's line what m asks, x1 held meanwhile so that only the head
 * may start; only the jobs in *only (all when NULL). 0 or an exit code.
 */
static int apply_moves(struct slurm *s, struct moves *m, const char *x1,
		       const int *only, int *held, char **cause)
{
	size_t i;
	int rc;

	if ((rc = slurm_scontrol_hold(s, x1, 1, cause)) != 0)
		return rc;
	*held = 1;
	crash_point("prioritize-after-hold");
	for (i = 0; i < m->n; i++) {
		if ((!only || only[i]) && (rc = set_dep(s, m->ids[i], m->afters[i], cause)) != 0)
			return rc;
		if (!only)
			m->done = i + 1;
	}
	if ((rc = slurm_scontrol_hold(s, x1, 0, cause)) != 0)
		return rc;
	*held = 0;
	return 0;
}

/*
 * A prioritize that failed part way: put back what it changed, last first,
 * while x1 is held, so that the line is the old one (one job at its head),
 * never half old and half new with two jobs free to start. 1 when all of it
 * was put back.
 */
static int undo_moves(struct slurm *s, const struct moves *m)
{
	char *cause = NULL;
	size_t i = m->done;
	int ok = 1;

	while (i-- > 0) {
		if (set_dep(s, m->ids[i], m->prev[i], &cause) != 0) {
			error("job %s could not be put back behind %s%s: %s", m->ids[i],
			      *m->prev[i] ? "job " : "nothing", m->prev[i],
			      cause ? cause : "scontrol update failed");
			ok = 0;
		}
		FREE_AND_NULL(cause);
	}
	return ok;
}

/* Move the run's job to the front of its line. */
static int cmd_prioritize(struct xl_ctx *ctx, const struct cmd_entry *self,
			  struct cmd_args *args)
{
	struct chain c;
	struct chain_job *me, *cur, *x1 = NULL, *xk, *y;
	struct attempt a;
	struct slurm s;
	struct run r;
	char *cause = NULL, *head = NULL, *detail = NULL, *xk_id = NULL, *differs = NULL;
	struct moves m;
	size_t moved = 0;
	int rc, held = 0, wrong[3];

	(void)self;
	memset(&m, 0, sizeof(m));
	rc = queued_attempt(ctx, args->pos[0], &r, &a);
	if (rc)
		return rc;
	slurm_init(&s);
	rc = chain_load(ctx, &s, &c, &cause);
	if (rc) {
		error("%s", cause ? cause : "unable to read the queue");
		free(cause);
		attempt_release(&a);
		run_release(&r);
		return rc;
	}
	me = chain_find(&c, a.job_id);
	rc = XL_DATAERR;
	if (!me) {
		error("%s's job %s is no longer queued: it has ended", r.tag, a.job_id);
		goto out;
	}
	if (me->running) {
		error("%s's job %s is running already: nothing runs before it now", r.tag,
		      a.job_id);
		goto out;
	}
	/* the study's pending jobs ahead of it: Xk (its predecessor) back to X1 */
	xk = *me->after ? chain_find(&c, me->after) : NULL;
	for (cur = xk; cur && !cur->running && *cur->tag && moved < c.n; moved++) {
		x1 = cur;
		cur = *cur->after ? chain_find(&c, cur->after) : NULL;
	}
	if (!x1) {
		if (ctx->json)
			cmd_emit_json(json_pack("{s:s, s:s, s:b, s:o, s:[]}", "tag", r.tag,
						"job_id", a.job_id, "moved", 0, "after",
						*me->after ? json_string(me->after) : json_null(),
						"behind"));
		else
			printf("%s (job %s) is first in its line already%s%s\n", r.tag, a.job_id,
			       *me->after ? ": it waits only for job " : "", me->after);
		rc = 0;
		goto out;
	}
	/* what X1 waits for (the running job, another's job, or nothing) */
	head = xstrdup(cur ? cur->id : "");
	xk_id = xstrdup(xk->id);
	y = chain_waiting_for(&c, me->id);

	/* the hold in the DB first: whoever reconciles next releases it
	 * should this process die before it does (chain_release_held) */
	if (db_kv_set(&ctx->db, CHAIN_HELD_KEY, strtoll(x1->id, NULL, 10)) < 0) {
		cause = xstrdup("unable to record the hold in the state DB");
		rc = XL_ERR;
		goto fail;
	}
	/* y waits for Xk, T for what X1 waited for, X1 for T */
	if (y) {
		m.ids[m.n] = y->id;
		m.prev[m.n] = me->id;
		m.afters[m.n++] = xk_id;
	}
	m.ids[m.n] = me->id;
	m.prev[m.n] = xk_id;
	m.afters[m.n++] = head;
	m.ids[m.n] = x1->id;
	m.prev[m.n] = head;
	m.afters[m.n++] = me->id;
	if ((rc = apply_moves(&s, &m, x1->id, NULL, &held, &cause)) != 0)
		goto fail;
	/* Slurm must have it so (one job eligible at the head): read it back,
	 * put right once what did not take, then say so if it still differs */
	differs = line_differs(ctx, &s, &m, wrong);
	if (differs) {
		warning("the line is not as asked yet (%s): setting it again", differs);
		FREE_AND_NULL(differs);
		if ((rc = apply_moves(&s, &m, x1->id, wrong, &held, &cause)) != 0)
			goto fail;
		differs = line_differs(ctx, &s, &m, wrong);
	}
	if (differs) {
		cause = xasprintf("Slurm did not take the new line: %s", differs);
		rc = XL_ERR;
		goto fail;
	}
	db_kv_set(&ctx->db, CHAIN_HELD_KEY, 0);

	/* Slurm has it; the DB follows (what each attempt waits for) */
	record_after(ctx, me, head);
	record_after(ctx, x1, me->id);
	if (y)
		record_after(ctx, y, xk_id);
	detail = xasprintf("job %s moved to the front of its line: it waits for %s now, "
			   "job %s (%s) waits for it%s%s%s%s", me->id, *head ? head : "nothing",
			   x1->id, x1->tag, y ? "; job " : "", y ? y->id : "",
			   y ? " waits for job " : "", y ? xk_id : "");
	loop_event(ctx, "prioritized", r.id, a.id, detail);
	if (ctx->json)
		cmd_emit_json(json_pack("{s:s, s:s, s:b, s:o, s:[s]}", "tag", r.tag, "job_id",
					me->id, "moved", 1, "after",
					*head ? json_string(head) : json_null(), "behind",
					x1->id));
	else
		printf("%s: %s; nothing was cancelled\n", r.tag, detail);
	rc = 0;
	goto out;
fail:
	error("%s", cause ? cause : "scontrol update failed");
	if (m.done) {
		/* X1 held again (when it was released) while the old line comes back */
		FREE_AND_NULL(cause);
		if (!held && slurm_scontrol_hold(&s, x1->id, 1, &cause) == 0)
			held = 1;
		FREE_AND_NULL(cause);
		if (undo_moves(&s, &m))
			fprintf(stderr, "xloop: the line is back as it was: nothing moved\n");
	}
	if (held) {
		FREE_AND_NULL(cause);
		if (slurm_scontrol_hold(&s, x1->id, 0, &cause) != 0)
			error("job %s is still held: `scontrol release %s` lets it run (%s); "
			      "the next `xloop next` or `tick` tries too", x1->id, x1->id,
			      cause ? cause : "release failed");
		else
			db_kv_set(&ctx->db, CHAIN_HELD_KEY, 0);
	} else {
		db_kv_set(&ctx->db, CHAIN_HELD_KEY, 0);	/* nothing was held */
	}
	fprintf(stderr, "xloop: `xloop why %s` shows the line as Slurm has it now\n", r.tag);
out:
	free(differs);
	free(detail);
	free(head);
	free(xk_id);
	free(cause);
	chain_release(&c);
	attempt_release(&a);
	run_release(&r);
	return rc;
}

const struct cmd_entry cmd_prioritize_entry = {
	.name = "prioritize", .opts = NULL, .args = "T", .min = 1, .max = 1,
	.group = CMD_GROUP_FIX,
	.target = CMD_TARGET_NONE,
	.summary = "move a queued run's job to the front of its line, cancelling nothing",
	.help = "The chain is one line of afterany dependencies: R <- X1 <- ... <- T <- Y\n"
	"(R runs). prioritize T makes it R <- T <- X1 <- ... <- Y with `scontrol\n"
	"update jobid=ID Dependency=afterany:...`: every job keeps its id and its\n"
	"attempt, the GPU goes from R to T without a gap, and the line stays one\n"
	"line. X1 is held (`scontrol hold`) while T and X1 swap places, so only one\n"
	"of them can start when R ends meanwhile; it is released at once. Without\n"
	"a running job T takes X1's place at the head. Only the study's own jobs\n"
	"move: another project's job ahead stays where it is. The line is read\n"
	"back from Slurm afterwards: exactly one of the moved jobs may start\n"
	"first (T, or none while R runs); a dependency Slurm did not take is set\n"
	"once more, and if it still differs prioritize fails (1) and says which.\n"
	"\n"
	"Refused (65) for a run that is running, finished or never submitted, and\n"
	"for a task of a sweep (its array is one job). Recorded as a 'prioritized'\n"
	"event, and on each moved attempt (what it waits for).\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .exec = cmd_prioritize,
};
