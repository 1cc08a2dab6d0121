/*
 * xloop adopt PATH --tag T [--cv FILE]: register an existing job script as
 * a root run of the study, copied byte for byte and committed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "loop.h"
#include "opts.h"
#include "study.h"

/* Register a proven job script. */
static int cmd_adopt(struct xl_ctx *ctx, const struct cmd_entry *self,
		     int argc, char **argv)
{
	const char *tag = NULL, *cv = NULL;
	const struct opt opts[] = {
		{ "tag", OPT_STRING, &tag },
		{ "cv", OPT_STRING, &cv },
		OPT_END,
	};
	struct buf text = BUF_INIT;
	struct run r = { 0 };
	char **pos, *cause = NULL, *tmp = NULL;
	double score = 0;
	int npos, rc, err;

	rc = opts_parse(ctx, self, opts, argc, argv, &pos, &npos);
	if (rc)
		return rc > 0 ? XL_OK : XL_USAGE;
	if (opts_npos(self, pos, npos, 1, 1) < 0 ||
	    (!tag && cmd_usage_error(self, "--tag is required") < 0)) {
		free(pos);
		return XL_USAGE;
	}
	rc = loop_check_new_tag(ctx, tag, &cause);
	if (rc)
		goto fail;
	if (study_read_script(pos[0], &text, &err, &cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto fail;
	}
	if (study_bash_syntax(pos[0], text.s, &cause) < 0) {
		rc = XL_DATAERR;
		goto fail;
	}
	if (cv && study_load_cv(cv, &score, NULL, &err, &cause) < 0) {
		rc = err == ENOENT ? XL_NOINPUT : XL_DATAERR;
		goto fail;
	}
	r.study = ctx->cfg.study;
	r.tag = (char *)tag;
	rc = loop_create_run(ctx, &r, text.s, text.len, cv, score, &cause);
	if (rc)
		goto fail;
	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:b, s:o, s:s}", "study", r.study,
					"tag", r.tag, "job", (tmp = run_job_path(ctx->root,
					r.study, r.tag)), "proven", cv != NULL,
					"score", cv ? json_real(score) : json_null(),
					"commit", r.commit_id ? r.commit_id : ""));
	} else {
		printf("adopted %s as run '%s' of study '%s'%s\n", pos[0], tag, r.study,
		       cv ? " (proven)" : "");
		if (cv)
			printf("  score %g from %s\n", score, cv);
		if (r.commit_id && *r.commit_id)
			printf("  committed runs/%s/%s/job.sh as %.12s\n", r.study, tag,
			       r.commit_id);
		printf("next: xloop new TAG --from %s --set VAR=VALUE\n", tag);
	}
	free(r.commit_id);
	free(r.config);
	free(r.config_key);
	free(tmp);
	free(pos);
	buf_release(&text);
	return XL_OK;
fail:
	error("%s", cause ? cause : "adopt failed");
	free(r.config);
	free(r.config_key);
	free(cause);
	free(pos);
	buf_release(&text);
	return rc ? rc : XL_ERR;
}

const struct cmd_entry cmd_adopt_entry = {
	"adopt", "PATH --tag T [--cv FILE]",
	"register an existing job script as a root run of the study",
	"The script is copied byte for byte to runs/<study>/T/job.sh (mode 0755)\n"
	"and committed to git (only that path; what you staged stays staged). It\n"
	"must pass `bash -n` and have Unix line ends (sbatch refuses CRLF). With\n"
	"--cv, FILE is a cv.json from a run you made by hand (a JSON object with a\n"
	"finite numeric \"score\"): the run is proven with that score, so it can be\n"
	"a parent straight away.\n"
	"\n"
	"options:\n"
	"  --tag T     the run's tag: 1-64 of [A-Za-z0-9._-], not starting with . _ -\n"
	"  --cv FILE   mark the run proven with FILE's score\n",
	CMD_DB | CMD_NOROOT | CMD_LOCK, cmd_adopt,
};
