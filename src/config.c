/*
 * Loading, validating and writing xloop.json. Over 900 lines: the table of
 * its keys (types, checks, defaults) is static here, and the parser, the
 * writer, the editor and config get's reader all walk it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "lib/fsutil.h"
#include "jobsh/jobsh.h"
#include "jobs/stop-rule.h"

/* A study or tag name. */
int valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64 || !isalnum((unsigned char)s[0]))
		return 0;
	for (i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

static int all_of(const char *s, const char *extra, int allow_empty)
{
	if (*s == '\0')
		return allow_empty;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return 0;
	return 1;
}

/* "16G", "4000M", "500000K", "2T", "1024" (MB): positive. */
int config_valid_mem(const char *s)
{
	size_t n = strlen(s), digits = strspn(s, "0123456789");

	if (digits == 0 || digits > 12 || strspn(s, "0") == digits)
		return 0;
	return n == digits || (n == digits + 1 && strchr("KMGT", s[digits]));
}

/* Slurm's time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S; not zero. */
int config_valid_time(const char *s)
{
	const char *p = s;
	int colons = 0, nonzero = 0, group = 0;

	if (strchr(s, '-')) {
		size_t d = strspn(s, "0123456789");

		if (d == 0 || d > 4 || s[d] != '-')
			return 0;
		nonzero |= strspn(s, "0") != d;
		p = s + d + 1;
	}
	for (; *p; p++) {
		if (isdigit((unsigned char)*p)) {
			if (++group > 6)
				return 0;
			nonzero |= *p != '0';
		} else if (*p == ':' && group > 0 && ++colons <= 2) {
			group = 0;
		} else {
			return 0;
		}
	}
	return group > 0 && nonzero;
}

/* Megabytes in a --mem value; K rounds up. */
long long config_mem_mb(const char *s)
{
	long long v = strtoll(s, NULL, 10);

	switch (s[strspn(s, "0123456789")]) {
	case 'K':
		return (v + 1023) / 1024;
	case 'G':
		return v * 1024;
	case 'T':
		return v * 1024 * 1024;
	default:
		return v;
	}
}

/* Seconds in a --time value, read as Slurm reads it. */
long long config_time_secs(const char *s)
{
	long long f[3] = { 0, 0, 0 }, days = 0;
	const char *p = s, *dash = strchr(s, '-');
	int n = 0;

	if (dash) {
		days = strtoll(s, NULL, 10);
		p = dash + 1;
	}
	while (*p && n < 3) {
		f[n++] = strtoll(p, NULL, 10);
		p += strspn(p, "0123456789");
		if (*p == ':')
			p++;
	}
	if (dash) /* D-H, D-H:M, D-H:M:S */
		return days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
	if (n == 1)	/* M */
		return f[0] * 60;
	if (n == 2)	/* M:S */
		return f[0] * 60 + f[1];
	return f[0] * 3600 + f[1] * 60 + f[2];	/* H:M:S */
}

static int valid_env_name(const char *s)
{
	if (*s == '\0')
		return 1;
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	return all_of(s, "_", 0);
}

/* Fill c with the defaults. */
void config_defaults(struct config *c, const char *study, const char *partition)
{
	memset(c, 0, sizeof(*c));
	c->study = xstrdup(study ? study : "main");
	c->partition = xstrdup(partition ? partition : "gpu");
	c->account = xstrdup("");
	c->qos = xstrdup("");
	c->res.gres = xstrdup("gpu:1");
	c->res.cpus = 4;
	c->res.mem = xstrdup("16G");
	c->res.time = xstrdup("04:00:00");
	c->metric = xstrdup("score");
	c->goal_max = 1;
	c->depth = 1;
	c->lanes = 1;
	c->stale_after = 15;
	c->retry_infra_max = 2;
	c->retry_auto_resources = 0;
	c->breaker_program = 2;
	c->breaker_infra = 3;
	c->breaker_no_gpu = 1;
	c->notify_url_env = xstrdup("XLOOP_NOTIFY_URL");
	c->notify_kind = xstrdup("json");
	c->seg.max = 0;
	c->seg.signal = xstrdup("USR2");
	c->seg.lead = 300;
	c->seg.checkpoint = xstrdup("checkpoint");
	c->stop.on = 1;
	c->stop.grace = 120;
	c->stop.chance_epochs = 2;
	c->stop.warmup = STOP_WARMUP;
	c->stop.behind = STOP_BEHIND;
	c->stop.noise_z = STOP_NOISE_Z;
	c->remote_host = xstrdup("");
	c->remote_dir = xstrdup("");
	c->min_delta = 0;
	c->search.seed = xstrdup("");
	c->search.replicates = 3;
	c->search.confirm_max = 6;
	c->search.alpha = 0.05;
	c->search.branch = 3;
	c->autopilot.until = xstrdup("");
	c->driver.mode = xstrdup("none");	/* init writes "slurm" where Slurm answers */
	c->driver.partition = xstrdup("");
	c->driver.qos = xstrdup("");
	c->driver.host = xstrdup("");
}

/* A signal bash can trap and Slurm can send (KILL and STOP cannot be trapped). */
int config_valid_signal(const char *s)
{
	static const char *const ok[] = { "USR1", "USR2", "TERM", "INT", "HUP",
					  "QUIT", "ALRM", "URG", "CONT", "XCPU" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++)
		if (strcmp(s, ok[i]) == 0)
			return 1;
	return 0;
}

/* A relative path below a directory, in plain parts. */
int config_valid_subpath(const char *s)
{
	const char *p = s;

	if (!*s || *s == '/' || strlen(s) > 200)
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr("._-+", p[i]))
				return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return s[strlen(s) - 1] != '/';
}

