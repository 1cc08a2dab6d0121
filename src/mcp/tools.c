/*
 * The MCP tools: each one xloop command, its arguments as a JSON object
 * (the input schema is made from the table below), its output the
 * command's --json document (schemas/, built in).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcp/mcp.h"
#include "lib/util.h"

enum param_kind { P_STR, P_INT, P_NUM, P_BOOL, P_LIST };

struct param {
	const char *name;	/* the argument's name */
	enum param_kind kind;
	const char *flag;	/* "--from"; NULL: a positional */
	int required;
	const char *desc;
	const char *choices;	/* P_STR: "score|created", or NULL */
	long long min, max;	/* P_INT */
};

#define PARAMS_MAX 5

struct tool {
	const char *name;
	const char *title;
	const char *words;	/* the command: "plan add" */
	const char *schema;	/* its output: schemas/NAME.schema.json */
	const char *desc;
	int builtin;		/* answered by the server (log) */
	struct param p[PARAMS_MAX];
};

#define TAG(what) { "tag", P_STR, NULL, 1, what, NULL, 0, 0 }

static const struct tool tools[] = {
	{ "next", "Next: reconcile, judge, feed, brief", "next", "next",
	  "Reconcile with Slurm, judge what ended, keep the queue fed (from `set`, else the "
	  "plan, else autopilot) and return the briefing: what finished, what runs, the best, "
	  "what was submitted, what to do next. Submits jobs.", 0,
	  { { "set", P_STR, "--set", 0, "the change to submit now, VAR=VALUE (else the plan's "
	      "next entry)", NULL, 0, 0 },
	    { "from", P_STR, "--from", 0, "with set: its parent, a tag or \"best\" (default: best)",
	      NULL, 0, 0 },
	    { "tag", P_STR, "--tag", 0, "with set: its tag (default VAR-VALUE)", NULL, 0, 0 },
	    { "nice", P_INT, "--nice", 0, "sbatch --nice for what this call submits", NULL, 0,
	      2147483645 } } },
	{ "resume", "Resume: everything since the last briefing", "resume", "next",
	  "After a lost session: reconcile and return everything since the last briefing, "
	  "plus what to do next. Submits nothing.", 0, { { NULL } } },
	{ "status", "Status of every run, or one run", "status", "status",
	  "Every run of the study (tag, parent, change, state, attempts, score; the best), or "
	  "one run with all its attempts. Reads only.", 0,
	  { { "tag", P_STR, NULL, 0, "one run's tag (default: every run)", NULL, 0, 0 },
	    { "sort", P_STR, "--sort", 0, "the order: score (best first) or created",
	      "score|created", 0, 0 } } },
	{ "show", "One run's story", "show", "show",
	  "A run's lineage: each step back to the root and its one change. Reads only.", 0,
	  { TAG("the run") } },
	{ "why", "Why a run's job waits", "why", "why",
	  "Why a run's job is pending: Slurm's reason explained, what blocks it, when it may "
	  "start. Reads only.", 0, { TAG("the run") } },
	{ "plan_ls", "The plan", "plan ls", "plan",
	  "The queued changes the loop turns into runs. Reads only.", 0,
	  { { "all", P_BOOL, "--all", 0, "also the done, skipped and removed entries", NULL, 0,
	      0 } } },
	{ "plan_add", "Queue changes", "plan add", "plan",
	  "Queue changes VAR=VALUE, each to become one run (one change from its parent).", 0,
	  { { "changes", P_LIST, NULL, 1, "the changes, VAR=VALUE each", NULL, 0, 0 },
	    { "from", P_STR, "--from", 0, "the parent of every change: a tag or \"best\"", NULL,
	      0, 0 } } },
	{ "plan_rm", "Remove a queued change", "plan rm", "plan",
	  "Remove a queued entry of the plan by its id.", 0,
	  { { "id", P_INT, NULL, 1, "the entry's id (plan_ls)", NULL, 1, 1LL << 53 } } },
	{ "space_ls", "The search space", "space ls", "space",
	  "The search space autopilot explores and the seed variable. Reads only.", 0,
	  { { NULL } } },
	{ "space_set", "Put a variable in the space", "space set", "space",
	  "Put VAR in the search space with its values: VAR=V1,V2,... or "
	  "VAR=LO..HI[:int|:log][:steps=N].", 0,
	  { { "spec", P_STR, NULL, 1, "VAR=SPEC", NULL, 0, 0 } } },
	{ "space_rm", "Take a variable out of the space", "space rm", "space",
	  "Take VAR out of the search space.", 0,
	  { { "var", P_STR, NULL, 1, "the variable", NULL, 0, 0 } } },
	{ "space_seed", "Name the seed variable", "space seed", "space",
	  "Name the job.sh variable that only changes the random seed.", 0,
	  { { "var", P_STR, NULL, 1, "the variable", NULL, 0, 0 },
	    { "replicates", P_INT, "--replicates", 0, "runs of the baseline that measure the "
	      "noise (default 3)", NULL, 2, 100 } } },
	{ "auto_status", "Autopilot's state", "auto status", "auto",
	  "Autopilot's switch, budget, what is spent and why it stopped. Reads only.", 0,
	  { { NULL } } },
	{ "auto_on", "Switch autopilot on", "auto on", "auto",
	  "Switch autopilot on with a budget: an empty plan no longer stops the loop. A limit "
	  "not given is kept from xloop.json; the result lists each change, what is submitted "
	  "first and the feeder job's id.", 0,
	  { { "budget_runs", P_INT, "--budget-runs", 0, "stop after N runs autopilot created "
	      "(0: no limit; not given: kept)", NULL, 0, 1000000 },
	    { "budget_hours", P_NUM, "--budget-hours", 0, "stop after H GPU-hours of its runs "
	      "(0: no limit; not given: kept)", NULL, 0, 0 },
	    { "until", P_STR, "--until", 0, "stop at this UTC time (ISO-8601; none: no end; not "
	      "given: kept)", NULL, 0, 0 } } },
	{ "auto_off", "Switch autopilot off", "auto off", "auto",
	  "Switch autopilot off: only the plan feeds the queue.", 0, { { NULL } } },
	{ "replicate", "Queue replicates", "replicate", "replicate",
	  "Queue K replicates (seed-only changes) of a run's configuration.", 0,
	  { TAG("the run whose configuration is replicated"),
	    { "n", P_INT, "-n", 0, "how many (default 1)", NULL, 1, 100 } } },
	{ "retry", "Retry a run", "retry", "retry",
	  "Submit a run again as a new attempt, with recorded resource changes. Submits a job.",
	  0,
	  { TAG("the run"),
	    { "mem", P_STR, "--mem", 0, "this attempt's memory (8G)", NULL, 0, 0 },
	    { "time", P_STR, "--time", 0, "this attempt's time limit (2:00:00)", NULL, 0, 0 },
	    { "segments", P_INT, "--segments", 0, "run as up to N segments of --time each",
	      NULL, 0, 1000 },
	    { "no_chain", P_BOOL, "--no-chain", 0, "start as soon as Slurm can", NULL, 0, 0 } } },
	{ "cancel", "Cancel a run's job", "cancel", "cancel",
	  "scancel the run's queued or running job and record it. Destructive: the job's "
	  "work is lost.", 0, { TAG("the run") } },
	{ "stop", "Stop a run early", "stop", "stop",
	  "Ask the stop watcher of the run's queued or running job to stop it: the job "
	  "writes cv.json with its last value and exits, and the verdict is \"stopped early "
	  "at epoch K (you asked (xloop stop))\", neither success nor failure. The run "
	  "counts against autopilot's budget; retry runs it again to its end.", 0,
	  { TAG("the run") } },
	{ "log", "The end of a run's log", "status", "mcp-log",
	  "The last lines of an attempt's log (the latest attempt unless asked). Reads only.",
	  1,
	  { TAG("the run"),
	    { "attempt", P_INT, NULL, 0, "the attempt's number (default: the latest)", NULL, 0,
	      1000000 },
	    { "lines", P_INT, NULL, 0, "how many lines (default 40)", NULL, 1, 2000 } } },
};

