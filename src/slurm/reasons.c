/*
 * The table behind reason_explain(). Each entry says, in our own words,
 * what Slurm's code means for the job and what to do; see reasons.h.
 *
 * Kinds: a per-job maximum of a QOS or association (MaxWall, MaxTRES per
 * job) is BLOCKED, not LIMIT: the job will never fit it however long it
 * waits. Per-user and group limits are LIMIT: other jobs ending frees them.
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "slurm/reasons.h"
#include "lib/util.h"

#define W REASON_WAIT
#define B REASON_BLOCKED
#define H REASON_HELD
#define L REASON_LIMIT
#define N REASON_NODE

/* Actions shared by several entries. */
#define RESUBMIT_FEWER_GPUS \
	"Ask for fewer GPUs in job.sh, then `xloop cancel TAG` and submit it again."
#define RESUBMIT_FEWER_CPUS \
	"Ask for fewer CPUs in job.sh, then `xloop cancel TAG` and submit it again."
#define RESUBMIT_FEWER_NODES \
	"Ask for fewer nodes in job.sh, then `xloop cancel TAG` and submit it again."
#define LOWER_MEM \
	"Lower the memory request with `xloop adjust TAG --mem MEM`."
#define BUDGET_SPENT \
	"Ask the cluster's administrators for more, or use another account or " \
	"QOS; the budget only returns as recorded usage decays or is reset."

