/*
 * The one place xloop starts other programs: argv only (never a shell),
 * stdout and stderr captured together with poll(), an optional timeout
 * (TERM to the child's process group, then KILL), exit status or signal.
 */
#ifndef XLOOP_PROC_H
#define XLOOP_PROC_H

#include <stddef.h>

#include "lib/buf.h"

struct proc {
	/* Inputs. argv[0] is looked up in PATH; the vector ends with NULL. */
	const char *const *argv;
	const char *const *env;	/* "K=V" set on top of the environment, "-K" or
				 * "-PREFIX*" removed from it; or NULL */
	const char *dir;	/* working directory of the child, or NULL */
	const char *in;		/* bytes for stdin (NUL-terminated), or NULL: /dev/null */
	int timeout_ms;		/* 0: no timeout */
	size_t max_output;	/* per stream; 0: 64 MiB. Beyond it bytes are dropped */
	const char *in_path;	/* stdin from this file (when in is NULL), or NULL */
	int out_inherit;	/* the child writes to our stdout; out stays empty */

	/* Outputs, valid after proc_run() returned 0. */
	struct buf out;
	struct buf err;
	int status;		/* exit code, or 128 + signal number */
	int signo;		/* signal that ended the child, 0 if it exited */
	int timed_out;		/* killed because the timeout expired */
	int truncated;		/* output beyond max_output was dropped */
	int exec_errno;		/* why the program could not be started */
};

#define PROC_INIT { NULL, NULL, NULL, NULL, 0, 0, NULL, 0, BUF_INIT, BUF_INIT, 0, 0, 0, 0, 0 }

/*
 * Run p->argv to completion. Returns 0 when the program ran (whatever its
 * exit status), -1 when it could not be started: p->exec_errno is then set
 * (ENOENT: not found in PATH). Nothing is printed.
 */
int proc_run(struct proc *p);

/* Free the captured output. */
void proc_release(struct proc *p);

/* "exited with 3", "killed by signal 9 (timeout after 5 s)", ... into b. */
void proc_describe(const struct proc *p, struct buf *b);

#endif
