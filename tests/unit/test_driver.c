/* Unit tests for the driver's pure parts: mountinfo, network filesystems, scrontab. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "driver/driver.h"
#include "lib/util.h"

/* Lines as the kernel writes them (this machine's, and clusters' NFS, Lustre, GPFS, sshfs). */
static const char mountinfo[] =
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	"27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534\n"
	"45 27 254:0 /work/wt/matrix /var/cache/xloop/chroots/b/work/wt/matrix rw,relatime - ext4 /dev/vda rw,discard\n"
	"60 27 0:51 / /home rw,relatime shared:30 - nfs4 fs1:/export/home rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.5,local_lock=none,addr=10.0.0.1\n"
	"61 27 0:52 / /old rw,relatime shared:31 - nfs fs2:/old rw,vers=3,rsize=65536,wsize=65536,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,mountaddr=10.0.0.2\n"
	"62 27 0:53 / /lustre rw,relatime shared:32 - lustre 10.0.0.3@o2ib:/scratch rw,flock,lazystatfs,encrypt\n"
	"63 27 0:54 / /gpfs/projects rw,relatime shared:33 - gpfs projects rw\n"
	"64 27 0:55 / /mnt/my\\040study rw,nosuid,nodev,relatime shared:34 - fuse.sshfs user@login:/home/user/study rw,user_id=1000,group_id=1000\n"
	"65 27 0:56 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w\n"
	"66 60 0:57 / /home/user/local rw,relatime - ext4 /dev/sdb1 rw\n";

/* The longest mount point that holds the path decides. */
static void test_fstype(void **state)
{
	static const struct {
		const char *path, *type;
		int net;
	} cases[] = {
		{ "/", "ext4", 0 },
		{ "/tmp/xloop-study", "ext4", 0 },
		{ "/home/user/study", "nfs4", 1 },
		{ "/home", "nfs4", 1 },
		{ "/homework", "ext4", 0 },	/* a prefix, but not at a '/' */
		{ "/home/user/local/study", "ext4", 0 },	/* a local disk mounted under NFS */
		{ "/old/x", "nfs", 1 },
		{ "/lustre/scratch/me", "lustre", 1 },
		{ "/gpfs/projects/ml", "gpfs", 1 },
		{ "/gpfs", "ext4", 0 },
		{ "/mnt/my study/repo", "fuse.sshfs", 1 },	/* \040 is a space */
		{ "/var/lib/docker/overlay2/abc/merged/app", "overlay", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *t = driver_mount_fstype(mountinfo, cases[i].path);

		assert_non_null(t);
		assert_string_equal(t, cases[i].type);
		assert_int_equal(driver_fs_is_network(t), cases[i].net);
		free(t);
	}
}

/* Nothing to match, broken lines: no type, no crash. */
static void test_fstype_bad(void **state)
{
	char *t;

	(void)state;
	assert_null(driver_mount_fstype("", "/x"));
	assert_null(driver_mount_fstype("garbage\n1 2 3\n- - -\n", "/x"));
	assert_null(driver_mount_fstype("1 2 0:1 / /a rw - ext4 /dev/x rw\n", "/b"));
	t = driver_mount_fstype("1 2 0:1 / / rw - ext4 /dev/x rw\n2 1 0:2 / / rw - overlay o rw", "/a");
	assert_string_equal(t, "overlay");	/* the later mount over "/" wins */
	free(t);
	assert_int_equal(driver_fs_is_network("tmpfs"), 0);
	assert_int_equal(driver_fs_is_network("fuse"), 0);
	assert_int_equal(driver_fs_is_network("?"), 0);
}

/* The study's block is added once, replaced in place, other lines kept. */
static void test_scrontab_merge(void **state)
{
	char *a, *b, *c;

	(void)state;
	a = driver_scrontab_merge("", "/s", "*/5 * * * * x\n");
	assert_string_equal(a, "# xloop driver: /s\n*/5 * * * * x\n# xloop driver end: /s\n");
	b = driver_scrontab_merge("0 * * * * mine\n", "/s", "E1\n");
	assert_string_equal(b, "0 * * * * mine\n# xloop driver: /s\nE1\n# xloop driver end: /s\n");
	c = driver_scrontab_merge(b, "/s", "E2\n");
	assert_string_equal(c, "0 * * * * mine\n# xloop driver: /s\nE2\n# xloop driver end: /s\n");
	free(a);
	a = driver_scrontab_merge(c, "/other", "E3\n");
	assert_non_null(strstr(a, "E2\n"));
	assert_non_null(strstr(a, "# xloop driver: /other\nE3\n"));
	free(a);
	free(b);
	free(c);
}

/* A forwarded feeder says which job it is and which token it carries. */
static void test_forward_args(void **state)
{
	int n;
	char **v = driver_forward_args("123", "xlabc", &n);

	(void)state;
	assert_int_equal(n, 6);
	assert_string_equal(v[0], "tick");
	assert_string_equal(v[1], "--feeder");
	assert_string_equal(v[2], "--feeder-job");
	assert_string_equal(v[3], "123");
	assert_string_equal(v[4], "--feeder-token");
	assert_string_equal(v[5], "xlabc");
	strv_free(v, (size_t)n);
	v = driver_forward_args(NULL, "", &n);
	assert_int_equal(n, 2);
	strv_free(v, (size_t)n);
	assert_true(slurm_is_feeder_comment("xloop-feed:s:0123456789ab:xl00"));
	assert_false(slurm_is_feeder_comment("xloop:s/t#1:xl00"));
	assert_false(slurm_is_feeder_comment(NULL));
}

/* A watchdog is a feeder to everything that counts runs; its token tells it apart. */
static void test_watch_token(void **state)
{
	int n;
	char **v = driver_forward_args("77", DRIVER_WATCH_PREFIX "xl01", &n);

	(void)state;
	assert_true(driver_is_watch_token("watch-xl01"));
	assert_false(driver_is_watch_token("xl01"));
	assert_false(driver_is_watch_token(""));
	assert_false(driver_is_watch_token(NULL));
	assert_true(slurm_is_feeder_comment("xloop-feed:s:0123456789ab:watch-xl01"));
	/* forwarded over ssh, the token arrives whole: the tick there knows it */
	assert_int_equal(n, 6);
	assert_string_equal(v[5], "watch-xl01");
	assert_true(driver_is_watch_token(v[5]));
	strv_free(v, (size_t)n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fstype),
		cmocka_unit_test(test_fstype_bad),
		cmocka_unit_test(test_scrontab_merge),
		cmocka_unit_test(test_forward_args),
		cmocka_unit_test(test_watch_token),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
