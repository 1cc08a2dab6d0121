/*
 * main: global options, command lookup, setup by the entry's flags, the
 * stdout check, and the exit code. Only here and in cmd-*.c does the
 * process end.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "lib/fsutil.h"
#include "driver/driver.h"
#include "remote.h"

#define MAIN_USAGE \
	"usage: xloop [--host HOST] [-C DIR] [--json] [--allow-root] [--allow-secret] COMMAND [ARGS]\n" \
	"       xloop help [COMMAND]    xloop --version\n"

/* Walk up from dir to the directory holding xloop.json. */
static char *find_root(const char *dir, char **cause)
{
	char *cur = realpath(dir, NULL);
	struct stat st;

	if (cur && stat(cur, &st) == 0 && !S_ISDIR(st.st_mode)) {
		free(cur);
		cur = NULL;
		errno = ENOTDIR;	/* -C a file must not find the study around it */
	}
	if (cur == NULL) {
		*cause = xasprintf("cannot use directory '%s': %s", dir, strerror(errno));
		return NULL;
	}
	for (;;) {
		char *cfg = path_join(cur, CONFIG_FILE), *slash;
		int found = path_exists(cfg);

		free(cfg);
		if (found)
			return cur;
		slash = strrchr(cur, '/');
		if (slash == NULL || cur[1] == '\0')
			break;
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(cur);
	cur = realpath(dir, NULL);
	*cause = xasprintf("no %s in '%s' or above: run 'xloop init' there first",
			   CONFIG_FILE, cur ? cur : dir);
	free(cur);
	return NULL;
}

#define LOCK_WAIT_MS 15000

/*
 * One writer per study: flock on .xloop/lock, waiting a little for another
 * xloop to finish (a feeder waits minutes: a holder that is no tick or next
 * leaves it no successor). Returns 0, XL_TEMPFAIL (held too long) or -1.
 */
static int take_lock(struct xl_ctx *ctx, const char *dir, int nowait, int feeder,
		     char **cause)
{
	char *path = path_join(dir, "lock");
	int r, wait_ms = nowait ? 0 : feeder ? driver_lock_wait_secs() * 1000 : LOCK_WAIT_MS;

	ctx->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (ctx->lock_fd < 0) {
		*cause = xasprintf("unable to open '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	r = lock_wait(ctx->lock_fd, wait_ms);
	if (r < 0)
		*cause = xasprintf("unable to lock '%s': %s", path, strerror(errno));
	/* held: cron's tick and a feeder go quietly (another is at work) */
	else if (r > 0 && !nowait && !feeder)
		error("another xloop is working on this study (it holds '%s'); "
		      "try again later", path);
	free(path);
	return r < 0 ? -1 : r > 0 ? XL_TEMPFAIL : 0;
}

/*
 * Do what the command's flags ask for; returns an exit code (0: go on).
 * A feeder (tick --feeder) waits for the lock longer than next does.
 */
static int setup(struct xl_ctx *ctx, const struct cmd_entry *cmd, int feeder)
{
	char *cause = NULL, *dir, *path;
	int rc;

	if ((cmd->flags & CMD_NOROOT) && geteuid() == 0 && !ctx->allow_root) {
		error("refusing to run '%s' as root: run it as the user who owns the "
		      "study, or pass --allow-root", cmd->name);
		return XL_NOPERM;
	}
	if (!(cmd->flags & (CMD_REPO | CMD_DB | CMD_LOCK)))
		return 0;
	if (!ctx->cfg_loaded)
		ctx->root = find_root(ctx->dir, &cause);
	if (ctx->root == NULL) {
		error("%s", cause);
		free(cause);
		return XL_NOINPUT;
	}
	if (!ctx->cfg_loaded && config_load(&ctx->cfg, ctx->root, &cause) < 0) {
		error("%s", cause);
		free(cause);
		return XL_CONFIG;
	}
	if (!(cmd->flags & (CMD_DB | CMD_LOCK)))
		return 0;
	dir = path_join(ctx->root, ".xloop");
	rc = make_dir(dir, 0700, &cause);
	if (rc == 0 && (cmd->flags & CMD_LOCK))
		rc = take_lock(ctx, dir, !feeder && (cmd->flags & CMD_LOCK_NOWAIT), feeder,
			       &cause);
	if (rc == 0) {
		path = path_join(dir, "state.db");
		rc = db_open(&ctx->db, path, &cause);
		free(path);
	}
	free(dir);
	if (rc < 0) {
		error("%s", cause);
		free(cause);
		return XL_ERR;
	}
	return rc;
}

static void teardown(struct xl_ctx *ctx)
{
	if (ctx->db.h)
		db_close(&ctx->db);
	if (ctx->lock_fd >= 0)
		close(ctx->lock_fd);
	config_release(&ctx->cfg);
	free(ctx->root);
}

/* Global flags are taken wherever they stand before "--". */
static int is_global_flag(struct xl_ctx *ctx, const char *a)
{
	if (strcmp(a, "--json") == 0)
		return ctx->json = 1;
	if (strcmp(a, "--allow-root") == 0)
		return ctx->allow_root = 1;
	if (strcmp(a, "--allow-secret") == 0)
		return ctx->allow_secret = 1;
	return 0;
}

/*
 * The host to run on: --host, else XLOOP_HOST, else remote.host of the
 * xloop.json around -C (whose remote.dir then is the directory there).
 * NULL: run here (and ctx keeps the root and config it read, for setup).
 * *dir is the remote study directory or NULL.
 */
static char *remote_target(struct xl_ctx *ctx, const char *flag_host, int dir_given,
			   char **dir)
{
	const char *env = getenv("XLOOP_HOST");
	struct config c;
	char *root, *cause = NULL, *host = NULL;

	*dir = NULL;
	if (flag_host || (env && *env)) {
		if (dir_given)
			*dir = xstrdup(ctx->dir);
		return xstrdup(flag_host ? flag_host : env);
	}
	root = find_root(ctx->dir, &cause);
	free(cause);
	if (!root)
		return NULL;
	cause = NULL;
	if (config_load(&c, root, &cause) == 0) {
		if (*c.remote_host) {
			host = xstrdup(c.remote_host);
			*dir = *c.remote_dir ? xstrdup(c.remote_dir) : NULL;
			config_release(&c);
		} else {
			ctx->root = root;
			ctx->cfg = c;
			ctx->cfg_loaded = 1;
			root = NULL;
		}
	}
	free(cause);
	free(root);
	return host;
}

/* Every argument but --host H and -C D (those say where, not what). */
static char **remote_args(int argc, char **argv, int *n)
{
	char **v = xcalloc((size_t)argc + 1, sizeof(*v));
	int i, cmd_seen = 0;

	*n = 0;
	for (i = 1; i < argc; i++) {
		if (!cmd_seen && (strcmp(argv[i], "--host") == 0 || strcmp(argv[i], "-C") == 0)) {
			i++;
			continue;
		}
		if (!cmd_seen && (starts_with(argv[i], "--host=") || strcmp(argv[i], "--here") == 0 ||
				  (starts_with(argv[i], "-C") && argv[i][2])))
			continue;
		if (argv[i][0] != '-')
			cmd_seen = 1;
		v[(*n)++] = argv[i];
	}
	return v;
}

/* Whether this is a feeder job's tick (`tick --feeder` before any "--"). */
static int is_feeder(const struct cmd_entry *cmd, int argc, char **argv)
{
	int i;

	if (strcmp(cmd->name, "tick") != 0)
		return 0;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--feeder") == 0)
			return 1;
	return 0;
}

/*
 * A feeder on a network filesystem runs its tick on driver.host over ssh
 * (only one host may open the state DB); -1 when it runs here.
 */
static int feeder_forward(struct xl_ctx *ctx)
{
	const char *host = driver_forward_host(&ctx->cfg, ctx->root);
	char **args;
	int n, rc;

	if (!host)
		return -1;
	/* stderr goes to .xloop/driver/feeder.log: say which way this feeder went */
	fprintf(stderr, "xloop: feeder: the study is on a network filesystem: its tick "
		"runs on %s over ssh\n", host);
	args = driver_forward_args(getenv("SLURM_JOB_ID"), getenv("XLOOP_FEEDER_TOKEN"), &n);
	rc = remote_run(host, ctx->root, n, args);
	strv_free(args, (size_t)n);
	return rc;
}

/* The -C directories joined so far; main's, for as long as the process runs. */
static char *joined_dir;

/* A further -C D is relative to the one before, as in git. */
static const char *next_dir(const char *prev, int given, const char *d)
{
	char *j;

	if (!given || !*d || d[0] == '/' || !*prev)
		return d;
	j = path_join(prev, d);
	free(joined_dir);	/* prev may be it: joined first */
	joined_dir = j;
	return j;
}

int main(int argc, char **argv)
{
	struct xl_ctx ctx;
	const struct cmd_entry *cmd;
	const char *host = NULL;
	int i, rc, dir_given = 0, here = 0, feeder;

	heap_huge_pages();
	crash_init();
	memset(&ctx, 0, sizeof(ctx));
	ctx.dir = ".";
	ctx.lock_fd = -1;
	signal(SIGPIPE, SIG_IGN);

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-C") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "xloop: option '-C' needs a directory\n%s",
					MAIN_USAGE);
				return XL_USAGE;
			}
			ctx.dir = next_dir(ctx.dir, dir_given, argv[++i]);
			dir_given = 1;
		} else if (starts_with(a, "-C")) {
			ctx.dir = next_dir(ctx.dir, dir_given, a + 2);
			dir_given = 1;
		} else if (strcmp(a, "--host") == 0) {
			if (i + 1 >= argc || !*argv[i + 1]) {
				fprintf(stderr, "xloop: option '--host' needs a host\n%s",
					MAIN_USAGE);
				return XL_USAGE;
			}
			host = argv[++i];
		} else if (starts_with(a, "--host=") && a[7]) {
			host = a + 7;
		} else if (strcmp(a, "--here") == 0) {
			here = 1;	/* what a remote invocation carries: never forward */
		} else if (strcmp(a, "--version") == 0) {
			cmd = cmd_find("version");
			return cmd_run(&ctx, cmd, 1, argv + i);
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cmd = cmd_find("help");
			return cmd_run(&ctx, cmd, 1, argv + i);
		} else if (!is_global_flag(&ctx, a)) {
			fprintf(stderr, "xloop: unknown option '%s'\n%s", a, MAIN_USAGE);
			return XL_USAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "xloop: no command given\n%s", MAIN_USAGE);
		return XL_USAGE;
	}
	cmd = cmd_find(argv[i]);
	if (cmd == NULL) {
		fprintf(stderr, "xloop: unknown command '%s'; 'xloop help' lists them\n",
			argv[i]);
		return XL_USAGE;
	}
	feeder = is_feeder(cmd, argc - i, argv + i);
	/* on a remote host: everything but help, version and remote itself */
	if (!(cmd->flags & (CMD_LOCAL | CMD_HIDDEN)) && !here) {
		char *dir, *where = remote_target(&ctx, host, dir_given, &dir);

		if (!where && feeder && ctx.cfg_loaded && (rc = feeder_forward(&ctx)) >= 0) {
			teardown(&ctx);
			return rc;
		}
		if (where) {
			int n;
			char **args = remote_args(argc, argv, &n);

			rc = remote_run(where, dir, n, args);
			free(args);
			free(where);
			free(dir);
			return rc;
		}
	} else if (host && strcmp(cmd->name, "remote") != 0) {
		fprintf(stderr, "xloop: '%s' runs here; --host is for study commands\n",
			cmd->name);
		return XL_USAGE;
	}
	/* as in git: run as if started in DIR, so relative paths given
	 * after it (adopt PATH, --cv, report --out, ...) are read there */
	if (dir_given) {
		if (chdir(ctx.dir) < 0)
			return error("cannot use directory '%s': %s", ctx.dir,
				     strerror(errno)), XL_NOINPUT;
		ctx.dir = ".";
	}
	argc -= i;
	argv += i;
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		/* help needs no setup, so it works as root and outside a study */
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			int at;
			const struct cmd_entry *sub = cmd_sub(cmd, argc, argv, &at);

			/* `plan add --help` is the subcommand's, `plan --help` the command's */
			cmd_print_help(sub && at ? sub : cmd);
			return XL_OK;
		}
		is_global_flag(&ctx, argv[i]);
	}

	rc = setup(&ctx, cmd, feeder);
	if (rc == XL_TEMPFAIL && feeder && ctx.lock_fd >= 0 && !ctx.db.h)
		/* stderr goes to .xloop/driver/feeder.log */
		fprintf(stderr, "xloop: feeder: another xloop held the study's lock for %d s: "
			"no tick here; the next `xloop next` or `xloop tick` queues a feeder\n",
			driver_lock_wait_secs());
	else if (rc == 0)
		rc = cmd_run(&ctx, cmd, argc, argv);
	teardown(&ctx);
	if (rc < 0)
		rc = XL_ERR;
	/* a full disk or a closed pipe must not look like success */
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		if (errno != EPIPE)
			fprintf(stderr, "xloop: error: unable to write output: %s\n",
				strerror(errno));
		return rc ? rc : XL_ERR;
	}
	return rc;
}
