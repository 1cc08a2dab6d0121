/* Unit tests for the remote command line and ssh's failures. */
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

#include "lib/proc.h"
#include "remote.h"
#include "lib/util.h"

/* Every argument reaches the remote xloop byte for byte through sh. */
static void test_quoting_round_trip(void **state)
{
	char *const args[] = { "next", "--set", "V=a b'c\"d $(touch /tmp/xl-no) `id` ; | & * ~ \\",
			       "", "new\nline", "--", "-C", NULL };
	char dir[] = "/tmp/xloop-remote-XXXXXX", *fake, *path;
	struct buf cmd = BUF_INIT, want = BUF_INIT;
	struct proc p = PROC_INIT;
	const char *argv[4];
	const char *env[2];
	FILE *f;
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fake = xasprintf("%s/xloop", dir);
	f = fopen(fake, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nprintf '%s\\0' \"$@\"\n", f);
	fclose(f);
	chmod(fake, 0755);
	remote_command("/study dir/it's", 7, args, &cmd);
	path = xasprintf("PATH=%s:/usr/bin:/bin", dir);
	env[0] = path;
	env[1] = NULL;
	argv[0] = "sh";	/* dash here: no bash-only quoting may be used */
	argv[1] = "-c";
	argv[2] = cmd.s;
	argv[3] = NULL;
	p.argv = argv;
	p.env = env;
	assert_int_equal(proc_run(&p), 0);
	assert_int_equal(p.status, 0);
	buf_add(&want, "--here", 7);
	buf_add(&want, "-C", 3);
	buf_add(&want, "/study dir/it's", 16);
	for (i = 0; args[i]; i++)
		buf_add(&want, args[i], strlen(args[i]) + 1);
	assert_int_equal(p.out.len, want.len);
	assert_memory_equal(p.out.s, want.s, want.len);
	assert_int_equal(access("/tmp/xl-no", F_OK), -1);
	proc_release(&p);
	/* bash reads it the same */
	argv[0] = "bash";
	assert_int_equal(proc_run(&p), 0);
	assert_int_equal(p.out.len, want.len);
	assert_memory_equal(p.out.s, want.s, want.len);
	proc_release(&p);
	unlink(fake);
	rmdir(dir);
	free(fake);
	free(path);
	buf_release(&cmd);
	buf_release(&want);
}

static void test_failures(void **state)
{
	char *m = NULL;

	(void)state;
	assert_int_equal(remote_map_failure("h", 0, "", &m), 0);
	assert_null(m);
	assert_int_equal(remote_map_failure("h", 66, "xloop: error: no run", &m), 66);
	assert_null(m);
	assert_int_equal(remote_map_failure("h", 255, "Permission denied (publickey).", &m), 77);
	assert_non_null(strstr(m, "ssh-copy-id h"));
	free(m);
	assert_int_equal(remote_map_failure("h", 255, "Host key verification failed.", &m), 77);
	assert_non_null(strstr(m, "host key"));
	free(m);
	assert_int_equal(remote_map_failure("h", 255, "ssh: connect to host h port 22: "
					    "Connection refused\r\n", &m), 75);
	assert_string_equal(m, "ssh to h failed (try again later): ssh: connect to host h "
			    "port 22: Connection refused");
	free(m);
	assert_int_equal(remote_map_failure("h", 255, "\n", &m), 75);
	assert_string_equal(m, "ssh to h failed (try again later): no message");
	free(m);
	assert_int_equal(remote_map_failure("h", 255, "ssh: Could not resolve hostname h", &m),
			 69);
	free(m);
	assert_int_equal(remote_map_failure("h", 127, "xloop-remote: xloop is not installed "
					    "here", &m), 69);
	assert_non_null(strstr(m, "xloop remote install h"));
	free(m);
	/* a remote command's own 127 is passed through */
	assert_int_equal(remote_map_failure("h", 127, "bash: foo: not found", &m), 127);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoting_round_trip),
		cmocka_unit_test(test_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
