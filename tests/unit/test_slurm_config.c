/*
 * Unit tests for the parsers of `scontrol show config` and `scontrol ping`
 * (xloop doctor). The texts are shaped after the test cluster's Slurm
 * 22.05 answers; the pre-20.02 ping form after Slurm's documentation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "slurm/parse.h"
#include "lib/util.h"

static const char config_2205[] =
	"Configuration data as of 2026-11-29T11:24:43\n"
	"AccountingStorageBackupHost = (null)\n"
	"AccountingStorageHost   = 127.0.0.1\n"
	"AccountingStorageTRES   = cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu\n"
	"AccountingStorageType   = accounting_storage/none\n"
	"AuthInfo                = socket=/tmp/xloop-testcluster/munge/munge.socket.2\n"
	"BOOT_TIME               = 2026-11-29T11:21:37\n"
	"MessageTimeout          = 10 sec\n"
	"MinJobAge               = 300 sec\n"
	"SlurmctldHost[0]        = vm(127.0.0.1)\n"
	"SlurmctldPort           = 16817\n"
	"\n"
	"Cgroup Support Configuration:\n"
	"AllowedRAMSpace         = 100.0%\n"
	"MinJobAge               = 999 sec\n"
	"\n"
	"MPI Plugins Configuration:\n"
	"PMIxCliTmpDirBase       = (null)\n"
	"\n"
	"Slurmctld(primary) at vm is UP\n";

static void test_config_real(void **state)
{
	struct slurm_record conf = { NULL, 0 };
	char *cause = NULL;

	(void)state;
	assert_int_equal(slurm_parse_config(config_2205, &conf, &cause), 0);
	assert_null(cause);
	assert_string_equal(slurm_record_get(&conf, "AccountingStorageType"),
			    "accounting_storage/none");
	assert_string_equal(slurm_record_get(&conf, "MinJobAge"), "300 sec");
	assert_string_equal(slurm_record_get(&conf, "AuthInfo"),
			    "socket=/tmp/xloop-testcluster/munge/munge.socket.2");
	assert_string_equal(slurm_record_get(&conf, "SlurmctldHost[0]"), "vm(127.0.0.1)");
	assert_string_equal(slurm_record_get(&conf, "AccountingStorageBackupHost"), "(null)");
	assert_string_equal(slurm_record_get(&conf, "PMIxCliTmpDirBase"), "(null)");
	assert_string_equal(slurm_record_get(&conf, "AllowedRAMSpace"), "100.0%");
	/* titles and ping lines are no pairs */
	assert_null(slurm_record_get(&conf, "Configuration data as of 2026-11-29T11:24:43"));
	assert_null(slurm_record_get(&conf, "Slurmctld(primary) at vm is UP"));
	/* 13 pairs, the repeated MinJobAge kept twice */
	assert_int_equal(conf.nr_kv, 13);
	assert_string_equal(conf.kv[0].key, "AccountingStorageBackupHost");
	assert_string_equal(conf.kv[12].key, "PMIxCliTmpDirBase");
	slurm_record_release(&conf);
	assert_null(conf.kv);
	assert_int_equal(conf.nr_kv, 0);
}

static void test_config_edges(void **state)
{
	struct slurm_record conf = { NULL, 0 };
	char *cause = NULL;

	(void)state;
	/* CRLF, an empty value, no spaces around '=' */
	assert_int_equal(slurm_parse_config("A = 1\r\nB =\r\nC=x y\r\n", &conf, &cause), 0);
	assert_string_equal(slurm_record_get(&conf, "A"), "1");
	assert_string_equal(slurm_record_get(&conf, "B"), "");
	assert_string_equal(slurm_record_get(&conf, "C"), "x y");
	slurm_record_release(&conf);

	/* a key with a blank is not a pair: skipped */
	assert_int_equal(slurm_parse_config("Not a key = 3\nK = v\n", &conf, &cause), 0);
	assert_int_equal(conf.nr_kv, 1);
	assert_string_equal(conf.kv[0].key, "K");
	slurm_record_release(&conf);

	/* the controller did not answer */
	assert_int_equal(slurm_parse_config("slurm_load_ctl_conf error: Unable to "
					    "contact slurm controller (connect failure)\n",
					    &conf, &cause), -1);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "Unable to contact"));
	assert_null(conf.kv);
	FREE_AND_NULL(cause);

	/* an error after some pairs still fails, and frees what it had */
	assert_int_equal(slurm_parse_config("A = 1\nscontrol: error: boom\n", &conf,
					    &cause), -1);
	assert_null(conf.kv);
	FREE_AND_NULL(cause);

	assert_int_equal(slurm_parse_config("", &conf, &cause), -1);
	FREE_AND_NULL(cause);
	assert_int_equal(slurm_parse_config(NULL, &conf, NULL), -1);
	assert_int_equal(slurm_parse_config("Configuration data as of x\n\n", &conf,
					    NULL), -1);
}

/* Accounting as each Slurm says it (24.05 and later: "(null)" when off). */
static void test_config_accounting(void **state)
{
	static const struct {
		const char *text;
		int on;
	} cases[] = {
		{ "AccountingStorageType   = accounting_storage/none\n", 0 },
		{ "AccountingStorageType   = (null)\n", 0 },
		{ "AccountingStorageType   = \n", 0 },
		{ "AccountingStorageHost   = localhost\n", 0 },
		{ "AccountingStorageType   = accounting_storage/slurmdbd\n", 1 },
		{ "AccountingStorageType   = accounting_storage/mysql\n", 1 },
	};
	struct slurm_record conf = { NULL, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(slurm_parse_config(cases[i].text, &conf, NULL), 0);
		if (slurm_config_accounting(&conf) != cases[i].on)
			fail_msg("'%s': accounting should be %s", cases[i].text,
				 cases[i].on ? "on" : "off");
		slurm_record_release(&conf);
	}
}

