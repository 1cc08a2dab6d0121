/* Spawning programs with argv vectors, captured output and timeouts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/proc.h"

extern char **environ;

#define KILL_GRACE_MS 2000
#define DEFAULT_MAX_OUTPUT ((size_t)64 << 20)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether entry (an environment string) is named by spec ("K=V", "-K", "-PREFIX*"). */
static int env_names(const char *spec, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t klen = eq ? (size_t)(eq - entry) : strlen(entry);
	size_t slen;

	if (*spec != '-')
		return strncmp(spec, entry, klen) == 0 && spec[klen] == '=';
	spec++;
	slen = strlen(spec);
	if (slen && spec[slen - 1] == '*')
		return klen >= slen - 1 && strncmp(spec, entry, slen - 1) == 0;
	return klen == slen && strncmp(spec, entry, klen) == 0;
}

/*
 * The child's environment: ours, with p->env entries replacing same names
 * ("K=V") or removing them ("-K", "-PREFIX*").
 */
static char **build_env(const char *const *extra)
{
	size_t n = 0, m = 0, i, j, k = 0;
	char **envp;

	while (environ[n])
		n++;
	while (extra && extra[m])
		m++;
	envp = xcalloc(n + m + 1, sizeof(*envp));
	for (i = 0; i < n; i++) {
		int named = 0;

		for (j = 0; j < m && !named; j++)
			named = env_names(extra[j], environ[i]);
		if (!named)
			envp[k++] = environ[i];
	}
	for (j = 0; j < m; j++)
		if (extra[j][0] != '-')
			envp[k++] = (char *)extra[j];
	envp[k] = NULL;
	return envp;
}

/*
 * Start the child with posix_spawn (a vfork underneath: cheaper than
 * copying our page tables with fork): its own process group, SIGPIPE back
 * to the default, stdin/stdout/stderr wired, nothing else of ours open.
 * Returns 0, or the errno that kept the program from starting.
 */
static int spawn(const struct proc *p, char **envp, int in_fd, int out_fd, int err_fd,
		 pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	int e;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	e = posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	if (!e && p->dir)
		e = posix_spawn_file_actions_addchdir_np(&fa, p->dir);
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (!e)
		e = posix_spawnattr_setsigdefault(&at, &def);
	if (!e)
		e = posix_spawnattr_setpgroup(&at, 0);
	if (!e)
		e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
	if (!e)
		e = posix_spawnp(pid, p->argv[0], &fa, &at, (char *const *)p->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return e;
}

/* Append what is readable on fd to b; returns 0 at EOF, 1 otherwise. */
static int drain(int fd, struct buf *b, size_t max, int *truncated)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
	if (n == 0)
		return 0;
	if (b->len + (size_t)n > max) {
		*truncated = 1;
		n = b->len < max ? (ssize_t)(max - b->len) : 0;
	}
	buf_add(b, chunk, (size_t)n);
	return 1;
}