/* How many tools. */
size_t mcp_ntools(void)
{
	return ARRAY_SIZE(tools);
}

/* Tool i's name. */
const char *mcp_tool_name(size_t i)
{
	return tools[i].name;
}

/* Tool i's class: the one agent-setup gives its command. */
enum agent_class mcp_tool_class(size_t i)
{
	char *line = xasprintf("xloop %s", tools[i].words);
	enum agent_class c = agent_class_of(line);

	free(line);
	return c;
}

/* Whether the server answers tool i itself. */
int mcp_tool_builtin(size_t i)
{
	return tools[i].builtin;
}

/* The tool named name. */
long mcp_tool_find(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tools); i++)
		if (strcmp(tools[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* The JSON Schema of one parameter. */
static json_t *param_schema(const struct param *p)
{
	json_t *s = json_object();

	switch (p->kind) {
	case P_STR:
		json_object_set_new(s, "type", json_string("string"));
		if (p->choices) {
			json_t *e = json_array();
			const char *c = p->choices;

			while (*c) {
				size_t len = strcspn(c, "|");

				json_array_append_new(e, json_stringn(c, len));
				c += len + (c[len] == '|');
			}
			json_object_set_new(s, "enum", e);
		} else {
			json_object_set_new(s, "minLength", json_integer(1));
		}
		break;
	case P_INT:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", json_integer(p->min));
		json_object_set_new(s, "maximum", json_integer(p->max));
		break;
	case P_NUM:
		json_object_set_new(s, "type", json_string("number"));
		json_object_set_new(s, "minimum", json_integer(0));
		break;
	case P_BOOL:
		json_object_set_new(s, "type", json_string("boolean"));
		break;
	case P_LIST:
		json_object_set_new(s, "type", json_string("array"));
		json_object_set_new(s, "minItems", json_integer(1));
		json_object_set_new(s, "items", json_pack("{s:s, s:i}", "type", "string",
							  "minLength", 1));
		break;
	}
	json_object_set_new(s, "description", json_string(p->desc));
	return s;
}

/*
 * An output schema as MCP wants it: the object at its root typed, its
 * $schema and $id left out (a client compiles each schema on its own; two
 * tools share one).
 */
static json_t *output_schema(const char *name)
{
	const char *text = mcp_schema_text(name);
	json_error_t jerr;
	json_t *s;

	if (text == NULL || (s = json_loads(text, 0, &jerr)) == NULL)
		BUG("the built-in schema '%s' does not load", name);
	json_object_del(s, "$schema");
	json_object_del(s, "$id");
	if (!json_object_get(s, "type"))
		json_object_set_new(s, "type", json_string("object"));
	return s;
}

/* tools/list's entry of tool i. */
json_t *mcp_tool_json(size_t i)
{
	const struct tool *t = &tools[i];
	json_t *props = json_object(), *req = json_array(), *in, *ann;
	enum agent_class c = mcp_tool_class(i);
	size_t k;

	for (k = 0; k < PARAMS_MAX && t->p[k].name; k++) {
		json_object_set_new(props, t->p[k].name, param_schema(&t->p[k]));
		if (t->p[k].required)
			json_array_append_new(req, json_string(t->p[k].name));
	}
	in = json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
		       "additionalProperties", 0);
	if (json_array_size(req))
		json_object_set_new(in, "required", req);
	else
		json_decref(req);
	ann = json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", t->title,
			"readOnlyHint", c == AGENT_ALLOW, "destructiveHint", c == AGENT_DENY,
			"idempotentHint", c == AGENT_ALLOW, "openWorldHint", 0);
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "name", t->name, "title", t->title,
			 "description", t->desc, "inputSchema", in,
			 "outputSchema", output_schema(t->schema), "annotations", ann);
}

