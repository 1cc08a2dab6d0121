/* Unit tests for the jobs xloop is done with that Slurm shows again (gone.c, issue 34). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "ctx.h"
#include "jobs/gone.h"
#include "jobs/segments.h"
#include "runs.h"

#include "fixture-db.h"
#include "fixture-run.h"

struct fx {
	char dir[64];
	struct xl_ctx ctx;
};

/* The ids the fake scancel was given, space-separated. */
static char cancelled[512];

/* Slurm's stand-in: every command succeeds; scancel's job is noted. */
static int fake_run(struct proc *p)
{
	if (strcmp(p->argv[0], "scancel") == 0) {
		size_t n = strlen(cancelled);

		snprintf(cancelled + n, sizeof(cancelled) - n, "%s%s", n ? " " : "", p->argv[1]);
	}
	p->status = 0;
	return 0;
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "gone", &f->ctx.db) < 0)
		return -1;
	config_defaults(&f->ctx.cfg, "s", "gpu");
	cancelled[0] = '\0';
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fixture_dir_remove(f->dir);

	config_release(&f->ctx.cfg);
	db_close(&f->ctx.db);
	free(f);
	return rc;
}

/* Run tag of study s with attempt 1 (token tok, verdict or NULL); its id. */
static long long attempt(struct fx *f, const char *tag, const char *tok, const char *verdict)
{
	struct run r;
	struct attempt a;
	char *sql;

	fixture_run(&r, "s", tag);
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	fixture_attempt(&a, r.id, tok, "");
	assert_int_equal(attempts_insert(&f->ctx.db, &a), 0);
	if (verdict) {
		sql = xasprintf("UPDATE attempt SET verdict = '%s' WHERE id = %lld", verdict, a.id);
		assert_int_equal(db_exec(&f->ctx.db, sql), 0);
		free(sql);
	}
	return a.id;
}

/* Segment k of attempt att, its token and state. */
static void segment(struct fx *f, long long att, long long k, const char *tok, const char *state)
{
	char *sql = xasprintf("INSERT INTO segment (attempt_id, k, max, token, state, intent_at)"
			      " VALUES (%lld, %lld, 3, '%s', '%s', 1)", att, k, tok, state);

	assert_int_equal(db_exec(&f->ctx.db, sql), 0);
	free(sql);
}

/*
 * What a controller back from an older state shows: only the live jobs
 * whose token names something done are cancelled, and marked so in q.
 */
