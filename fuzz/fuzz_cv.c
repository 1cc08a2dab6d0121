/*
 * cv.json loading: study_load_cv() reads a file, so each input is written
 * to a private temporary file first. A loaded score must be finite.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "fuzz.h"
#include "study.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[] = "/tmp/xloop-fuzz-cv.XXXXXX";
static char path[64];

/* Remove the temporary file and its directory. */
static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* Make the private directory the inputs are written to. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	xsnprintf(path, sizeof(path), "%s/cv.json", dir);
	atexit(cleanup);
	return 0;
}

/* Write data to the file, whole, or abort. */
static void write_input(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t off = 0;

	if (fd < 0) {
		perror(path);
		abort();
	}
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			perror(path);
			abort();
		}
		off += (size_t)n;
	}
	close(fd);
}

/* Load one input as cv.json. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double score = NAN;
	time_t mtime = 0;
	char *cause = NULL;
	int err = -1, rc;

	write_input(data, size);
	rc = study_load_cv(path, NULL, &score, &mtime, &err, &cause);
	if (rc == 0) {
		FUZZ_CHECK(isfinite(score) && err == 0 && mtime > 0 && cause == NULL,
			   "loaded score %g, err %d", score, err);
	} else {
		FUZZ_CHECK(rc == -1 && cause && err == EINVAL,
			   "rc %d, err %d: %s", rc, err, cause ? cause : "no cause");
	}
	free(cause);
	return 0;
}
