/* Unit tests for the stop rule that knows the noise (jobs/stop-rule.c), against values by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "jobs/stop-rule.h"
#include "jobs/watch.h"
#include "lib/fsutil.h"
#include "lib/proc.h"

#define N NAN

/* best: two runs of configuration 0; parent: one run of configuration 1 (to epoch 3). */
static double a0[] = { N, 0.5, 0.6, 0.7, 0.8 }, b0[] = { N, 0.5, 0.7, 0.8, 0.8 };
static double p1[] = { N, 0.4, 0.5, 0.55 };

static void fill(struct stop_curve *c)
{
	c[0] = (struct stop_curve){ a0, 5, 0 };
	c[1] = (struct stop_curve){ b0, 5, 0 };
	c[2] = (struct stop_curve){ p1, 4, 1 };
}

static void test_curve_parse(void **state)
{
	struct stop_curve c = { NULL, 0, 7 };

	(void)state;
	stop_curve_parse("epochs 5\nchance 0.1\nepoch 1 0.5\nepoch 2 nan\nepoch 2 0.6\n"
			 "epoch x 1\nepoch 3 0.7", &c);
	assert_int_equal(c.len, 3);	/* epoch 3's line is still being written */
	assert_true(isnan(c.v[0]));
	assert_float_equal(c.v[1], 0.5, 1e-12);
	assert_float_equal(c.v[2], 0.6, 1e-12);	/* the later line for epoch 2 */
	assert_int_equal(c.cfg, 7);
	stop_curve_release(&c);
	stop_curve_parse("epoch 2 inf\n", &c);
	assert_int_equal(c.len, 3);
	assert_true(isnan(c.v[2]));
	stop_curve_release(&c);
}

static void test_noise(void **state)
{
	struct stop_curve c[5];
	double x2[] = { N, N, 0.5 }, y2[] = { N, N, 0.7 };
	long df;

	(void)state;
	fill(c);
	/* epoch 2: 0.6 and 0.7, mean 0.65, ss 0.005, df 1 */
	assert_float_equal(stop_noise_at(c, 3, 2, 0, &df), sqrt(0.005), 1e-12);
	assert_int_equal(df, 1);
	/* epoch 0: nobody; the parent alone has no noise */
	assert_true(isnan(stop_noise_at(c, 3, 0, 0, &df)));
	assert_int_equal(df, 0);
	assert_true(isnan(stop_noise_at(c + 2, 1, 2, 2, &df)));
	/* pooled with configuration 2 (0.5, 0.7: ss 0.02): sqrt(0.025 / 2) */
	c[3] = (struct stop_curve){ x2, 3, 2 };
	c[4] = (struct stop_curve){ y2, 3, 2 };
	assert_float_equal(stop_noise_at(c, 5, 2, 0, &df), sqrt(0.0125), 1e-12);
	assert_int_equal(df, 2);
	/* epochs 1 to 3 of configuration 0: ss 0 + 0.005 + 0.005, df 3; 2 adds 0.02, df 4 */
	assert_float_equal(stop_noise_at(c, 3, 2, 1, &df), sqrt(0.01 / 3), 1e-12);
	assert_int_equal(df, 3);
	assert_float_equal(stop_noise_at(c, 5, 2, 1, &df), sqrt(0.03 / 4), 1e-12);
}

