/* Congestion control "pfc": a lossless fabric with Priority Flow Control
 * (IEEE 802.1Qbb) and nothing at the senders. Every sender injects at its
 * port's line rate; a switch whose bytes from one ingress link pass xoff
 * PAUSEs that link and RESUMEs it under xon (the fluid engine,
 * cc_fluid.c), which stalls every flow through the link whatever its
 * egress (head-of-line blocking) and spreads congestion upstream. The
 * switch thresholds are cc_switch_defaults'. */
#include "cc.h"

static void pfc_defaults(comet_cc_params *p, double line)
{
    cc_switch_defaults(p, line);
}

static void pfc_start(const comet_cc_params *p, cc_state *st)
{
    (void)p;
    st->rate = st->line;
}

static void pfc_update(const comet_cc_params *p, const cc_signal *s, double h, cc_state *st)
{
    (void)p;
    (void)s;
    (void)h;
    st->rate = st->line;
}

const cc_scheme cc_scheme_pfc = {
    .id = COMET_CC_PFC,
    .fluid = true,
    .defaults = pfc_defaults,
    .start = pfc_start,
    .update = pfc_update,
};
