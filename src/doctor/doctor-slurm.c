/* Doctor asks the cluster: controller, partition, nodes, accounting. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/buf.h"
#include "doctor/doctor-impl.h"
#include "driver/driver.h"
#include "lib/util.h"

#define DOCTOR_SLURM_TIMEOUT_MS 15000	/* per Slurm call: doctor must be quick */

/* The slurm.conf clients read: $SLURM_CONF or the usual place. */
static const char *slurm_conf_path(void)
{
	const char *p = getenv("SLURM_CONF");

	return p && *p ? p : "/etc/slurm/slurm.conf";
}

/* Run the five Slurm calls; after an unanswered ping, none of the others. */
static void gather(struct doctor_facts *f, const char *partition)
{
	int unknown;
	size_t i;

	f->ping_rc = slurm_ping(&f->s, &f->ping, &f->ping_cause);
	for (i = 0; f->ping_rc == 0 && i < f->ping.nr; i++)
		f->up |= f->ping.v[i].up;
	if (!f->up)
		return;
	f->part_rc = slurm_scontrol_show(&f->s, "partition", partition, &f->part,
					 &f->part_unknown, &f->part_cause);
	f->node_rc = slurm_scontrol_show(&f->s, "node", NULL, &f->nodes, &unknown,
					 &f->node_cause);
	f->reason_rc = slurm_sinfo_reasons(&f->s, &f->reasons, &f->reason_cause);
	f->conf_rc = slurm_show_config(&f->s, &f->conf, &f->conf_cause);
}

/* Ask Slurm what the checks need. */
void doctor_gather(struct doctor_facts *f, const char *partition)
{
	memset(f, 0, sizeof(*f));
	slurm_init(&f->s);
	f->s.timeout_ms = DOCTOR_SLURM_TIMEOUT_MS;
	gather(f, partition);
}

/* Free what the Slurm calls returned. */
void doctor_facts_release(struct doctor_facts *f)
{
	free(f->ping_cause);
	free(f->part_cause);
	free(f->node_cause);
	free(f->reason_cause);
	free(f->conf_cause);
	free(f->probe_detail);
	slurm_ping_release(&f->ping);
	slurm_records_release(&f->part);
	slurm_records_release(&f->nodes);
	slurm_node_reasons_release(&f->reasons);
	slurm_record_release(&f->conf);
}

/* The partition's record was read. */
int doctor_have_partition(const struct doctor_facts *f)
{
	return f->up && f->part_rc == 0 && !f->part_unknown && f->part.nr;
}

/* Slurm's default partition, and its record in f from now on. */
char *doctor_default_partition(struct doctor_facts *f)
{
	struct slurm_records all;
	char *name = NULL, *cause = NULL;
	int unknown;
	size_t i;

	memset(&all, 0, sizeof(all));
	if (!f->up || slurm_scontrol_show(&f->s, "partition", NULL, &all, &unknown,
					  &cause) != 0) {
		free(cause);
		return NULL;
	}
	for (i = 0; i < all.nr && !name; i++) {
		const char *def = slurm_record_get(&all.v[i], "Default");
		const char *pn = slurm_record_get(&all.v[i], "PartitionName");

		if (pn && def && strcmp(def, "YES") == 0)
			name = xstrdup(pn);
	}
	slurm_records_release(&all);
	if (name) {
		slurm_records_release(&f->part);
		FREE_AND_NULL(f->part_cause);
		f->part_rc = slurm_scontrol_show(&f->s, "partition", name, &f->part,
						 &f->part_unknown, &f->part_cause);
	}
	return name;
}

/* Does slurmctld answer? */
void doctor_check_controller(struct doctor_checks *c, const struct doctor_facts *f)
{
	struct buf up = BUF_INIT, down = BUF_INIT;
	size_t i;

	if (f->ping_rc == XL_UNAVAILABLE) {
		doctor_add(c, "controller", DOCTOR_FAIL, xasprintf("%s", f->ping_cause),
		    xstrdup("install Slurm's client commands (Debian: apt install "
			    "slurm-client) or put them on PATH"));
		return;
	}
	if (f->ping_rc) {
		doctor_add(c, "controller", DOCTOR_FAIL, xasprintf("scontrol ping failed: %s",
		    f->ping_cause), xasprintf("check that slurmctld runs and that "
		    "SlurmctldHost/SlurmctldPort in %s point at it", slurm_conf_path()));
		return;
	}
	for (i = 0; i < f->ping.nr; i++) {
		struct buf *b = f->ping.v[i].up ? &up : &down;

		buf_addf(b, "%s%s", b->len ? ", " : "", f->ping.v[i].host);
		if (strcmp(f->ping.v[i].role, "primary") != 0)
			buf_addf(b, " (%s)", f->ping.v[i].role);
	}
	if (!f->up)
		doctor_add(c, "controller", DOCTOR_FAIL, xasprintf("slurmctld on %s does not answer "
		    "(scontrol ping)", down.s), xasprintf("start slurmctld on %s, or fix "
		    "SlurmctldHost/SlurmctldPort in %s", down.s, slurm_conf_path()));
	else if (down.len)
		doctor_add(c, "controller", DOCTOR_WARN, xasprintf("slurmctld on %s answers, on %s "
		    "not (scontrol ping)", up.s, down.s), xasprintf("start slurmctld on "
		    "%s so a failover has somewhere to go", down.s));
	else
		doctor_add(c, "controller", DOCTOR_OK, xasprintf("slurmctld on %s answers "
		    "(scontrol ping)", up.s), NULL);
	buf_release(&up);
	buf_release(&down);
}