/* Free n strings and their array. */
static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Free the strings. */
void config_release(struct config *c)
{
	free(c->study);
	free(c->partition);
	free(c->account);
	free(c->qos);
	free(c->res.gres);
	free(c->res.mem);
	free(c->res.time);
	free(c->metric);
	free(c->notify_url_env);
	free(c->notify_kind);
	free(c->seg.signal);
	free(c->seg.checkpoint);
	free(c->remote_host);
	free(c->remote_dir);
	free(c->search.seed);
	space_release(&c->search.space);
	free_strv(c->tracker.id_vars, c->tracker.nid);
	free_strv(c->tracker.env, c->tracker.nenv);
	free(c->autopilot.until);
	free(c->driver.mode);
	free(c->driver.partition);
	free(c->driver.qos);
	free(c->driver.host);
	memset(c, 0, sizeof(*c));
}

enum field_kind { F_STR, F_INT, F_BOOL, F_GOAL, F_CHAIN, F_LANES, F_NUM, F_SPACE, F_IDVARS,
		  F_ENV };

struct field {
	const char *section;	/* NULL: top level */
	const char *key;
	enum field_kind kind;
	size_t off;		/* offsetof in struct config */
	long long min, max;	/* F_INT */
	int (*check)(const char *);	/* F_STR */
	const char *what;	/* describes a valid value */
	double dmin, dmax;	/* F_NUM: dmin <= v <= dmax */
	int quiet;		/* not written by config_to_json (set by commands) */
};

static int check_name(const char *s) { return valid_name(s); }
static int check_word(const char *s) { return all_of(s, "_.-", 0); }
static int check_word_or_empty(const char *s) { return all_of(s, "_.-", 1); }
static int check_gres(const char *s) { return all_of(s, "_.:-", 1) && s[0] != ':'; }
static int check_host(const char *s) { return s[0] != '-' && all_of(s, "_.@:[]-", 1); }
static int check_notify_kind(const char *s)
{
	return strcmp(s, "discord") == 0 || strcmp(s, "slack") == 0 ||
	       strcmp(s, "ntfy") == 0 || strcmp(s, "json") == 0;
}
static int check_chain(const char *s)
{
	return strcmp(s, "study") == 0 || strcmp(s, "any-user") == 0;
}
static int check_seed(const char *s) { return !*s || jobsh_valid_name(s); }
static int check_iso(const char *s) { return !*s || config_parse_iso(s) >= 0; }
static int check_driver_mode(const char *s)
{
	return strcmp(s, "slurm") == 0 || strcmp(s, "scrontab") == 0 ||
	       strcmp(s, "cron") == 0 || strcmp(s, "none") == 0;
}
static int check_dir(const char *s)
{
	return s[0] != '-' && strchr(s, '\n') == NULL;
}

