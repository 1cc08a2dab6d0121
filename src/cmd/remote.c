/*
 * xloop remote install HOST [--path DIR]: copy this (static) binary to the
 * host over ssh (default ~/.local/bin/xloop), check it runs there and that
 * Slurm answers it, and say what to put in PATH.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "lib/proc.h"
#include "remote.h"

static const struct opt remote_install_opts[] = {
	{ "path", OPT_STRING, "DIR", "where on HOST (default ~/" REMOTE_DEFAULT_PATH ")" },
	OPT_END,
};

/* Run one shell command on host, capturing its output; an exit code. */
static int ssh_run(const char *host, const char *command, const char *in_path,
		   struct proc *p)
{
	char *message;
	int rc;

	p->in_path = in_path;
	p->timeout_ms = 300000;
	rc = remote_ssh(host, command, p, &message);
	buf_rtrim(&p->err);
	if (message) {
		error("%s", message);
		free(message);
	}
	return rc;
}

/* The directory as the remote shell should see it ("~/x" is $HOME/x). */
static char *shell_dir(const char *dir)
{
	struct buf out = BUF_INIT;

	if (strcmp(dir, "~") == 0)
		return xstrdup("\"$HOME\"");
	if (starts_with(dir, "~/")) {
		buf_adds(&out, "\"$HOME\"/");
		dir += 2;
	}
	remote_quote(&out, dir);
	return buf_detach(&out, NULL);
}

/* Copy, check, advise. */
static int cmd_remote(struct xl_ctx *ctx, const struct cmd_entry *self,
		      struct cmd_args *args)
{
	const char *path_opt = args_get(args, "path");
	struct proc p = PROC_INIT;
	char exe[PATH_MAX], *dir, *cmd, *version = NULL;
	const char *host;
	ssize_t len;
	int rc, doctor_rc, on_path;

	if (path_opt && (!*path_opt || strchr(path_opt, '\n')))
		return cmd_usage_error(self, "--path wants a directory"), XL_USAGE;
	host = args->pos[0];
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0) {
		error("unable to find this binary: %s", strerror(errno));
		return XL_ERR;
	}
	exe[len] = '\0';
	dir = shell_dir(path_opt ? path_opt : "~/" REMOTE_DEFAULT_PATH);

	/* 1. copy: a temporary name, then rename, so a running xloop is never cut */
	cmd = xasprintf("mkdir -p %s && cat >%s/.xloop.new.$$ && chmod 755 %s/.xloop.new.$$ "
			"&& mv -f %s/.xloop.new.$$ %s/xloop", dir, dir, dir, dir, dir);
	rc = ssh_run(host, cmd, exe, &p);
	free(cmd);
	if (rc) {
		if (p.err.len && rc != XL_NOPERM)
			fprintf(stderr, "%s\n", p.err.s);
		goto out;
	}
	proc_release(&p);

	/* 2. it runs there */
	cmd = xasprintf("%s/xloop --version", dir);
	rc = ssh_run(host, cmd, NULL, &p);
	free(cmd);
	if (rc) {
		error("the copy on %s does not run (%s): is it the same architecture?", host,
		      p.err.len ? p.err.s : "no output");
		rc = XL_ERR;
		goto out;
	}
	buf_rtrim(&p.out);
	version = xstrndup(p.out.s, strcspn(p.out.s, "\n"));
	proc_release(&p);

	/* 3. Slurm answers there (in a study, `xloop doctor` checks the rest) */
	doctor_rc = ssh_run(host, "scontrol ping", NULL, &p);
	if (doctor_rc == XL_NOPERM || doctor_rc == XL_TEMPFAIL) {
		rc = doctor_rc;
		goto out;
	}
	if (doctor_rc == 0 && !strstr(p.out.s, " is UP"))
		doctor_rc = XL_TEMPFAIL;
	if (doctor_rc == 127)
		doctor_rc = XL_UNAVAILABLE;
	proc_release(&p);

	/* 4. PATH */
	on_path = ssh_run(host, "command -v xloop", NULL, &p) == 0 && p.out.len;

	if (ctx->json) {
		cmd_emit_json(json_pack("{s:s, s:s, s:s, s:b, s:b}", "host", host, "path",
					path_opt ? path_opt : "~/" REMOTE_DEFAULT_PATH "/xloop",
					"version", version, "slurm_ok", doctor_rc == 0,
					"on_path", on_path));
	} else {
		printf("installed on %s: %s\n", host, version);
		printf("slurm there: %s\n", doctor_rc == 0 ? "answers (scontrol ping: UP); "
		       "`xloop --host HOST -C DIR doctor` checks a study there" :
		       doctor_rc == XL_UNAVAILABLE ? "NOT FOUND: Slurm's commands are not "
		       "on this host's PATH" : "the controller does not answer `scontrol "
		       "ping` there");
		if (!on_path)
			printf("PATH: `xloop --host %s ...` finds it in ~/" REMOTE_DEFAULT_PATH
			       "; to use it there by hand, add to ~/.bashrc on %s:\n"
			       "  export PATH=\"$HOME/" REMOTE_DEFAULT_PATH ":$PATH\"\n",
			       host, host);
	}
	rc = doctor_rc == XL_UNAVAILABLE ? XL_UNAVAILABLE : 0;
out:
	proc_release(&p);
	free(version);
	free(dir);
	return rc;
}

static const struct cmd_entry remote_subs[] = {
	{ .name = "remote install", .opts = remote_install_opts, .args = "HOST", .min = 1, .max = 1,
	  .exec = cmd_remote,
	  .summary = "copy this binary to HOST over ssh and check it runs there" },
	{ NULL },
};

const struct cmd_entry cmd_remote_entry = {
	.name = "remote", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_AGENTS,
	.target = CMD_TARGET_NONE,
	.summary = "copy this binary to a login node over ssh and check it runs there",
	.help = "Copies the running (static) binary to HOST (default ~/.local/bin/xloop)\n"
	"through ssh with BatchMode (no password prompts; keys or ssh-agent),\n"
	"checks `xloop --version` runs there and that Slurm answers (`scontrol\n"
	"ping`),\n"
	"and says what to add to PATH. Then `xloop --host HOST -C DIR COMMAND`\n"
	"runs any command there (or set remote.host and remote.dir in a local\n"
	"xloop.json, or XLOOP_HOST).\n",
	.flags = CMD_LOCAL | CMD_NOROOT, .subs = remote_subs,
};
