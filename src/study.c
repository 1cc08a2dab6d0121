/* Checks on a study's files. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <jansson.h>

#include "lib/fsutil.h"
#include "lib/proc.h"
#include "study.h"

/* A random submission token. */
void study_token(char out[27])
{
	unsigned char r[12];
	size_t i, got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("getrandom failed: %s", strerror(errno));
		}
		got += (size_t)n;
	}
	out[0] = 'x';
	out[1] = 'l';
	for (i = 0; i < sizeof(r); i++)
		xsnprintf(out + 2 + 2 * i, 3, "%02x", r[i]);
}

/* Run bash -n on a script's text (given on stdin); name is for messages. */
int study_bash_syntax(const char *name, const char *text, char **cause)
{
	const char *argv[] = { "bash", "-n", NULL };
	struct proc p = PROC_INIT;
	int rc = 0;

	p.argv = argv;
	p.in = text;
	p.timeout_ms = 10000;
	if (proc_run(&p) < 0) {
		*cause = xasprintf("unable to run bash to check '%s': %s", name,
				   strerror(p.exec_errno));
		rc = -1;
	} else if (p.status != 0) {
		buf_rtrim(&p.err);
		*cause = xasprintf("'%s' does not pass bash -n: %s", name,
				   p.err.len ? p.err.s : "bash refused it");
		rc = -1;
	}
	proc_release(&p);
	return rc;
}

/* Read a job script with the checks every command wants. */
int study_read_script(const char *path, struct buf *out, int *err, char **cause)
{
	size_t i, line = 1;

	if (read_file(path, JOBSH_MAX_BYTES, out, err, cause) < 0)
		return -1;
	if (memchr(out->s, '\0', out->len)) {
		*err = EINVAL;
		*cause = xasprintf("'%s' contains a NUL byte: not a shell script", path);
		return -1;
	}
	for (i = 0; i < out->len; i++) {
		if (out->s[i] == '\n')
			line++;
		else if (out->s[i] == '\r' && i + 1 < out->len && out->s[i + 1] == '\n')
			break;
	}
	if (i < out->len) {
		/* sbatch refuses any script with one ("DOS line breaks") */
		*err = EINVAL;
		*cause = xasprintf("'%s' has Windows line ends (CRLF, first on line %zu): "
				   "sbatch would refuse it; convert it with dos2unix",
				   path, line);
		return -1;
	}
	return 0;
}

/* Load and check a cv.json. */
int study_load_cv(const char *path, const char *key, double *score, time_t *mtime,
		  int *err, char **cause)
{
	struct buf b = BUF_INIT;
	json_error_t jerr;
	json_t *doc = NULL, *v;
	struct stat st;
	int rc = -1;

	if (read_file(path, CV_MAX_BYTES, &b, err, cause) < 0)
		goto out;
	*err = EINVAL;
	doc = json_loadb(b.s, b.len, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL) {
		*cause = xasprintf("'%s' is not valid JSON (line %d: %s)", path, jerr.line,
				   jerr.text);
		goto out;
	}
	if (!json_is_object(doc)) {
		*cause = xasprintf("'%s' must hold a JSON object", path);
		goto out;
	}
	if (key == NULL || *key == '\0')
		key = "score";
	v = json_object_get(doc, key);
	if (v == NULL && strcmp(key, "score") != 0 &&
	    (v = json_object_get(doc, "score")) != NULL)
		key = "score";
	if (v == NULL) {
		if (strcmp(key, "score") == 0)
			*cause = xasprintf("'%s' has no \"score\"", path);
		else
			*cause = xasprintf("'%s' has neither \"%s\" (metric.name in "
					   "xloop.json) nor \"score\"", path, key);
		goto out;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v))) {
		*cause = xasprintf("'%s': \"%s\" must be a finite number", path, key);
		goto out;
	}
	*score = json_number_value(v);
	if (mtime) {
		if (stat(path, &st) < 0) {
			*cause = xasprintf("unable to stat '%s': %s", path, strerror(errno));
			goto out;
		}
		*mtime = st.st_mtime;
	}
	*err = 0;
	rc = 0;
out:
	json_decref(doc);
	buf_release(&b);
	return rc;
}
