/* The preflight checks of xloop doctor (doctor.h): the list, in order. */
#include <stdlib.h>
#include <string.h>

#include "doctor/doctor-impl.h"
#include "lib/util.h"

/* xloop.json was loaded and validated by main before the command ran. */
static void check_config(struct doctor_checks *c, const struct config *cfg)
{
	doctor_add(c, "config", DOCTOR_OK, xasprintf("xloop.json is valid (study %s, "
		"partition %s, gres %s, cpus %lld, mem %s, time %s)", cfg->study, cfg->partition,
		*cfg->res.gres ? cfg->res.gres : "none", cfg->res.cpus, cfg->res.mem,
		cfg->res.time), NULL);
}

/* Every check, in doctor's order. */
void doctor_check_all(const struct doctor_facts *f, const struct config *cfg,
		      const char *root, struct doctor_checks *c)
{
	const char *part = cfg->partition;
	struct node *nodes = NULL;
	size_t nr = 0;
	int have = doctor_have_partition(f);

	memset(c, 0, sizeof(*c));
	check_config(c, cfg);
	doctor_check_controller(c, f);
	if (f->up) {
		doctor_check_partition(c, f, part);
		if (f->node_rc == 0)
			nodes = doctor_partition_nodes(f, have ? part : NULL, &nr);
		if (have)
			doctor_check_time(c, f, cfg);
		doctor_check_nodes(c, f, nodes, nr, have ? part : NULL);
		if (f->node_rc == 0 && have && nr) {
			doctor_check_gres(c, cfg, nodes, nr);
			doctor_check_resources(c, cfg, nodes, nr);
		}
		doctor_check_accounting(c, f, cfg);
	}
	doctor_check_disk(c, root);
	doctor_check_gpu_procs(c);
	doctor_check_notify(c, cfg);
	doctor_check_driver(c, f, cfg, root);
	if (f->up && f->node_rc == 0 && have && nr)
		doctor_check_feeder_cpus(c, cfg, nodes, nr);
	free(nodes);
}
