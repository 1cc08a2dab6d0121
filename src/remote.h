/*
 * Remote clusters (seed 003): xloop runs on the login node, next to Slurm
 * and the shared filesystem; from anywhere else `xloop --host HOST ...`
 * runs the same command there over ssh (BatchMode: never a password
 * prompt), every argument quoted for any POSIX login shell. Its stdout arrives byte for
 * byte, its stderr and exit code unchanged, except that ssh's own
 * failures become errors that say what to do.
 */
#ifndef XLOOP_REMOTE_H
#define XLOOP_REMOTE_H

#include "lib/buf.h"

/* Where the remote binary is installed by default (relative to $HOME). */
#define REMOTE_DEFAULT_PATH ".local/bin"

/*
 * s single-quoted for any POSIX shell (the login shell there may be dash):
 * '...' holds every byte but the quote itself, which becomes '\''.
 */
void remote_quote(struct buf *out, const char *s);

/*
 * The remote shell command that runs xloop with args there: xloop from
 * PATH or ~/.local/bin, -C dir when dir is not NULL, then every argument
 * single-quoted. Missing xloop exits 127 with a marker line.
 */
void remote_command(const char *dir, int argc, char *const *argv, struct buf *out);

/*
 * Run one shell command on host over ssh with p (whose other inputs the
 * caller set: stdin, timeout, out_inherit). The exit code to end with:
 * the command's own, or 69/75/77 with *message (malloc'd) when ssh itself
 * failed; *message is NULL otherwise.
 */
struct proc;
int remote_ssh(const char *host, const char *command, struct proc *p, char **message);

/*
 * Run xloop on host; returns the exit code to end with (the remote one,
 * or 69/75/77 for what ssh itself could not do, with a message).
 */
int remote_run(const char *host, const char *dir, int argc, char *const *argv);

/*
 * Map ssh's exit status and stderr to the command contract; NULL message
 * when ssh did not fail (the status is the remote command's). Pure.
 */
int remote_map_failure(const char *host, int status, const char *err, char **message);

#endif