static void test_ping_up(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;
	char *cause = NULL;

	(void)state;
	assert_int_equal(slurm_parse_ping("Slurmctld(primary) at vm is UP\n", &ping,
					  &cause), 0);
	assert_int_equal(ping.nr, 1);
	assert_string_equal(ping.v[0].role, "primary");
	assert_string_equal(ping.v[0].host, "vm");
	assert_int_equal(ping.v[0].up, 1);
	slurm_ping_release(&ping);
	assert_null(ping.v);
	assert_int_equal(ping.nr, 0);
}

static void test_ping_down_banner(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;
	char *cause = NULL;

	(void)state;
	assert_int_equal(slurm_parse_ping(
		"Slurmctld(primary) at vm is DOWN\n"
		"*****************************************\n"
		"** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
		"*****************************************\n", &ping, &cause), 0);
	assert_int_equal(ping.nr, 1);
	assert_string_equal(ping.v[0].host, "vm");
	assert_int_equal(ping.v[0].up, 0);
	slurm_ping_release(&ping);
}

static void test_ping_backup(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;

	(void)state;
	assert_int_equal(slurm_parse_ping(
		"Slurmctld(primary) at ctl-a.example.org is UP\n"
		"Slurmctld(backup1) at ctl-b is DOWN\n", &ping, NULL), 0);
	assert_int_equal(ping.nr, 2);
	assert_string_equal(ping.v[0].host, "ctl-a.example.org");
	assert_int_equal(ping.v[0].up, 1);
	assert_string_equal(ping.v[1].role, "backup1");
	assert_string_equal(ping.v[1].host, "ctl-b");
	assert_int_equal(ping.v[1].up, 0);
	slurm_ping_release(&ping);
}

static void test_ping_no_host(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;
	char *cause = NULL;

	(void)state;
	/* found by fuzz_records: the host's length underflowed */
	assert_int_equal(slurm_parse_ping("Slurmctld(x) at is UP\n", &ping, &cause), -1);
	assert_non_null(strstr(cause, "unexpected"));
	free(cause);
	cause = NULL;
	assert_int_equal(slurm_parse_ping("Slurmctld(a/b) at are UP/DOWN\n", &ping, &cause),
			 -1);
	free(cause);
	assert_int_equal(ping.nr, 0);
}

static void test_ping_old_form(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;

	(void)state;
	/* before 20.02: one line for both, "(NULL)" when there is no backup */
	assert_int_equal(slurm_parse_ping("Slurmctld(primary/backup) at head/(NULL) "
					  "are UP/DOWN\n", &ping, NULL), 0);
	assert_int_equal(ping.nr, 1);
	assert_string_equal(ping.v[0].role, "primary");
	assert_string_equal(ping.v[0].host, "head");
	assert_int_equal(ping.v[0].up, 1);
	slurm_ping_release(&ping);

	assert_int_equal(slurm_parse_ping("Slurmctld(primary/backup) at a/b are "
					  "DOWN/UP\n", &ping, NULL), 0);
	assert_int_equal(ping.nr, 2);
	assert_string_equal(ping.v[0].host, "a");
	assert_int_equal(ping.v[0].up, 0);
	assert_string_equal(ping.v[1].role, "backup");
	assert_string_equal(ping.v[1].host, "b");
	assert_int_equal(ping.v[1].up, 1);
	slurm_ping_release(&ping);
}

static void test_ping_errors(void **state)
{
	struct slurm_ping ping = SLURM_PING_INIT;
	char *cause = NULL;

	(void)state;
	assert_int_equal(slurm_parse_ping("", &ping, &cause), -1);
	assert_non_null(strstr(cause, "no controller"));
	FREE_AND_NULL(cause);
	assert_int_equal(slurm_parse_ping(NULL, &ping, NULL), -1);
	assert_int_equal(slurm_parse_ping("scontrol: error: Invalid user for "
					  "SlurmUser slurm\n", &ping, &cause), -1);
	assert_non_null(strstr(cause, "Invalid user"));
	FREE_AND_NULL(cause);
	assert_int_equal(slurm_parse_ping("Slurmctld(primary) at vm is SLEEPY\n",
					  &ping, &cause), -1);
	assert_non_null(strstr(cause, "SLEEPY"));
	assert_null(ping.v);
	FREE_AND_NULL(cause);
	/* a good line then garbage: nothing is returned */
	assert_int_equal(slurm_parse_ping("Slurmctld(primary) at vm is UP\nhello\n",
					  &ping, NULL), -1);
	assert_null(ping.v);
	assert_int_equal(ping.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_real),
		cmocka_unit_test(test_config_edges),
		cmocka_unit_test(test_config_accounting),
		cmocka_unit_test(test_ping_up),
		cmocka_unit_test(test_ping_down_banner),
		cmocka_unit_test(test_ping_backup),
		cmocka_unit_test(test_ping_no_host),
		cmocka_unit_test(test_ping_old_form),
		cmocka_unit_test(test_ping_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
