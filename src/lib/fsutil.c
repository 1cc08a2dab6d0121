/* Atomic file replacement and careful reading. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fsutil.h"

/* Join two path parts with one slash. */
char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a);

	if (b[0] == '/')
		return xstrdup(b);
	if (la && a[la - 1] == '/')
		return xasprintf("%s%s", a, b);
	return xasprintf("%s/%s", a, b);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

/* Start replacing path: a temporary file next to it, with mode. */
int atomic_begin(struct atomic_file *f, const char *path, mode_t mode, char **cause)
{
	struct stat st;

	f->path = xstrdup(path);
	f->tmp = xasprintf("%s.tmp-XXXXXX", path);
	f->fd = -1;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		*cause = xasprintf("refusing to replace '%s': not a regular file", path);
		atomic_abort(f);
		return -1;
	}
	f->fd = mkostemp(f->tmp, O_CLOEXEC);
	if (f->fd < 0) {
		*cause = xasprintf("unable to create a file next to '%s': %s", path,
				   strerror(errno));
		FREE_AND_NULL(f->tmp);	/* nothing to unlink */
		atomic_abort(f);
		return -1;
	}
	if (fchmod(f->fd, mode) < 0) {
		*cause = xasprintf("unable to write '%s': %s", path, strerror(errno));
		atomic_abort(f);
		return -1;
	}
	return 0;
}

/* Append to the temporary file. */
int atomic_write(struct atomic_file *f, const void *data, size_t len, char **cause)
{
	if (write_all(f->fd, data, len) < 0) {
		*cause = xasprintf("unable to write '%s': %s", f->path, strerror(errno));
		atomic_abort(f);
		return -1;
	}
	return 0;
}

/* Make it durable and put it in place. */
int atomic_commit(struct atomic_file *f, char **cause)
{
	int fd = f->fd, e = 0;

	f->fd = -1;
	if (fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(f->tmp, f->path) < 0)
		e = errno;
	if (e) {
		*cause = xasprintf("unable to write '%s': %s", f->path, strerror(e));
		atomic_abort(f);
		return -1;
	}
	fsync_dir_of(f->path);
	FREE_AND_NULL(f->tmp);
	atomic_abort(f);	/* frees the rest */
	return 0;
}

/* Drop an unfinished replacement (harmless after commit or an error). */
void atomic_abort(struct atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
	f->fd = -1;
}

/* Replace a file's content atomically. */
int write_file_atomic(const char *path, const void *data, size_t len,
		      mode_t mode, char **cause)
{
	struct atomic_file f;

	if (atomic_begin(&f, path, mode, cause) < 0 ||
	    atomic_write(&f, data, len, cause) < 0)
		return -1;
	return atomic_commit(&f, cause);
}

/* Read a regular file of bounded size. */
int read_file(const char *path, size_t max, struct buf *out, int *err,
	      char **cause)
{
	struct stat st;
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	*err = 0;
	if (fd < 0) {
		*err = errno;
		if (errno == ELOOP)
			*cause = xasprintf("refusing to read '%s': it is a symbolic link", path);
		else
			*cause = xasprintf("unable to read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*err = EINVAL;
		*cause = xasprintf("unable to read '%s': not a regular file", path);
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size > max) {
		*err = EFBIG;
		*cause = xasprintf("'%s' is too large (%lld bytes; at most %zu)", path,
				   (long long)st.st_size, max);
		close(fd);
		return -1;
	}
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n > max) {
			*err = EFBIG;
			*cause = xasprintf("'%s' is too large (more than %zu bytes)", path, max);
			close(fd);
			return -1;
		}
		buf_add(out, chunk, (size_t)n);
	}
	if (n < 0) {
		*err = errno;
		*cause = xasprintf("unable to read '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* mkdir that accepts an existing real directory. */
int make_dir(const char *path, mode_t mode, char **cause)
{
	struct stat st;

	if (mkdir(path, mode) == 0) {
		if (chmod(path, mode) < 0) {
			*cause = xasprintf("unable to chmod '%s': %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno == EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (errno == EEXIST)
		*cause = xasprintf("'%s' exists and is not a directory", path);
	else
		*cause = xasprintf("unable to create directory '%s': %s", path,
				   strerror(errno));
	return -1;
}

/* Whether anything exists at path. */
int path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* Take an exclusive flock, waiting a while for its holder. */
int lock_wait(int fd, int wait_ms)
{
	int waited = 0;

	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (waited >= wait_ms)
			return 1;
		nanosleep(&(struct timespec){ 0, 100 * 1000000L }, NULL);
		waited += 100;
	}
	return 0;
}
