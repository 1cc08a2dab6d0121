/*
 * Command-line words: VAR=VALUE (jobsh_parse_setting), study and tag names
 * (valid_name), shell variable names (jobsh_valid_name), --mem and --time
 * values (config_valid_mem, config_valid_time), and the shell quoting of
 * a value (jobsh_quote), which must scan back to the value.
 */
#include <ctype.h>

#include "config.h"
#include "fuzz.h"
#include "jobsh/jobsh.h"

/* valid_name() as its comment states it: [A-Za-z0-9][A-Za-z0-9._-]{0,63}. */
static int model_valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("._-", c)))
			return 0;
	}
	return 1;
}

/* jobsh_valid_name() as documented: [A-Za-z_][A-Za-z0-9_]*. */
static int model_var_name(const char *s)
{
	size_t i;

	if (!(isalpha((unsigned char)s[0]) || s[0] == '_') || (unsigned char)s[0] >= 0x80)
		return 0;
	for (i = 1; s[i]; i++)
		if ((unsigned char)s[i] >= 0x80 ||
		    !(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* Check the quoting of value by scanning "V=<quoted>". */
static void check_quote(const char *value)
{
	struct jobsh_vars vars = JOBSH_VARS_INIT;
	char *q = jobsh_quote(value), *cause = NULL;
	char *script = xasprintf("V=%s\n", q);

	FUZZ_CHECK(jobsh_scan(script, strlen(script), &vars, &cause) == 0,
		   "'%s' does not scan: %s", script, cause);
	FUZZ_CHECK(vars.nr == 1 && vars.v[0].why == NULL && vars.v[0].value &&
		   strcmp(vars.v[0].value, value) == 0,
		   "'%s' does not read back as '%s'", script, value);
	jobsh_vars_release(&vars);
	free(script);
	free(q);
}

/* Check one word the way the commands take it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size), *name = NULL, *value = NULL;
	char *cause = NULL, *back;

	FUZZ_CHECK(valid_name(in) == model_valid_name(in), "valid_name('%s')", in);
	FUZZ_CHECK(jobsh_valid_name(in) == model_var_name(in),
		   "jobsh_valid_name('%s')", in);
	if (jobsh_parse_setting(in, &name, &value, &cause) == 0) {
		FUZZ_CHECK(jobsh_valid_name(name) && cause == NULL, "name '%s'", name);
		back = xasprintf("%s=%s", name, value);
		FUZZ_CHECK(strcmp(back, in) == 0, "'%s' split as '%s'", in, back);
		free(back);
		check_quote(value);
	} else {
		FUZZ_CHECK(cause && !name && !value, "failure not reported");
	}
	if (config_valid_mem(in))
		FUZZ_CHECK(config_mem_mb(in) > 0, "mem '%s'", in);
	if (config_valid_time(in))
		FUZZ_CHECK(config_time_secs(in) > 0, "time '%s'", in);
	free(name);
	free(value);
	free(cause);
	free(in);
	return 0;
}
