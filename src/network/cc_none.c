/* Congestion control "none": the ideal flow model of docs/fabric.md, every
 * link shared max-min fairly with no queue, no marking and no pause. It
 * is not fluid: a fabric whose dimensions all say none never builds the
 * fluid engine, so its results stay exactly those of the max-min engine
 * (flows.c). Its sender callbacks run only where another dimension's
 * scheme made the fabric fluid: a flow on links without congestion
 * control sends at its port's line rate and its links queue without
 * bound (no PFC, no ECN). */
#include "cc.h"

static void none_defaults(comet_cc_params *p, double line)
{
    (void)p;
    (void)line;
}

static void none_start(const comet_cc_params *p, cc_state *st)
{
    (void)p;
    st->rate = st->line;
}

static void none_update(const comet_cc_params *p, const cc_signal *s, double h, cc_state *st)
{
    (void)p;
    (void)s;
    (void)h;
    st->rate = st->line;
}

const cc_scheme cc_scheme_none = {
    .id = COMET_CC_NONE,
    .fluid = false,
    .defaults = none_defaults,
    .start = none_start,
    .update = none_update,
};
