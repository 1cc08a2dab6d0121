/*
 * The context main() builds once from the global options and the command
 * entry's flags, and hands to the command; modules take it for the study
 * root, the config and the open state DB.
 */
#ifndef XLOOP_CTX_H
#define XLOOP_CTX_H

#include "config.h"
#include "db.h"
#include "lib/util.h"

struct xl_ctx {
	const char *dir;	/* -C DIR or "." */
	char *root;		/* absolute study root, with CMD_REPO */
	int json;		/* --json: print one JSON document */
	int allow_root;		/* --allow-root */
	int allow_secret;	/* --allow-secret: commit a job.sh the secret scan flags */
	struct config cfg;	/* with CMD_REPO */
	int cfg_loaded;		/* root and cfg already read (by the remote check) */
	struct db db;		/* with CMD_DB */
	int lock_fd;		/* with CMD_LOCK, else -1 */
};

#endif
