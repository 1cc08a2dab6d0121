/*
 * Unit tests for the pending-reason table: every code finds its own entry,
 * the kinds that decide what the briefing says are right, the squeue and
 * scontrol spellings parse, and every code we claim is one Slurm prints
 * (checked against ../shared/slurm-samples/00_REFERENCE_*, or
 * $XLOOP_SAMPLES, skipped when absent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "lib/buf.h"
#include "slurm/reasons.h"
#include "lib/util.h"

#define REFERENCE "00_REFERENCE_states_and_reasons_from_source.txt"

/*
 * Entries that are not codes of Slurm's reason list: free text slurmctld
 * puts in the job's state description, which squeue %r and scontrol's
 * Reason= show instead of the code.
 */
static const char *const not_codes[] = {
	/* batch launch failed; the job is requeued with a hold */
	"launch failed requeued held",
	/* `scontrol requeuehold` (state_reason JobHeldUser/JobHeldAdmin) */
	"job requeued in held state",
	/* state_reason Resources; the text goes on ", DRAINED ... partitions" */
	"Nodes required for job are DOWN",
};

/* ------------------------------------------------------------- helpers */

/* Whole file as a string, or NULL when it cannot be read. */
static char *slurp(const char *path)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	return buf_detach(&b, NULL);
}

/* The repository root: $XLOOP_ROOT, else the part of __FILE__ before tests/. */
static char *repo_root(void)
{
	static const char self[] = "tests/unit/test_reasons.c";
	const char *env = getenv("XLOOP_ROOT"), *file = __FILE__;
	size_t n = strlen(file), k = strlen(self);

	if (env && *env)
		return xstrdup(env);
	if (n > k && strcmp(file + n - k, self) == 0)
		return xstrndup(file, n - k - 1);
	return xstrdup(".");
}

/* The reference list's text, or NULL when the samples are not there. */
static char *reference_text(void)
{
	const char *env = getenv("XLOOP_SAMPLES");
	char *dir, *root, *path, *text;
	struct stat st;

	if (env && *env) {
		dir = xstrdup(env);
	} else {
		root = repo_root();
		dir = xasprintf("%s/../shared/slurm-samples", root);
		free(root);
	}
	path = xasprintf("%s/%s", dir, REFERENCE);
	text = stat(path, &st) == 0 ? slurp(path) : NULL;
	free(path);
	free(dir);
	return text;
}

struct codes {
	char **v;
	size_t nr;
};

/* True when the set holds code. */
static int codes_has(const struct codes *c, const char *code)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (strcmp(c->v[i], code) == 0)
			return 1;
	return 0;
}

/* The distinct reason codes of the reference: its lines that are not comments. */
static void parse_reference(const char *text, struct codes *out)
{
	const char *p = text;

	out->v = NULL;
	out->nr = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, n);

		p += nl ? n + 1 : n;
		n = strlen(line);
		while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = '\0';
		if (n == 0 || line[0] == '#' || codes_has(out, line)) {
			free(line);
			continue;
		}
		out->v = xreallocarray(out->v, out->nr + 1, sizeof(*out->v));
		out->v[out->nr++] = line;
	}
}

/* Free the set's strings and array. */
static void codes_release(struct codes *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		free(c->v[i]);
	free(c->v);
}

/* True when code is one of not_codes[]. */
static int is_not_code(const char *code)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(not_codes); i++)
		if (strcmp(not_codes[i], code) == 0)
			return 1;
	return 0;
}

/* --------------------------------------------------------------- tests */

/* Each entry is found by its own code, and by nothing else's. */
static void test_every_entry_finds_itself(void **state)
{
	size_t nr, i;
	const struct reason_info *t = reason_table(&nr);

	(void)state;
	assert_true(nr >= 40);
	for (i = 0; i < nr; i++) {
		const struct reason_info *r = reason_explain(t[i].code);

		assert_ptr_equal(r, &t[i]);
		assert_string_equal(r->code, t[i].code);
	}
}

