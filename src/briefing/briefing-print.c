/* The briefing as text, most important first. */
#include <stdio.h>
#include <string.h>

#include "briefing/briefing.h"
#include "search/best.h"

/* Member k of o as a string, "" when it is none. */
static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

#define FAILURES_PRINTED 100

/* Print the study so far (resume). */
static void print_history(const json_t *b, const json_t *h)
{
	const json_t *a, *o;
	size_t i, n;

	if (!json_is_object(h))
		return;
	printf("\nthe study so far:\n");
	a = json_object_get(h, "best_lineage");
	if (json_array_size(a)) {
		printf("  best lineage (root first):\n");
		json_array_foreach(a, i, o) {
			const json_t *sc = json_object_get(o, "score");

			printf("    %-24s %-32s", jstr(o, "tag"),
			       json_is_string(json_object_get(o, "change")) ?
			       jstr(o, "change") : "(root)");
			if (json_is_number(sc))
				printf(" %s %g", jstr(b, "metric"), json_number_value(sc));
			putchar('\n');
		}
	} else {
		printf("  best lineage: no proven run yet\n");
	}
	a = json_object_get(h, "failures");
	n = json_array_size(a);
	printf("  failures: %s\n", n ? "" : "none");
	if (n > FAILURES_PRINTED)
		printf("    (%zu older failures: `xloop resume --json` lists them all)\n",
		       n - FAILURES_PRINTED);
	json_array_foreach(a, i, o) {
		if (n > FAILURES_PRINTED && i < n - FAILURES_PRINTED)
			continue;
		printf("    %s attempt %lld", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")));
		if (json_is_string(json_object_get(o, "class")))
			printf(" (%s)", jstr(o, "class"));
		printf(": %s", jstr(o, "reason"));
		if (json_is_string(json_object_get(o, "change")))
			printf("  [%s]", jstr(o, "change"));
		putchar('\n');
	}
	a = json_object_get(h, "decisions");
	if (json_array_size(a)) {
		printf("  latest in ops/decisions.md:\n");
		json_array_foreach(a, i, o) {
			const char *t = jstr(o, "text");

			printf("    ## %s\n", jstr(o, "heading"));
			while (*t) {
				size_t len = strcspn(t, "\n");

				printf("      %.*s\n", (int)len, t);
				t += len;
				if (*t)
					t++;
			}
		}
	}
}

/* Print the briefing. */
void briefing_print(const json_t *b)
{
	const json_t *a, *o, *l;
	size_t i, k;

	printf("xloop briefing: study %s\n", jstr(b, "study"));
	a = json_object_get(b, "rules");
	if (json_array_size(a)) {
		printf("\nrules of this study:\n");
		json_array_foreach(a, i, o)
			printf("  - %s\n", json_string_value(o));
	}
	print_history(b, json_object_get(b, "history"));
	a = json_object_get(b, "finished");
	printf("\nfinished since the last briefing: %s\n", json_array_size(a) ? "" : "nothing");
	json_array_foreach(a, i, o) {
		const json_t *sc = json_object_get(o, "score");

		printf("  %s attempt %lld: %s", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")),
		       jstr(o, "verdict"));
		if (json_is_string(json_object_get(o, "class")))
			printf(" (%s)", jstr(o, "class"));
		if (json_is_number(sc))
			printf(", %s %g", jstr(b, "metric"), json_number_value(sc));
		l = json_object_get(o, "configuration");
		if (json_is_object(l) && json_integer_value(json_object_get(l, "n")) > 1) {
			struct best_info ci;
			char cs[128];

			memset(&ci, 0, sizeof(ci));
			ci.mean = json_number_value(json_object_get(l, "mean"));
			ci.n = (long)json_integer_value(json_object_get(l, "n"));
			ci.checked = json_is_number(json_object_get(l, "interval"));
			ci.est_kind = jstr(l, "estimate_kind");
			ci.est = json_number_value(json_object_get(l, "estimate"));
			ci.est_sd = json_number_value(json_object_get(l, "estimate_sd"));
			ci.sd = ci.est_sd;	/* 0 with the noise measured: noise 0 */
			best_format(&ci, cs, sizeof(cs));
			printf(" (its configuration: %s%s)", cs,
			       json_is_true(json_object_get(l, "best")) ? ", the best" : "");
		}
		if (json_is_string(json_object_get(o, "change")))
			printf("  [%s]", jstr(o, "change"));
		printf("\n    %s\n", jstr(o, "reason"));
		if (*jstr(o, "evidence"))
			printf("    %s\n", jstr(o, "evidence"));
		l = json_object_get(o, "log_tail");
		if (json_array_size(l)) {
			printf("    log tail (%s):\n", jstr(o, "log"));
			json_array_foreach(l, k, sc)
				printf("      | %s\n", json_string_value(sc));
		}
	}
	a = json_object_get(b, "repaired");
	json_array_foreach(a, i, o)
		printf("  repaired: %s\n", json_string_value(o));
	a = json_object_get(b, "live");
	printf("\nrunning and pending: %s\n", json_array_size(a) ? "" : "none (the GPU is idle)");
	json_array_foreach(a, i, o) {
		printf("  %s attempt %lld: job %s %s", jstr(o, "tag"),
		       (long long)json_integer_value(json_object_get(o, "attempt")),
		       jstr(o, "job_id"), jstr(o, "state"));
		if (json_is_string(json_object_get(o, "segment")))
			printf(", %s", jstr(o, "segment"));
		if (json_is_string(json_object_get(o, "step")))
			printf(", %s", jstr(o, "step"));
		if (json_is_string(json_object_get(o, "reason_meaning")))
			printf(" (%s: %s)", jstr(o, "reason"), jstr(o, "reason_meaning"));
		putchar('\n');
		l = json_object_get(o, "waits_for");
		/* a reason explained above needs no second line */
		if (json_is_object(l) && (json_is_string(json_object_get(l, "job_id")) ||
					  !json_is_string(json_object_get(o, "reason_meaning"))))
			printf("    waits for %s\n", jstr(l, "text"));
		if (json_is_string(json_object_get(o, "stale")))
			printf("    STALE: %s\n", jstr(o, "stale"));
	}
	o = json_object_get(b, "best");
	if (json_is_object(o)) {
		struct best_info bi;
		char shown[128];

		memset(&bi, 0, sizeof(bi));
		bi.mean = json_number_value(json_object_get(o, "score"));
		bi.n = (long)json_integer_value(json_object_get(o, "n"));
		bi.checked = json_is_true(json_object_get(o, "checked"));
		bi.half = json_number_value(json_object_get(o, "interval"));
		bi.sd = json_number_value(json_object_get(o, "noise_sd"));
		bi.est_kind = jstr(o, "estimate_kind");
		bi.est = json_number_value(json_object_get(o, "estimate"));
		bi.est_sd = json_number_value(json_object_get(o, "estimate_sd"));
		best_format(&bi, shown, sizeof(shown));
		printf("\nbest so far: %s, %s %s\n", jstr(o, "tag"), jstr(b, "metric"), shown);
		if (!bi.checked && *jstr(o, "check"))
			printf("  (gains are not checked against noise: %s)\n", jstr(o, "check"));
		l = json_object_get(b, "outlook");
		if (json_is_object(l)) {
			printf("  interval: %s\n", jstr(l, "interval"));
			if (json_is_string(json_object_get(l, "interval_change")))
				printf("  interval moved since the last briefing by: %s\n",
				       jstr(l, "interval_change"));
			printf("  choice: %s\n", jstr(l, "text"));
			printf("  %s\n", BEST_PM);
		}
	}
	else
		printf("\nbest so far: no proven run yet\n");
	a = json_object_get(b, "submitted");
	if (json_array_size(a)) {
		printf("\nsubmitted now:\n");
		json_array_foreach(a, i, o)
			printf("  %s (%s) as job %s%s%s\n", jstr(o, "tag"), jstr(o, "change"),
			       jstr(o, "job_id"),
			       json_is_string(json_object_get(o, "after")) ? ", after job " : "",
			       jstr(o, "after"));
	}
	a = json_object_get(b, "skipped");
	json_array_foreach(a, i, o)
		printf("  %s\n", json_string_value(o));
	printf("\nplan: %lld change%s queued\n",
	       (long long)json_integer_value(json_object_get(b, "plan_queued")),
	       json_integer_value(json_object_get(b, "plan_queued")) == 1 ? "" : "s");
	o = json_object_get(b, "feed");
	if (json_is_string(json_object_get(o, "why")))
		printf("%s: %s\n", json_array_size(json_object_get(b, "submitted")) ?
		       "stopped feeding" : "fed nothing", jstr(o, "why"));
	l = json_object_get(o, "feeder");
	feed_print_who(jstr(l, "text"), json_integer_value(json_object_get(l, "last_at")));
	if (json_is_string(json_object_get(b, "breaker")))
		printf("\nFEEDING STOPPED: %s\n", jstr(b, "breaker"));
	a = json_object_get(b, "avoided_nodes");
	json_array_foreach(a, i, o)
		printf("\nnode %s is avoided: %s\n", jstr(o, "node"), jstr(o, "why"));
	o = json_object_get(b, "autopilot");
	if (json_is_true(json_object_get(o, "on")))
		printf("\nautopilot: on, %lld run%s spent%s%s\n",
		       (long long)json_integer_value(json_object_get(o, "spent_runs")),
		       json_integer_value(json_object_get(o, "spent_runs")) == 1 ? "" : "s",
		       json_is_string(json_object_get(o, "stopped")) ? "; stopped: " : "",
		       jstr(o, "stopped"));
	json_array_foreach(json_object_get(o, "news"), i, l)
		printf("  %s\n", json_string_value(l));
	printf("\nnext: %s\n", jstr(json_object_get(b, "next_action"), "text"));
}