static const struct reason_info table[] = {
	/* normal waiting */
	{ "None", W,
	  "Slurm gives no reason: the job is running, about to start, or not yet looked at in this scheduling pass.",
	  "" },
	{ "Priority", W,
	  "Jobs with a higher priority are queued ahead of it for the same partition or reservation.",
	  "" },
	{ "Resources", W,
	  "The CPUs, memory or GPUs it asks for are in use by other jobs right now; it starts when they are freed.",
	  "" },
	{ "Dependency", W,
	  "It waits for the jobs named in its --dependency to reach the state it asked for.",
	  "" },
	{ "BeginTime", W,
	  "Its earliest start time has not come yet (--begin, or the short delay Slurm adds after a requeue).",
	  "" },
	{ "Licenses", W,
	  "It waits for a license (--licenses) that other jobs hold at the moment.",
	  "" },
	{ "Reservation", W,
	  "It waits for the advanced reservation it asked for to become active.",
	  "" },
	{ "Cleaning", W,
	  "It was requeued and Slurm is still cleaning up after its previous run.",
	  "" },
	{ "Prolog", W,
	  "The prolog script on its node is still running before the job itself starts.",
	  "" },
	{ "JobArrayTaskLimit", W,
	  "Its array already runs as many tasks as its %N throttle allows; the others start as those finish.",
	  "" },

	/* never starts as it is */
	{ "DependencyNeverSatisfied", B,
	  "A job it depends on ended in a way that can never satisfy the dependency (for example afterok on a job that failed).",
	  "Cancel it with `xloop cancel TAG` and submit it again once the job it needs has succeeded." },
	{ "PartitionTimeLimit", B,
	  "Its --time is longer than the partition's MaxTime, so this partition will never start it.",
	  "Lower --time to at most the partition's MaxTime (`sinfo -o '%P %l'` lists it) with `xloop adjust TAG --time TIME`." },
	{ "PartitionNodeLimit", B,
	  "Its node count is outside what the partition allows one job, or the nodes it needs are down or drained.",
	  "Compare its node count with `scontrol show partition` and run `xloop doctor` to see the nodes' state." },
	{ "PartitionConfig", B,
	  "It asks for more CPUs, memory or GPUs per node than the partition's nodes have, or breaks another partition setting.",
	  "Lower the request to what one node offers (`sinfo -o '%P %c %m %G'`), for example with `xloop adjust TAG --mem MEM`." },
	{ "PartitionDown", B,
	  "Its partition is DOWN: it still queues jobs but starts none of them.",
	  "Run `xloop doctor`; an administrator has to set the partition UP again (`scontrol update PartitionName=NAME State=UP`)." },
	{ "PartitionInactive", B,
	  "Its partition is INACTIVE and starts no jobs.",
	  "Run `xloop doctor`; an administrator has to set the partition UP, or `xloop cancel TAG` and submit it to another partition." },
	{ "BadConstraints", B,
	  "No node can ever meet its request: the features, memory (MinMemoryNode), CPUs or GPUs it needs exceed every node.",
	  "Check --constraint, --mem and --gres against `sinfo -o '%N %f %m %G'`, then `xloop cancel TAG` and submit a request a node can meet." },
	{ "InvalidAccount", B,
	  "Its account (--account) does not exist or you are not a member of it.",
	  "Pick an account listed by `sacctmgr show assoc user=$USER`, then `xloop cancel TAG` and submit it again." },
	{ "InvalidQOS", B,
	  "Its QOS (--qos) does not exist or your association may not use it.",
	  "Pick a QOS listed by `sacctmgr show assoc user=$USER format=account,qos`, then `xloop cancel TAG` and submit it again." },
	{ "AccountNotAllowed", B,
	  "Its partition does not accept jobs from its account.",
	  "`xloop cancel TAG` and submit it again with an account or partition that go together (`scontrol show partition` lists AllowAccounts)." },
	{ "QOSNotAllowed", B,
	  "Its partition or your association does not allow the QOS it asked for.",
	  "`xloop cancel TAG` and submit it again with a QOS the partition allows (`scontrol show partition` lists AllowQos)." },
	{ "MaxMemPerLimit", B,
	  "Its memory request is above the MaxMemPerCPU or MaxMemPerNode of its partition or cluster.",
	  LOWER_MEM },
	{ "ReservationDeleted", B,
	  "The reservation it asked for (--reservation) no longer exists.",
	  "`xloop cancel TAG` and submit it again without that reservation." },
	{ "QOSMinGRES", B,
	  "Its QOS requires each job to ask for at least a minimum of GPUs (or other GRES) and this one asks for fewer.",
	  "Ask for a GPU in job.sh or use a QOS meant for CPU jobs, then `xloop cancel TAG` and submit it again." },
	{ "QOSMaxWallDurationPerJobLimit", B,
	  "Its --time is longer than the MaxWall of its QOS, so it will not start as it is.",
	  "Lower --time to the QOS's MaxWall (`sacctmgr show qos format=name,maxwall`) with `xloop adjust TAG --time TIME`." },
	{ "AssocMaxWallDurationPerJobLimit", B,
	  "Its --time is longer than the MaxWall set for your account or user, so it will not start as it is.",
	  "Lower --time to that MaxWall (`sacctmgr show assoc user=$USER format=account,maxwall`) with `xloop adjust TAG --time TIME`." },
	{ "QOSMaxGRESPerJob", B,
	  "It asks for more GPUs (or other GRES) than its QOS allows a single job.",
	  RESUBMIT_FEWER_GPUS },
	{ "AssocMaxGRESPerJob", B,
	  "It asks for more GPUs (or other GRES) than your account or user may use in a single job.",
	  RESUBMIT_FEWER_GPUS },
	{ "QOSMaxCpuPerJobLimit", B,
	  "It asks for more CPUs than its QOS allows a single job.",
	  RESUBMIT_FEWER_CPUS },
	{ "AssocMaxCpuPerJobLimit", B,
	  "It asks for more CPUs than your account or user may use in a single job.",
	  RESUBMIT_FEWER_CPUS },
	{ "QOSMaxMemoryPerJob", B,
	  "It asks for more memory than its QOS allows a single job.",
	  LOWER_MEM },
	{ "AssocMaxMemPerJob", B,
	  "It asks for more memory than your account or user may use in a single job.",
	  LOWER_MEM },
	{ "QOSMaxNodePerJobLimit", B,
	  "It asks for more nodes than its QOS allows a single job.",
	  RESUBMIT_FEWER_NODES },
	{ "AssocMaxNodePerJobLimit", B,
	  "It asks for more nodes than your account or user may use in a single job.",
	  RESUBMIT_FEWER_NODES },

	/* held */
	{ "JobHeldUser", H,
	  "It is held by you or an account coordinator (submitted with --hold, or `scontrol hold`).",
	  "Release it with `scontrol release JOBID`, or `xloop cancel TAG` if it is no longer wanted." },
	{ "JobHeldAdmin", H,
	  "An administrator held it, and only an administrator can release it.",
	  "Ask the cluster's administrators why; on your own machine run `sudo scontrol release JOBID`." },
	{ "JobHoldMaxRequeue", H,
	  "Slurm requeued it so many times that it held it instead of trying again.",
	  "Find out why it keeps failing (`xloop doctor`), then `xloop cancel TAG` and submit it again." },
	{ "launch failed requeued held", H,
	  "Slurm could not start it on its node (often a node or file system problem), so it requeued and held it.",
	  "Run `xloop doctor` to check the node, then `scontrol release JOBID` or `xloop cancel TAG`." },
	{ "job requeued in held state", H,
	  "It was requeued with a hold (`scontrol requeuehold`) and waits for someone to release it.",
	  "Release it with `scontrol release JOBID`, or `xloop cancel TAG` if it is no longer wanted." },

	/* limits of a QOS: other jobs ending frees them */
	{ "QOSMaxJobsPerUserLimit", L,
	  "You already run as many jobs as its QOS allows one user; it starts when one of them ends.",
	  "" },
	{ "QOSMaxSubmitJobPerUserLimit", L,
	  "You already have as many jobs running or pending as its QOS allows one user.",
	  "" },
	{ "QOSMaxCpuPerUserLimit", L,
	  "Your running jobs already use as many CPUs as its QOS allows one user.",
	  "" },
	{ "QOSMaxNodePerUserLimit", L,
	  "Your running jobs already use as many nodes as its QOS allows one user.",
	  "" },
	{ "QOSMaxMemoryPerUser", L,
	  "Your running jobs already use as much memory as its QOS allows one user.",
	  "" },
	{ "QOSMaxGRESPerUser", L,
	  "Your running jobs already hold as many GPUs (or other GRES) as its QOS allows one user.",
	  "If this job alone asks for more than that limit (`sacctmgr show qos format=name,maxtrespu`), ask for fewer GPUs and submit it again." },
	{ "QOSGrpCpuLimit", L,
	  "All jobs of its QOS together already use the CPUs the QOS may use at once.",
	  "" },
	{ "QOSGrpGRES", L,
	  "All jobs of its QOS together already hold the GPUs (or other GRES) the QOS may use at once.",
	  "" },
	{ "QOSGrpMemLimit", L,
	  "All jobs of its QOS together already use the memory the QOS may use at once.",
	  "" },
	{ "QOSGrpNodeLimit", L,
	  "All jobs of its QOS together already use the nodes the QOS may use at once.",
	  "" },
	{ "QOSGrpJobsLimit", L,
	  "Its QOS already runs as many jobs as it may run at once.",
	  "" },
	{ "QOSGrpSubmitJobsLimit", L,
	  "Its QOS already has as many jobs running or pending as it may have.",
	  "" },
	{ "QOSGrpCPUMinutesLimit", L,
	  "Its QOS has spent its budget of CPU-minutes.",
	  BUDGET_SPENT },
	{ "QOSGrpCPURunMinutesLimit", L,
	  "The running jobs of its QOS have as many CPU-minutes left to run as the QOS allows; it starts as they progress.",
	  "" },
	{ "QOSGrpGRESMinutes", L,
	  "Its QOS has spent its budget of GPU-minutes (or minutes of another GRES).",
	  BUDGET_SPENT },
	{ "QOSGrpGRESRunMinutes", L,
	  "The running jobs of its QOS have as many GPU-minutes left to run as the QOS allows; it starts as they progress.",
	  "" },
	{ "QOSJobLimit", L,
	  "Its QOS has reached its maximum number of jobs.",
	  "" },
	{ "QOSResourceLimit", L,
	  "Its QOS has reached one of its resource limits.",
	  "" },
	{ "QOSTimeLimit", L,
	  "Its QOS has reached its time limit.",
	  "" },
	{ "QOSUsageThreshold", L,
	  "Its account's recorded usage is above the UsageThreshold its QOS requires.",
	  "Wait for the usage to decay, or submit it with another QOS that is open to you." },

	/* limits of an association (account/user) */
	{ "AssocMaxJobsLimit", L,
	  "You already run as many jobs as your account or user may run at once; it starts when one of them ends.",
	  "" },
	{ "AssocMaxSubmitJobLimit", L,
	  "You already have as many jobs running or pending as your account or user may have.",
	  "" },
	{ "AssocGrpCpuLimit", L,
	  "The jobs of your account (or group) together already use the CPUs it may use at once.",
	  "" },
	{ "AssocGrpMemLimit", L,
	  "The jobs of your account (or group) together already use the memory it may use at once.",
	  "" },
	{ "AssocGrpNodeLimit", L,
	  "The jobs of your account (or group) together already use the nodes it may use at once.",
	  "" },
	{ "AssocGrpGRES", L,
	  "The jobs of your account (or group) together already hold the GPUs (or other GRES) it may use at once.",
	  "" },
	{ "AssocGrpJobsLimit", L,
	  "Your account (or group) already runs as many jobs as it may run at once.",
	  "" },
	{ "AssocGrpSubmitJobsLimit", L,
	  "Your account (or group) already has as many jobs running or pending as it may have.",
	  "" },
	{ "AssocGrpCPUMinutesLimit", L,
	  "Your account has spent its budget of CPU-minutes.",
	  BUDGET_SPENT },
	{ "AssocGrpCPURunMinutesLimit", L,
	  "The running jobs of your account have as many CPU-minutes left to run as it allows; it starts as they progress.",
	  "" },
	{ "AssocGrpGRESMinutes", L,
	  "Your account has spent its budget of GPU-minutes (or minutes of another GRES).",
	  BUDGET_SPENT },
	{ "AssocGrpGRESRunMinutes", L,
	  "The running jobs of your account have as many GPU-minutes left to run as it allows; it starts as they progress.",
	  "" },
	{ "AssocGrpBilling", L,
	  "The jobs of your account together already use as many billing units as it may use at once.",
	  "" },
	{ "AssocGrpBillingMinutes", L,
	  "Your account has spent its budget of billing minutes.",
	  BUDGET_SPENT },
	{ "AssociationJobLimit", L,
	  "Your account or user has reached its maximum number of jobs.",
	  "" },
	{ "AssociationResourceLimit", L,
	  "Your account or user has reached one of its resource limits.",
	  "" },
	{ "AssociationTimeLimit", L,
	  "Your account or user has reached its time limit.",
	  "" },

	/* per-account limits of a QOS */
	{ "MaxJobsPerAccount", L,
	  "Your account already runs as many jobs in its QOS as the QOS allows one account.",
	  "" },
	{ "MaxSubmitJobsPerAccount", L,
	  "Your account already has as many jobs running or pending in its QOS as the QOS allows one account.",
	  "" },
	{ "MaxCpuPerAccount", L,
	  "Your account's jobs in its QOS already use as many CPUs as the QOS allows one account.",
	  "" },
	{ "MaxGRESPerAccount", L,
	  "Your account's jobs in its QOS already hold as many GPUs (or other GRES) as the QOS allows one account.",
	  "" },
	{ "AccountingPolicy", L,
	  "It breaks an accounting limit that Slurm does not name more precisely.",
	  "See which limits apply with `sacctmgr show assoc user=$USER` and `sacctmgr show qos`." },

	/* nodes */
	{ "ReqNodeNotAvail", N,
	  "A node it must run on is down, drained, reserved or not responding (UnavailableNodes names the broken ones).",
	  "Run `xloop doctor` to see the nodes' state; drop any --nodelist, or have the node resumed once it is fixed." },
	{ "NodeDown", N,
	  "A node the job needs is DOWN.",
	  "Run `xloop doctor`; the node has to be brought back before the job can start." },
	{ "Constraints", N,
	  "The nodes with the features it asks for (--constraint) cannot take it at the moment.",
	  "Check with `sinfo -o '%N %f %t'` that nodes with those features exist and are up." },
	{ "Nodes required for job are DOWN", N,
	  "Every node that could run it is down, drained, rebooting or kept for jobs of a higher-priority partition.",
	  "Run `xloop doctor`; drained or down nodes have to be resumed before the job can start." },
};

