/* Unit tests for lanes.c: which lane has room and what it chains onto. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctx.h"
#include "stages/lanes.h"
#include "loop.h"
#include "jobs/submit.h"
#include "lib/buf.h"
#include "lib/fsutil.h"
#include "lib/proc.h"
#include "stages/quota.h"
#include "slurm/slurm.h"
#include "stages/reconcile.h"
#include "runs.h"

#include "fixture-db.h"
#include "fixture-run.h"

struct fx {
	char dir[64];
	struct xl_ctx ctx;
	struct refresh ref;
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	if (fixture_db_open(f->dir, sizeof(f->dir), "lanes", &f->ctx.db) < 0)
		return -1;
	config_defaults(&f->ctx.cfg, "s", "gpu");
	f->ref.newest_live_job = xstrdup("");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = fixture_dir_remove(f->dir);

	db_close(&f->ctx.db);
	config_release(&f->ctx.cfg);
	refresh_release(&f->ref);
	free(f);
	return rc;
}

/* Pick a lane for the next job; returns its lane or -1 when all are full. */
static long long pick(struct fx *f, int force, const char **after)
{
	struct submit_opts o;

	memset(&o, 0, sizeof(o));
	if (!lanes_next(&f->ctx, &f->ref, force, &o))
		return -1;
	*after = o.after ? o.after : o.no_chain ? "-" : "";
	return o.lane;
}

/* Four lanes fill one job each first, then each gets depth more behind its tail. */
static void test_four_lanes_fill_side_by_side(void **state)
{
	struct fx *f = *state;
	const char *after;
	char id[16];
	int i;

	f->ctx.cfg.lanes = 4;
	f->ctx.cfg.depth = 1;
	for (i = 0; i < 4; i++) {
		assert_int_equal(pick(f, 0, &after), i);
		assert_string_equal(after, "-");	/* an empty lane starts at once */
		xsnprintf(id, sizeof(id), "%d", 10 + i);
		lanes_submitted(&f->ref, i, id, "");
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pick(f, 0, &after), i);
		xsnprintf(id, sizeof(id), "%d", 10 + i);
		assert_string_equal(after, id);	/* behind that lane's running job */
		xsnprintf(id, sizeof(id), "%d", 20 + i);
		lanes_submitted(&f->ref, i, id, after);
	}
	assert_int_equal(pick(f, 0, &after), -1);	/* 4 x (depth + 1): full */
	assert_int_equal(pick(f, 1, &after), 0);	/* a retry goes anyway */
	assert_string_equal(after, "20");
}

/* What squeue showed: the lane with a free place, behind its newest job. */
static void test_seen_jobs_and_a_freed_lane(void **state)
{
	struct fx *f = *state;
	const char *after;

	f->ctx.cfg.lanes = 3;
	f->ctx.cfg.depth = 1;
	lanes_see(&f->ref.lanes, 0, 5, "105", "");
	lanes_see(&f->ref.lanes, 0, 7, "107", "");
	lanes_see(&f->ref.lanes, 2, 6, "106", "");
	lanes_see(&f->ref.lanes, 2, 8, "108", "");
	lanes_see(&f->ref.lanes, 1, 4, "104", "");	/* lane 1 lost its running job */
	assert_int_equal(pick(f, 0, &after), 1);
	assert_string_equal(after, "104");
}

/* After `prioritize` moved the newest job to the front, the lane ends at the job behind it. */
static void test_tail_after_prioritize(void **state)
{
	struct fx *f = *state;
	const char *after;

	f->ctx.cfg.lanes = 2;
	f->ctx.cfg.depth = 3;
	lanes_see(&f->ref.lanes, 1, 10, "210", "");	/* running */
	lanes_see(&f->ref.lanes, 1, 11, "211", "212");	/* X1, now behind T */
	lanes_see(&f->ref.lanes, 1, 12, "212", "210");	/* T, moved to the front */
	lanes_see(&f->ref.lanes, 0, 13, "213", "");
	lanes_see(&f->ref.lanes, 0, 14, "214", "213");
	lanes_see(&f->ref.lanes, 0, 15, "215", "214");
	lanes_see(&f->ref.lanes, 0, 16, "216", "215");	/* lane 0 is full */
	assert_int_equal(pick(f, 0, &after), 1);
	assert_string_equal(after, "211");
}

/* A live array's tasks hold lanes; one lane keeps the old single chain. */
static void test_arrays_hold_lanes_and_one_lane_is_the_line(void **state)
{
	struct fx *f = *state;
	const char *after;

	f->ctx.cfg.lanes = 4;
	lanes_see(&f->ref.lanes, 0, 1, "50_0", "");
	lanes_see(&f->ref.lanes, 0, 2, "50_1", "");
	lanes_see(&f->ref.lanes, 0, 3, "50_2", "");
	assert_int_equal(pick(f, 0, &after), 3);
	f->ctx.cfg.lanes = 1;
	free(f->ref.newest_live_job);
	f->ref.newest_live_job = xstrdup("50");
	f->ref.pending = 1;
	assert_int_equal(pick(f, 0, &after), 0);
	assert_string_equal(after, "50");
	f->ref.running = 1;
	assert_int_equal(pick(f, 0, &after), -1);
}