/* Append s (malloc'd) to the vector. */
static void push(char ***v, size_t *n, char *s)
{
	*v = xreallocarray(*v, *n + 2, sizeof(char *));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

/* An argument's value as command-line text, or NULL (with *cause) when its type is wrong. */
static char *param_text(const struct param *p, const json_t *v, char **cause)
{
	switch (p->kind) {
	case P_STR:
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    strlen(json_string_value(v)) != json_string_length(v))
			break;
		if (p->choices) {
			const char *c = p->choices, *s = json_string_value(v);
			size_t len = strlen(s);

			while (*c) {
				size_t l = strcspn(c, "|");

				if (l == len && strncmp(c, s, l) == 0)
					return xstrdup(s);
				c += l + (c[l] == '|');
			}
			*cause = xasprintf("'%s' must be one of %s", p->name, p->choices);
			return NULL;
		}
		return xstrdup(json_string_value(v));
	case P_INT:
		if (!json_is_integer(v))
			break;
		if (json_integer_value(v) < p->min || json_integer_value(v) > p->max) {
			*cause = xasprintf("'%s' must be from %lld to %lld", p->name, p->min,
					   p->max);
			return NULL;
		}
		return xasprintf("%lld", (long long)json_integer_value(v));
	case P_NUM:
		if (!json_is_number(v) || json_number_value(v) < 0)
			break;
		return xasprintf("%.17g", json_number_value(v));
	case P_BOOL:
	case P_LIST:
		break;
	}
	*cause = xasprintf("'%s' must be %s", p->name,
			   p->kind == P_STR ? "a non-empty string" : p->kind == P_INT ?
			   "an integer" : "a number >= 0");
	return NULL;
}

