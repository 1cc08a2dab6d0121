/*
 * Unit tests for the report's GPU timeline on a long study (issue 47): a
 * job of k GPUs is one bar, not k, and bars too narrow to see are drawn
 * together, so 20,000 attempts of 8 GPUs make a small page (the size does
 * not grow with the attempts: 50,000 make the same).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "report/report-impl.h"

/* The timeline section of a page of nr runs with na attempts of gpus each on one node. */
static long long timeline_bytes(size_t nr, size_t na, const char *gpus, size_t *nrows,
				long long *busy0)
{
	char dir[] = "/tmp/xloop-test-report-XXXXXX", *path, *cause = NULL, tag[16];
	struct page pg = { BUF_INIT, { NULL, NULL, -1 }, NULL };
	struct rrun *v = xcalloc(nr, sizeof(*v));
	struct gpu_row rows[REPORT_ROWS];
	struct bar *bars = NULL;
	struct attempt a;
	struct stat st;
	size_t nb = 0, i;
	long long span, t = 1000000;

	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/r.html", dir);
	for (i = 0; i < nr; i++) {
		xsnprintf(tag, sizeof(tag), "r%05zu", i);
		v[i].r.tag = xstrdup(tag);
		v[i].r.id = (long long)i + 1;
	}
	memset(&a, 0, sizeof(a));
	a.node = "gpu1";
	a.gpus = (char *)gpus;
	a.state = "COMPLETED";
	a.phase = "submitted";
	for (i = 0; i < na; i++) {
		a.id = (long long)i + 1;
		a.n = 1;
		a.verdict = i % 4 ? "failure" : "success";
		a.started_at = t;
		a.ended_at = t + 300 + (long long)(i % 7) * 100;
		t = a.ended_at + 30;	/* an idle gap after each */
		timeline_add(&bars, &nb, &v[i % nr], &a, t);
	}
	assert_int_equal(atomic_begin(&pg.f, path, 0644, &cause), 0);
	report_timeline(&pg, bars, nb, &span, rows, nrows);
	report_flush(&pg, 0);
	assert_null(pg.cause);
	assert_int_equal(atomic_commit(&pg.f, &cause), 0);
	assert_int_equal(stat(path, &st), 0);
	*busy0 = *nrows ? rows[0].busy : -1;
	unlink(path);
	rmdir(dir);
	free(path);
	buf_release(&pg.b);
	free(bars);
	for (i = 0; i < nr; i++)
		free(v[i].r.tag);
	free(v);
	return (long long)st.st_size;
}

/* 20,000 attempts of 8 GPUs: a timeline of less than 200 kB (25 MB before), every GPU its row. */
static void test_long_study_of_8_gpus(void **state)
{
	size_t nrows;
	long long size, busy;

	(void)state;
	size = timeline_bytes(4000, 20000, "0-7", &nrows, &busy);
	printf("timeline of 20,000 attempts of 8 GPUs: %lld bytes\n", size);
	assert_int_equal(nrows, 8);
	assert_true(busy > 0);
	assert_true(size < 200 * 1000);
}

/* A few wide jobs of 4 GPUs: one bar each, over its 4 rows, titled with its GPUs. */
static void test_job_of_4_gpus_is_one_bar(void **state)
{
	char dir[] = "/tmp/xloop-test-report-XXXXXX", *path, *cause = NULL, *text;
	struct page pg = { BUF_INIT, { NULL, NULL, -1 }, NULL };
	struct rrun x;
	struct gpu_row rows[REPORT_ROWS];
	struct bar *bars = NULL;
	struct attempt a;
	size_t nb = 0, nrows, len;
	long long span;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/r.html", dir);
	memset(&x, 0, sizeof(x));
	x.r.tag = "wide";
	memset(&a, 0, sizeof(a));
	a.id = a.n = 1;
	a.node = "gpu1";
	a.gpus = "0-3";
	a.state = "COMPLETED";
	a.verdict = "success";
	a.started_at = 1000;
	a.ended_at = 2000;
	timeline_add(&bars, &nb, &x, &a, 3000);
	assert_int_equal(nb, 4);
	assert_int_equal(atomic_begin(&pg.f, path, 0644, &cause), 0);
	report_timeline(&pg, bars, nb, &span, rows, &nrows);
	report_flush(&pg, 0);
	assert_int_equal(atomic_commit(&pg.f, &cause), 0);
	assert_int_equal(nrows, 4);
	f = fopen(path, "r");
	assert_non_null(f);
	text = xcalloc(1 << 16, 1);
	len = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	text[len] = '\0';
	assert_non_null(strstr(text, "<rect class=\"bar success\" x=\"10.0\" y=\"3\" width=\"960.0\" "
			       "height=\"98\"><title>wide attempt 1: 1000 s, COMPLETED, GPUs 0-3 "
			       "of its 4, on gpu1</title></rect>"));
	assert_null(strstr(strstr(text, "</rect>") + 1, "<rect class=\"bar"));
	free(text);
	unlink(path);
	rmdir(dir);
	free(path);
	buf_release(&pg.b);
	free(bars);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_study_of_8_gpus),
		cmocka_unit_test(test_job_of_4_gpus_is_one_bar),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