static void close_if(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Run a program to completion. */
int proc_run(struct proc *p)
{
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	size_t max = p->max_output ? p->max_output : DEFAULT_MAX_OUTPUT;
	size_t in_len = p->in ? strlen(p->in) : 0, in_off = 0;
	long long deadline = p->timeout_ms > 0 ? now_ms() + p->timeout_ms : 0;
	long long kill_at = 0;
	struct sigaction ign, old_pipe;
	char **envp;
	pid_t pid;
	int st = 0, e, rc = -1, reaped = 0, nap = 1;
	ssize_t n;

	buf_init(&p->out);
	buf_init(&p->err);
	p->status = p->signo = p->timed_out = p->truncated = p->exec_errno = 0;

	if ((!p->out_inherit && pipe2(outp, O_CLOEXEC) < 0) || pipe2(errp, O_CLOEXEC) < 0)
		goto out_errno;
	if (p->in) {
		if (pipe2(inp, O_CLOEXEC) < 0)
			goto out_errno;
	} else {
		inp[0] = open(p->in_path ? p->in_path : "/dev/null", O_RDONLY | O_CLOEXEC);
		if (inp[0] < 0)
			goto out_errno;
	}

	envp = build_env(p->env);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	e = spawn(p, envp, inp[0], p->out_inherit ? STDOUT_FILENO : outp[1], errp[1], &pid);
	free(envp);
	close_if(&inp[0]);
	close_if(&outp[1]);
	close_if(&errp[1]);
	if (e) {		/* glibc has reaped the child whose exec failed */
		p->exec_errno = e;
		sigaction(SIGPIPE, &old_pipe, NULL);
		goto out;
	}
	if (inp[1] >= 0 && in_len == 0)
		close_if(&inp[1]);
	if (inp[1] >= 0)
		fcntl(inp[1], F_SETFL, fcntl(inp[1], F_GETFL) | O_NONBLOCK);

	while (outp[0] >= 0 || errp[0] >= 0 || inp[1] >= 0 || !reaped) {
		struct pollfd fds[3];
		int nfds = 0, wait_ms = -1, i;
		long long t = now_ms();

		if (deadline && !kill_at && t >= deadline) {
			p->timed_out = 1;
			kill(-pid, SIGTERM);
			kill_at = t + KILL_GRACE_MS;
		}
		if (kill_at && t >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = t + 3600 * 1000LL;
		}
		if (outp[0] < 0 && errp[0] < 0 && inp[1] < 0) {
			/* pipes closed (maybe handed to a grandchild): reap */
			pid_t w = waitpid(pid, &st, WNOHANG);

			if (w == pid) {
				reaped = 1;
				break;
			}
			if (w < 0 && errno != EINTR) {
				p->exec_errno = errno;
				break;
			}
			/* it closed its output and is about to exit: look again
			 * soon, then less often (it may also run on for long) */
			poll(NULL, 0, nap);
			nap = nap < 8 ? nap * 2 : 10;
			continue;
		}
		if (outp[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
		if (errp[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
		if (inp[1] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = inp[1], .events = POLLOUT };
		if (kill_at)
			wait_ms = (int)(kill_at - t > 0 ? kill_at - t : 0);
		else if (deadline)
			wait_ms = (int)(deadline - t > 0 ? deadline - t : 0);
		if (poll(fds, (nfds_t)nfds, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < nfds; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == outp[0]) {
				if (!drain(outp[0], &p->out, max, &p->truncated))
					close_if(&outp[0]);
			} else if (fds[i].fd == errp[0]) {
				if (!drain(errp[0], &p->err, max, &p->truncated))
					close_if(&errp[0]);
			} else if (fds[i].fd == inp[1]) {
				n = write(inp[1], p->in + in_off, in_len - in_off);
				if (n > 0)
					in_off += (size_t)n;
				if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
				    in_off == in_len)
					close_if(&inp[1]);
			}
		}
	}
	if (!reaped)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (WIFSIGNALED(st)) {
		p->signo = WTERMSIG(st);
		p->status = 128 + p->signo;
	} else {
		p->status = WEXITSTATUS(st);
	}
	rc = 0;
	goto out;

out_errno:
	p->exec_errno = errno;
out:
	close_if(&inp[0]);
	close_if(&inp[1]);
	close_if(&outp[0]);
	close_if(&outp[1]);
	close_if(&errp[0]);
	close_if(&errp[1]);
	return rc;
}

/* Free the captured output. */
void proc_release(struct proc *p)
{
	buf_release(&p->out);
	buf_release(&p->err);
}

/* Describe how the program ended, for messages. */
void proc_describe(const struct proc *p, struct buf *b)
{
	if (p->timed_out)
		buf_addf(b, "timed out after %d ms", p->timeout_ms);
	else if (p->signo)
		buf_addf(b, "killed by signal %d", p->signo);
	else
		buf_addf(b, "exited with %d", p->status);
}
