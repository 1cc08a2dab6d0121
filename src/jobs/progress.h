/*
 * What a job reports as it trains (issue 45), as pure functions: the
 * lines of $XLOOP_RUN_DIR/progress ("epochs N", "chance C", "epoch K
 * VALUE"), the plainest stop rule over them, and the stop record the
 * job's wrapper writes ($XLOOP_RUN_DIR/stopped: "attempt N epoch K WHY").
 * The wrapper applies the same rule in shell on the node (watch.c);
 * `help adopt` documents the format.
 */
#ifndef XLOOP_PROGRESS_H
#define XLOOP_PROGRESS_H

struct progress {
	long long planned;	/* "epochs N"; 0: not said */
	int has_chance;		/* "chance C" was given */
	double chance;
	long long epochs;	/* "epoch" lines read */
	long long last_epoch;	/* the last one's K; 0: none */
	double last_value;	/* its VALUE (may be NaN or infinite) */
	int stop;		/* the rule says stop (progress_rule) */
	long long stop_epoch;	/* at that epoch */
	const char *why;	/* static: why */
};

/*
 * Read a progress file's text and apply the plainest rule: stop at the
 * first epoch whose VALUE is NaN or infinite, or at the `runs`-th epoch
 * running (runs >= 1) whose VALUE is no better than chance (goal_max: at
 * most chance + 1% of |chance|; else at least chance - 1%), when the job
 * said what chance is. Lines it does not know are skipped.
 */
void progress_parse(const char *text, int goal_max, long long runs, struct progress *p);

/*
 * A stop record's text: "attempt N epoch K WHY". 0 with *attempt, *epoch
 * and *why (malloc'd, the rest of the line) or -1 when malformed.
 */
int progress_parse_record(const char *text, long long *attempt, long long *epoch,
			  char **why);

/* The verdict's reason for a stop record: "stopped early at epoch K (WHY)" (malloc'd). */
char *progress_stopped_reason(long long epoch, const char *why);

/* One "epoch K VALUE" line of a progress file. */
struct progress_point {
	long long epoch;
	double value;		/* may be NaN or infinite */
};

/*
 * The complete "epoch K VALUE" lines of a progress file's text, in the
 * file's order (the curve the report draws): the count, *out malloc'd
 * (NULL when none). At most max points are kept.
 */
size_t progress_series(const char *text, size_t max, struct progress_point **out);

/*
 * The run time a stop at epoch K saved of `planned` epochs, at the pace of
 * the K it ran in ran_secs: 0 when unknown (nothing planned after K).
 */
double progress_saved_secs(long long epoch, long long planned, long long ran_secs);

#endif
