/*
 * Inside doctor (the doctor*.c files only): how a check is recorded, the
 * nodes of a partition, and each family's checks, which doctor.c runs in
 * its order: doctor-slurm.c asks the cluster (controller, partition,
 * nodes, accounting), doctor-fit.c compares the study's resources with
 * the partition, doctor-local.c looks at this machine and the loop (disk,
 * GPU processes, the webhook, the driver).
 */
#ifndef XLOOP_DOCTOR_IMPL_H
#define XLOOP_DOCTOR_IMPL_H

#include <stddef.h>

#include "config.h"
#include "doctor/doctor.h"

#define LIST_MAX 3			/* nodes or processes named in one line */

/* A node of the partition and what its State says. */
struct node {
	const struct slurm_record *rec;
	const char *name;
	const char *state;
	int bad;		/* down, drained, failing: takes no new job */
};

/* Record one check; detail and fix are taken over (fix may be NULL). */
void doctor_add(struct doctor_checks *c, const char *name, enum doctor_status st,
		char *detail, char *fix);

/* The nodes of partition (every node when it is NULL). Caller frees. */
struct node *doctor_partition_nodes(const struct doctor_facts *f,
				    const char *partition, size_t *nr);

/* The cluster (doctor-slurm.c). */
void doctor_check_controller(struct doctor_checks *c, const struct doctor_facts *f);
void doctor_check_partition(struct doctor_checks *c, const struct doctor_facts *f,
			    const char *partition);
void doctor_check_nodes(struct doctor_checks *c, const struct doctor_facts *f,
			const struct node *v, size_t nr, const char *partition);
void doctor_check_accounting(struct doctor_checks *c, const struct doctor_facts *f,
			     const struct config *cfg);

/* The study's resources against the partition (doctor-fit.c). */
void doctor_check_time(struct doctor_checks *c, const struct doctor_facts *f,
		       const struct config *cfg);
void doctor_check_gres(struct doctor_checks *c, const struct config *cfg,
		       const struct node *v, size_t nr);
void doctor_check_resources(struct doctor_checks *c, const struct config *cfg,
			    const struct node *v, size_t nr);
void doctor_check_feeder_cpus(struct doctor_checks *c, const struct config *cfg,
			      const struct node *v, size_t nr);

/* This machine and the loop (doctor-local.c). */
void doctor_check_disk(struct doctor_checks *c, const char *root);
void doctor_check_gpu_procs(struct doctor_checks *c);
void doctor_check_notify(struct doctor_checks *c, const struct config *cfg);
void doctor_check_driver(struct doctor_checks *c, const struct doctor_facts *f,
			 const struct config *cfg, const char *root);

#endif
