/* The permission classes of the commands an agent runs (agent-rules.h). */
#include <string.h>

#include "agent-rules.h"

const struct agent_rule agent_rules[] = {
	{ AGENT_ALLOW, "xloop status" }, { AGENT_ALLOW, "xloop show" },
	{ AGENT_ALLOW, "xloop diff" }, { AGENT_ALLOW, "xloop resume" },
	{ AGENT_ALLOW, "xloop plan ls" }, { AGENT_ALLOW, "xloop sweep show" },
	{ AGENT_ALLOW, "xloop mem" }, { AGENT_ALLOW, "xloop report" },
	{ AGENT_ALLOW, "xloop doctor" }, { AGENT_ALLOW, "xloop judge" },
	{ AGENT_ALLOW, "xloop help" }, { AGENT_ALLOW, "xloop version" },
	{ AGENT_ALLOW, "xloop --version" }, { AGENT_ALLOW, "xloop why" },
	{ AGENT_ALLOW, "xloop space ls" }, { AGENT_ALLOW, "xloop auto status" },
	{ AGENT_ALLOW, "xloop export" }, { AGENT_ALLOW, "squeue" }, { AGENT_ALLOW, "sacct" },
	{ AGENT_ALLOW, "sinfo" }, { AGENT_ALLOW, "scontrol show" },
	{ AGENT_ASK, "xloop resume --feed" }, { AGENT_ASK, "xloop next" },
	{ AGENT_ASK, "xloop submit" }, { AGENT_ASK, "xloop retry" },
	{ AGENT_ASK, "xloop sweep" }, { AGENT_ASK, "xloop new" },
	{ AGENT_ASK, "xloop plan add" }, { AGENT_ASK, "xloop plan rm" },
	{ AGENT_ASK, "xloop adopt" }, { AGENT_ASK, "xloop decide" },
	{ AGENT_ASK, "xloop tick" }, { AGENT_ASK, "xloop init" },
	{ AGENT_ASK, "xloop space set" }, { AGENT_ASK, "xloop space rm" },
	{ AGENT_ASK, "xloop space seed" }, { AGENT_ASK, "xloop auto on" },
	{ AGENT_ASK, "xloop auto off" }, { AGENT_ASK, "xloop replicate" },
	{ AGENT_ASK, "xloop stop" },
	{ AGENT_DENY, "scancel" }, { AGENT_DENY, "xloop cancel" },
	{ AGENT_DENY, "scontrol update" }, { AGENT_DENY, "scontrol requeue" },
	{ AGENT_DENY, "scontrol hold" }, { AGENT_DENY, "sbatch" },
};

const size_t agent_nrules = sizeof(agent_rules) / sizeof(agent_rules[0]);

/* Whether line starts with prefix, word by word. */
static int starts_with_words(const char *line, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(line, prefix, n) == 0 && (line[n] == '\0' || line[n] == ' ');
}

/* The strictest class among the rules that match cmdline. */
enum agent_class agent_class_of(const char *cmdline)
{
	int found = -1;
	size_t i;

	for (i = 0; i < agent_nrules; i++)
		if (starts_with_words(cmdline, agent_rules[i].cmd) &&
		    (int)agent_rules[i].kind > found)
			found = (int)agent_rules[i].kind;
	return found < 0 ? AGENT_ASK : (enum agent_class)found;
}
