/* What xloop checks and makes in a study's files: scripts, cv.json, tokens. */
#ifndef XLOOP_STUDY_H
#define XLOOP_STUDY_H

#include <stddef.h>
#include <time.h>

#include "lib/buf.h"

#define JOBSH_MAX_BYTES (1 << 20)
#define CV_MAX_BYTES (1 << 20)

/* A fresh random token for a submission ("xl" + 24 hex digits). */
void study_token(char out[27]);

/*
 * `bash -n` on a script's text (NUL-free): 0 when bash reads it; -1 with
 * bash's complaint in *cause. name is the file it comes from, for messages.
 */
int study_bash_syntax(const char *name, const char *text, char **cause);

/*
 * Read a job script: a regular file (no symlink), at most JOBSH_MAX_BYTES,
 * no NUL byte, no CRLF. -1 with *cause; *err is the errno (ENOENT: missing).
 */
int study_read_script(const char *path, struct buf *out, int *err, char **cause);

/*
 * Load a cv.json: a JSON object with a finite number under key (the
 * config's metric.name; NULL: "score"), or, when key is absent, under
 * "score". Fills *score and *mtime (when not NULL). -1 with *cause; *err as
 * for read_file (ENOENT: missing; EINVAL: not valid).
 */
int study_load_cv(const char *path, const char *key, double *score, time_t *mtime,
		  int *err, char **cause);

#endif