#define OFF(m) offsetof(struct config, m)
static const struct field fields[] = {
	{ NULL, "study", F_STR, OFF(study), 0, 0, check_name,
	  "a name of letters, digits, '.', '_', '-' (at most 64)" },
	{ "slurm", "partition", F_STR, OFF(partition), 0, 0, check_word, "a partition name" },
	{ "slurm", "account", F_STR, OFF(account), 0, 0, check_word_or_empty, "an account name or \"\"" },
	{ "slurm", "qos", F_STR, OFF(qos), 0, 0, check_word_or_empty, "a QOS name or \"\"" },
	{ "slurm", "nice", F_INT, OFF(nice), 0, 2147483645, NULL,
	  "an integer from 0 (users can only lower their priority)" },
	{ "slurm", "chain", F_CHAIN, OFF(chain_any_user), 0, 0, NULL,
	  "\"study\" or \"any-user\"" },
	{ "resources", "gres", F_STR, OFF(res.gres), 0, 0, check_gres, "a GRES like \"gpu:1\" or \"\"" },
	{ "resources", "cpus", F_INT, OFF(res.cpus), 1, 4096, NULL, "an integer from 1 to 4096" },
	{ "resources", "mem", F_STR, OFF(res.mem), 0, 0, config_valid_mem, "a positive size like \"16G\" or \"4000M\"" },
	{ "resources", "time", F_STR, OFF(res.time), 0, 0, config_valid_time, "a Slurm time like \"04:00:00\" or \"1-00:00:00\"" },
	{ "metric", "name", F_STR, OFF(metric), 0, 0, check_word, "a metric name" },
	{ "metric", "goal", F_GOAL, OFF(goal_max), 0, 0, NULL, "\"max\" or \"min\"" },
	{ "metric", "min_delta", F_NUM, OFF(min_delta), 0, 0, NULL, "a number >= 0",
	  0, 1e300, 1 },
	{ "queue", "depth", F_INT, OFF(depth), 0, 16, NULL, "an integer from 0 to 16" },
	{ "queue", "lanes", F_LANES, OFF(lanes), 1, CONFIG_MAX_LANES, NULL,
	  "an integer from 1 to 64 or \"auto\"" },
	{ "queue", "stale_after", F_INT, OFF(stale_after), 1, 10080, NULL,
	  "minutes from 1 to 10080" },
	{ "retry", "infra_max", F_INT, OFF(retry_infra_max), 0, 100, NULL, "an integer from 0 to 100" },
	{ "retry", "auto_resources", F_BOOL, OFF(retry_auto_resources), 0, 0, NULL, "true or false" },
	{ "breaker", "program", F_INT, OFF(breaker_program), 0, 100, NULL,
	  "an integer from 0 (never) to 100" },
	{ "breaker", "infra", F_INT, OFF(breaker_infra), 0, 100, NULL,
	  "an integer from 0 (never) to 100" },
	{ "breaker", "no_gpu", F_BOOL, OFF(breaker_no_gpu), 0, 0, NULL, "true or false" },
	{ "notify", "url_env", F_STR, OFF(notify_url_env), 0, 0, valid_env_name,
	  "the name of an environment variable, or \"\"" },
	{ "notify", "kind", F_STR, OFF(notify_kind), 0, 0, check_notify_kind,
	  "\"discord\", \"slack\", \"ntfy\" or \"json\"" },
	{ "segments", "max", F_INT, OFF(seg.max), 0, 1000, NULL,
	  "an integer from 0 (off) to 1000" },
	{ "segments", "signal", F_STR, OFF(seg.signal), 0, 0, config_valid_signal,
	  "a signal name bash can trap, like \"USR2\" or \"TERM\"" },
	{ "segments", "lead", F_INT, OFF(seg.lead), 1, 65535, NULL,
	  "seconds from 1 to 65535" },
	{ "segments", "checkpoint", F_STR, OFF(seg.checkpoint), 0, 0, config_valid_subpath,
	  "a relative path below the run directory, like \"checkpoint\"" },
	{ "stop", "on", F_BOOL, OFF(stop.on), 0, 0, NULL, "true or false" },
	{ "stop", "grace", F_INT, OFF(stop.grace), 1, 86400, NULL,
	  "seconds from 1 to 86400" },
	{ "stop", "chance_epochs", F_INT, OFF(stop.chance_epochs), 0, 1000, NULL,
	  "an integer from 0 (never) to 1000" },
	{ "stop", "warmup", F_INT, OFF(stop.warmup), 0, STOP_MAX_EPOCH, NULL,
	  "epochs from 0 to 100000" },
	{ "stop", "behind", F_INT, OFF(stop.behind), 0, 1000, NULL,
	  "an integer from 0 (never) to 1000" },
	{ "stop", "noise_z", F_NUM, OFF(stop.noise_z), 0, 0, NULL,
	  "a number from 0 to 100", 0, 100 },
	{ "remote", "host", F_STR, OFF(remote_host), 0, 0, check_host, "an ssh host name or \"\"" },
	{ "remote", "dir", F_STR, OFF(remote_dir), 0, 0, check_dir, "a directory on the host or \"\"" },
	{ "search", "seed", F_STR, OFF(search.seed), 0, 0, check_seed,
	  "a job.sh variable name or \"\"", 0, 0, 1 },
	{ "search", "replicates", F_INT, OFF(search.replicates), 2, 100, NULL,
	  "an integer from 2 to 100", 0, 0, 1 },
	{ "search", "confirm_max", F_INT, OFF(search.confirm_max), 2, 100, NULL,
	  "an integer from 2 to 100", 0, 0, 1 },
	{ "search", "alpha", F_NUM, OFF(search.alpha), 0, 0, NULL,
	  "a number from 0.0001 to 0.5", 0.0001, 0.5, 1 },
	{ "search", "branch", F_INT, OFF(search.branch), 1, 20, NULL,
	  "an integer from 1 to 20", 0, 0, 1 },
	{ "search", "space", F_SPACE, OFF(search.space), 0, 0, NULL,
	  "an object of VAR: [\"V1\", ...] or \"LO..HI[:int|:log][:steps=N][:at=V]\"", 0, 0, 1 },
	{ "autopilot", "on", F_BOOL, OFF(autopilot.on), 0, 0, NULL, "true or false", 0, 0, 1 },
	{ "autopilot", "budget_runs", F_INT, OFF(autopilot.budget_runs), 0, 1000000, NULL,
	  "an integer from 0 (no limit)", 0, 0, 1 },
	{ "autopilot", "budget_hours", F_NUM, OFF(autopilot.budget_hours), 0, 0, NULL,
	  "a number of GPU-hours >= 0 (0: no limit)", 0, 1e9, 1 },
	{ "autopilot", "until", F_STR, OFF(autopilot.until), 0, 0, check_iso,
	  "an ISO-8601 UTC time like \"2026-12-02T06:00:00Z\" or \"\"", 0, 0, 1 },
	{ "autopilot", "since", F_INT, OFF(autopilot.since), 0, 1LL << 40, NULL,
	  "unix seconds", 0, 0, 1 },
	{ "driver", "mode", F_STR, OFF(driver.mode), 0, 0, check_driver_mode,
	  "\"slurm\", \"scrontab\", \"cron\" or \"none\"" },
	{ "driver", "partition", F_STR, OFF(driver.partition), 0, 0, check_word_or_empty,
	  "a partition name or \"\"" },
	{ "driver", "qos", F_STR, OFF(driver.qos), 0, 0, check_word_or_empty, "a QOS name or \"\"" },
	{ "driver", "host", F_STR, OFF(driver.host), 0, 0, check_host, "an ssh host name or \"\"" },
	{ "tracker", "run_id_vars", F_IDVARS, OFF(tracker), 0, 0, NULL,
	  "a list of at most 16 environment variable names (not XLOOP_* or SLURM_*)" },
	{ "tracker", "env", F_ENV, OFF(tracker), 0, 0, NULL,
	  "an object of at most 16 NAME: \"VALUE\" (not XLOOP_* or SLURM_*)" },
};

