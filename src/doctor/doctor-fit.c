/* Doctor: the study's resources against the partition; --fix lowers them. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "doctor/doctor-impl.h"
#include "lib/util.h"

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

/* resources.time fits the partition's MaxTime. */
void doctor_check_time(struct doctor_checks *c, const struct doctor_facts *f,
		       const struct config *cfg)
{
	const char *maxtime = slurm_record_get(&f->part.v[0], "MaxTime");
	long long want = config_time_secs(cfg->res.time), max = -1;

	if (maxtime == NULL || slurm_parse_duration(maxtime, &max, NULL) < 0 || max < 0) {
		doctor_add(c, "time", DOCTOR_OK, xasprintf("resources.time %s; partition %s has no "
		    "time limit (MaxTime=%s)", cfg->res.time, cfg->partition,
		    maxtime ? maxtime : "?"), NULL);
		return;
	}
	if (want > max) {
		doctor_add(c, "time", DOCTOR_FAIL, xasprintf("resources.time %s is longer than "
		    "partition %s allows (MaxTime=%s): jobs would pend forever "
		    "(PartitionTimeLimit)", cfg->res.time, cfg->partition, maxtime),
		    xasprintf("lower resources.time in xloop.json to at most %s, or run "
			      "`xloop doctor --fix`", maxtime));
		return;
	}
	doctor_add(c, "time", DOCTOR_OK, xasprintf("resources.time %s fits MaxTime=%s of "
	    "partition %s", cfg->res.time, maxtime, cfg->partition), NULL);
}

/* resources.gres is configured on at least one node of the partition. */
void doctor_check_gres(struct doctor_checks *c, const struct config *cfg,
		       const struct node *v, size_t nr)
{
	const char *most_on = NULL, *most_list = NULL;
	long long most = -1, have;
	struct gres want;
	size_t i;

	if (!*cfg->res.gres) {
		doctor_add(c, "gres", DOCTOR_OK, xstrdup("no GRES requested (resources.gres is \"\": "
		    "a CPU-only study)"), NULL);
		return;
	}
	if (gres_parse(cfg->res.gres, strlen(cfg->res.gres), &want) < 0) {
		doctor_add(c, "gres", DOCTOR_FAIL, xasprintf("resources.gres '%s' is not NAME[:TYPE]"
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
		doctor_add(c, "gres", DOCTOR_OK, xasprintf("%s requested; %s has Gres=%s",
		    cfg->res.gres, most_on, most_list), NULL);
	} else if (most <= 0) {
		doctor_add(c, "gres", DOCTOR_FAIL, xasprintf("no node of partition %s has %s%s%s "
		    "configured (%s has Gres=%s): jobs asking for %s never start",
		    cfg->partition, want.name, *want.type ? ":" : "", want.type, most_on,
		    most_list, cfg->res.gres),
		    xstrdup("set resources.gres in xloop.json to what the nodes have "
			    "(\"\" for a CPU-only study; `xloop doctor --fix` does that), or "
			    "choose a partition with GPUs"));
	} else {
		doctor_add(c, "gres", DOCTOR_FAIL, xasprintf("%s requested, but no node of partition "
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
void doctor_check_resources(struct doctor_checks *c, const struct config *cfg,
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
		doctor_add(c, "resources", DOCTOR_OK, xasprintf("cpus %lld and mem %s fit on %zu of %zu "
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
	doctor_add(c, "resources", DOCTOR_FAIL, xasprintf("%s: the jobs would never start", why.s),
	    xasprintf("lower %s in xloop.json, or run `xloop doctor --fix`", fix.s));
	buf_release(&why);
	buf_release(&fix);
}

/*
 * With feeders (driver.mode slurm or scrontab): a run that asks for every
 * CPU of its node leaves a feeder (1 CPU) pending on Resources behind the
 * next run, so judging lags one run, unless driver.partition (another
 * partition) or driver.qos gives it a way past.
 */
void doctor_check_feeder_cpus(struct doctor_checks *c, const struct config *cfg,
			      const struct node *v, size_t nr)
{
	long long cpus = cfg->res.cpus, most = -1;
	size_t i, full = 0;
	const char *dp = cfg->driver.partition;

	if (strcmp(cfg->driver.mode, "slurm") != 0 && strcmp(cfg->driver.mode, "scrontab") != 0)
		return;
	for (i = 0; i < nr; i++) {
		long long nc = node_int(&v[i], "CPUTot");

		if (nc > most)
			most = nc;
		full += nc >= 0 && cpus >= nc;
	}
	if (!nr || full < nr) {
		doctor_add(c, "driver-cpus", DOCTOR_OK, xasprintf("runs ask for %lld of %lld CPUs: "
		    "a feeder (1 CPU) starts beside a run", cpus, most), NULL);
		return;
	}
	if ((*dp && strcmp(dp, cfg->partition) != 0) || *cfg->driver.qos) {
		doctor_add(c, "driver-cpus", DOCTOR_OK, xasprintf("runs ask for every CPU of their "
		    "node (%lld); feeders go past them by %s%s%s%s", cpus, *dp ? "partition " : "",
		    *dp ? dp : "", *dp && *cfg->driver.qos ? " and QOS " : *cfg->driver.qos ?
		    "QOS " : "", cfg->driver.qos), NULL);
		return;
	}
	doctor_add(c, "driver-cpus", DOCTOR_WARN, xasprintf("runs ask for every CPU of their node "
	    "(resources.cpus %lld, CPUTot %lld): a feeder (1 CPU) waits on Resources behind the "
	    "next run, so each verdict comes one run late and autopilot waits for it", cpus, most),
	    xasprintf("set driver.partition to a partition whose jobs start first (its own "
		      "nodes, or a higher PriorityTier on these), or driver.qos to a QOS of "
		      "higher priority; or resources.cpus to %lld", most > 1 ? most - 1 : 1));
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
	long long max = -1, max_cpu = -1, max_mem = -1, most = -1, fit_cpu;
	struct node *nodes;
	int feeders;
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
	nodes = doctor_partition_nodes(f, cfg->partition, &nr);
	node_max(nodes, nr, &max_cpu, &max_mem);
	for (i = 0; i < nr; i++) {
		if (*cfg->res.gres && gres_parse(cfg->res.gres, strlen(cfg->res.gres), &want) == 0) {
			long long have = gres_available(slurm_record_get(nodes[i].rec, "Gres"), &want);

			if (have > most)
				most = have;
		}
	}
	/* with feeders that have no way past the runs, one CPU stays free for
	 * them (doctor_check_feeder_cpus would warn about the fit otherwise) */
	feeders = (strcmp(cfg->driver.mode, "slurm") == 0 ||
		   strcmp(cfg->driver.mode, "scrontab") == 0) && !*cfg->driver.qos &&
		  (!*cfg->driver.partition || strcmp(cfg->driver.partition, cfg->partition) == 0);
	fit_cpu = feeders && max_cpu > 1 ? max_cpu - 1 : max_cpu;
	if (nr && max_cpu > 0 && cfg->res.cpus > fit_cpu) {
		char from[32], to[32];

		xsnprintf(from, sizeof(from), "%lld", cfg->res.cpus);
		xsnprintf(to, sizeof(to), "%lld", fit_cpu);
		json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:o}", "key",
			"resources.cpus", "from", from, "to", to, "why",
			json_sprintf("the largest node of partition %s has CPUTot=%lld%s",
				     cfg->partition, max_cpu, fit_cpu < max_cpu ?
				     ", one left for the feeder job (driver.mode)" : "")));
		cfg->res.cpus = fit_cpu;
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
