/*
 * xloop config get KEY | config set KEY VALUE: read or set one key of
 * xloop.json ("metric.name", "resources.cpus"; get: any key of config.c's
 * table, its default when the file does not set it), checked as xloop checks the
 * file when it loads it; a set is a decision (an ops/decisions.md entry
 * committed with xloop.json), as `space` and `auto` make theirs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "config.h"
#include "loop.h"

#define KEY_DEPTH 4	/* "search.space.LR" at most */

/* KEY split at its dots into path (pointers into the copy *buf). The depth, 0 if bad. */
static size_t split_key(const char *key, char **buf, const char *path[KEY_DEPTH])
{
	char *p;
	size_t n = 0;

	*buf = xstrdup(key);
	for (p = *buf; n < KEY_DEPTH; n++) {
		char *dot = strchr(p, '.');

		path[n] = p;
		if (!*p || (dot && dot == p))
			return 0;
		if (!dot)
			return n + 1;
		*dot = '\0';
		p = dot + 1;
	}
	return 0;
}

/* config get KEY: the value in force as JSON, "(default)" after it when the file does not set it. */
static int config_get(struct xl_ctx *ctx, const char *key)
{
	const char *path[KEY_DEPTH];
	char *buf, *s, *cause = NULL, *keys;
	size_t depth = split_key(key, &buf, path);
	int is_default = 0;
	json_t *v = depth ? config_value(&ctx->cfg, ctx->root, path, depth, &is_default,
					 &cause) : NULL;

	if (!v && cause) {
		error("%s", cause);
		free(cause);
		free(buf);
		return XL_DATAERR;
	}
	if (!v) {
		/* the section's keys when it is one, else every key */
		keys = depth > 1 ? config_keys(path[0], ", ") : xstrdup("");
		if (!*keys) {
			free(keys);
			keys = config_keys(NULL, ", ");
		}
		error("%s has no key '%s' (the keys: %s; `xloop help config`)", CONFIG_FILE,
		      key, keys);
		free(keys);
		free(buf);
		return XL_DATAERR;
	}
	free(buf);
	/* the value is JSON already: --json prints the same, without the note */
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	printf("%s%s\n", s ? s : "null", is_default && !ctx->json ? " (default)" : "");
	free(s);
	json_decref(v);
	return XL_OK;
}

/*
 * VALUE as the key's JSON: a number, true/false or a quoted string when it
 * parses as one and the key takes it, else the text as a string.
 */
static json_t *value_for(struct xl_ctx *ctx, const char *const *path, size_t depth,
			 const char *text, char **cause)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
	char *why = NULL;

	if (v && config_check_edit(ctx->root, path, depth, json_incref(v), &why) == 0)
		return v;
	json_decref(v);
	if (text[0] != '"') {
		FREE_AND_NULL(why);
		v = json_string(text);
		if (v && config_check_edit(ctx->root, path, depth, json_incref(v), &why) == 0)
			return v;
		json_decref(v);
	}
	*cause = why ? why : xstrdup("not a valid value");
	return NULL;
}

/* config set KEY VALUE: checked, written, recorded as a decision, committed. */
static int config_set(struct xl_ctx *ctx, const char *key, const char *text)
{
	const char *path[KEY_DEPTH];
	char *buf, *cause = NULL, *what, *shown;
	size_t depth = split_key(key, &buf, path);
	json_t *v;
	int rc;

	if (depth == 1 && strcmp(path[0], "study") == 0) {
		error("the study's name is fixed: its runs live in runs/%s/ and its state "
		      "under that name (`xloop init --study S` in another directory starts "
		      "another)", ctx->cfg.study);
		free(buf);
		return XL_DATAERR;
	}
	if (depth < 2) {
		error("'%s' is not a key of %s: name one as SECTION.KEY (metric.name, "
		      "resources.cpus)", key, CONFIG_FILE);
		free(buf);
		return XL_DATAERR;
	}
	if (strcmp(path[0], "search") == 0 || strcmp(path[0], "autopilot") == 0) {
		error("%s is set by `xloop %s`, which checks it against the baseline and "
		      "the budget", key, strcmp(path[0], "search") == 0 ? "space" : "auto");
		free(buf);
		return XL_DATAERR;
	}
	v = value_for(ctx, path, depth, text, &cause);
	if (!v) {
		error("%s %s: %s; %s is unchanged", key, text, cause, CONFIG_FILE);
		free(cause);
		free(buf);
		return XL_DATAERR;
	}
	shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	what = xasprintf("%s = %s", key, shown ? shown : text);
	rc = loop_decide_config(ctx, path, depth, v, what);
	if (rc == 0 && ctx->json)
		printf("%s\n", shown ? shown : "null");	/* as `config get` prints it */
	else if (rc == 0)
		printf("set %s (committed with an ops/decisions.md entry)\n", what);
	free(shown);
	free(what);
	free(buf);
	return rc;
}

/* config get, config set. */
static int cmd_config(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	if (cmd_is(self, "set"))
		return config_set(ctx, args->pos[0], args->pos[1]);
	return config_get(ctx, args->pos[0]);
}

static const struct cmd_entry config_subs[] = {
	{ .name = "config get", .args = "KEY", .min = 1, .max = 1, .exec = cmd_config,
	  .summary = "print one key of xloop.json as JSON, its default when the file has none" },
	{ .name = "config set", .args = "KEY VALUE", .min = 2, .max = 2, .exec = cmd_config,
	  .summary = "set one key of xloop.json, checked, committed as a decision" },
	{ NULL },
};

const struct cmd_entry cmd_config_entry = {
	.name = "config", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_LOOP,
	.target = CMD_TARGET_NONE,
	.summary = "read or set one key of xloop.json (metric.name, resources.cpus, ...)",
	.help = "get KEY          the value in force, as JSON: the file's, else the default\n"
	"                 followed by \"(default)\" (every key of the table: an\n"
	"                 unknown one is refused with the keys it could be)\n"
	"set KEY VALUE    set it: VALUE is taken as JSON when it parses as what the\n"
	"                 key takes (2, true, \"text\"), else as a string (accuracy)\n"
	"KEY is SECTION.NAME as in xloop.json: slurm.*, resources.*, metric.*\n"
	"(metric.name: the score's key in cv.json; metric.goal: max or min),\n"
	"queue.*, breaker.*, notify.*, segments.*, driver.*, tracker.* (run_id_vars:\n"
	"variables set to XLOOP_RUN_ID in every job of a run, [\"WANDB_RUN_ID\"]; env:\n"
	"fixed ones, {\"WANDB_RESUME\": \"allow\"}). The result is checked\n"
	"as xloop checks the file when it loads it: a bad key or value exits 65\n"
	"and leaves xloop.json as it was. A set is a decision: an ops/decisions.md\n"
	"entry committed with xloop.json. search.* and autopilot.* are set by\n"
	"`xloop space` and `xloop auto`, which check them against the baseline;\n"
	"the study's name is fixed (its runs live under it).\n"
	"With --json both print the value as JSON, as get does without it (and\n"
	"without \"(default)\").\n",
	.flags = CMD_DB | CMD_NOROOT | CMD_LOCK, .subs = config_subs,
};
