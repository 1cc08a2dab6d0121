/*
 * A state DB in a new directory under /tmp for a unit test, and its
 * removal: what the tests' setup and teardown share.
 */
#ifndef XLOOP_TEST_FIXTURE_DB_H
#define XLOOP_TEST_FIXTURE_DB_H

#include <stdlib.h>

#include "db.h"
#include "lib/util.h"

/* Make dir (size bytes: /tmp/xloop-test-NAME-XXXXXX) and open dir/state.db in db; -1: neither. */
static inline int fixture_db_open(char *dir, size_t size, const char *name, struct db *db)
{
	char *path, *cause = NULL;
	int rc;

	xsnprintf(dir, size, "/tmp/xloop-test-%s-XXXXXX", name);
	if (!mkdtemp(dir))
		return -1;
	path = xasprintf("%s/state.db", dir);
	rc = db_open(db, path, &cause);
	free(path);
	free(cause);
	return rc < 0 ? -1 : 0;
}

/* Remove dir and all below it; -1 when that failed. */
static inline int fixture_dir_remove(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	int rc = system(cmd);

	free(cmd);
	return rc == 0 ? 0 : -1;
}

#endif
