/* Autopilot's proposals: replicates the rule needs (propose-confirm.c), then a change (propose-change.c). */
#include <stdlib.h>
#include <string.h>

#include "search/propose.h"
#include "search/propose-impl.h"
#include "lib/util.h"

/* Free a proposal. */
void prop_out_release(struct prop_out *out)
{
	free(out->value);
	free(out->config);
	free(out->reason);
	memset(out, 0, sizeof(*out));
}

/* Choose the next run. */
void propose_next(const struct prop_input *in, struct prop_out *out)
{
	memset(out, 0, sizeof(*out));
	out->cfg = -1;
	if (propose_upfront(in, out))
		return;
	if (prop_model_choice(in, out))
		return;
	/* no model: the replicates the paired rule needs, then the neighbour walk */
	if (propose_confirm(in, out))
		return;
	prop_change(in, out);
}
