/* The proposer's halves (private to src/search/): propose.c the replicates, propose-change.c the changes. */
#ifndef XLOOP_PROPOSE_IMPL_H
#define XLOOP_PROPOSE_IMPL_H

#include "search/propose.h"

/*
 * Step 2 on: the one-variable change the model chooses, else the
 * neighbour walk, else PROP_NONE (converged, or nothing to change).
 */
void prop_change(const struct prop_input *in, struct prop_out *out);

#endif