static const struct field *find_field(const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct field *f = &fields[i];

		if ((f->section == NULL) != (section == NULL))
			continue;
		if (section && strcmp(f->section, section) != 0)
			continue;
		if (key == NULL || strcmp(f->key, key) == 0)
			return f;
	}
	return NULL;
}

/* search.space: VAR -> a list of choices or a range string. */
static int set_space(struct space *sp, json_t *v, const char *path, char **cause)
{
	const char *name;
	json_t *spec;

	if (!json_is_object(v))
		goto bad;
	space_release(sp);
	json_object_foreach(v, name, spec) {
		struct space_var var;
		char *why = NULL;
		int rc;

		if (!jobsh_valid_name(name))
			goto bad;
		if (json_is_string(spec)) {
			rc = space_from_range(name, json_string_value(spec), &var, &why);
		} else if (json_is_array(spec)) {
			const char **vals = xcalloc(json_array_size(spec) + 1, sizeof(*vals));
			size_t i;
			json_t *e;

			rc = 0;
			json_array_foreach(spec, i, e) {
				if (!json_is_string(e))
					rc = -1;
				vals[i] = json_is_string(e) ? json_string_value(e) : "";
			}
			if (rc == 0)
				rc = space_from_list(name, vals, json_array_size(spec), &var, &why);
			free(vals);
		} else {
			goto bad;
		}
		if (rc < 0) {
			*cause = xasprintf("%s: '%s.%s': %s", CONFIG_FILE, path, name,
					   why ? why : "must be a list of strings");
			free(why);
			return -1;
		}
		sp->v = xreallocarray(sp->v, sp->n + 1, sizeof(*sp->v));
		sp->v[sp->n++] = var;
	}
	return 0;
bad:
	*cause = xasprintf("%s: '%s' must be an object of VAR: [\"V1\", ...] or "
			   "\"LO..HI[:int|:log][:steps=N][:at=V]\"", CONFIG_FILE, path);
	return -1;
}

