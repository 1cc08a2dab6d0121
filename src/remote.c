/* Running xloop on a remote host over ssh. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc.h"
#include "remote.h"
#include "lib/util.h"

#define MISSING_MARK "xloop-remote: xloop is not installed here"

/*
 * ssh, never asking for a password, up to "--" (the caller appends the
 * command and the NULL). No ControlPersist: its background master would
 * hold our stderr pipe open for its whole life; a user who wants shared
 * connections sets them up in ~/.ssh/config, which ssh reads.
 */
static void ssh_argv(const char *host, const char **argv, size_t *n)
{
	static const char *const opts[] = {
		"ssh", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15",
		"-o", "ConnectTimeout=20",
	};
	size_t i;

	*n = 0;
	for (i = 0; i < ARRAY_SIZE(opts); i++)
		argv[(*n)++] = opts[i];
	argv[(*n)++] = host;
	argv[(*n)++] = "--";
}

/* s single-quoted for any POSIX shell (see remote.h). */
void remote_quote(struct buf *out, const char *s)
{
	buf_addc(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_adds(out, "'\\''");
		else
			buf_addc(out, *s);
	}
	buf_addc(out, '\'');
}

/* The shell command for the remote side. */
void remote_command(const char *dir, int argc, char *const *argv, struct buf *out)
{
	int i;

	buf_adds(out, "x=$(command -v xloop 2>/dev/null) || x=\"$HOME/" REMOTE_DEFAULT_PATH
		 "/xloop\"; [ -x \"$x\" ] || { echo '" MISSING_MARK "' >&2; exit 127; }; "
		 "exec \"$x\" --here");
	if (dir) {
		buf_adds(out, " -C ");
		remote_quote(out, dir);
	}
	for (i = 0; i < argc; i++) {
		buf_addc(out, ' ');
		remote_quote(out, argv[i]);
	}
}

/* What ssh's failure means, or 0 with no message. */
int remote_map_failure(const char *host, int status, const char *err, char **message)
{
	size_t len;

	*message = NULL;
	if (status == 127 && strstr(err, MISSING_MARK)) {
		*message = xasprintf("xloop is not installed on %s: `xloop remote install "
				     "%s` copies this binary there", host, host);
		return XL_UNAVAILABLE;
	}
	if (status != 255)
		return status;
	if (strstr(err, "Host key verification failed") ||
	    strstr(err, "REMOTE HOST IDENTIFICATION HAS CHANGED")) {
		*message = xasprintf("the host key of %s is unknown or changed: connect once "
				     "with `ssh %s` to check and accept it", host, host);
		return XL_NOPERM;
	}
	if (strstr(err, "Permission denied")) {
		*message = xasprintf("%s refused the login (xloop never asks for a password: "
				     "BatchMode): add your key with `ssh-copy-id %s`, or "
				     "load it into ssh-agent", host, host);
		return XL_NOPERM;
	}
	if (strstr(err, "Could not resolve hostname")) {
		*message = xasprintf("unknown host '%s' (check --host, XLOOP_HOST or "
				     "remote.host in xloop.json)", host);
		return XL_UNAVAILABLE;
	}
	len = strlen(err);
	while (len && isspace((unsigned char)err[len - 1]))
		len--;		/* ssh ends its lines with "\r\n" */
	*message = xasprintf("ssh to %s failed (try again later): %.*s", host,
			     len ? (int)len : 10, len ? err : "no message");
	return XL_TEMPFAIL;
}

/* Run one shell command on host. */
int remote_ssh(const char *host, const char *command, struct proc *p, char **message)
{
	const char *av[12];
	size_t n;
	int rc;

	ssh_argv(host, av, &n);
	av[n++] = command;
	av[n] = NULL;
	p->argv = av;
	rc = proc_run(p);
	p->argv = NULL;		/* av ends here */
	if (rc < 0) {
		*message = xasprintf("unable to run ssh: %s", strerror(p->exec_errno));
		return XL_UNAVAILABLE;
	}
	return remote_map_failure(host, p->status, p->err.s, message);
}

/* Run the command there. */
int remote_run(const char *host, const char *dir, int argc, char *const *argv)
{
	struct buf cmd = BUF_INIT;
	struct proc p = PROC_INIT;
	char *message;
	int rc;

	remote_command(dir, argc, argv, &cmd);
	p.out_inherit = 1;	/* --json documents arrive byte for byte */
	fflush(stdout);
	rc = remote_ssh(host, cmd.s, &p, &message);
	if (message) {
		error("%s", message);
		free(message);
	} else if (p.err.len) {
		fwrite(p.err.s, 1, p.err.len, stderr);
	}
	proc_release(&p);
	buf_release(&cmd);
	return rc;
}
