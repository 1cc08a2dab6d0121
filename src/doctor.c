/* The preflight checks of xloop doctor (doctor.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <jansson.h>

#include "doctor.h"
#include "fsutil.h"
#include "util.h"

#define DOCTOR_SLURM_TIMEOUT_MS 15000	/* per Slurm call: doctor must be quick */
#define GPU_QUERY_TIMEOUT_MS 15000
#define DISK_WARN_BYTES (5ULL << 30)
#define DISK_FAIL_BYTES (500ULL << 20)
#define LIST_MAX 3			/* nodes or processes named in one line */

static const char *const status_names[] = { "ok", "warn", "fail" };

/* A node of the partition and what its State says. */
struct node {
	const struct slurm_record *rec;
	const char *name;
	const char *state;
	int bad;		/* down, drained, failing: takes no new job */
};

/* Text from Slurm as one line of valid UTF-8; frees s. */
static char *one_line(char *s)
{
	char *clean = utf8_clean(s, strlen(s)), *p;

	for (p = clean; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	free(s);
	return clean;
}

/* Record one check; detail and fix are taken over (fix may be NULL). */
static void add(struct doctor_checks *c, const char *name, enum doctor_status st,
		char *detail, char *fix)
{
	if (c->nr == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
	}
	c->v[c->nr].name = name;
	c->v[c->nr].st = st;
	c->v[c->nr].detail = one_line(detail);
	c->v[c->nr].fix = one_line(fix ? fix : xstrdup(""));
	c->nr++;
}

/* Free the checks. */
static void checks_release(struct doctor_checks *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		free(c->v[i].detail);
		free(c->v[i].fix);
	}
	free(c->v);
}

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

/* Free what the Slurm calls returned. */
static void facts_release(struct doctor_facts *f)
{
	free(f->ping_cause);
	free(f->part_cause);
	free(f->node_cause);
	free(f->reason_cause);
	free(f->conf_cause);
	slurm_ping_release(&f->ping);
	slurm_records_release(&f->part);
	slurm_records_release(&f->nodes);
	slurm_node_reasons_release(&f->reasons);
	slurm_record_release(&f->conf);
}

/* xloop.json was loaded and validated by main before the command ran. */
static void check_config(struct doctor_checks *c, const struct config *cfg)
{
	add(c, "config", DOCTOR_OK, xasprintf("xloop.json is valid (study %s, partition %s, "
		"gres %s, cpus %lld, mem %s, time %s)", cfg->study, cfg->partition,
		*cfg->res.gres ? cfg->res.gres : "none", cfg->res.cpus, cfg->res.mem,
		cfg->res.time), NULL);
}

