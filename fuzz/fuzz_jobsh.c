/*
 * The job.sh scanner and one-change rewriter (jobsh.h). The input is a
 * script, optionally followed by a NUL and the value to write. Every
 * rewritable assignment is rewritten; the result must differ in exactly
 * its line, hold the quoted value at the value's place, and scan back to
 * the value. A rewrite refused as an "internal error" (the module's own
 * defence) counts as a crash.
 */
#include "fuzz.h"
#include "lib/buf.h"
#include "jobsh/jobsh.h"

/* Values tried when the input does not bring its own. */
static const char *const values[] = {
	"0.2", "", "a b", "it's", "x\ny", "$(id)", "\\", "\t*?[a]~", "\x7f\x01",
	"\xc3\xa9\xff", "-n", "a\"b`c", "#", "!x",
};

/* Line of offset off in text, 1-based. */
static int line_at(const char *text, size_t off)
{
	int line = 1;
	size_t i;

	for (i = 0; i < off; i++)
		line += text[i] == '\n';
	return line;
}

/* How many top-level assignments of name vars holds. */
static size_t count_top(const struct jobsh_vars *vars, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < vars->nr; i++)
		n += vars->v[i].place == JOBSH_TOP && strcmp(vars->v[i].name, name) == 0;
	return n;
}

/* jobsh_quote(value) alone on a line scans back to value. */
static void check_quote(const char *value)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	char *q = jobsh_quote(value), *cause = NULL;
	char *script = xasprintf("V=%s\n", q);

	FUZZ_CHECK(strchr(q, '\n') == NULL, "quote of '%s' spans lines", value);
	FUZZ_CHECK(jobsh_scan(script, strlen(script), &vars, &cause) == 0,
		   "'%s' does not scan: %s", script, cause);
	FUZZ_CHECK(vars.nr == 1 && vars.v[0].why == NULL &&
		   vars.v[0].value && strcmp(vars.v[0].value, value) == 0,
		   "'%s' does not read back as '%s'", script, value);
	jobsh_vars_release(&vars);
	free(script);
	free(q);
}

/* Rewrite v (rewritable, the only top-level one of its name) to value. */
static void check_rewrite(const char *text, size_t len,
			  const struct jobsh_var *v, const char *value)
{
	struct jobsh_change ch = JOBSH_CHANGE_INIT;
	struct jobsh_vars again = JOBSH_VARS_INIT;
	struct buf out = BUF_INIT, want = BUF_INIT;
	const struct jobsh_var *nv;
	char *cause = NULL, *q = jobsh_quote(value);
	int first, same, rc;

	same = v->value ? strcmp(v->value, value) == 0 : strcmp(v->raw, q) == 0;
	rc = jobsh_rewrite(text, len, v->name, value, &out, &ch, &cause);
	if (rc < 0) {
		FUZZ_CHECK(same, "rewriting %s (line %d) to '%s' failed: %s",
			   v->name, v->line, value, cause);
		FUZZ_CHECK(out.len == 0, "failed rewrite left output");
		goto out;
	}
	FUZZ_CHECK(!same, "rewrote %s to the value it had", v->name);
	buf_add(&want, text, v->start);
	buf_adds(&want, q);
	buf_add(&want, text + v->end, len - v->end);
	FUZZ_CHECK(out.len == want.len && memcmp(out.s, want.s, out.len) == 0,
		   "rewrite of %s changed more than its value", v->name);
	FUZZ_CHECK(jobsh_lines_differ(text, len, out.s, out.len, &first) == 1 &&
		   first == v->line && ch.line == v->line,
		   "rewrite of %s: line %d changed, expected %d", v->name, first,
		   v->line);
	FUZZ_CHECK(strcmp(ch.name, v->name) == 0 && strcmp(ch.new_text, q) == 0 &&
		   strcmp(ch.new_value, value) == 0 &&
		   strcmp(ch.old_raw, v->raw) == 0, "change of %s misreported",
		   v->name);
	FUZZ_CHECK(jobsh_scan(out.s, out.len, &again, &cause) == 0 &&
		   jobsh_find(&again, v->name, &nv, &cause) == 0 &&
		   nv->value && strcmp(nv->value, value) == 0,
		   "rewritten %s does not read back: %s", v->name,
		   cause ? cause : "other value");
out:
	jobsh_vars_release(&again);
	jobsh_change_release(&ch);
	buf_release(&want);
	buf_release(&out);
	free(cause);
	free(q);
}

/* Scan, look up and rewrite every assignment of one script. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	const char *text = (const char *)data, *nul;
	const struct jobsh_var *found;
	char *cause = NULL, *own = NULL;
	size_t len = size, i, tries = 0;
	int rc;

	nul = memchr(data, '\0', size);
	if (nul) {
		rc = jobsh_scan(text, size, &vars, &cause);
		FUZZ_CHECK(rc < 0 && cause && vars.nr == 0, "NUL byte accepted");
		FREE_AND_NULL(cause);
		len = (size_t)(nul - text);
		own = xstrndup(nul + 1, size - len - 1);
		check_quote(own);
	}
	rc = jobsh_scan(text, len, &vars, &cause);
	FUZZ_CHECK(rc == 0 || (rc == -1 && cause && vars.nr == 0),
		   "scan returned %d", rc);
	FUZZ_CHECK(jobsh_lines_differ(text, len, text, len, NULL) == 0,
		   "a script differs from itself");
	for (i = 0; i < vars.nr; i++) {
		const struct jobsh_var *v = &vars.v[i];

		FUZZ_CHECK(jobsh_valid_name(v->name), "bad name '%s'", v->name);
		FUZZ_CHECK(v->start <= v->end && v->end <= len && v->line >= 1,
			   "bad place of %s", v->name);
		FUZZ_CHECK(strlen(v->raw) == v->end - v->start &&
			   memcmp(v->raw, text + v->start, v->end - v->start) == 0,
			   "raw of %s is not its bytes", v->name);
		if (v->place != JOBSH_TOP || v->why != NULL)
			continue;
		FUZZ_CHECK(memchr(v->raw, '\n', strlen(v->raw)) == NULL &&
			   line_at(text, v->start) == v->line,
			   "rewritable %s spans lines", v->name);
		rc = jobsh_find(&vars, v->name, &found, &cause);
		FUZZ_CHECK((rc == 0) == (count_top(&vars, v->name) == 1),
			   "find of %s returned %d: %s", v->name, rc, cause);
		if (rc < 0) {
			FREE_AND_NULL(cause);
			continue;
		}
		FUZZ_CHECK(found == v, "found another %s", v->name);
		if (tries++ >= 8)
			continue;
		check_rewrite(text, len, v, own ? own : values[i % ARRAY_SIZE(values)]);
		if (v->value)
			check_rewrite(text, len, v, v->value);
	}
	jobsh_vars_release(&vars);
	free(cause);
	free(own);
	return 0;
}
