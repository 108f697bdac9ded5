/* HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
 * 2019) over PFC, as a fluid model. Every switch stamps each packet with
 * its egress queue, transmitted bytes and bandwidth (in-band telemetry);
 * the sender works out each link's normalized inflight bytes
 * u = q / (B T) + txRate / B, takes the largest on its path, filters it
 * over the base RTT T (U = (1 - h/T) U + h/T u, the paper's per-ACK form
 * with h the time step), and sets its window W from the reference window
 * W_c (the paper's Algorithm 1):
 *
 *   U >= eta or stage >= max_stage:  W = W_c / (U / eta) + W_AI
 *   otherwise:                       W = W_c + W_AI
 *
 * W_c taking W once per RTT (stage reset on the multiplicative update,
 * counted up on the additive one). The sender paces at W / T, at most
 * its line rate. Defaults: eta = 95 %, max_stage = 5 (the paper's
 * Section 5); W_AI = W_init (1 - eta) / N (its Section 3.3) with N = 10
 * flows per link, our choice for a training NPU's port (few, large
 * flows). Left out: per-packet ACK timing (the fluid reads the telemetry
 * of the step before), the min() of two queue samples. */
#include "cc.h"

#include <stdio.h>

static void hpcc_defaults(comet_cc_params *p, double line)
{
    cc_switch_defaults(p, line);
    if (p->eta <= 0)
        p->eta = 0.95;
    if (p->max_stage <= 0)
        p->max_stage = 5;
    /* wai 0: W_init (1 - eta) / 10, worked out per flow from its RTT */
}

static const char *hpcc_problem(const comet_cc_params *p, char *msg, size_t cap)
{
    if (!(p->eta > 0.0 && p->eta <= 1.0)) {
        snprintf(msg, cap, "eta %g is not in (0, 1]", p->eta);
        return "eta";
    }
    if (!(p->max_stage >= 1.0)) {
        snprintf(msg, cap, "max_stage must be at least 1, not %g", p->max_stage);
        return "max_stage";
    }
    if (!(p->wai >= 0.0)) {
        snprintf(msg, cap, "wai must be positive, not %g", p->wai);
        return "wai";
    }
    return NULL;
}

static void hpcc_start(const comet_cc_params *p, cc_state *st)
{
    (void)p;
    st->w = st->wc = st->line * st->rtt; /* W_init: one bandwidth-delay product */
    st->u = 0.0;
    st->stage = 0;
    st->next_wc = st->rtt;
    st->rate = st->line;
}

static void hpcc_update(const comet_cc_params *p, const cc_signal *s, double h, cc_state *st)
{
    double t = st->rtt;
    double k = h < t ? h / t : 1.0;
    st->u = (1.0 - k) * st->u + k * s->u_max;
    double wai = p->wai > 0 ? p->wai : st->line * t * (1.0 - p->eta) / 10.0;
    bool update_wc = (st->next_wc -= h) <= 0.0;
    if (update_wc)
        st->next_wc += t;
    double w;
    if (st->u >= p->eta || st->stage >= (int)p->max_stage) {
        w = st->wc / (st->u / p->eta) + wai;
        if (update_wc) {
            st->stage = 0;
            st->wc = w;
        }
    } else {
        w = st->wc + wai;
        if (update_wc) {
            st->stage++;
            st->wc = w;
        }
    }
    double wmax = st->line * t, wmin = p->mtu;
    st->w = w < wmin ? wmin : w > wmax ? wmax : w;
    if (st->wc > wmax)
        st->wc = wmax;
    if (st->wc < wmin)
        st->wc = wmin;
    st->rate = st->w / t;
}

const cc_scheme cc_scheme_hpcc = {
    .id = COMET_CC_HPCC,
    .fluid = true,
    .telemetry = true,
    .clocked = true,
    .defaults = hpcc_defaults,
    .problem = hpcc_problem,
    .start = hpcc_start,
    .update = hpcc_update,
};
