/* The glossary: each word a user meets, once, in one sense (glossary.h). */
#include "glossary.h"

const struct glossary_term glossary[] = {
	{ "study",
	  "The experiments of one repository on one metric: xloop.json, the state\n"
	  "DB in .xloop/, runs/<study>/ and ops/decisions.md.\n" },
	{ "run",
	  "One job.sh (runs/<study>/<tag>/job.sh) and what came of it: a root\n"
	  "run (adopted) or a child of a parent run with one change. It has one\n"
	  "or more attempts; its tag names it.\n" },
	{ "attempt",
	  "One submission of a run to Slurm, numbered from 1 (0: adopted with\n"
	  "--cv); its log is runs/<study>/<tag>/slurm/attemptN.out. A retry is a\n"
	  "new attempt of the same run.\n" },
	{ "verdict",
	  "What xloop decides of an attempt once Slurm is done with it: success\n"
	  "(COMPLETED, ExitCode 0:0 and a fresh cv.json with a finite score) or\n"
	  "failure, classed infra (retried by itself) or program (never). Until\n"
	  "then status says \"judging\".\n" },
	{ "proven",
	  "Said of a run only: its latest attempt's verdict is success with a\n"
	  "score (a proven run, a proven job.sh, a proven baseline; adopt --cv\n"
	  "makes an adopted run proven). Only a proven run can be a parent. Never\n"
	  "said of a comparison between configurations: that is \"confirmed\".\n" },
	{ "change",
	  "The one top-level assignment of job.sh a child run has that its parent\n"
	  "does not (VAR old -> new).\n" },
	{ "parent",
	  "The proven run a new run is copied from (--from P, or \"best\").\n" },
	{ "tag",
	  "A run's name, at most 64 characters (help tags): a change is VAR-VALUE,\n"
	  "a replicate B--r2, a configuration of autopilot's VAR-V_VAR2-V2. A\n"
	  "variable has one name in every tag of a study.\n" },
	{ "configuration",
	  "A job.sh's top-level assignments without the seed variable. Runs with\n"
	  "the same configuration are one experiment; its score is estimated from\n"
	  "all of them.\n" },
	{ "seed",
	  "The variable named by `xloop space seed VAR`: runs that differ only in\n"
	  "it are replicates of one configuration.\n" },
	{ "replicate",
	  "A run whose one change is the seed (tag B--rK): another measurement\n"
	  "of the same configuration. Never a parent.\n" },
	{ "noise",
	  "How much runs of one configuration differ by their seed alone: the sd\n"
	  "pooled over every configuration with replicates. It is re-measured\n"
	  "with every replicate, so a figure can change with no new run of its\n"
	  "own (\"noise re-measured\").\n" },
	{ "baseline",
	  "The configuration of the study's first proven root run: where the best\n"
	  "starts and what \"confirmed\" compares with.\n" },
	{ "true score",
	  "What a configuration would score on average over every seed: never\n"
	  "seen, only estimated.\n" },
	{ "raw mean",
	  "The plain mean of a configuration's proven runs, shown beside the\n"
	  "estimate with n, the number of those runs: \"raw mean 0.97691, n=2\".\n" },
	{ "model estimate",
	  "The Gaussian process's posterior mean of a configuration's true score\n"
	  "(\"model 0.9781 ± 0.007\"). When the model does not fit, the shrunken\n"
	  "mean (each mean pulled towards the grand mean by its share of the\n"
	  "noise) stands in; while the noise is not measured, the raw mean.\n"
	  "Whichever the choice uses is the estimate; it is the best's score\n"
	  "everywhere (status, resume, the briefing, the report, notifications).\n" },
	{ "±",
	  "One posterior standard deviation of the figure before it, everywhere:\n"
	  "for the model's estimate its posterior sd, for a mean the noise's sd\n"
	  "over sqrt(n), for a lead the sd of the difference. Never a 95%\n"
	  "interval (the JSON field \"interval\" is, and says so).\n" },
	{ "best",
	  "The configuration xloop stands by, and the run that stands for it\n"
	  "(--from best, replicate best). It starts as the baseline and moves to\n"
	  "the model's pick when P is at least 0.9 and it was the pick at an\n"
	  "earlier verdict too (help best); a move is a promotion.\n" },
	{ "pick",
	  "The configuration with the highest estimate. When it is not the best,\n"
	  "status says why the best stays (P under 0.9, fewer than 2 runs, or\n"
	  "the pick only since the last verdict).\n" },
	{ "P",
	  "The posterior probability that one configuration is better than\n"
	  "another (by more than metric.min_delta).\n" },
	{ "promotion",
	  "A move of the best: an ops/decisions.md entry of its own (\"best now X\n"
	  "(was Y)\") and an event.\n" },
	{ "confirmed",
	  "A label of the best against the baseline, never a condition: the\n"
	  "paired test on common seeds passed over its confirming runs\n"
	  "(\"confirmed better than base on 2 common seeds\"; else \"not\n"
	  "confirmed yet: 1 of 4 confirming runs on base's seeds\", or \"not\n"
	  "confirmed\" once every look is used). The test asks a lead in the\n"
	  "metric's units. It never moves the best. --json: outlook.confirmed\n"
	  "(outlook.proven is its deprecated old name).\n" },
	{ "confirming run",
	  "A run of a configuration after its first (the first chose it and is\n"
	  "not counted) on a seed the baseline has: the pairs the paired test\n"
	  "compares, at most 4 (\"looks\").\n" },
	{ "space",
	  "The values autopilot may give each variable (`xloop space`).\n" },
	{ "plan",
	  "Changes queued by hand (`xloop plan add`), fed in order before\n"
	  "autopilot proposes.\n" },
	{ "autopilot",
	  "xloop proposing the next run itself from the space, one at a time,\n"
	  "within its budget (`xloop auto on`).\n" },
	{ "budget",
	  "What autopilot may spend: runs, GPU-hours, or a date (auto on\n"
	  "--budget-runs, --budget-hours, --until).\n" },
	{ "sweep",
	  "Many values of one variable as one Slurm job array (`xloop sweep`).\n" },
	{ "lane",
	  "One chain of jobs, each waiting (afterany) on the one before it;\n"
	  "queue.lanes chains run side by side, queue.depth jobs wait in each.\n" },
	{ "segment",
	  "One job of an attempt that outlasts the time limit: segments 1..N run\n"
	  "one after the other in one run directory, with one log and one\n"
	  "verdict.\n" },
	{ "step",
	  "One job of a run in several (train, then eval), each its own Slurm\n"
	  "job; the verdict is the run's.\n" },
	{ "feed",
	  "Submitting from --set, the plan or autopilot until queue.depth jobs\n"
	  "wait.\n" },
	{ "tick",
	  "One pass of the loop without you: reconcile with Slurm, judge, feed,\n"
	  "notify (`xloop tick`).\n" },
	{ "driver",
	  "Who calls tick once the session ends (driver.mode): the feeder job\n"
	  "(slurm), scrontab, cron, or nobody (none).\n" },
	{ "feeder",
	  "The small Slurm job (xloop-feed) that runs tick when a run ends, under\n"
	  "driver.mode slurm; status's last line says who feeds next.\n" },
	{ "breaker",
	  "The circuit breaker: after breaker.program program failures or\n"
	  "breaker.infra infra failures in a row, or a GPU job that saw no GPU,\n"
	  "feeding stops until `xloop breaker reset`.\n" },
	{ "decision",
	  "An entry of ops/decisions.md, committed: each verdict, each promotion,\n"
	  "and what you record with `xloop decide`.\n" },
};

const size_t glossary_n = sizeof(glossary) / sizeof(glossary[0]);
