/* Files written so that a crash at any point leaves the old or the new content. */
#ifndef XLOOP_FSUTIL_H
#define XLOOP_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/buf.h"

/* "a/b" from a and b (b absolute: b). Caller frees. */
char *path_join(const char *a, const char *b);

/*
 * Replace path with data through a temporary file in the same directory,
 * fsync and rename. Never follows a symlink at path. 0, or -1 with *cause.
 */
int write_file_atomic(const char *path, const void *data, size_t len,
		      mode_t mode, char **cause);

/*
 * The same in pieces, for files too large to hold: begin, write any number
 * of times, commit (fsync, rename). Each returns 0, or -1 with *cause after
 * removing the temporary file; abort drops an unfinished one.
 */
struct atomic_file {
	char *path, *tmp;
	int fd;
};
int atomic_begin(struct atomic_file *f, const char *path, mode_t mode, char **cause);
int atomic_write(struct atomic_file *f, const void *data, size_t len, char **cause);
int atomic_commit(struct atomic_file *f, char **cause);
void atomic_abort(struct atomic_file *f);

/*
 * Read a regular file (not through a symlink) of at most max bytes into
 * out. Returns 0; -1 with *cause and *err set to the errno (ENOENT for a
 * missing file, EFBIG when too large, ELOOP for a symlink).
 */
int read_file(const char *path, size_t max, struct buf *out, int *err,
	      char **cause);

/* Create a directory with mode; an existing directory (not a symlink) is fine. */
int make_dir(const char *path, mode_t mode, char **cause);

/* 1 when path exists (lstat), 0 when not. */
int path_exists(const char *path);
/*
 * flock(fd, LOCK_EX), tried again every 100 ms for up to wait_ms (0: once):
 * 0 locked, 1 still held by another, -1 with errno.
 */
int lock_wait(int fd, int wait_ms);

#endif