/* A name a tracker variable may have: not empty, not xloop's nor Slurm's own. */
static int tracker_name(const char *s)
{
	return *s && valid_env_name(s) && strncmp(s, "XLOOP_", 6) != 0 &&
	       strncmp(s, "SLURM_", 6) != 0;
}

/* True when name is among tracker.run_id_vars or tracker.env already. */
static int tracker_has(const struct config *c, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < c->tracker.nid; i++)
		if (strcmp(c->tracker.id_vars[i], name) == 0)
			return 1;
	for (i = 0; i < c->tracker.nenv; i++)
		if (strncmp(c->tracker.env[i], name, len) == 0 && c->tracker.env[i][len] == '=')
			return 1;
	return 0;
}

/* tracker.run_id_vars (a list of names) or tracker.env (NAME: "VALUE"); -1 when bad. */
static int set_tracker(struct config *c, enum field_kind kind, json_t *v)
{
	const char *name;
	json_t *e;
	size_t i;

	if (kind == F_IDVARS) {
		if (!json_is_array(v) || json_array_size(v) > CONFIG_TRACKER_MAX)
			return -1;
		json_array_foreach(v, i, e) {
			name = json_string_value(e);
			if (name == NULL || strlen(name) != json_string_length(e) ||
			    !tracker_name(name) || tracker_has(c, name))
				return -1;
			c->tracker.id_vars = xreallocarray(c->tracker.id_vars, c->tracker.nid + 1,
							   sizeof(char *));
			c->tracker.id_vars[c->tracker.nid++] = xstrdup(name);
		}
		return 0;
	}
	if (!json_is_object(v) || json_object_size(v) > CONFIG_TRACKER_MAX)
		return -1;
	json_object_foreach(v, name, e) {
		if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e) ||
		    !tracker_name(name) || tracker_has(c, name))
			return -1;
		c->tracker.env = xreallocarray(c->tracker.env, c->tracker.nenv + 1, sizeof(char *));
		c->tracker.env[c->tracker.nenv++] = xasprintf("%s=%s", name, json_string_value(e));
	}
	return 0;
}