static void test_bar(void **state)
{
	struct stop_curve c[3];
	struct stop_params p = { 1, 2, 2.0, 1 };
	/*
	 * the noise near 2 and 3 (epochs 0..4 and 1..5): ss 0.01, df 4, sd 0.05
	 * (a margin of 2 sd t(0.975, 4) / 1.96, below the floors); near 4 (epochs
	 * 2..6): ss 0.01, df 3; each margin widened by t(0.975, df) / 1.96
	 */
	double bar[6],
	       m3 = 2 * sqrt(0.01 / 3) * 3.1824463 / 1.959964, m2 = 2 * 0.05 * 4.3026527 / 1.959964;
	size_t n;

	(void)state;
	fill(c);
	/* the best alone: mean - margin sqrt(1 + 1/2); none in the warm-up (0, 1) */
	n = stop_bar(c, 3, 0, -1, &p, bar, 6);
	assert_int_equal(n, 5);
	assert_true(isnan(bar[0]) && isnan(bar[1]) && isnan(bar[5]));
	/*
	 * the noise from k to the end is the floor: at 2 epochs 2..5 (ss 0.01, df 3),
	 * at 3 epochs 3..5 (ss 0.005, df 2), at 4 none (0.8 and 0.8)
	 */
	/*
	 * and never above the last bar less the largest rise any curve made
	 * from k to its end: at 2 a0's 0.2 (0.6 to 0.8), at 3 a0's 0.1, the
	 * lower here (0.65 - m3 sqrt(1.5) and 0.75 - m2 sqrt(1.5) without)
	 */
	assert_float_equal(bar[2], 0.8 - 0.2 - m3 * sqrt(1.5), 1e-6);
	assert_float_equal(bar[3], 0.8 - 0.1 - m3 * sqrt(1.5), 1e-6);
	assert_float_equal(bar[4], 0.8 - m3 * sqrt(1.5), 1e-6);
	/*
	 * with the parent: the less demanding, 0.55 - margin sqrt(2) at 3, the
	 * last; only where both reached; at 2 the last less 0.2 (0.5 - m3 sqrt(2) without)
	 */
	n = stop_bar(c, 3, 0, 1, &p, bar, 6);
	assert_int_equal(n, 4);
	assert_float_equal(bar[2], 0.55 - 0.2 - m2 * sqrt(2), 1e-6);
	assert_float_equal(bar[3], 0.55 - m2 * sqrt(2), 1e-6);
	assert_true(isnan(bar[4]));
	/* goal min: mean + margin, the parent's the higher; no curve fell, so at 2 the last bar */
	p.goal_max = 0;
	n = stop_bar(c, 3, 0, 1, &p, bar, 6);
	assert_float_equal(bar[3], 0.75 + m2 * sqrt(1.5), 1e-6);
	assert_float_equal(bar[2], bar[3], 1e-12);
	/* no best, or a warm-up past every epoch: no bar */
	assert_int_equal(stop_bar(c, 3, -1, -1, &p, bar, 6), 0);
	p.warmup = 10;
	assert_int_equal(stop_bar(c, 3, 0, -1, &p, bar, 6), 0);
}

static void test_first_behind(void **state)
{
	double bar[] = { N, N, 0.48, 0.58, 0.8 };
	double v[] = { N, 0.1, 0.2, 0.3, 0.9 }, late[] = { N, 0.1, 0.2, 0.6, 0.5, 0.5 };
	double nan_mid[] = { N, 0.1, 0.2, N, 0.3 };
	struct stop_params p = { 1, 2, 2.0, 1 };

	(void)state;
	/* behind at 2 and 3: stops at 3; epoch 1 has no bar */
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), 3);
	/* three running: 0.9 at 4 beats 0.8, the count starts again */
	p.behind = 3;
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
	/* a late bloomer: 0.6 at 3 is not behind; epoch 5 has no bar */
	p.behind = 2;
	assert_int_equal(stop_first_behind(late, 6, bar, 5, &p), -1);
	/* a NaN epoch is the plainest rule's: skipped, not counted */
	assert_int_equal(stop_first_behind(nan_mid, 5, bar, 5, &p), 4);
	/* goal min: behind is above */
	p.goal_max = 0;
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
	assert_int_equal(stop_first_behind(late, 5, bar, 3, &p), -1);
	{
		double hi[] = { N, 0.1, 0.5, 0.6 };

		assert_int_equal(stop_first_behind(hi, 4, bar, 5, &p), 3);
	}
	p.behind = 0;	/* never */
	assert_int_equal(stop_first_behind(v, 5, bar, 5, &p), -1);
}