/* Tool i's command line from its arguments. */
int mcp_tool_argv(size_t i, const json_t *args, char ***argv, char **cause)
{
	const struct tool *t = &tools[i];
	char **v = NULL, **pos = NULL;
	size_t n = 0, npos = 0, k;
	const char *key, *w = t->words;
	json_t *val;

	*argv = NULL;
	if (args && !json_is_object(args)) {
		*cause = xstrdup("the arguments must be an object");
		return -1;
	}
	json_object_foreach((json_t *)args, key, val) {
		for (k = 0; k < PARAMS_MAX && t->p[k].name; k++)
			if (strcmp(t->p[k].name, key) == 0)
				break;
		if (k == PARAMS_MAX || !t->p[k].name) {
			*cause = xasprintf("%s takes no argument '%s'", t->name, key);
			goto fail;
		}
	}
	while (*w) {
		size_t len = strcspn(w, " ");

		push(&v, &n, xstrndup(w, len));
		w += len + (w[len] == ' ');
	}
	for (k = 0; k < PARAMS_MAX && t->p[k].name; k++) {
		const struct param *p = &t->p[k];
		char *s;

		val = args ? json_object_get(args, p->name) : NULL;
		if (val == NULL || json_is_null(val)) {
			if (p->required) {
				*cause = xasprintf("%s needs '%s'", t->name, p->name);
				goto fail;
			}
			continue;
		}
		if (p->kind == P_BOOL) {
			if (!json_is_boolean(val)) {
				*cause = xasprintf("'%s' must be true or false", p->name);
				goto fail;
			}
			if (json_is_true(val))
				push(&v, &n, xstrdup(p->flag));
			continue;
		}
		if (p->kind == P_LIST) {
			size_t j;
			json_t *e;

			if (!json_is_array(val) || json_array_size(val) == 0) {
				*cause = xasprintf("'%s' must be a non-empty list of strings", p->name);
				goto fail;
			}
			json_array_foreach(val, j, e) {
				if (!json_is_string(e) || json_string_length(e) == 0 ||
				    strlen(json_string_value(e)) != json_string_length(e)) {
					*cause = xasprintf("'%s' must be a non-empty list of "
							   "strings", p->name);
					goto fail;
				}
				push(&pos, &npos, xstrdup(json_string_value(e)));
			}
			continue;
		}
		if ((s = param_text(p, val, cause)) == NULL)
			goto fail;
		if (p->flag) {
			push(&v, &n, xstrdup(p->flag));
			push(&v, &n, s);
		} else {
			push(&pos, &npos, s);
		}
	}
	if (t->builtin && npos > 1) {
		/* the built-in tool's own arguments (log: attempt, lines) stay here */
		while (npos > 1)
			free(pos[--npos]);
	}
	if (npos) {
		push(&v, &n, xstrdup("--"));
		for (k = 0; k < npos; k++)
			push(&v, &n, pos[k]);
	}
	free(pos);
	*argv = v;
	return 0;
fail:
	strv_free(v, n);
	strv_free(pos, npos);
	return -1;
}