/* The codes the briefing must explain, with the kind it acts on. */
static void test_required_codes_and_kinds(void **state)
{
	static const struct {
		const char *code;
		enum reason_kind kind;
	} want[] = {
		{ "Resources", REASON_WAIT },
		{ "Priority", REASON_WAIT },
		{ "Dependency", REASON_WAIT },
		{ "BeginTime", REASON_WAIT },
		{ "None", REASON_WAIT },
		{ "Licenses", REASON_WAIT },
		{ "Reservation", REASON_WAIT },
		{ "Cleaning", REASON_WAIT },
		{ "JobArrayTaskLimit", REASON_WAIT },
		{ "DependencyNeverSatisfied", REASON_BLOCKED },
		{ "PartitionTimeLimit", REASON_BLOCKED },
		{ "PartitionNodeLimit", REASON_BLOCKED },
		{ "PartitionConfig", REASON_BLOCKED },
		{ "PartitionDown", REASON_BLOCKED },
		{ "PartitionInactive", REASON_BLOCKED },
		{ "BadConstraints", REASON_BLOCKED },
		{ "InvalidAccount", REASON_BLOCKED },
		{ "InvalidQOS", REASON_BLOCKED },
		{ "MaxMemPerLimit", REASON_BLOCKED },
		/*
		 * Per-job maxima of a QOS or association: the job never
		 * fits, however long it waits, so BLOCKED and not LIMIT.
		 */
		{ "QOSMaxWallDurationPerJobLimit", REASON_BLOCKED },
		{ "AssocMaxWallDurationPerJobLimit", REASON_BLOCKED },
		{ "QOSMaxGRESPerJob", REASON_BLOCKED },
		{ "AssocMaxMemPerJob", REASON_BLOCKED },
		{ "JobHeldUser", REASON_HELD },
		{ "JobHeldAdmin", REASON_HELD },
		{ "launch failed requeued held", REASON_HELD },
		{ "QOSMaxJobsPerUserLimit", REASON_LIMIT },
		{ "QOSMaxSubmitJobPerUserLimit", REASON_LIMIT },
		{ "QOSGrpCpuLimit", REASON_LIMIT },
		{ "QOSGrpGRES", REASON_LIMIT },
		{ "QOSMaxGRESPerUser", REASON_LIMIT },
		{ "AssocGrpCPUMinutesLimit", REASON_LIMIT },
		{ "AssocGrpCpuLimit", REASON_LIMIT },
		{ "AssocMaxJobsLimit", REASON_LIMIT },
		{ "AssocGrpGRES", REASON_LIMIT },
		{ "AssocGrpMemLimit", REASON_LIMIT },
		{ "ReqNodeNotAvail", REASON_NODE },
		{ "NodeDown", REASON_NODE },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		const struct reason_info *r = reason_explain(want[i].code);

		if (strcmp(r->code, want[i].code) != 0)
			fail_msg("'%s' has no entry", want[i].code);
		if (r->kind != want[i].kind)
			fail_msg("'%s' is %s, want %s", want[i].code,
				 reason_kind_name(r->kind),
				 reason_kind_name(want[i].kind));
	}
}

/* The example SPEC.md gives: lower --time below the partition's MaxTime. */
static void test_partition_time_limit_text(void **state)
{
	const struct reason_info *r = reason_explain("PartitionTimeLimit");

	(void)state;
	assert_int_equal(r->kind, REASON_BLOCKED);
	assert_non_null(strstr(r->meaning, "MaxTime"));
	assert_non_null(strstr(r->meaning, "--time"));
	assert_non_null(strstr(r->action, "MaxTime"));
	assert_non_null(strstr(r->action, "xloop adjust TAG --time"));
}