static const struct reason_info unknown = {
	"", REASON_UNKNOWN,
	"Slurm gave a pending reason that xloop does not know.",
	"Look the reason up under JOB REASON CODES in `man squeue`, or run `xloop doctor`.",
};

#undef W
#undef B
#undef H
#undef L
#undef N

/* True when s[0..n) spells code, reading scontrol's '_' as a space. */
static int code_eq(const char *code, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i] == '_' ? ' ' : s[i];

		if (code[i] != c)
			return 0;
	}
	return code[n] == '\0';
}

/* Look the reason text up; see reasons.h for what is stripped. */
const struct reason_info *reason_explain(const char *reason)
{
	const char *p = reason ? reason : "";
	size_t n = 0, i;

	while (isspace((unsigned char)*p) || *p == '(')
		p++;
	while (p[n] && p[n] != ',' && p[n] != ')')
		n++;
	while (n > 0 && isspace((unsigned char)p[n - 1]))
		n--;
	if (n == 0) {
		p = "None";
		n = strlen(p);
	}
	for (i = 0; i < ARRAY_SIZE(table); i++)
		if (code_eq(table[i].code, p, n))
			return &table[i];
	return &unknown;
}

/* Slurm's own hold after a failed launch. */
int reason_slurm_held(const char *reason)
{
	return strcmp(reason_explain(reason)->code, "launch failed requeued held") == 0;
}

/* The table itself, for tests and listings. */
const struct reason_info *reason_table(size_t *nr)
{
	*nr = ARRAY_SIZE(table);
	return table;
}

/* A short lowercase word for a kind. */
const char *reason_kind_name(enum reason_kind kind)
{
	switch (kind) {
	case REASON_WAIT:
		return "wait";
	case REASON_BLOCKED:
		return "blocked";
	case REASON_HELD:
		return "held";
	case REASON_LIMIT:
		return "limit";
	case REASON_NODE:
		return "node";
	case REASON_UNKNOWN:
		break;
	}
	return "unknown";
}