static int set_field(struct config *c, const struct field *f, json_t *v,
		     const char *path, char **cause)
{
	char *base = (char *)c + f->off;

	switch (f->kind) {
	case F_STR:
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
		    !f->check(json_string_value(v)))
			goto bad;
		free(*(char **)base);
		*(char **)base = xstrdup(json_string_value(v));
		return 0;
	case F_LANES:
		if (json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
			*(long long *)base = 0;	/* "auto": lanes.c counts them */
			return 0;
		}
		/* otherwise an integer in [min, max], as F_INT */
		/* fall through */
	case F_INT:
		if (!json_is_integer(v) || json_integer_value(v) < f->min ||
		    json_integer_value(v) > f->max)
			goto bad;
		*(long long *)base = json_integer_value(v);
		return 0;
	case F_BOOL:
		if (!json_is_boolean(v))
			goto bad;
		*(int *)base = json_is_true(v);
		return 0;
	case F_GOAL:
		if (!json_is_string(v))
			goto bad;
		if (strcmp(json_string_value(v), "max") == 0)
			*(int *)base = 1;
		else if (strcmp(json_string_value(v), "min") == 0)
			*(int *)base = 0;
		else
			goto bad;
		return 0;
	case F_CHAIN:
		if (!json_is_string(v) || !check_chain(json_string_value(v)))
			goto bad;
		*(int *)base = strcmp(json_string_value(v), "any-user") == 0;
		return 0;
	case F_NUM:
		if (!json_is_number(v) || json_number_value(v) < f->dmin ||
		    json_number_value(v) > f->dmax)
			goto bad;
		*(double *)base = json_number_value(v);
		return 0;
	case F_SPACE:
		return set_space((struct space *)base, v, path, cause);
	case F_IDVARS:
	case F_ENV:
		if (set_tracker(c, f->kind, v) < 0)
			goto bad;
		return 0;
	}
bad:
	*cause = xasprintf("%s: '%s' must be %s", CONFIG_FILE, path, f->what);
	return -1;
}

/* Parse and validate config JSON. */
int config_parse(struct config *c, const char *text, size_t len, char **cause)
{
	json_error_t jerr;
	json_t *root, *v, *sv;
	const char *key, *skey;
	struct config tmp;
	int rc = -1;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		*cause = xasprintf("%s: invalid JSON at line %d: %s", CONFIG_FILE,
				   jerr.line, jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		*cause = xasprintf("%s: the top level must be an object", CONFIG_FILE);
		goto out;
	}
	config_defaults(&tmp, NULL, NULL);
	json_object_foreach(root, key, v) {
		const struct field *f = find_field(NULL, key);

		if (f) {
			if (set_field(&tmp, f, v, key, cause) < 0)
				goto fail;
			continue;
		}
		if (find_field(key, NULL) == NULL) {
			*cause = xasprintf("%s: unknown key '%s'", CONFIG_FILE, key);
			goto fail;
		}
		if (!json_is_object(v)) {
			*cause = xasprintf("%s: '%s' must be an object", CONFIG_FILE, key);
			goto fail;
		}
		json_object_foreach(v, skey, sv) {
			char *path = xasprintf("%s.%s", key, skey);

			f = find_field(key, skey);
			if (f == NULL) {
				*cause = xasprintf("%s: unknown key '%s'", CONFIG_FILE, path);
				free(path);
				goto fail;
			}
			if (set_field(&tmp, f, sv, path, cause) < 0) {
				free(path);
				goto fail;
			}
			free(path);
		}
	}
	*c = tmp;
	rc = 0;
	goto out;
fail:
	config_release(&tmp);
out:
	json_decref(root);
	return rc;
}

/* Load <root>/xloop.json. */
int config_load(struct config *c, const char *root, char **cause)
{
	char *path = path_join(root, CONFIG_FILE);
	struct buf b = BUF_INIT;
	int err, rc;

	rc = read_file(path, CONFIG_MAX_BYTES, &b, &err, cause);
	if (rc == 0)
		rc = config_parse(c, b.s, b.len, cause);
	buf_release(&b);
	free(path);
	return rc;
}

