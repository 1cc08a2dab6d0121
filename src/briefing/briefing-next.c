/* The briefing's advice: the one next action, and its command as argv. */
#include <stdlib.h>
#include <string.h>

#include "briefing/briefing-impl.h"
#include "stages/retry.h"
#include "runs.h"

/*
 * For a run that ran out of memory or time: the retry with that resource
 * raised (the sweep's retry for a sweep task).
 */
static char *resource_action(struct xl_ctx *ctx, const char *tag, const char *state)
{
	int oom = strcmp(state, "OUT_OF_MEMORY") == 0;
	struct proposal p;
	struct attempt a;
	struct run r;
	char *sweep = NULL, *out;

	memset(&p, 0, sizeof(p));
	if (runs_get(&ctx->db, ctx->cfg.study, tag, &r) != 0)
		return xasprintf("%s ended %s", tag, state);
	sweep = sweeps_of_run(&ctx->db, r.id);
	if (attempts_latest(&ctx->db, r.id, &a) == 0) {
		if (retry_proposal(ctx, &a, &p))
			out = xasprintf("%s %s (%s): retry with more, `xloop %s %s --%s %s` "
					"(%s)", tag, oom ? "ran out of memory" :
					"hit its time limit", oom ? a.mem : a.time_limit,
					sweep ? "sweep retry" : "retry", sweep ? sweep : tag,
					oom ? "mem" : "time", oom ? p.mem : p.time, p.why);
		else
			out = xasprintf("%s %s and cannot simply get more: %s", tag,
					oom ? "ran out of memory" : "hit its time limit", p.why);
		attempt_release(&a);
	} else {
		out = xasprintf("%s ended %s", tag, state);
	}
	proposal_release(&p);
	free(sweep);
	run_release(&r);
	return out;
}

/* Set both (taking them over); returns 1, "this needs a decision". */
static int act(struct briefing_action *a, char *why, char *text)
{
	a->why = why;
	a->text = text;
	return 1;
}

/*
 * The one thing to do next. Returns 1 when it is a decision about a
 * failure or a stuck job, 0 when it is the routine of feeding.
 */
