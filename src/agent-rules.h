/*
 * What a coding agent may run without asking (seed 002): read-only xloop
 * and Slurm queries run freely, anything that submits or changes the study
 * asks first, cancelling and hand-written sbatch are refused. One table
 * for `agent-setup` (the agent's permission rules) and `xloop mcp` (its
 * tools' readOnlyHint and destructiveHint).
 */
#ifndef XLOOP_AGENT_RULES_H
#define XLOOP_AGENT_RULES_H

#include <stddef.h>

enum agent_class { AGENT_ALLOW, AGENT_ASK, AGENT_DENY };

struct agent_rule {
	enum agent_class kind;
	const char *cmd;	/* the command prefix, words separated by spaces */
};

extern const struct agent_rule agent_rules[];
extern const size_t agent_nrules;

/*
 * The class of a command line ("xloop plan add"): its rules' strictest
 * among those whose prefix it starts with (word by word), as the agents
 * apply them (deny over ask over allow); AGENT_ASK when none matches.
 */
enum agent_class agent_class_of(const char *cmdline);

#endif