/* The value of field f in c as JSON (a new reference). */
static json_t *field_json(const struct config *c, const struct field *f)
{
	const char *base = (const char *)c + f->off;
	json_t *v = NULL;
	size_t k;

	switch (f->kind) {
	case F_NUM:
		v = json_real(*(const double *)base);
		break;
	case F_SPACE: {
		const struct space *sp = (const struct space *)(const void *)base;

		v = json_object();
		for (k = 0; k < sp->n; k++) {
			const struct space_var *sv = &sp->v[k];
			json_t *vals;
			size_t j;

			if (sv->range) {
				json_object_set_new(v, sv->name, json_string(sv->range));
				continue;
			}
			vals = json_array();
			for (j = 0; j < sv->n; j++)
				json_array_append_new(vals, json_string(sv->values[j]));
			json_object_set_new(v, sv->name, vals);
		}
		break;
	}
	case F_IDVARS:
		v = json_array();
		for (k = 0; k < c->tracker.nid; k++)
			json_array_append_new(v, json_string(c->tracker.id_vars[k]));
		break;
	case F_ENV:
		v = json_object();
		for (k = 0; k < c->tracker.nenv; k++) {
			const char *eq = strchr(c->tracker.env[k], '=');
			char *name = xstrndup(c->tracker.env[k], (size_t)(eq - c->tracker.env[k]));

			json_object_set_new(v, name, json_string(eq + 1));
			free(name);
		}
		break;
	case F_STR:
		v = json_string(*(char *const *)base);
		break;
	case F_INT:
		v = json_integer(*(const long long *)base);
		break;
	case F_BOOL:
		v = json_boolean(*(const int *)base);
		break;
	case F_GOAL:
		v = json_string(*(const int *)base ? "max" : "min");
		break;
	case F_CHAIN:
		v = json_string(*(const int *)base ? "any-user" : "study");
		break;
	case F_LANES:
		v = *(const long long *)base ? json_integer(*(const long long *)base) :
		    json_string("auto");
		break;
	}
	return v;
}

/* The configuration as pretty-printed JSON. */
char *config_to_json(const struct config *c)
{
	json_t *root = json_object(), *sec = NULL;
	const char *cur = NULL;
	size_t i;
	char *s, *out;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct field *f = &fields[i];
		json_t *v;

		if (f->quiet || f->kind == F_NUM || f->kind == F_SPACE)
			continue;
		v = field_json(c, f);
		if (f->section == NULL) {
			json_object_set_new(root, f->key, v);
			continue;
		}
		if (cur == NULL || strcmp(cur, f->section) != 0) {
			sec = json_object();
			json_object_set_new(root, f->section, sec);
			cur = f->section;
		}
		json_object_set_new(sec, f->key, v);
	}
	s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		BUG("unable to encode the configuration");
	out = xasprintf("%s\n", s);
	free(s);
	return out;
}

/* xloop.json as a JSON object (*doc), or -1 with *cause. */
static int doc_load(const char *path, json_t **doc, char **cause)
{
	struct buf b = BUF_INIT;
	json_error_t jerr;
	int err;

	*doc = NULL;
	if (read_file(path, CONFIG_MAX_BYTES, &b, &err, cause) < 0)
		return -1;
	*doc = json_loadb(b.s, b.len, JSON_REJECT_DUPLICATES, &jerr);
	buf_release(&b);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		*cause = xasprintf("'%s' is not a JSON object", path);
		return -1;
	}
	return 0;
}

/* The key's value in force: the file's, else the field's default. */
json_t *config_value(const struct config *c, const char *root, const char *const *path,
		     size_t depth, int *is_default, char **cause)
{
	const struct field *f = depth == 1 ? find_field(NULL, path[0]) :
				depth >= 2 ? find_field(path[0], path[1]) : NULL;
	char *file;
	json_t *doc = NULL, *v;
	size_t i;

	*is_default = 0;
	*cause = NULL;
	if (!f || (depth > 2 && f->kind != F_SPACE && f->kind != F_ENV))
		return NULL;
	file = path_join(root, CONFIG_FILE);
	if (doc_load(file, &doc, cause) < 0) {
		free(file);
		return NULL;
	}
	free(file);
	for (v = doc, i = 0; v && i < depth; i++)
		v = json_is_object(v) ? json_object_get(v, path[i]) : NULL;
	if (v) {
		json_incref(v);
	} else if (depth <= 2) {
		v = field_json(c, f);
		*is_default = 1;
	} else {
		*cause = xasprintf("%s.%s has no member '%s'", path[0], path[1], path[2]);
	}
	json_decref(doc);
	return v;
}

/* The table's keys as SECTION.KEY joined by sep. */
char *config_keys(const char *section, const char *sep)
{
	struct buf b = BUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct field *f = &fields[i];

		if (section && (!f->section || strcmp(f->section, section) != 0))
			continue;
		buf_addf(&b, "%s%s%s%s", b.len ? sep : "", f->section ? f->section : "",
			 f->section ? "." : "", f->key);
	}
	return buf_detach(&b, NULL);
}

