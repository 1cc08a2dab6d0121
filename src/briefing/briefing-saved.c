/*
 * The last briefing, kept so that it can be read twice: `next` and `resume`
 * save it before printing it (.xloop/briefing.json), mark it seen only when
 * all of it reached stdout, and `resume --again` prints the saved copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "briefing/briefing.h"
#include "lib/fsutil.h"

#define SAVED_FILE ".xloop/briefing.json"

/* Save b (and which command made it, and when) for `resume --again`. */
int briefing_save(struct xl_ctx *ctx, const json_t *b, const char *command)
{
	json_t *doc = json_pack("{s:s, s:I, s:O}", "command", command, "at",
				(json_int_t)time(NULL), "briefing", (json_t *)b);
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL, *path, *cause = NULL;
	int rc = -1;

	json_decref(doc);
	if (!text)
		return -1;
	path = path_join(ctx->root, SAVED_FILE);
	rc = write_file_atomic(path, text, strlen(text), 0600, &cause);
	if (rc < 0)
		warning("unable to keep the briefing for `xloop resume --again`: %s",
			cause ? cause : "?");
	free(cause);
	free(path);
	free(text);
	return rc;
}

/* The saved briefing, its command and time; NULL with *cause. */
json_t *briefing_saved(struct xl_ctx *ctx, char **command, long long *at, char **cause)
{
	char *path = path_join(ctx->root, SAVED_FILE);
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *b;

	b = json_object_get(doc, "briefing");
	if (!json_is_object(b) || !json_is_string(json_object_get(doc, "command"))) {
		*cause = doc ? xasprintf("%s is not a saved briefing", path) :
			 xasprintf("no briefing was printed here yet (%s: %s): `xloop resume` "
				   "prints one", SAVED_FILE, jerr.text);
		json_decref(doc);
		free(path);
		return NULL;
	}
	*command = xstrdup(json_string_value(json_object_get(doc, "command")));
	*at = json_integer_value(json_object_get(doc, "at"));
	json_incref(b);
	json_decref(doc);
	free(path);
	return b;
}

/* Flush stdout; mark b seen only when every byte of it was written. */
int briefing_mark_if_written(struct xl_ctx *ctx, json_t *b)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		warning("the briefing did not reach its reader whole (the pipe was closed?): "
			"it stays unseen, so the next briefing repeats it; `xloop resume "
			"--again` prints this one again");
		return -1;
	}
	return briefing_mark_seen(ctx, b);
}