int briefing_next_action(struct xl_ctx *ctx, json_t *finished, json_t *live,
			 size_t queued, long long sweep_queued,
			 const struct feeder *who, int has_runs, int has_best,
			 int autopilot, struct briefing_action *out)
{
	size_t i;
	json_t *f;

	/* the newest failure that needs a decision comes first */
	for (i = json_array_size(finished); i-- > 0;) {
		const char *tag, *state, *cls;

		f = json_array_get(finished, i);
		if (strcmp(json_string_value(json_object_get(f, "verdict")), "success") == 0 ||
		    strcmp(json_string_value(json_object_get(f, "verdict")), "stopped") == 0)
			continue;	/* a stop needs no decision */
		tag = json_string_value(json_object_get(f, "tag"));
		state = json_string_value(json_object_get(f, "state"));
		cls = json_string_value(json_object_get(f, "class"));
		if (strcmp(state, "OUT_OF_MEMORY") == 0 || strcmp(state, "TIMEOUT") == 0)
			return act(out, xasprintf("%s ended %s", tag, state),
				   resource_action(ctx, tag, state));
		if (cls && strcmp(cls, "infra") == 0)
			return act(out, xasprintf("%s failed for reasons outside the job (%s)",
						  tag, state),
				   xasprintf("%s failed for reasons outside the job (%s): "
					     "`xloop retry %s`", tag, state, tag));
		return act(out, xasprintf("%s failed: %s", tag,
					  json_string_value(json_object_get(f, "reason"))),
			   xasprintf("%s failed: read its log tail above, fix the cause in a "
				     "new run (`xloop new TAG --from %s --set VAR=VALUE --force`) "
				     "or record why you drop it (`xloop decide TEXT --run %s`)",
				     tag, tag, tag));
	}
	for (i = 0; i < json_array_size(live); i++) {
		const char *tag;

		f = json_array_get(live, i);
		tag = json_string_value(json_object_get(f, "tag"));
		if (json_is_string(json_object_get(f, "stale")))
			return act(out, xasprintf("%s is RUNNING but its log is silent", tag),
				   xstrdup(json_string_value(json_object_get(f, "stale"))));
		if (json_is_string(json_object_get(f, "reason_action")) &&
		    strcmp(json_string_value(json_object_get(f, "state")), "PENDING") == 0)
			return act(out, xasprintf("%s is pending: %s", tag,
						  json_string_value(json_object_get(f,
							  "reason_meaning"))),
				   xasprintf("%s is stuck pending: %s", tag,
					     json_string_value(json_object_get(f,
						     "reason_action"))));
	}
	if (!has_runs)
		act(out, xstrdup("the study has no run yet"),
		    xstrdup("adopt a proven baseline: `xloop adopt PATH --tag base --cv cv.json`"));
	else if (!has_best && json_array_size(live) == 0)
		act(out, xstrdup("no run is proven yet and nothing runs"),
		    xstrdup("no run is proven yet: submit the baseline (`xloop submit TAG`) "
			    "or adopt one with --cv"));
	else if (queued == 0 && autopilot)
		act(out, xstrdup("the plan is empty and autopilot is on"),
		    xstrdup("nothing to decide now: autopilot feeds the queue from the search "
			    "space (`xloop auto status`); plan entries you add go first"));
	else if (queued == 0 && sweep_queued > 0)
		act(out, xasprintf("%lld sweep task%s still queued and the plan is empty",
				   sweep_queued, sweep_queued == 1 ? " is" : "s are"),
		    xasprintf("nothing to decide now: %lld sweep task%s still queued; the plan "
			      "is empty, so queue what should run after them with `xloop plan "
			      "add VAR=VALUE`", sweep_queued,
			      sweep_queued == 1 ? " is" : "s are"));
	else if (queued == 0 && json_array_size(live))
		act(out, xstrdup("the plan is empty"),
		    xstrdup("the plan is empty: queue the next changes with `xloop plan add "
			    "VAR=VALUE` so the GPU stays busy after the running job"));
	else if (queued == 0)
		act(out, xstrdup("the plan is empty and nothing runs"),
		    xstrdup("the plan is empty and the GPU is idle: `xloop next --set "
			    "VAR=VALUE` or `xloop plan add VAR=VALUE`"));
	else
		act(out, xasprintf("%zu change%s queued in the plan and the queue is fed",
				   queued, queued == 1 ? "" : "s"),
		    strcmp(who->kind, "none") != 0 ?
		    xasprintf("nothing to decide now: %s; look again with `xloop next` after "
			      "the running job ends", who->text) :
		    xstrdup("nothing to decide now: run `xloop next` again after the running "
			    "job ends; nothing else feeds the queue (`xloop cron-line` prints a "
			    "crontab entry for `xloop tick`)"));
	return 0;
}

/* Words of an action's command that stand for something to fill in. */
static int placeholder(const char *w)
{
	static const char *const words[] = {
		"TAG", "VAR=VALUE", "PATH", "TEXT", "TIME", "MEM", "JOBID", "NAME",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(w, words[i]) == 0)
			return 1;
	return 0;
}

/*
 * The next action as JSON: its text, why, and the first `xloop ...`
 * command of the text as an argv array (null when it names none) with the
 * words still to fill in. Tags never hold blanks, so blanks split it.
 */
json_t *briefing_action_json(const struct briefing_action *a)
{
	const char *p = a->text, *q;
	json_t *argv = json_null(), *fill = json_array();

	while ((p = strchr(p, '`')) != NULL) {
		p++;
		q = strchr(p, '`');
		if (!q)
			break;
		if (starts_with(p, "xloop ")) {
			argv = json_array();
			while (p < q) {
				size_t n = strcspn(p, " `");
				char *w = xstrndup(p, n);

				if (n) {
					if (placeholder(w))
						json_array_append_new(fill, json_string(w));
					json_array_append_new(argv, json_string(w));
				}
				free(w);
				p += n;
				p += strspn(p, " ");
			}
			break;
		}
		p = q + 1;
	}
	return json_pack("{s:s, s:o, s:o, s:s}", "text", a->text, "argv", argv,
			 "placeholders", fill, "why", a->why);
}
