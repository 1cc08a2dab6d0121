/* xloop cron-line: a ready crontab entry (and a systemd timer) for tick. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/cmd.h"

/* Print the crontab line and the systemd alternative. */
static int cmd_cron_line(struct xl_ctx *ctx, const struct cmd_entry *self,
			 struct cmd_args *args)
{
	char exe[PATH_MAX];
	ssize_t n;

	(void)self;
	(void)args;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return error("cannot find this binary's path"), XL_ERR;
	exe[n] = '\0';
	printf("# crontab -e, then add (every 5 minutes). tick takes the study's lock\n"
	       "# itself and exits 75 quietly while another tick runs; it prints only\n"
	       "# news, so cron mails you only when something happened:\n"
	       "*/5 * * * * '%s' -C '%s' tick\n\n", exe, ctx->root);
	printf("# or a systemd user timer:\n"
	       "# ~/.config/systemd/user/xloop-tick.service\n"
	       "[Unit]\nDescription=xloop tick for %s\n\n"
	       "[Service]\nType=oneshot\nExecStart='%s' -C '%s' tick\n"
	       "SuccessExitStatus=75\n\n"
	       "# ~/.config/systemd/user/xloop-tick.timer\n"
	       "[Unit]\nDescription=run xloop tick every 5 minutes\n\n"
	       "[Timer]\nOnBootSec=2min\nOnUnitActiveSec=5min\n\n"
	       "[Install]\nWantedBy=timers.target\n\n"
	       "# then: systemctl --user enable --now xloop-tick.timer\n",
	       ctx->root, exe, ctx->root);
	return XL_OK;
}

const struct cmd_entry cmd_cron_line_entry = {
	.name = "cron-line", .opts = NULL, .args = "", .min = 0, .max = 0,
	.group = CMD_GROUP_UNATTENDED,
	.target = CMD_TARGET_NONE,
	.summary = "print a ready crontab line (and a systemd timer) for xloop tick",
	.help = "",
	.flags = CMD_REPO, .exec = cmd_cron_line,
};
