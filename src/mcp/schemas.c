/*
 * The --json schemas the MCP tools declare as their output schemas,
 * built into the binary from schemas/ (the assembler's .incbin, run from
 * the repository's top; the Makefile makes this object depend on them).
 */
#include <string.h>

#include "mcp/mcp.h"

#define EMBED(sym, file)						\
	__asm__(".section .rodata\n"					\
		".balign 16\n"						\
		".type " #sym ", @object\n"				\
		#sym ":\n"						\
		".incbin \"schemas/" file "\"\n"			\
		".byte 0\n"						\
		".size " #sym ", . - " #sym "\n"			\
		".previous\n");						\
	extern const char sym[]

EMBED(xl_schema_next, "next.schema.json");
EMBED(xl_schema_status, "status.schema.json");
EMBED(xl_schema_show, "show.schema.json");
EMBED(xl_schema_why, "why.schema.json");
EMBED(xl_schema_plan, "plan.schema.json");
EMBED(xl_schema_space, "space.schema.json");
EMBED(xl_schema_auto, "auto.schema.json");
EMBED(xl_schema_replicate, "replicate.schema.json");
EMBED(xl_schema_cancel, "cancel.schema.json");
EMBED(xl_schema_retry, "retry.schema.json");
EMBED(xl_schema_stop, "stop.schema.json");
EMBED(xl_schema_mcp_log, "mcp-log.schema.json");

static const struct {
	const char *name;
	const char *text;
} schemas[] = {
	{ "next", xl_schema_next }, { "status", xl_schema_status }, { "show", xl_schema_show },
	{ "why", xl_schema_why }, { "plan", xl_schema_plan }, { "space", xl_schema_space },
	{ "auto", xl_schema_auto }, { "replicate", xl_schema_replicate },
	{ "cancel", xl_schema_cancel }, { "retry", xl_schema_retry }, { "stop", xl_schema_stop },
	{ "mcp-log", xl_schema_mcp_log },
};

/* The text of schemas/NAME.schema.json, or NULL. */
const char *mcp_schema_text(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++)
		if (strcmp(schemas[i].name, name) == 0)
			return schemas[i].text;
	return NULL;
}