static void test_text(void **state)
{
	double bar[] = { N, N, 0.48, N, 0.8125 }, *back;
	struct stop_params p = { 1, 3, 2.0, 1 };
	struct buf b = BUF_INIT;
	long long behind;
	size_t n;

	(void)state;
	stop_bar_text(bar, 5, &p, &b);
	assert_non_null(strstr(b.s, "\nbehind 3\nbar 2 0.48\nbar 4 0.8125\n"));
	assert_null(strstr(b.s, "bar 3"));
	assert_int_equal(stop_bar_parse(b.s, &back, &n, &behind), 0);
	assert_int_equal(behind, 3);
	assert_int_equal(n, 5);
	assert_true(isnan(back[3]));
	assert_float_equal(back[4], 0.8125, 1e-12);
	free(back);
	assert_int_equal(stop_bar_parse("bar 1 0.5\n", &back, &n, &behind), -1);
	free(back);
	buf_release(&b);
}

/* The watcher's awk program and its num regex, cut from watch_shell's text (malloc'd). */
static void watcher_awk(int goal_max, char **prog, char **num)
{
	struct config c;
	struct buf b = BUF_INIT;
	const char *p, *q, *e;

	config_defaults(&c, "s", "p");
	c.goal_max = goal_max;
	watch_shell(&c, 1, &b);
	p = strstr(b.s, "-v num='");
	assert_non_null(p);
	p += 8;
	q = strstr(p, "' '\n");
	assert_non_null(q);
	e = strstr(q, "\n' <<<");
	assert_non_null(e);
	*num = xstrndup(p, (size_t)(q - p));
	*prog = xstrndup(q + 4, (size_t)(e + 1 - (q + 4)));
	buf_release(&b);
	config_release(&c);
}

/*
 * The watcher's awk on the node decides as stop_first_behind does: random
 * curves against a bar file, goal max and min (awk must be installed, as
 * on every node).
 */
static void test_awk_same_as_c(void **state)
{
	char dir[] = "/tmp/xloop-test-stoprule-XXXXXX", *prog, *num, *env[2], *bf, *cause = NULL;
	unsigned long x = 12345;
	int goal, t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	env[0] = xasprintf("XLOOP_RUN_DIR=%s", dir);
	env[1] = NULL;
	bf = path_join(dir, "stop-bar");
	for (goal = 0; goal <= 1; goal++) {
		watcher_awk(goal, &prog, &num);
		for (t = 0; t < 40; t++) {
			struct stop_params p = { 3, 1 + t % 3, 2.0, goal };
			double v[16], bar[16];
			struct buf pt = BUF_INIT, bt = BUF_INIT;
			char *want;
			const char *argv[] = { "awk", "-v", goal ? "goal=max" : "goal=min", "-v",
					       "runs=0", "-v", "rule=on", "-v", NULL, NULL, NULL };
			struct proc pr = PROC_INIT;
			long long k;
			size_t i;

			for (i = 0; i < 16; i++) {
				x = x * 6364136223846793005UL + 1442695040888963407UL;
				v[i] = (double)((x >> 33) % 1000) / 1000;
				bar[i] = i > 3 && (x >> 20) % 5 ? 0.5 : NAN;
			}
			v[0] = NAN;
			for (i = 1; i < 16; i++)
				buf_addf(&pt, "epoch %zu %.3f\n", i, v[i]);
			stop_bar_text(bar, 16, &p, &bt);
			assert_int_equal(write_file_atomic(bf, bt.s, bt.len, 0644, &cause), 0);
			argv[8] = xasprintf("num=%s", num);
			argv[9] = prog;
			pr.argv = argv;
			pr.env = (const char *const *)env;
			pr.in = pt.s;
			assert_int_equal(proc_run(&pr), 0);
			assert_int_equal(pr.status, 0);
			k = stop_first_behind(v, 16, bar, 16, &p);
			want = k >= 0 ? xasprintf("%lld " STOP_BEHIND_WHY " at %lld epochs running\n", k,
						  p.behind) : xstrdup("15\n");
			assert_string_equal(pr.out.s, want);
			free(want);
			free((char *)argv[8]);
			proc_release(&pr);
			buf_release(&pt);
			buf_release(&bt);
		}
		free(prog);
		free(num);
	}
	unlink(bf);
	rmdir(dir);
	free(bf);
	free(env[0]);
}