/* Does slurmctld answer? */
static void check_controller(struct doctor_checks *c, const struct doctor_facts *f)
{
	struct buf up = BUF_INIT, down = BUF_INIT;
	size_t i;

	if (f->ping_rc == XL_UNAVAILABLE) {
		add(c, "controller", DOCTOR_FAIL, xasprintf("%s", f->ping_cause),
		    xstrdup("install Slurm's client commands (Debian: apt install "
			    "slurm-client) or put them on PATH"));
		return;
	}
	if (f->ping_rc) {
		add(c, "controller", DOCTOR_FAIL, xasprintf("scontrol ping failed: %s",
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
		add(c, "controller", DOCTOR_FAIL, xasprintf("slurmctld on %s does not answer "
		    "(scontrol ping)", down.s), xasprintf("start slurmctld on %s, or fix "
		    "SlurmctldHost/SlurmctldPort in %s", down.s, slurm_conf_path()));
	else if (down.len)
		add(c, "controller", DOCTOR_WARN, xasprintf("slurmctld on %s answers, on %s "
		    "not (scontrol ping)", up.s, down.s), xasprintf("start slurmctld on "
		    "%s so a failover has somewhere to go", down.s));
	else
		add(c, "controller", DOCTOR_OK, xasprintf("slurmctld on %s answers "
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
static struct node *partition_nodes(const struct doctor_facts *f, const char *partition,
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
static void check_partition(struct doctor_checks *c, const struct doctor_facts *f,
			    const char *partition)
{
	const struct slurm_record *rec = f->part.nr ? &f->part.v[0] : NULL;
	const char *state, *maxtime, *total;
	char *names;

	if (f->part_rc) {
		add(c, "partition", DOCTOR_FAIL, xasprintf("cannot read partition '%s': %s",
		    partition, f->part_cause), xstrdup("run `scontrol show partition` "
		    "to see what Slurm says"));
		return;
	}
	if (f->part_unknown || rec == NULL) {
		names = known_partitions(f);
		add(c, "partition", DOCTOR_FAIL, xasprintf("partition '%s' does not exist%s%s%s",
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
		add(c, "partition", DOCTOR_FAIL, xasprintf("partition %s is %s: its jobs do "
		    "not start (MaxTime=%s)", partition, state, maxtime ? maxtime : "?"),
		    xasprintf("ask the Slurm admin to run `scontrol update partitionname=%s "
			      "state=up`, or choose another slurm.partition in xloop.json",
			      partition));
		return;
	}
	add(c, "partition", DOCTOR_OK, xasprintf("partition %s is UP, MaxTime=%s, %s node%s",
	    partition, maxtime ? maxtime : "?", total ? total : "?",
	    total && strcmp(total, "1") == 0 ? "" : "s"), NULL);
}

/* resources.time fits the partition's MaxTime. */
static void check_time(struct doctor_checks *c, const struct doctor_facts *f,
		       const struct config *cfg)
{
	const char *maxtime = slurm_record_get(&f->part.v[0], "MaxTime");
	long long want = config_time_secs(cfg->res.time), max = -1;

	if (maxtime == NULL || slurm_parse_duration(maxtime, &max, NULL) < 0 || max < 0) {
		add(c, "time", DOCTOR_OK, xasprintf("resources.time %s; partition %s has no "
		    "time limit (MaxTime=%s)", cfg->res.time, cfg->partition,
		    maxtime ? maxtime : "?"), NULL);
		return;
	}
	if (want > max) {
		add(c, "time", DOCTOR_FAIL, xasprintf("resources.time %s is longer than "
		    "partition %s allows (MaxTime=%s): jobs would pend forever "
		    "(PartitionTimeLimit)", cfg->res.time, cfg->partition, maxtime),
		    xasprintf("lower resources.time in xloop.json to at most %s, or run "
			      "`xloop doctor --fix`", maxtime));
		return;
	}
	add(c, "time", DOCTOR_OK, xasprintf("resources.time %s fits MaxTime=%s of "
	    "partition %s", cfg->res.time, maxtime, cfg->partition), NULL);
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
static void check_nodes(struct doctor_checks *c, const struct doctor_facts *f,
			const struct node *v, size_t nr, const char *partition)
{
	struct buf bad = BUF_INIT, good = BUF_INIT, names = BUF_INIT;
	char *where = partition ? xasprintf("partition %s", partition) :
		xstrdup("the cluster");
	size_t i, nbad = 0;
	enum doctor_status st;

	if (f->node_rc) {
		add(c, "nodes", DOCTOR_FAIL, xasprintf("cannot read the nodes: %s",
		    f->node_cause), xstrdup("run `scontrol show node` to see what "
		    "Slurm says"));
		free(where);
		return;
	}
	if (nr == 0) {
		add(c, "nodes", DOCTOR_FAIL, xasprintf("%s has no nodes", where),
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
		add(c, "nodes", DOCTOR_OK, xasprintf("%zu node%s of %s take%s jobs: "
		    "%s%s", nr, nr == 1 ? "" : "s", where, nr == 1 ? "s" : "", good.s,
		    nr > LIST_MAX ? ", ..." : ""), NULL);
	} else {
		if (f->reason_rc)
			buf_addf(&bad, " (sinfo -R failed: %s)", f->reason_cause);
		st = nbad == nr ? DOCTOR_FAIL : DOCTOR_WARN;
		add(c, "nodes", st, xasprintf("%zu of %zu node%s of %s take%s no jobs: "
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

/* One GRES: "gpu:a100:2" = name gpu, type a100, count 2. */
struct gres {
	char name[64];
	char type[64];
	long long count;
};

/* Parse one GRES item (without a "(S:0-1)" suffix); -1 when malformed. */
static int gres_parse(const char *s, size_t n, struct gres *g)
{
	char tok[3][64];
	size_t nt = 0, len;
	const char *errstr;
	long long mult = 1;

	memset(g, 0, sizeof(*g));
	while (n && nt < 3) {
		len = 0;
		while (len < n && s[len] != ':')
			len++;
		if (len == 0 || len >= sizeof(tok[0]))
			return -1;
		memcpy(tok[nt], s, len);
		tok[nt++][len] = '\0';
		s += len;
		n -= len;
		if (n) {
			s++;
			n--;
		}
	}
	if (n || nt == 0)
		return -1;
	xsnprintf(g->name, sizeof(g->name), "%s", tok[0]);
	g->count = 1;
	if (nt > 1 && isdigit((unsigned char)tok[nt - 1][0])) {
		char *last = tok[nt - 1];

		len = strlen(last);
		switch (last[len - 1]) {
		case 'K': case 'k': mult = 1024; break;
		case 'M': case 'm': mult = 1024 * 1024; break;
		case 'G': case 'g': mult = 1024 * 1024 * 1024; break;
		}
		if (mult > 1)
			last[len - 1] = '\0';
		if (parse_ll(last, 0, LLONG_MAX / mult, &g->count, &errstr) < 0)
			return -1;
		g->count *= mult;
		nt--;
	}
	if (nt > 1 && strcmp(tok[1], "no_consume") != 0)
		xsnprintf(g->type, sizeof(g->type), "%s", tok[1]);
	return 0;
}

/* How many of want a node's Gres= list ("gpu:a100:2(S:0-1),mps:100") has. */
static long long gres_available(const char *list, const struct gres *want)
{
	const char *p = list;
	long long total = 0;
	struct gres g;

	if (p == NULL || strcmp(p, "(null)") == 0)
		return 0;
	while (*p) {
		size_t n = 0, item;
		int depth = 0;

		/* an item ends at a comma outside parentheses */
		while (p[n] && (p[n] != ',' || depth)) {
			depth += p[n] == '(' ? 1 : p[n] == ')' ? -1 : 0;
			n++;
		}
		item = strcspn(p, "(,");
		if (item > n)
			item = n;
		if (gres_parse(p, item, &g) == 0 && strcmp(g.name, want->name) == 0 &&
		    (!*want->type || strcmp(g.type, want->type) == 0))
			total += g.count;
		p += n + (p[n] == ',');
	}
	return total;
}

/* resources.gres is configured on at least one node of the partition. */
static void check_gres(struct doctor_checks *c, const struct config *cfg,
		       const struct node *v, size_t nr)
{
	const char *most_on = NULL, *most_list = NULL;
	long long most = -1, have;
	struct gres want;
	size_t i;

	if (!*cfg->res.gres) {
		add(c, "gres", DOCTOR_OK, xstrdup("no GRES requested (resources.gres is \"\": "
		    "a CPU-only study)"), NULL);
		return;
	}
	if (gres_parse(cfg->res.gres, strlen(cfg->res.gres), &want) < 0) {
		add(c, "gres", DOCTOR_FAIL, xasprintf("resources.gres '%s' is not NAME[:TYPE]"
		    "[:COUNT]", cfg->res.gres), xstrdup("write resources.gres in xloop.json "
		    "as Slurm's --gres does, e.g. \"gpu:1\""));
		return;
	}
	for (i = 0; i < nr; i++) {
		const char *list = slurm_record_get(v[i].rec, "Gres");

		have = gres_available(list, &want);
		if (have > most) {
			most = have;
			most_on = v[i].name;
			most_list = list ? list : "(null)";
		}
	}
	if (most >= want.count) {
		add(c, "gres", DOCTOR_OK, xasprintf("%s requested; %s has Gres=%s",
		    cfg->res.gres, most_on, most_list), NULL);
	} else if (most <= 0) {
		add(c, "gres", DOCTOR_FAIL, xasprintf("no node of partition %s has %s%s%s "
		    "configured (%s has Gres=%s): jobs asking for %s never start",
		    cfg->partition, want.name, *want.type ? ":" : "", want.type, most_on,
		    most_list, cfg->res.gres),
		    xstrdup("set resources.gres in xloop.json to what the nodes have "
			    "(\"\" for a CPU-only study; `xloop doctor --fix` does that), or "
			    "choose a partition with GPUs"));
	} else {
		add(c, "gres", DOCTOR_FAIL, xasprintf("%s requested, but no node of partition "
		    "%s has that many (most: Gres=%s on %s): the jobs would never start",
		    cfg->res.gres, cfg->partition, most_list, most_on),
		    xasprintf("lower resources.gres in xloop.json to %s%s%s:%lld (or run "
			      "`xloop doctor --fix`), or choose a partition with more",
			      want.name, *want.type ? ":" : "", want.type, most));
	}
}

/* An integer field of a node record; -1 when absent. */
static long long node_int(const struct node *n, const char *key)
{
	const char *v = slurm_record_get(n->rec, key), *errstr;
	long long x;

	return v && parse_ll(v, 0, LLONG_MAX, &x, &errstr) == 0 ? x : -1;
}

/* The most CPUs (CPUTot) and memory (RealMemory, MB) a node has; -1 unknown. */
static void node_max(const struct node *v, size_t nr, long long *cpu, long long *mem)
{
	size_t i;

	*cpu = *mem = -1;
	for (i = 0; i < nr; i++) {
		long long nc = node_int(&v[i], "CPUTot"), nm = node_int(&v[i], "RealMemory");

		if (nc > *cpu)
			*cpu = nc;
		if (nm > *mem)
			*mem = nm;
	}
}

/* resources.cpus and .mem fit on one node of the partition. */
static void check_resources(struct doctor_checks *c, const struct config *cfg,
			    const struct node *v, size_t nr)
{
	long long cpus = cfg->res.cpus, mem = config_mem_mb(cfg->res.mem);
	long long max_cpu = -1, max_mem = -1;
	size_t i, fit = 0;
	struct buf why = BUF_INIT, fix = BUF_INIT;

	node_max(v, nr, &max_cpu, &max_mem);
	for (i = 0; i < nr; i++) {
		long long nc = node_int(&v[i], "CPUTot"), nm = node_int(&v[i], "RealMemory");

		fit += (nc < 0 || cpus <= nc) && (nm < 0 || mem <= nm);
	}
	if (fit) {
		add(c, "resources", DOCTOR_OK, xasprintf("cpus %lld and mem %s fit on %zu of %zu "
		    "node%s (largest: CPUTot=%lld RealMemory=%lldM)", cpus, cfg->res.mem,
		    fit, nr, nr == 1 ? "" : "s", max_cpu, max_mem), NULL);
		return;
	}
	if (max_cpu >= 0 && cpus > max_cpu) {
		buf_addf(&why, "resources.cpus %lld is more than any node of partition %s "
			 "has (CPUTot=%lld)", cpus, cfg->partition, max_cpu);
		buf_addf(&fix, "resources.cpus to at most %lld", max_cpu);
	}
	if (max_mem >= 0 && mem > max_mem) {
		buf_addf(&why, "%sresources.mem %s is more than any node of partition %s "
			 "has (RealMemory=%lldM)", why.len ? "; " : "", cfg->res.mem,
			 cfg->partition, max_mem);
		buf_addf(&fix, "%sresources.mem to at most %lldM", fix.len ? " and " : "",
			 max_mem);
	}
	if (why.len == 0) {
		/* each fits somewhere, never both on the same node */
		buf_addf(&why, "no node of partition %s has both %lld CPUs and %s of "
			 "memory", cfg->partition, cpus, cfg->res.mem);
		buf_addf(&fix, "resources.cpus or resources.mem");
	}
	add(c, "resources", DOCTOR_FAIL, xasprintf("%s: the jobs would never start", why.s),
	    xasprintf("lower %s in xloop.json, or run `xloop doctor --fix`", fix.s));
	buf_release(&why);
	buf_release(&fix);
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

/* Accounting on or off, and what a verdict relies on then. */
static void check_accounting(struct doctor_checks *c, const struct doctor_facts *f)
{
	const char *type, *age;
	long long secs;

	if (f->conf_rc) {
		add(c, "accounting", DOCTOR_FAIL, xasprintf("cannot read Slurm's configuration: "
		    "%s", f->conf_cause), xstrdup("run `scontrol show config` to see "
		    "what Slurm says"));
		return;
	}
	type = slurm_record_get(&f->conf, "AccountingStorageType");
	age = slurm_record_get(&f->conf, "MinJobAge");
	secs = conf_secs(age);
	if (slurm_config_accounting(&f->conf)) {
		add(c, "accounting", DOCTOR_OK, xasprintf("accounting on (%s): verdicts come "
		    "from sacct; scontrol keeps finished jobs MinJobAge=%lld s", type, secs),
		    NULL);
	} else if (secs == 0) {
		add(c, "accounting", DOCTOR_OK, xstrdup("no accounting, but scontrol keeps "
		    "finished jobs for ever (MinJobAge=0): verdicts rely on scontrol"), NULL);
	} else if (secs > 0) {
		add(c, "accounting", DOCTOR_WARN, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which forgets jobs after MinJobAge=%lld s; run xloop "
		    "next/tick more often than that", secs), xasprintf("run `xloop tick` "
		    "from cron at least every %lld min, or have the admin set up slurmdbd "
		    "(AccountingStorageType=accounting_storage/slurmdbd)",
		    secs >= 120 ? secs / 120 : 1));
	} else {
		add(c, "accounting", DOCTOR_WARN, xasprintf("no accounting: verdicts rely on "
		    "scontrol, which forgets jobs after MinJobAge (unreadable: '%s')",
		    age ? age : "missing"), xstrdup("run `xloop tick` from cron every "
		    "minute or two, or have the admin set up slurmdbd"));
	}
}

/* "12.3 GiB" or "480 MiB". */
static void human_bytes(unsigned long long n, char *out, size_t size)
{
	if (n >= (1ULL << 30))
		xsnprintf(out, size, "%.1f GiB", (double)n / (1ULL << 30));
	else
		xsnprintf(out, size, "%llu MiB", n >> 20);
}

/* Free space where logs, cv.json and the state DB are written. */
static void check_disk(struct doctor_checks *c, const char *root)
{
	struct statvfs sv;
	unsigned long long avail;
	char size[32];

	if (statvfs(root, &sv) < 0) {
		add(c, "disk", DOCTOR_FAIL, xasprintf("cannot tell the free space under %s: %s",
		    root, strerror(errno)), xstrdup("check that the study directory is "
		    "readable"));
		return;
	}
	avail = (unsigned long long)sv.f_bavail * sv.f_frsize;
	human_bytes(avail, size, sizeof(size));
	if (avail < DISK_FAIL_BYTES)
		add(c, "disk", DOCTOR_FAIL, xasprintf("only %s free under %s: logs, cv.json "
		    "and the state DB may not fit", size, root), xstrdup("free space on "
		    "that filesystem (at least 500 MiB; 5 GiB to be comfortable)"));
	else if (avail < DISK_WARN_BYTES)
		add(c, "disk", DOCTOR_WARN, xasprintf("%s free under %s", size, root),
		    xstrdup("free space on that filesystem before a long run fills it "
			    "(below 5 GiB)"));
	else
		add(c, "disk", DOCTOR_OK, xasprintf("%s free under %s", size, root), NULL);
}

/* True when pid runs under slurmstepd (a Slurm job), walking up its parents. */
static int under_slurm(long long pid)
{
	char path[64], comm[64];
	struct buf stat = BUF_INIT;
	int depth, err, found = 0;
	char *cause = NULL;

	for (depth = 0; depth < 64 && pid > 1 && !found; depth++) {
		const char *open, *close;

		xsnprintf(path, sizeof(path), "/proc/%lld/stat", pid);
		buf_reset(&stat);
		if (read_file(path, 4096, &stat, &err, &cause) < 0) {
			FREE_AND_NULL(cause);
			break;
		}
		/* "pid (comm) state ppid ...": comm may hold ')' itself */
		open = strchr(stat.s, '(');
		close = strrchr(stat.s, ')');
		if (open == NULL || close == NULL || close < open ||
		    (size_t)(close - open - 1) >= sizeof(comm))
			break;
		memcpy(comm, open + 1, (size_t)(close - open - 1));
		comm[close - open - 1] = '\0';
		found = strcmp(comm, "slurmstepd") == 0;
		if (sscanf(close + 1, " %*c %lld", &pid) != 1)
			break;
	}
	buf_release(&stat);
	return found;
}

/* True when an executable prog is in one of PATH's directories. */
static int in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char *dir, *file;
	int found = 0;

	while (p && *p && !found) {
		size_t n = strcspn(p, ":");

		dir = n ? xstrndup(p, n) : xstrdup(".");
		file = path_join(dir, prog);
		found = access(file, X_OK) == 0;
		free(file);
		free(dir);
		p += n + (p[n] == ':');
	}
	return found;
}

/* GPU processes that no Slurm job owns, when nvidia-smi exists. */
static void check_gpu_procs(struct doctor_checks *c)
{
	const char *argv[] = { "nvidia-smi", "--query-compute-apps=pid,process_name",
			       "--format=csv,noheader", NULL };
	struct proc p = PROC_INIT;
	struct buf how = BUF_INIT, stray = BUF_INIT;
	size_t nstray = 0, nslurm = 0;
	const char *line;

	if (!in_path(argv[0])) {
		add(c, "gpu-procs", DOCTOR_OK, xstrdup("nvidia-smi not on PATH: no NVIDIA "
		    "GPU to check here"), NULL);
		return;
	}
	p.argv = argv;
	p.timeout_ms = GPU_QUERY_TIMEOUT_MS;
	p.max_output = 1 << 20;
	if (proc_run(&p) < 0) {
		add(c, "gpu-procs", DOCTOR_WARN, xasprintf("cannot run nvidia-smi: %s",
		    strerror(p.exec_errno)), xstrdup("check the NVIDIA driver "
		    "installation (`nvidia-smi` by hand)"));
		proc_release(&p);
		return;
	}
	if (p.status != 0 || p.timed_out) {
		buf_rtrim(&p.out);
		buf_rtrim(&p.err);
		proc_describe(&p, &how);
		add(c, "gpu-procs", DOCTOR_WARN, xasprintf("nvidia-smi %s%s%s", how.s,
		    p.err.len || p.out.len ? ": " : "", p.err.len ? p.err.s : p.out.s),
		    xstrdup("check the NVIDIA driver (`nvidia-smi` by hand); jobs may "
			    "not see the GPU"));
		buf_release(&how);
		proc_release(&p);
		return;
	}
	for (line = p.out.s; *line;) {
		size_t n = strcspn(line, "\n");
		const char *comma = memchr(line, ',', n);
		char *pidtxt = xstrndup(line, comma ? (size_t)(comma - line) : n);
		const char *errstr, *name = comma ? comma + 1 : "";
		long long pid;

		while (*name == ' ')
			name++;
		if (parse_ll(pidtxt, 1, LLONG_MAX, &pid, &errstr) == 0) {
			if (under_slurm(pid)) {
				nslurm++;
			} else if (nstray++ < LIST_MAX) {
				buf_addf(&stray, "%s%lld %.*s", stray.len ? ", " : "", pid,
					 (int)(line + n - name), name);
				buf_rtrim(&stray);
			}
		}
		free(pidtxt);
		line += n + (line[n] == '\n');
	}
	if (nstray > LIST_MAX)
		buf_addf(&stray, ", and %zu more", nstray - LIST_MAX);
	if (nstray)
		add(c, "gpu-procs", DOCTOR_WARN, xasprintf("%zu process%s outside Slurm hold%s "
		    "a GPU: %s", nstray, nstray == 1 ? "" : "es", nstray == 1 ? "s" : "",
		    stray.s), xstrdup("stop them if they are not yours to keep (kill PID): "
		    "they take GPU memory that Slurm jobs count on"));
	else
		add(c, "gpu-procs", DOCTOR_OK, xasprintf("no GPU process outside Slurm "
		    "(nvidia-smi; %zu in Slurm jobs)", nslurm), NULL);
	buf_release(&stray);
	proc_release(&p);
}

/* The webhook's env var is set (its value is a secret: never printed). */
static void check_notify(struct doctor_checks *c, const struct config *cfg)
{
	const char *name = cfg->notify_url_env, *v;

	if (!*name) {
		add(c, "notify", DOCTOR_OK, xstrdup("notifications off (notify.url_env is "
		    "\"\")"), NULL);
		return;
	}
	v = getenv(name);
	if (v == NULL || *v == '\0')
		add(c, "notify", DOCTOR_WARN, xasprintf("%s is not set: xloop tick will not "
		    "notify anyone", name), xasprintf("export %s=https://... where xloop "
		    "runs (cron too), or set notify.url_env to \"\" in xloop.json", name));
	else if (!starts_with(v, "https://") && !starts_with(v, "http://"))
		add(c, "notify", DOCTOR_WARN, xasprintf("%s is set but is not an http(s) URL "
		    "(value not shown)", name), xasprintf("set %s to the webhook's "
		    "https:// URL", name));
	else
		add(c, "notify", DOCTOR_OK, xasprintf("webhook URL set in %s (value not shown)",
		    name), NULL);
}

/* One line per check, the fix indented below a warning or failure. */
void doctor_print(const struct doctor_checks *c, const char *indent)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		printf("%s%-5s %-12s %s\n", indent, status_names[c->v[i].st], c->v[i].name,
		       c->v[i].detail);
		if (*c->v[i].fix)
			printf("%s%-5s %-12s fix: %s\n", indent, "", "", c->v[i].fix);
	}
}

/* The checks as a JSON array. */
json_t *doctor_checks_json(const struct doctor_checks *c)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < c->nr; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s}",
			"name", c->v[i].name, "status", status_names[c->v[i].st],
			"detail", c->v[i].detail, "fix", c->v[i].fix));
	return arr;
}

/* Whether a check failed. */
int doctor_failed(const struct doctor_checks *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->v[i].st == DOCTOR_FAIL)
			return 1;
	return 0;
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
	facts_release(f);
}

/* Free the checks. */
void doctor_checks_release(struct doctor_checks *c)
{
	checks_release(c);
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
	check_controller(c, f);
	if (f->up) {
		check_partition(c, f, part);
		if (f->node_rc == 0)
			nodes = partition_nodes(f, have ? part : NULL, &nr);
		if (have)
			check_time(c, f, cfg);
		check_nodes(c, f, nodes, nr, have ? part : NULL);
		if (f->node_rc == 0 && have && nr) {
			check_gres(c, cfg, nodes, nr);
			check_resources(c, cfg, nodes, nr);
		}
		check_accounting(c, f);
	}
	check_disk(c, root);
	check_gpu_procs(c);
	check_notify(c, cfg);
	free(nodes);
}

/* A duration in Slurm's --time form: "HH:MM:SS" or "D-HH:MM:SS". */
static char *format_time(long long secs)
{
	long long d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;

	return d ? xasprintf("%lld-%02lld:%02lld:%02lld", d, h, m, s) :
		   xasprintf("%02lld:%02lld:%02lld", h, m, s);
}

/* Note one change of a resource; takes to over. */
static void note_fit(json_t *changes, const char *key, const char *from, char *to,
		     char *why, char **field)
{
	json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:s}", "key", key,
						 "from", from, "to", to, "why", why));
	free(why);
	free(*field);
	*field = to;
}

/* Lower what does not fit the partition. */
int doctor_fit(const struct doctor_facts *f, struct config *cfg, json_t *changes)
{
	const char *maxtime;
	long long max = -1, max_cpu = -1, max_mem = -1, most = -1;
	struct node *nodes;
	size_t nr = 0, i, before = json_array_size(changes);
	struct gres want;

	memset(&want, 0, sizeof(want));
	if (!doctor_have_partition(f))
		return 0;
	maxtime = slurm_record_get(&f->part.v[0], "MaxTime");
	if (maxtime && slurm_parse_duration(maxtime, &max, NULL) == 0 && max > 0 &&
	    config_time_secs(cfg->res.time) > max)
		note_fit(changes, "resources.time", cfg->res.time, format_time(max),
			 xasprintf("partition %s has MaxTime=%s", cfg->partition, maxtime),
			 &cfg->res.time);
	if (f->node_rc)
		return (int)(json_array_size(changes) - before);
	nodes = partition_nodes(f, cfg->partition, &nr);
	node_max(nodes, nr, &max_cpu, &max_mem);
	for (i = 0; i < nr; i++) {
		if (*cfg->res.gres && gres_parse(cfg->res.gres, strlen(cfg->res.gres), &want) == 0) {
			long long have = gres_available(slurm_record_get(nodes[i].rec, "Gres"), &want);

			if (have > most)
				most = have;
		}
	}
	if (nr && max_cpu > 0 && cfg->res.cpus > max_cpu) {
		char from[32], to[32];

		xsnprintf(from, sizeof(from), "%lld", cfg->res.cpus);
		xsnprintf(to, sizeof(to), "%lld", max_cpu);
		json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:o}", "key",
			"resources.cpus", "from", from, "to", to, "why",
			json_sprintf("the largest node of partition %s has CPUTot=%lld",
				     cfg->partition, max_cpu)));
		cfg->res.cpus = max_cpu;
	}
	if (nr && max_mem > 0 && config_mem_mb(cfg->res.mem) > max_mem)
		note_fit(changes, "resources.mem", cfg->res.mem, xasprintf("%lldM", max_mem),
			 xasprintf("the largest node of partition %s has RealMemory=%lldM",
				   cfg->partition, max_mem), &cfg->res.mem);
	if (nr && *cfg->res.gres && most == 0)
		note_fit(changes, "resources.gres", cfg->res.gres, xstrdup(""),
			 xasprintf("no node of partition %s has %s configured: a CPU-only "
				   "study (set a GRES again for a partition with GPUs)",
				   cfg->partition, want.name), &cfg->res.gres);
	else if (nr && *cfg->res.gres && most > 0 && most < want.count)
		note_fit(changes, "resources.gres", cfg->res.gres,
			 xasprintf("%s%s%s:%lld", want.name, *want.type ? ":" : "", want.type,
				   most), xasprintf("no node of partition %s has more than %lld",
				   cfg->partition, most), &cfg->res.gres);
	free(nodes);
	return (int)(json_array_size(changes) - before);
}

