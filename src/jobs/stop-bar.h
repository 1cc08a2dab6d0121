/*
 * The stop bar of a run, written at submit (issue 46): what the watcher on
 * the node needs to stop a run plainly behind the best, read from the
 * study's runs (best.h) and their progress files. The rule is stop-rule.h.
 */
#ifndef XLOOP_STOP_BAR_H
#define XLOOP_STOP_BAR_H

#include "ctx.h"
#include "runs.h"

/*
 * Write $run_dir/stop-bar for r's next attempt when the rule applies
 * (rule_on) and there is a bar (replicates measured the noise, the best
 * reported its epochs); else remove a stale one. 0, or -1 with *cause.
 */
int stop_bar_write(struct xl_ctx *ctx, const struct run *r, int rule_on, char **cause);

#endif