/* The spellings squeue and scontrol print. */
static void test_spellings(void **state)
{
	static const struct {
		const char *in, *code;
	} cases[] = {
		{ "(Resources)", "Resources" },
		{ " Priority ", "Priority" },
		{ "\tDependency\n", "Dependency" },
		{ "ReqNodeNotAvail, UnavailableNodes:vm", "ReqNodeNotAvail" },
		{ "(ReqNodeNotAvail, UnavailableNodes:cs[100,101,102])",
		  "ReqNodeNotAvail" },
		{ "ReqNodeNotAvail,_UnavailableNodes:wn-db-05", "ReqNodeNotAvail" },
		{ "ReqNodeNotAvail, Reserved for maintenance", "ReqNodeNotAvail" },
		{ "(launch failed requeued held)", "launch failed requeued held" },
		{ "launch_failed_requeued_held", "launch failed requeued held" },
		{ "job_requeued_in_held_state", "job requeued in held state" },
		{ "(Nodes required for job are DOWN, DRAINED or reserved for "
		  "jobs in higher priority partitions)",
		  "Nodes required for job are DOWN" },
		{ "Nodes_required_for_job_are_DOWN,_DRAINED,_REBOOTING_or_"
		  "reserved_for_jobs_in_higher_priority_partitions",
		  "Nodes required for job are DOWN" },
		{ "PartitionTimeLimit", "PartitionTimeLimit" },
		{ "None", "None" },
		{ "", "None" },
		{ "  ", "None" },
		{ "()", "None" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct reason_info *r = reason_explain(cases[i].in);

		if (strcmp(r->code, cases[i].code) != 0)
			fail_msg("'%s' gave '%s', want '%s'", cases[i].in,
				 r->code, cases[i].code);
	}
	assert_string_equal(reason_explain(NULL)->code, "None");
}

/* Anything else gets the one generic entry, never NULL. */
static void test_unknown(void **state)
{
	static const char *const in[] = {
		"resources",		/* case matters */
		"Resourcesx",
		"Resource",
		"NoSuchReason",
		"(null)",
		"Pri ority",
		"InvalidReason",
		"Resources_",
		"xResources",
	};
	char big[600];
	const struct reason_info *generic = reason_explain("NoSuchReason");
	size_t i;

	(void)state;
	assert_non_null(generic);
	assert_int_equal(generic->kind, REASON_UNKNOWN);
	assert_string_equal(generic->code, "");
	assert_non_null(strstr(generic->meaning, "xloop does not know"));
	assert_true(generic->action[0] != '\0');
	for (i = 0; i < ARRAY_SIZE(in); i++) {
		if (reason_explain(in[i]) != generic)
			fail_msg("'%s' should be unknown", in[i]);
	}
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_ptr_equal(reason_explain(big), generic);
	memcpy(big, "Resources", strlen("Resources"));
	assert_ptr_equal(reason_explain(big), generic);
}

/* Words for the kinds, as the briefing and JSON print them. */
static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(reason_kind_name(REASON_WAIT), "wait");
	assert_string_equal(reason_kind_name(REASON_BLOCKED), "blocked");
	assert_string_equal(reason_kind_name(REASON_HELD), "held");
	assert_string_equal(reason_kind_name(REASON_LIMIT), "limit");
	assert_string_equal(reason_kind_name(REASON_NODE), "node");
	assert_string_equal(reason_kind_name(REASON_UNKNOWN), "unknown");
}

/* Each xloop command an action names exists, with options it takes. */
/* Slurm's own hold after a failed launch, as squeue and scontrol spell it; not a person's. */
static void test_slurm_held(void **state)
{
	(void)state;
	assert_true(reason_slurm_held("launch_failed_requeued_held"));
	assert_true(reason_slurm_held("launch failed requeued held"));
	assert_true(reason_slurm_held("(launch failed requeued held)"));
	assert_false(reason_slurm_held("JobHeldUser"));
	assert_false(reason_slurm_held("JobHeldAdmin"));
	assert_false(reason_slurm_held("job requeued in held state"));
	assert_false(reason_slurm_held("Dependency"));
	assert_false(reason_slurm_held(""));
	assert_false(reason_slurm_held(NULL));
}