/* True when a node State ("IDLE+DRAIN", "DOWN*") means it takes no new job. */
static int state_is_bad(const char *state)
{
	static const char *const bad[] = {
		"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING",
		"FUTURE", "NOT_RESPONDING", "NO_RESPOND", "INVALID_REG", "INVAL",
	};
	const char *p = state;
	size_t i, n;

	while (*p) {
		n = strcspn(p, "+*");
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			if (n == strlen(bad[i]) && strncasecmp(p, bad[i], n) == 0)
				return 1;
		p += n;
		if (*p == '*')
			return 1;	/* sinfo's "not responding" mark */
		if (*p)
			p++;
	}
	return 0;
}

/* The nodes of partition (every node when it is NULL). Caller frees. */
struct node *doctor_partition_nodes(const struct doctor_facts *f, const char *partition,
				    size_t *nr)
{
	struct node *v = xcalloc(f->nodes.nr + 1, sizeof(*v));
	size_t i;

	*nr = 0;
	for (i = 0; i < f->nodes.nr; i++) {
		const struct slurm_record *rec = &f->nodes.v[i];
		const char *name = slurm_record_get(rec, "NodeName");
		const char *parts = slurm_record_get(rec, "Partitions");
		const char *state = slurm_record_get(rec, "State");

		if (name == NULL || (partition && !slurm_list_has(parts, partition)))
			continue;
		v[*nr].rec = rec;
		v[*nr].name = name;
		v[*nr].state = state ? state : "UNKNOWN";
		v[*nr].bad = state_is_bad(v[*nr].state);
		(*nr)++;
	}
	return v;
}

/* The partitions that have nodes, as "gpu, short". Caller frees. */
static char *known_partitions(const struct doctor_facts *f)
{
	struct buf b = BUF_INIT, seen = BUF_INIT, item = BUF_INIT;
	size_t i;

	for (i = 0; i < f->nodes.nr; i++) {
		const char *p = slurm_record_get(&f->nodes.v[i], "Partitions");

		while (p && *p) {
			size_t n = strcspn(p, ",");

			buf_reset(&item);
			buf_add(&item, p, n);
			if (n && !slurm_list_has(seen.s, item.s)) {
				buf_addf(&seen, "%s%s", seen.len ? "," : "", item.s);
				buf_addf(&b, "%s%s", b.len ? ", " : "", item.s);
			}
			p += n + (p[n] == ',');
		}
	}
	buf_release(&item);
	buf_release(&seen);
	return buf_detach(&b, NULL);
}

/* The configured partition exists and takes jobs. */
void doctor_check_partition(struct doctor_checks *c, const struct doctor_facts *f,
			    const char *partition)
{
	const struct slurm_record *rec = f->part.nr ? &f->part.v[0] : NULL;
	const char *state, *maxtime, *total;
	char *names;

	if (f->part_rc) {
		doctor_add(c, "partition", DOCTOR_FAIL, xasprintf("cannot read partition '%s': %s",
		    partition, f->part_cause), xstrdup("run `scontrol show partition` "
		    "to see what Slurm says"));
		return;
	}
	if (f->part_unknown || rec == NULL) {
		names = known_partitions(f);
		doctor_add(c, "partition", DOCTOR_FAIL, xasprintf("partition '%s' does not exist%s%s%s",
		    partition, *names ? " (Slurm has: " : "", names, *names ? ")" : ""),
		    xstrdup("set slurm.partition in xloop.json to an existing partition "
			    "(`sinfo -s` lists them)"));
		free(names);
		return;
	}
	state = slurm_record_get(rec, "State");
	maxtime = slurm_record_get(rec, "MaxTime");
	total = slurm_record_get(rec, "TotalNodes");
	if (state && strcmp(state, "UP") != 0) {
		doctor_add(c, "partition", DOCTOR_FAIL, xasprintf("partition %s is %s: its jobs do "
		    "not start (MaxTime=%s)", partition, state, maxtime ? maxtime : "?"),
		    xasprintf("ask the Slurm admin to run `scontrol update partitionname=%s "
			      "state=up`, or choose another slurm.partition in xloop.json",
			      partition));
		return;
	}
	doctor_add(c, "partition", DOCTOR_OK, xasprintf("partition %s is UP, MaxTime=%s, %s node%s",
	    partition, maxtime ? maxtime : "?", total ? total : "?",
	    total && strcmp(total, "1") == 0 ? "" : "s"), NULL);
}