static void test_cancel_done(void **state)
{
	struct fx *f = *state;
	struct slurm s;
	struct slurm_jobs q = SLURM_JOBS_INIT;
	char *cause = NULL, *n;
	long long a, b, c;
	size_t i;
	/* squeue -r -o SLURM_SQUEUE_FORMAT */
	const char *out =
		"11|a|RUNNING|None|N/A|N/A|xloop:s/a#1:toka|gpu|0:10|5:00|11\n"
		"12|a|PENDING|JobHeldUser|N/A|N/A|xloop:s/a#1.2:toka2|gpu|0:00|5:00|12\n"
		"21|b|RUNNING|None|N/A|N/A|xloop:s/b#1:tokb|gpu|0:10|5:00|21\n"
		"22|b|PENDING|JobHeldUser|N/A|N/A|xloop:s/b#1.2:tokb2|gpu|0:00|5:00|22\n"
		"31|c|RUNNING|None|N/A|N/A|xloop:s/c#1.2:tokc2|gpu|0:10|5:00|31\n"
		"32|c|PENDING|Dependency|N/A|N/A|xloop:s/c#1.3:tokc3|gpu|0:00|5:00|32\n"
		"40_3|sw|PENDING|Priority|N/A|N/A|xloop:s/sweep:sw:toks|gpu|0:00|5:00|40\n"
		"40_4|sw|PENDING|Priority|N/A|N/A|xloop:s/sweep:sw:toks|gpu|0:00|5:00|40\n"
		"50|x|PENDING|JobHeldUser|N/A|N/A|xloop:t/a#1.2:toka2|gpu|0:00|5:00|50\n"
		"51|y|PENDING|None|N/A|N/A|someone-else|gpu|0:00|5:00|51\n";

	a = attempt(f, "a", "toka", "success");		/* judged: both its jobs are done */
	segment(f, a, 1, "toka", "last");
	segment(f, a, 2, "toka2", "unneeded");
	b = attempt(f, "b", "tokb", NULL);		/* live: its segment 2 is queued */
	segment(f, b, 1, "tokb", "current");
	segment(f, b, 2, "tokb2", "queued");
	c = attempt(f, "c", "tokc", NULL);		/* segment 1 continued as 2; 3 queued */
	segment(f, c, 1, "tokc", "continued");
	segment(f, c, 2, "tokc2", "current");
	segment(f, c, 3, "tokc3", "queued");
	attempt(f, "sw--x-1", "toks_3", "failure");	/* a sweep's task 3 judged, 4 not */
	attempt(f, "sw--x-2", "toks_4", NULL);
	assert_int_equal(slurm_parse_squeue(out, SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	slurm_init(&s);
	s.run = fake_run;

	assert_int_equal(gone_cancel(&f->ctx, &s, &q), 3);
	/* not another study's (t), not one without a token of ours, not a live attempt's */
	assert_string_equal(cancelled, "11 12 40_3");
	for (i = 0; i < q.nr; i++) {
		n = xasprintf(" %s ", q.v[i].job_id);
		assert_int_equal(q.v[i].state == SLURM_STATE_CANCELLED,
				 strstr(" 11 12 40_3 ", n) != NULL);
		free(n);
	}
	{
		struct stmt st;

		assert_int_equal(db_prepare(&f->ctx.db, &st, "SELECT group_concat(detail, '|')"
					    " FROM event WHERE kind = 'repaired'"), 0);
		assert_int_equal(db_step(&st), SQLITE_ROW);
		assert_non_null(strstr(db_col_text(&st, 0), "job 12 (segment 2 of a attempt 1, "
				       "unneeded) was PENDING again"));
		assert_non_null(strstr(db_col_text(&st, 0), "job 11 (attempt 1 of a, judged "
				       "success) was RUNNING again"));
		db_finalize(&st);
	}
	/* c's segment 1, continued, comes back too: its job goes */
	slurm_jobs_release(&q);
	cancelled[0] = '\0';
	out = "30|c|PENDING|BeginTime|N/A|N/A|xloop:s/c#1:tokc|gpu|0:00|5:00|30\n";
	assert_int_equal(slurm_parse_squeue(out, SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	assert_int_equal(gone_cancel(&f->ctx, &s, &q), 1);
	assert_string_equal(cancelled, "30");
	/* a second look cancels nothing more: what it cancelled is final in q */
	cancelled[0] = '\0';
	assert_int_equal(gone_cancel(&f->ctx, &s, &q), 0);
	assert_string_equal(cancelled, "");
	slurm_jobs_release(&q);
}

/* Insert a feeder row of study st: its token, phase and job. */
static void feeder(struct fx *f, const char *st, const char *tok, const char *phase,
		   const char *job)
{
	char *sql = xasprintf("INSERT INTO feeder (study, token, phase, job_id, intent_at)"
			      " VALUES ('%s', '%s', '%s', '%s', 1)", st, tok, phase, job);

	assert_int_equal(db_exec(&f->ctx.db, sql), 0);
	free(sql);
}

/*
 * Feeders a controller brings back: a pending one whose row is done,
 * failed or gone is cancelled; the live one, a running one (its row is
 * done before its job ends) and another study's are not.
 */
static void test_cancel_feeders(void **state)
{
	struct fx *f = *state;
	struct slurm s;
	struct slurm_jobs q = SLURM_JOBS_INIT;
	char *cause = NULL;
	const char *out =
		"60|xloop-feed|PENDING|Dependency|N/A|N/A|xloop-feed:s:0123456789ab:fa|gpu|0:00|5:00|60\n"
		"61|xloop-feed|PENDING|Dependency|N/A|N/A|xloop-feed:s:0123456789ab:fb|gpu|0:00|5:00|61\n"
		"62|xloop-feed|PENDING|BeginTime|N/A|N/A|xloop-feed:s:0123456789ab:fc|gpu|0:00|5:00|62\n"
		"63|xloop-feed|RUNNING|None|N/A|N/A|xloop-feed:s:0123456789ab:fd|gpu|0:01|5:00|63\n"
		"64|xloop-feed|PENDING|JobHeldUser|N/A|N/A|xloop-feed:s:0123456789ab:ff|gpu|0:00|5:00|64\n"
		"65|xloop-feed|PENDING|Dependency|N/A|N/A|xloop-feed:t:ba9876543210:fe|gpu|0:00|5:00|65\n"
		"66|xloop-feed|PENDING|Dependency|N/A|N/A|xloop-feed:s:0123456789ab:watch-fa|gpu|0:00|5:00|66\n";

	feeder(f, "s", "fa", "done", "50");	/* restored: ran before */
	feeder(f, "s", "fb", "queued", "61");	/* the study's feeder now */
	feeder(f, "s", "fc", "gone", "52");	/* cancelled before the rollback */
	feeder(f, "s", "fd", "done", "63");	/* running its last seconds */
	feeder(f, "s", "ff", "failed", "54");
	feeder(f, "t", "fe", "done", "65");
	assert_int_equal(slurm_parse_squeue(out, SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	slurm_init(&s);
	s.run = fake_run;
	assert_int_equal(gone_cancel(&f->ctx, &s, &q), 3);
	assert_string_equal(cancelled, "60 62 64");
	assert_int_equal(q.v[0].state, SLURM_STATE_CANCELLED);
	assert_int_equal(q.v[1].state, SLURM_STATE_PENDING);
	{
		struct stmt st;

		assert_int_equal(db_prepare(&f->ctx.db, &st, "SELECT group_concat(detail, '|')"
					    " FROM event WHERE kind = 'repaired'"), 0);
		assert_int_equal(db_step(&st), SQLITE_ROW);
		assert_non_null(strstr(db_col_text(&st, 0), "job 60 (feeder job 50, done) was "
				       "PENDING again"));
		db_finalize(&st);
	}
	slurm_jobs_release(&q);
}

/*
 * A chain's tail is a queued continuation that squeue shows live or that
 * was queued after squeue was read; one squeue does not show though it was
 * read later is gone, and the attempt's own job stays the tail.
 */
static void test_tail_skips_gone_continuation(void **state)
{
	struct fx *f = *state;
	struct slurm_jobs q = SLURM_JOBS_INIT;
	char *cause = NULL, *tail;
	long long a = attempt(f, "a", "toka", NULL);

	assert_int_equal(db_exec(&f->ctx.db, "INSERT INTO segment (attempt_id, k, max, token,"
				 " job_id, state, intent_at) VALUES (1, 1, 3, 'toka', '71',"
				 " 'continued', 90), (1, 2, 3, 'toka2', '72', 'queued', 100)"), 0);
	assert_int_equal(a, 1);
	assert_int_equal(slurm_parse_squeue("71|a|RUNNING|None|N/A|N/A|xloop:s/a#1:toka|gpu|"
					    "0:10|5:00|71\n", SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	q.read_at = 200;	/* read after segment 2 was queued: it is gone */
	tail = xstrdup("71");
	segments_tail(&f->ctx, &q, a, &tail);
	assert_string_equal(tail, "71");
	q.read_at = 100;	/* queued while (or after) squeue ran */
	segments_tail(&f->ctx, &q, a, &tail);
	assert_string_equal(tail, "72");
	free(tail);
	slurm_jobs_release(&q);
	/* shown pending: the tail, whenever squeue ran */
	assert_int_equal(slurm_parse_squeue("72|a|PENDING|Dependency|N/A|N/A|xloop:s/a#1.2:toka2|"
					    "gpu|0:00|5:00|72\n", SLURM_SQUEUE_FORMAT, &q, &cause), 0);
	q.read_at = 200;
	tail = xstrdup("71");
	segments_tail(&f->ctx, &q, a, &tail);
	assert_string_equal(tail, "72");
	free(tail);
	slurm_jobs_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cancel_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_feeders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_skips_gone_continuation, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