static void check_xloop_commands(const char *code, const char *action)
{
	static const char *const cmds[] = {
		"why TAG", "cancel TAG", "doctor",
		"adjust TAG --mem MEM", "adjust TAG --time TIME",
		"submit TAG --time TIME", "retry TAG",
	};
	const char *p = action;

	while ((p = strstr(p, "`xloop ")) != NULL) {
		size_t i, ok = 0;

		p += strlen("`xloop ");
		for (i = 0; i < ARRAY_SIZE(cmds); i++) {
			size_t n = strlen(cmds[i]);

			if (strncmp(p, cmds[i], n) == 0 && p[n] == '`')
				ok = 1;
		}
		if (!ok)
			fail_msg("%s: unknown xloop command in '%s'", code,
				 action);
	}
}

/* The table: complete entries, reachable codes, no duplicates. */
static void test_table_sane(void **state)
{
	size_t nr, i, j;
	const struct reason_info *t = reason_table(&nr);

	(void)state;
	for (i = 0; i < nr; i++) {
		const char *c = t[i].code;
		size_t n = strlen(c);

		assert_true(n > 0);
		if (strpbrk(c, ",()_\t\n") || c[0] == ' ' || c[n - 1] == ' ')
			fail_msg("'%s' can never be looked up", c);
		assert_int_not_equal(t[i].kind, REASON_UNKNOWN);
		if (t[i].meaning == NULL || t[i].meaning[0] == '\0')
			fail_msg("'%s' has no meaning", c);
		assert_non_null(t[i].action);
		if ((t[i].kind == REASON_BLOCKED || t[i].kind == REASON_HELD) &&
		    t[i].action[0] == '\0')
			fail_msg("'%s' is %s but has no action", c,
				 reason_kind_name(t[i].kind));
		/* one sentence each */
		if (t[i].meaning[strlen(t[i].meaning) - 1] != '.' ||
		    strstr(t[i].meaning, ". "))
			fail_msg("'%s': meaning is not one sentence", c);
		if (t[i].action[0] && (t[i].action[strlen(t[i].action) - 1] != '.' ||
				       strstr(t[i].action, ". ")))
			fail_msg("'%s': action is not one sentence", c);
		check_xloop_commands(c, t[i].action);
		for (j = i + 1; j < nr; j++)
			if (strcmp(c, t[j].code) == 0)
				fail_msg("'%s' is in the table twice", c);
	}
}

/* Every code we claim is one Slurm prints; report how much we cover. */
static void test_reference_coverage(void **state)
{
	char *text = reference_text();
	struct codes ref;
	size_t nr, i, covered = 0, extra = 0;
	const struct reason_info *t = reason_table(&nr);

	(void)state;
	if (text == NULL) {
		print_message("slurm samples not found (set XLOOP_SAMPLES): "
			      "skipping %s\n", REFERENCE);
		skip();
	}
	parse_reference(text, &ref);
	free(text);
	assert_true(ref.nr > 100);
	assert_true(codes_has(&ref, "PartitionTimeLimit"));

	for (i = 0; i < nr; i++) {
		int in_ref = codes_has(&ref, t[i].code);

		if (in_ref && is_not_code(t[i].code))
			fail_msg("'%s' is in the reference: drop it from not_codes",
				 t[i].code);
		if (!in_ref && !is_not_code(t[i].code))
			fail_msg("'%s' is not a reason code of the reference",
				 t[i].code);
		if (!in_ref)
			extra++;
	}
	for (i = 0; i < ref.nr; i++)
		if (strcmp(reason_explain(ref.v[i])->code, ref.v[i]) == 0)
			covered++;
	print_message("reasons: %zu of the reference's %zu reason codes "
		      "explained (%zu entries, %zu of them free text)\n",
		      covered, ref.nr, nr, extra);
	assert_int_equal(covered + extra, nr);
	codes_release(&ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_finds_itself),
		cmocka_unit_test(test_required_codes_and_kinds),
		cmocka_unit_test(test_partition_time_limit_text),
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_kind_names),
		cmocka_unit_test(test_table_sane),
		cmocka_unit_test(test_reference_coverage),
		cmocka_unit_test(test_slurm_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