/* sinfo -R's reason for a node, or the record's own Reason, or NULL. */
static const char *node_reason(const struct doctor_facts *f, const struct node *n,
			       const char **since)
{
	const char *host = slurm_record_get(n->rec, "NodeHostName");
	const char *r;
	size_t i;

	*since = NULL;
	for (i = 0; f->reason_rc == 0 && i < f->reasons.nr; i++) {
		const struct slurm_node_reason *nr = &f->reasons.v[i];

		if (strcmp(nr->node, n->name) == 0 || (host && strcmp(nr->node, host) == 0)) {
			*since = nr->timestamp;
			return nr->reason;
		}
	}
	r = slurm_record_get(n->rec, "Reason");
	return r && *r && strcmp(r, "(null)") != 0 ? r : NULL;
}

/* Node states of the partition and why the bad ones are bad. */
void doctor_check_nodes(struct doctor_checks *c, const struct doctor_facts *f,
			const struct node *v, size_t nr, const char *partition)
{
	struct buf bad = BUF_INIT, good = BUF_INIT, names = BUF_INIT;
	char *where = partition ? xasprintf("partition %s", partition) :
		xstrdup("the cluster");
	size_t i, nbad = 0;
	enum doctor_status st;

	if (f->node_rc) {
		doctor_add(c, "nodes", DOCTOR_FAIL, xasprintf("cannot read the nodes: %s",
		    f->node_cause), xstrdup("run `scontrol show node` to see what "
		    "Slurm says"));
		free(where);
		return;
	}
	if (nr == 0) {
		doctor_add(c, "nodes", DOCTOR_FAIL, xasprintf("%s has no nodes", where),
		    xstrdup("choose a slurm.partition in xloop.json that has nodes "
			    "(`sinfo -s` lists them)"));
		free(where);
		return;
	}
	for (i = 0; i < nr; i++) {
		const char *reason, *since;

		if (!v[i].bad) {
			if (i < LIST_MAX)
				buf_addf(&good, "%s%s %s", good.len ? ", " : "",
					 v[i].name, v[i].state);
			continue;
		}
		if (nbad++ >= LIST_MAX)
			continue;
		reason = node_reason(f, &v[i], &since);
		buf_addf(&bad, "%s%s %s: %s", bad.len ? "; " : "", v[i].name, v[i].state,
			 reason ? reason : "no reason given");
		if (since && *since)
			buf_addf(&bad, " (since %s)", since);
		buf_addf(&names, "%s%s", names.len ? "," : "", v[i].name);
	}
	if (nbad > LIST_MAX)
		buf_addf(&bad, "; and %zu more", nbad - LIST_MAX);
	if (nbad == 0) {
		doctor_add(c, "nodes", DOCTOR_OK, xasprintf("%zu node%s of %s take%s jobs: "
		    "%s%s", nr, nr == 1 ? "" : "s", where, nr == 1 ? "s" : "", good.s,
		    nr > LIST_MAX ? ", ..." : ""), NULL);
	} else {
		if (f->reason_rc)
			buf_addf(&bad, " (sinfo -R failed: %s)", f->reason_cause);
		st = nbad == nr ? DOCTOR_FAIL : DOCTOR_WARN;
		doctor_add(c, "nodes", st, xasprintf("%zu of %zu node%s of %s take%s no jobs: "
		    "%s", nbad, nr, nr == 1 ? "" : "s", where, nbad == 1 ? "s" : "",
		    bad.s), xasprintf("once the cause is fixed (a node that does not "
		    "respond: is slurmd running there?), a Slurm admin runs `scontrol "
		    "update nodename=%s state=resume`%s",
		    names.s, st == DOCTOR_FAIL ? "; until then no job of this study starts" :
		    ""));
	}
	free(where);
	buf_release(&bad);
	buf_release(&good);
	buf_release(&names);
}

/* Leading seconds of a config value ("300 sec"); -1 when not a number. */
static long long conf_secs(const char *v)
{
	long long x = 0;
	int digits = 0;

	for (; v && isdigit((unsigned char)*v) && x < LLONG_MAX / 10 - 9; v++, digits++)
		x = x * 10 + (*v - '0');
	return digits ? x : -1;
}

