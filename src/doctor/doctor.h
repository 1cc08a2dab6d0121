/*
 * The preflight checks of `xloop doctor`, for every command that wants
 * them (doctor itself, init at its end): a constant five Slurm calls
 * (scontrol ping, show partition, show node, sinfo -R, show config), then
 * checks that each end ok, warn or fail with the fix in one line. Also
 * the fitting of xloop.json's resources to the partition that init and
 * `doctor --fix` do. Nothing here prints but doctor_print, or exits.
 */
#ifndef XLOOP_DOCTOR_H
#define XLOOP_DOCTOR_H

#include <stddef.h>

#include "config.h"
#include "slurm/slurm.h"

enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

struct doctor_check {
	const char *name;
	enum doctor_status st;
	char *detail;
	char *fix;		/* "" when there is nothing to fix */
};

struct doctor_checks {
	struct doctor_check *v;
	size_t nr, cap;
};

/* Everything the Slurm calls said; each call's exit code and cause. */
struct doctor_facts {
	struct slurm s;
	int ping_rc, part_rc, node_rc, reason_rc, conf_rc;
	char *ping_cause, *part_cause, *node_cause, *reason_cause, *conf_cause;
	struct slurm_ping ping;
	int up;				/* a controller answered */
	struct slurm_records part;
	int part_unknown;
	struct slurm_records nodes;
	struct slurm_node_reasons reasons;
	struct slurm_record conf;
	int probe_done;			/* a feeder probe job ran (driver_probe) */
	int probe_ok;
	char *probe_detail;
};

/* Ask Slurm (15 s per call); after an unanswered ping, nothing more. */
void doctor_gather(struct doctor_facts *f, const char *partition);
void doctor_facts_release(struct doctor_facts *f);

/* Whether the facts hold the partition's record (it exists, it was read). */
int doctor_have_partition(const struct doctor_facts *f);

/*
 * The partition Slurm marks Default=YES (malloc'd), or NULL: one more call
 * (scontrol show partition), for init when the one asked for does not exist.
 */
char *doctor_default_partition(struct doctor_facts *f);

/* Run every check of cfg (study root root) into c (zeroed first). */
void doctor_check_all(const struct doctor_facts *f, const struct config *cfg,
		      const char *root, struct doctor_checks *c);
/* Whether a check failed. */
int doctor_failed(const struct doctor_checks *c);
/* One line per check, the fix indented below a warning or failure. */
void doctor_print(const struct doctor_checks *c, const char *indent);
/* The checks as a JSON array of {name, status, detail, fix}. */
struct json_t *doctor_checks_json(const struct doctor_checks *c);
void doctor_checks_release(struct doctor_checks *c);

/*
 * Lower cfg's resources (time, cpus, mem, gres) that do not fit the
 * partition to what it has: time to MaxTime, cpus and mem to the largest
 * node, gres to what a node has ("" when no node has that GRES). Appends
 * {"key": "resources.cpus", "from", "to", "why"} to changes for each.
 * Returns the number of changes (0 without the partition's facts).
 */
int doctor_fit(const struct doctor_facts *f, struct config *cfg, struct json_t *changes);

#endif
