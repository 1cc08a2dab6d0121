/* Slurm's own restarts of an attempt's job: requeued after a lost node, or preempted. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "stages/requeue.h"

/*
 * Slurm started an attempt's job again (same id, a later start: requeued
 * after a node was lost, or preempted): a line in its log between the
 * starts (sbatch --open-mode=append keeps the earlier one) and an event.
 */
void requeue_note(struct xl_ctx *ctx, const struct attempt *a, time_t start)
{
	char when[32], *line;
	struct tm tm;
	ssize_t w;
	int fd;

	localtime_r(&start, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	line = xasprintf("xloop: job %s started again at %s (restart %lld): Slurm requeued "
			 "it (a node lost, or a preemption); the lines above are from the "
			 "start before\n", a->job_id, when, a->restarts + 1);
	fd = open(a->log_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		w = write(fd, line, strlen(line));
		(void)w;
		close(fd);
	}
	line[strlen(line) - 1] = '\0';
	loop_event(ctx, "restarted", a->run_id, a->id, line + strlen("xloop: "));
	free(line);
}

/* reason, and that Slurm started the job restarts + 1 times. */
char *requeue_reason(const char *reason, long long restarts)
{
	return xasprintf("%s; Slurm started its job %lld times (requeued after a node was "
			 "lost or a preemption; every start is in the log)", reason, restarts + 1);
}