/* Write doc to xloop.json atomically if it is a valid configuration (not when dry). */
static int doc_store_or_check(const char *path, const json_t *doc, int dry, char **cause)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER), *text;
	struct config check;
	int rc = -1;

	if (s == NULL) {
		*cause = xasprintf("unable to encode '%s'", path);
		return -1;
	}
	text = xasprintf("%s\n", s);
	if (config_parse(&check, text, strlen(text), cause) == 0) {
		config_release(&check);
		rc = dry ? 0 : write_file_atomic(path, text, strlen(text), 0644, cause);
	}
	free(text);
	free(s);
	return rc;
}

/* Write doc to xloop.json atomically if it is a valid configuration. */
static int doc_store(const char *path, const json_t *doc, char **cause)
{
	return doc_store_or_check(path, doc, 0, cause);
}

/* Edit one member of xloop.json, keeping the rest; dry: only check the result. */
static int edit(const char *root, const char *const *path, size_t depth, json_t *v,
		int dry, char **cause)
{
	char *file = path_join(root, CONFIG_FILE);
	json_t *doc = NULL, *cur;
	size_t i;
	int rc = -1;

	if (doc_load(file, &doc, cause) < 0)
		goto out;
	cur = doc;
	for (i = 0; i + 1 < depth; i++) {
		json_t *next = json_object_get(cur, path[i]);

		if (next == NULL) {
			next = json_object();
			json_object_set_new(cur, path[i], next);
		}
		if (!json_is_object(next)) {
			*cause = xasprintf("%s: '%s' must be an object", CONFIG_FILE, path[i]);
			goto out;
		}
		cur = next;
	}
	if (v)
		json_object_set(cur, path[depth - 1], v);
	else
		json_object_del(cur, path[depth - 1]);
	rc = doc_store_or_check(file, doc, dry, cause);
out:
	if (v)
		json_decref(v);
	json_decref(doc);
	free(file);
	return rc;
}

/* Edit one member of xloop.json, keeping the rest. */
int config_edit(const char *root, const char *const *path, size_t depth,
		json_t *v, char **cause)
{
	return edit(root, path, depth, v, 0, cause);
}

/* Whether config_edit(path, v) would give a valid xloop.json; nothing written. */
int config_check_edit(const char *root, const char *const *path, size_t depth,
		      json_t *v, char **cause)
{
	return edit(root, path, depth, v, 1, cause);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static long long days_from_civil(long long y, long long m, long long d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* An ISO-8601 UTC time. */
long long config_parse_iso(const char *s)
{
	int y, mo, d, h, mi, sec = 0, n = 0;
	size_t len = strlen(s);

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) == 6 ||
	    (n = 0, sscanf(s, "%4d-%2d-%2dT%2d:%2d%n", &y, &mo, &d, &h, &mi, &n) == 5)) {
		if ((size_t)n != len && !(s[n] == 'Z' && (size_t)n + 1 == len))
			return -1;
		if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
		    h < 0 || mi < 0 || sec < 0 || y < 1970)
			return -1;
		return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	}
	return -1;
}

/* Set some keys of xloop.json, keeping the rest of the file. */
int config_patch_file(const char *root, const json_t *changes, char **cause)
{
	char *path = path_join(root, CONFIG_FILE);
	json_t *doc = NULL, *ch;
	size_t i;
	int rc = -1;

	if (doc_load(path, &doc, cause) < 0)
		goto out;
	json_array_foreach(changes, i, ch) {
		const char *key = json_string_value(json_object_get(ch, "key"));
		const char *to = json_string_value(json_object_get(ch, "to"));
		const char *dot = key ? strchr(key, '.') : NULL;
		const struct field *f;
		char *section;
		json_t *sec;
		long long n;
		const char *errstr;

		if (dot == NULL || to == NULL)
			continue;
		section = xstrndup(key, (size_t)(dot - key));
		f = find_field(section, dot + 1);
		sec = json_object_get(doc, section);
		if (!json_is_object(sec)) {
			sec = json_object();
			json_object_set_new(doc, section, sec);
		}
		if (f && f->kind == F_INT && parse_ll(to, f->min, f->max, &n, &errstr) == 0)
			json_object_set_new(sec, dot + 1, json_integer(n));
		else
			json_object_set_new(sec, dot + 1, json_string(to));
		free(section);
	}
	rc = doc_store(path, doc, cause);
out:
	json_decref(doc);
	free(path);
	return rc;
}