/* A submit limit under lanes x (depth + 1): fewer wait per lane, every lane stays. */
static void test_submit_limit_shortens_lanes(void **state)
{
	struct fx *f = *state;

	f->ctx.cfg.lanes = 4;
	f->ctx.cfg.depth = 2;
	assert_int_equal(lanes_per_lane(&f->ctx, &f->ref, 4), 3);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.submit", 9 + 1), 0);
	assert_int_equal(lanes_per_lane(&f->ctx, &f->ref, 4), 2);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.submit", 3 + 1), 0);
	assert_int_equal(lanes_per_lane(&f->ctx, &f->ref, 4), 1);
	f->ctx.cfg.lanes = 0;	/* auto: the GPUs the user may hold */
	assert_int_equal(lanes_count(&f->ctx), 1);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 4 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 4);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.partition_jobs", 2 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 2);	/* the partition holds only 2 */
	/* jobs of 2 GPUs: a limit of 4 GPUs holds 2 of them, of 3 one, of 1 one */
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.partition_jobs", 0), 0);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_gpus", 2 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 2);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 3 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 1);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 1 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 1);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 8 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 4);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.jobs", 1 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 1);	/* MaxJobs 1 */
}

/* Auto lanes for runs across nodes: a run of N nodes takes N node places and N x its GPUs. */
static void test_auto_lanes_runs_across_nodes(void **state)
{
	struct fx *f = *state;

	f->ctx.cfg.lanes = 0;
	/* 3 nodes of 2 GPUs, runs of 1 GPU a node: 6 places */
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.partition_jobs", 6 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 6);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_nodes", 1 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 6);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_nodes", 2 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 3);	/* runs of 2 nodes: 3 at once */
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_nodes", 3 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 2);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_nodes", 8 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 1);	/* fewer nodes than a run asks: one lane */
	/* the user's GPU limit: 8 GPUs hold 2 runs of 2 nodes x 2 GPUs */
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.partition_jobs", 0), 0);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 8 + 1), 0);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_gpus", 2 + 1), 0);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_nodes", 2 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 2);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.job_gpus", 1 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 4);
	assert_int_equal(db_kv_set(&f->ctx.db, "quota.gpus", 1 + 1), 0);
	assert_int_equal(lanes_count(&f->ctx), 1);	/* a limit under one run: one lane */
}

/* Slurm for quota_refresh: sinfo says 3 nodes of 2 GPUs; sacctmgr knows no limit. */
static int fake_slurm(struct proc *p)
{
	if (strcmp(p->argv[0], "sinfo") == 0) {
		buf_adds(&p->out, "3|gpu:2\n");
		p->status = 0;
	} else {
		p->status = 1;
	}
	return 0;
}

/* The nodes a run spans come from the newest run's job.sh (#SBATCH --nodes). */
static void test_auto_lanes_read_job_nodes(void **state)
{
	struct fx *f = *state;
	struct slurm s;
	struct run r;
	char *dir, *job, *cmd, *cause = NULL;
	const char *text = "#!/bin/bash\n#SBATCH --nodes=2\necho\n";

	f->ctx.cfg.lanes = 0;
	f->ctx.root = f->dir;
	slurm_init(&s);
	s.run = fake_slurm;
	fixture_run(&r, "s", "a");
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	dir = xasprintf("%s/runs/s/a", f->dir);
	cmd = xasprintf("mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	job = xasprintf("%s/job.sh", dir);
	assert_int_equal(write_file_atomic(job, text, strlen(text), 0755, &cause), 0);
	quota_refresh(&f->ctx, &s);
	assert_int_equal(db_kv_get(&f->ctx.db, "quota.job_nodes"), 2 + 1);
	assert_int_equal(lanes_count(&f->ctx), 3);	/* 6 GPUs, runs of 2 nodes x 1 */
	f->ctx.root = NULL;
	free(cmd);
	free(job);
	free(dir);
}

/* Insert a run (parent 0: a root) with one attempt, unfinished unless verdict. */
static long long add_run(struct fx *f, const char *tag, long long parent, const char *value,
			 const char *verdict)
{
	struct run r;
	struct attempt a;

	fixture_run(&r, "s", tag);
	r.parent_id = parent;
	r.var = parent ? "X" : "";
	r.old_value = parent ? "0" : "";
	r.new_value = (char *)value;
	assert_int_equal(runs_insert(&f->ctx.db, &r), 0);
	fixture_attempt(&a, r.id, tag, "gpu:1");
	a.verdict = (char *)verdict;
	a.has_score = verdict != NULL;
	assert_int_equal(attempts_insert(&f->ctx.db, &a), 0);
	return r.id;
}

/* With lanes, a configuration in flight is not planned a second time beside it. */
static void test_same_configuration_waits(void **state)
{
	struct fx *f = *state;
	long long base = add_run(f, "base", 0, "", "success");

	add_run(f, "x1", base, "1", NULL);
	f->ctx.cfg.lanes = 2;
	assert_true(lanes_in_flight(&f->ctx, "base", "X", "1"));
	assert_true(lanes_in_flight(&f->ctx, "best", "X", "1"));	/* base is the best */
	assert_false(lanes_in_flight(&f->ctx, "base", "X", "2"));
	assert_false(lanes_in_flight(&f->ctx, "x1", "X", "1"));
	f->ctx.cfg.lanes = 1;	/* one lane: in line behind it, as before */
	assert_false(lanes_in_flight(&f->ctx, "base", "X", "1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_four_lanes_fill_side_by_side, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seen_jobs_and_a_freed_lane, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tail_after_prioritize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_arrays_hold_lanes_and_one_lane_is_the_line,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_limit_shortens_lanes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_lanes_runs_across_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_lanes_read_job_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_configuration_waits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
