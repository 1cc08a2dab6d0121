/*
 * xloop.json: config_parse() (what config_load() runs on the file's bytes).
 * An accepted config must print (config_to_json) as JSON that parses back
 * to the same config.
 */
#include "fuzz.h"
#include "config.h"

/* Parse one input as xloop.json and check the round trip. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, c2;
	char *cause = NULL, *json, *json2;

	memset(&c, 0, sizeof(c));
	if (config_parse(&c, (const char *)data, size, &cause) < 0) {
		FUZZ_CHECK(cause != NULL, "failed without a cause");
		free(cause);
		return 0;
	}
	FUZZ_CHECK(cause == NULL, "succeeded with cause '%s'", cause);
	FUZZ_CHECK(valid_name(c.study), "accepted study '%s'", c.study);
	FUZZ_CHECK(config_valid_mem(c.res.mem) && config_valid_time(c.res.time),
		   "accepted mem '%s' time '%s'", c.res.mem, c.res.time);
	(void)config_mem_mb(c.res.mem);
	(void)config_time_secs(c.res.time);
	json = config_to_json(&c);
	memset(&c2, 0, sizeof(c2));
	FUZZ_CHECK(config_parse(&c2, json, strlen(json), &cause) == 0,
		   "printed config does not parse: %s\n%s", cause, json);
	json2 = config_to_json(&c2);
	FUZZ_CHECK(strcmp(json, json2) == 0, "round trip differs:\n%s\n%s",
		   json, json2);
	free(json2);
	free(json);
	config_release(&c2);
	config_release(&c);
	return 0;
}