/* One run of the late-bloomer fixture (tests/fixtures/stop/late-bloomers.txt). */
struct bloom_run {
	char study[16], role[8];
	struct stop_curve c;
};

/* The fixture's runs (bench/stop.py --fixture), from the source tree ($XLOOP_ROOT or cwd). */
static size_t read_bloomers(struct bloom_run **out)
{
	const char *env = getenv("XLOOP_ROOT");
	char *path = xasprintf("%s/tests/fixtures/stop/late-bloomers.txt", env && *env ? env : ".");
	char *cause = NULL, *line, *end;
	struct buf t = BUF_INIT;
	size_t n = 0;
	int err;

	if (read_file(path, 1 << 20, &t, &err, &cause) < 0 || !t.s)
		fail_msg("cannot read '%s': %s", path, cause ? cause : "empty");
	*out = NULL;
	for (line = t.s; *line; line = end + 1) {
		struct bloom_run *r;
		char cfg[128];
		long seed;
		int at = 0;
		size_t k;
		char *p;

		end = strchr(line, '\n');
		assert_non_null(end);
		*end = '\0';
		if (*line == '#')
			continue;
		*out = xreallocarray(*out, n + 1, sizeof(**out));
		r = &(*out)[n++];
		assert_int_equal(sscanf(line, "%15s %7s %127s %ld%n", r->study, r->role, cfg, &seed,
					&at), 4);
		r->c = (struct stop_curve){ xcalloc(64, sizeof(double)), 1, 0 };
		r->c.v[0] = NAN;
		for (p = line + at, k = 1; *p && k < 64; k++) {
			char *e;

			r->c.v[k] = strtod(p, &e);
			if (e == p)
				break;
			r->c.len = k + 1;
			p = e;
		}
	}
	buf_release(&t);
	free(path);
	return n;
}

/* How many late runs of study the rule p stops against its best runs' bar; *nlate the late runs. */
static size_t bloomers_stopped(const struct bloom_run *r, size_t n, const char *study,
			       const struct stop_params *p, size_t *nlate)
{
	struct stop_curve best[16];
	double bar[64];
	size_t i, nb = 0, nbar, stopped = 0;

	for (i = 0; i < n; i++)
		if (strcmp(r[i].study, study) == 0 && strcmp(r[i].role, "best") == 0 && nb < 16)
			best[nb++] = r[i].c;
	assert_true(nb >= 2);
	nbar = stop_bar(best, nb, 0, -1, p, bar, best[0].len);
	*nlate = 0;
	for (i = 0; i < n; i++)
		if (strcmp(r[i].study, study) == 0 && strcmp(r[i].role, "late") == 0) {
			(*nlate)++;
			if (stop_first_behind(r[i].c.v, r[i].c.len, bar, nbar, p) >= 0)
				stopped++;
		}
	return stopped;
}

/*
 * The late bloomers of the stop benchmark's curves (slow to start, at the
 * top at the end: bench/stop.py's late_bloomers) are not stopped with the
 * default knobs against the curves of their study's best configuration;
 * with a warm-up of 2 epochs they would be (the fixture has teeth).
 */
static void test_late_bloomers(void **state)
{
	static const char *const studies[] = { "digits", "wine" };
	struct stop_params def = { STOP_WARMUP, STOP_BEHIND, STOP_NOISE_Z, 1 };
	struct stop_params early = { 2, STOP_BEHIND, STOP_NOISE_Z, 1 };
	struct bloom_run *r;
	size_t n = read_bloomers(&r), i, nlate, early_stops = 0;

	(void)state;
	for (i = 0; i < sizeof(studies) / sizeof(*studies); i++) {
		assert_int_equal(bloomers_stopped(r, n, studies[i], &def, &nlate), 0);
		assert_true(nlate >= 5);
		early_stops += bloomers_stopped(r, n, studies[i], &early, &nlate);
	}
	assert_true(early_stops > 0);
	for (i = 0; i < n; i++)
		stop_curve_release(&r[i].c);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_curve_parse),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_bar),
		cmocka_unit_test(test_first_behind),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_awk_same_as_c),
		cmocka_unit_test(test_late_bloomers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
