/* Unit tests for the memory sampler's parsers and for sweep value lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "memsample.h"
#include "jobs/sweep.h"

static void test_proc_cgroup_v1_job_level(void **state)
{
	/* a Slurm task's cgroup (v1): measured at the job level */
	const char *text = "12:pids:/slurm_vm/uid_1001/job_581/step_batch/task_0\n"
			   "9:cpuacct,cpu:/slurm_vm/uid_1001/job_581/step_batch\n"
			   "5:memory:/slurm_vm/uid_1001/job_581/step_batch/task_0\n"
			   "1:name=systemd:/\n";
	char *path = NULL;
	int v = 0;

	(void)state;
	assert_int_equal(mem_parse_proc_cgroup(text, &v, &path), 0);
	assert_int_equal(v, 1);
	assert_string_equal(path, "/slurm_vm/uid_1001/job_581");
	free(path);
}

static void test_proc_cgroup_v2_and_none(void **state)
{
	char *path = NULL;
	int v = 0;

	(void)state;
	assert_int_equal(mem_parse_proc_cgroup(
		"0::/system.slice/slurmstepd.scope/job_12/step_batch/user/task_0\n", &v,
		&path), 0);
	assert_int_equal(v, 2);
	assert_string_equal(path, "/system.slice/slurmstepd.scope/job_12");
	free(path);
	/* "job_" not followed by digits is not a job */
	assert_int_equal(mem_parse_proc_cgroup("0::/user.slice/job_x/a\n", &v, &path), 0);
	assert_string_equal(path, "/user.slice/job_x/a");
	free(path);
	assert_int_equal(mem_parse_proc_cgroup("3:pids:/\n1:name=systemd:/\n", &v, &path), -1);
	assert_null(path);
}

static void test_stat(void **state)
{
	long long anon, shmem, file;

	(void)state;
	/* v1 with hierarchy: total_* win over the cgroup's own */
	assert_int_equal(mem_parse_stat("cache 10\nrss 20\nshmem 3\ntotal_cache 100\n"
					"total_rss 200\ntotal_shmem 30\n", 1, &anon, &shmem,
					&file), 0);
	assert_true(anon == 200 && shmem == 30 && file == 100);
	assert_int_equal(mem_parse_stat("cache 10\nrss 20\n", 1, &anon, &shmem, &file), 0);
	assert_true(anon == 20 && shmem == -1 && file == 10);
	assert_int_equal(mem_parse_stat("anon 4096\nfile 8192\nshmem 0\nanon_thp 0\n", 2,
					&anon, &shmem, &file), 0);
	assert_true(anon == 4096 && shmem == 0 && file == 8192);
	assert_int_equal(mem_parse_stat("nothing here\n", 2, &anon, &shmem, &file), -1);
}

static void test_summarize(void **state)
{
	const char *text = "# xloop-mem 1 cgroup=v1 path=/x every=1\n"
			   "# time anon shmem file current peak gpu phase\n"
			   "100 1048576 0 5000000 6000000 6000000 -1 -\n"
			   "101 104857600 1048576 0 110000000 120000000 -1 train\n"
			   "102 209715200 0 0 210000000 230000000 -1 eval\n"
			   "103 5 0 0 5 230000000 -1 train\n"
			   "104 1 2";	/* cut by the job's end */
	struct mem_summary s;
	char *cause = NULL;

	(void)state;
	assert_int_equal(mem_summarize(text, &s, &cause), 0);
	assert_int_equal(s.samples, 4);
	assert_int_equal(s.last_at - s.first_at, 3);
	assert_int_equal(s.peak_nonreclaim, 209715200);
	assert_int_equal(s.peak_train, 104857600 + 1048576);
	assert_int_equal(s.peak_eval, 209715200);
	assert_int_equal(s.peak_total, 230000000);
	assert_int_equal(s.peak_gpu, -1);
	assert_int_equal(mem_summarize("100 1 2 3 4 5 6 -\n", &s, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(mem_summarize("# xloop-mem 1\nbad line\n100 1 2 3 4 5 6 -\n", &s,
				       &cause), -1);
	assert_non_null(strstr(cause, "line 2"));
	free(cause);
}

static void test_rounding_and_phase(void **state)
{
	char *s;

	(void)state;
	assert_int_equal(mem_round_up_mb(1), 256);
	assert_int_equal(mem_round_up_mb(256), 256);
	assert_int_equal(mem_round_up_mb(300), 512);
	assert_int_equal(mem_round_up_mb(4095), 4096);
	assert_int_equal(mem_round_up_mb(5000), 5120);
	s = mem_format_mb(5120);
	assert_string_equal(s, "5G");
	free(s);
	s = mem_format_mb(768);
	assert_string_equal(s, "768M");
	free(s);
	assert_string_equal(mem_phase_of("fold 2/5 train loss 0.3"), "train");
	assert_string_equal(mem_phase_of("Validating fold 2"), "eval");
	assert_string_equal(mem_phase_of("START lr=0.1"), "-");
}

static void test_sweep_values(void **state)
{
	char **v, *cause = NULL;
	size_t n;

	(void)state;
	assert_int_equal(sweep_split_values("0.1,0.2,a\\,b", &v, &n, &cause), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[2], "a,b");
	strv_free(v, n);
	assert_int_equal(sweep_split_values("1", &v, &n, &cause), 0);
	assert_int_equal(n, 1);
	strv_free(v, n);
	assert_int_equal(sweep_split_values("1,,2", &v, &n, &cause), XL_USAGE);
	free(cause);
	cause = NULL;
	assert_int_equal(sweep_split_values("1,2,", &v, &n, &cause), XL_USAGE);
	free(cause);
	cause = NULL;
	assert_int_equal(sweep_split_values("x,y,x", &v, &n, &cause), XL_USAGE);
	assert_non_null(strstr(cause, "twice"));
	free(cause);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_cgroup_v1_job_level),
		cmocka_unit_test(test_proc_cgroup_v2_and_none),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_rounding_and_phase),
		cmocka_unit_test(test_sweep_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