/*
 * How often at the latest the study's driver ticks on its own, in seconds:
 * driver.mode slurm, a feeder as each run ends and its watchdog every
 * DRIVER_WATCH_SECS; scrontab, its entry every 5 minutes; 0 for cron
 * (the user's crontab says) and none.
 */
static long long driver_period(const struct config *cfg)
{
	if (strcmp(cfg->driver.mode, "slurm") == 0)
		return DRIVER_WATCH_SECS;
	if (strcmp(cfg->driver.mode, "scrontab") == 0)
		return 300;
	return 0;
}

/* The fix for verdicts that rely on scontrol: only what the driver mode needs. */
static char *scontrol_fix(const struct config *cfg, long long secs)
{
	const char *mode = cfg->driver.mode;
	long long every = driver_period(cfg), min = secs >= 120 ? secs / 120 : 1;

	if (every)
		return xasprintf("have the admin set up slurmdbd (AccountingStorageType="
				 "accounting_storage/slurmdbd) or raise MinJobAge above %lld s "
				 "(driver.mode %s ticks at least so often)", every, mode);
	if (strcmp(mode, "cron") == 0)
		return secs > 0 ? xasprintf("run `xloop tick` from cron at least every %lld min "
					    "(`xloop cron-line`), or have the admin set up slurmdbd "
					    "(AccountingStorageType=accounting_storage/slurmdbd)", min) :
		       xstrdup("run `xloop tick` from cron every minute or two, or have the "
			       "admin set up slurmdbd");
	return secs > 0 ? xasprintf("run `xloop tick` from cron at least every %lld min, or "
				    "set driver.mode to \"slurm\" (a feeder ticks as each run ends), "
				    "or have the admin set up slurmdbd "
				    "(AccountingStorageType=accounting_storage/slurmdbd)", min) :
	       xstrdup("run `xloop tick` from cron every minute or two, or set driver.mode "
		       "to \"slurm\", or have the admin set up slurmdbd");
}

/* Accounting on or off, and what a verdict relies on then (and the driver mode). */
void doctor_check_accounting(struct doctor_checks *c, const struct doctor_facts *f,
			     const struct config *cfg)
{
	const char *type, *age;
	long long secs, every = driver_period(cfg);

	if (f->conf_rc) {
		doctor_add(c, "accounting", DOCTOR_FAIL, xasprintf("cannot read Slurm's configuration: "
		    "%s", f->conf_cause), xstrdup("run `scontrol show config` to see "
		    "what Slurm says"));
		return;
	}
	type = slurm_record_get(&f->conf, "AccountingStorageType");
	age = slurm_record_get(&f->conf, "MinJobAge");
	secs = conf_secs(age);
	if (slurm_config_accounting(&f->conf)) {
		doctor_add(c, "accounting", DOCTOR_OK, xasprintf("accounting on (%s): verdicts come "
		    "from sacct; scontrol keeps finished jobs MinJobAge=%lld s", type, secs),
		    NULL);
	} else if (secs == 0) {
		doctor_add(c, "accounting", DOCTOR_OK, xstrdup("no accounting, but scontrol keeps "
		    "finished jobs for ever (MinJobAge=0): verdicts rely on scontrol"), NULL);
	} else if (secs > every && every) {
		/* the driver reads each end long before scontrol forgets it: nothing to do */
		doctor_add(c, "accounting", DOCTOR_OK, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which keeps finished jobs MinJobAge=%lld s; driver.mode %s ticks %s"
		    "every %lld s at the latest, well within it", secs, cfg->driver.mode,
		    strcmp(cfg->driver.mode, "slurm") == 0 ? "as each run ends (a feeder) and " : "",
		    every), NULL);
	} else if (secs > 0 && strcmp(cfg->driver.mode, "slurm") == 0) {
		doctor_add(c, "accounting", DOCTOR_WARN, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which forgets jobs after MinJobAge=%lld s; driver.mode slurm ticks "
		    "as each run ends, but a feeder kept waiting in the queue longer than that (its "
		    "watchdog comes after %lld s) finds the job forgotten", secs, every),
		    scontrol_fix(cfg, secs));
	} else if (secs > 0) {
		doctor_add(c, "accounting", DOCTOR_WARN, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which forgets jobs after MinJobAge=%lld s; %s", secs, every ?
		    "driver.mode scrontab ticks less often than that" : "run xloop next/tick more "
		    "often than that"), scontrol_fix(cfg, secs));
	} else {
		doctor_add(c, "accounting", DOCTOR_WARN, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which forgets jobs after MinJobAge (unreadable: '%s')",
		    age ? age : "missing"), scontrol_fix(cfg, -1));
	}
}
