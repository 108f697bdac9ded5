/* DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015) over PFC, as a fluid model. Switches mark
 * packets with ECN between kmin and kmax (the fluid engine); the receiver
 * (notification point) returns at most one CNP per cnp_interval when
 * marked packets arrived; the sender (reaction point) cuts its current
 * rate R_C by alpha/2 per CNP, remembers the target R_T, decays alpha
 * every alpha_timer, and raises R_C toward R_T (fast recovery) on each
 * expiry of its rate timer T and byte counter B, adding R_AI to R_T once
 * F of them passed without a CNP.
 *
 * Why a fluid model: per packet this is thousands of events per flow per
 * millisecond; its published fluid form (Zhu, Ghobadi, Misra, Padhye,
 * "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY",
 * CoNEXT 2016, Section 3) gives the expected drift of alpha, R_T and R_C
 * for a path marking fraction p of the packets, which this file
 * integrates by explicit Euler steps of the engine's time step (with
 * packets of mtu bytes, R_C in bytes/s):
 *
 *   a(x)  = 1 - (1-p)^(x R_C / mtu)       a CNP within x seconds
 *   e_B   = (R_C/mtu) p / ((1-p)^(-B/mtu) - 1)      byte-counter expiries /s
 *   e_T   = (R_C/mtu) p / ((1-p)^(-T R_C/mtu) - 1)  timer expiries /s
 *   dalpha/dt = g / alpha_timer * (a(alpha_timer) - alpha)
 *   dR_T/dt   = -(R_T - R_C)/tau a(tau) + R_AI (e_B (1-p)^(F B/mtu)
 *                                              + e_T (1-p)^(F T R_C/mtu))
 *   dR_C/dt   = -R_C alpha / (2 tau) a(tau) + (R_T - R_C)/2 (e_B + e_T)
 *
 * tau the CNP interval; as p -> 0, e_B -> R_C/B and e_T -> 1/T. Left out:
 * hyper increase (the fluid form has none), the CNP's return delay (the
 * rate answers the marking of the step before), per-packet randomness. */
#include "cc.h"

#include <math.h>
#include <stdio.h>

/* DCQCN paper (SIGCOMM 2015, Section 5 and its parameter table):
 * g = 1/256, T = 55 us, B = 10 MB, F = 5, R_AI = 40 Mb/s, alpha updated
 * every 55 us, the notification point's CNP interval 50 us. The floor,
 * 1 Mb/s, is NVIDIA ConnectX's rpg_min_rate default. */
static void dcqcn_defaults(comet_cc_params *p, double line)
{
    cc_switch_defaults(p, line);
    if (p->g <= 0)
        p->g = 1.0 / 256.0;
    /* R_AI: the paper's 40 Mb/s at 40 Gb/s, scaled with the port (our
     * choice: unscaled it is 1/10,000 of a 400 Gb/s port, and a sender cut
     * by an incast's burst takes tens of ms to come back) */
    if (p->rai <= 0)
        p->rai = 40e6 / 8.0 * (line > 5e9 ? line / 5e9 : 1.0);
    if (p->rate_timer <= 0)
        p->rate_timer = 55e-6;
    if (p->byte_counter <= 0)
        p->byte_counter = 10e6;
    if (p->alpha_timer <= 0)
        p->alpha_timer = 55e-6;
    if (p->cnp_interval <= 0)
        p->cnp_interval = 50e-6;
    if (p->fast_recovery <= 0)
        p->fast_recovery = 5;
    if (p->min_rate <= 0)
        p->min_rate = 1e6 / 8.0;
}

static const char *dcqcn_problem(const comet_cc_params *p, char *msg, size_t cap)
{
    static const char *const keys[] = {"rai", "min_rate", "rate_timer", "byte_counter",
                                       "alpha_timer", "cnp_interval", "fast_recovery"};
    const double v[] = {p->rai, p->min_rate, p->rate_timer, p->byte_counter,
                        p->alpha_timer, p->cnp_interval, p->fast_recovery};
    for (int i = 0; i < 7; i++)
        if (!(v[i] > 0.0)) {
            snprintf(msg, cap, "must be positive, not %g", v[i]);
            return keys[i];
        }
    if (!(p->g > 0.0 && p->g <= 1.0)) {
        snprintf(msg, cap, "the gain g = %g is not in (0, 1]", p->g);
        return "g";
    }
    return NULL;
}

static void dcqcn_start(const comet_cc_params *p, cc_state *st)
{
    (void)p;
    st->rc = st->rt = st->rate = st->line; /* a new QP starts at line rate */
    st->alpha = 1.0;
}

/* (1-p)^x for x >= 0, p in [0, 1]. */
static double keep(double p, double x)
{
    if (p <= 0.0 || x <= 0.0)
        return 1.0;
    if (p >= 1.0)
        return 0.0;
    return exp(x * log1p(-p));
}

/* Events per second of a counter that expires every n packets at
 * `pkts` packets per second, reset by each marked packet:
 * pkts p / ((1-p)^(-n) - 1), pkts / n as p -> 0. */
static double expiries(double p, double pkts, double n)
{
    if (n <= 0.0)
        return 0.0;
    if (p < 1e-12)
        return pkts / n;
    if (p >= 1.0)
        return 0.0;
    double den = expm1(-n * log1p(-p));
    return den > 0.0 && isfinite(den) ? pkts * p / den : 0.0;
}

static void dcqcn_update(const comet_cc_params *p, const cc_signal *s, double h, cc_state *st)
{
    double pm = s->p_mark < 0.0 ? 0.0 : s->p_mark > 1.0 ? 1.0 : s->p_mark;
    double rc = st->rc, rt = st->rt, al = st->alpha;
    double pkts = rc / p->mtu;                      /* packets per second */
    double tau = p->cnp_interval;
    double a_tau = 1.0 - keep(pm, tau * pkts);
    double a_al = 1.0 - keep(pm, p->alpha_timer * pkts);
    double nb = p->byte_counter / p->mtu, nt = p->rate_timer * pkts;
    double e_b = expiries(pm, pkts, nb);
    double e_t = pm < 1e-12 ? 1.0 / p->rate_timer : expiries(pm, pkts, nt);
    double f = p->fast_recovery;
    double d_al = p->g / p->alpha_timer * (a_al - al);
    double d_rt = -(rt - rc) / tau * a_tau + p->rai * (e_b * keep(pm, f * nb) + e_t * keep(pm, f * nt));
    double d_rc = -rc * al / (2.0 * tau) * a_tau + (rt - rc) / 2.0 * (e_b + e_t);
    al += h * d_al;
    rt += h * d_rt;
    rc += h * d_rc;
    double lo = p->min_rate < st->line ? p->min_rate : st->line;
    st->alpha = al < 0.0 ? 0.0 : al > 1.0 ? 1.0 : al;
    st->rt = rt < lo ? lo : rt > st->line ? st->line : rt;
    st->rc = rc < lo ? lo : rc > st->line ? st->line : rc;
    st->rate = st->rc;
}

const cc_scheme cc_scheme_dcqcn = {
    .id = COMET_CC_DCQCN,
    .fluid = true,
    .ecn = true,
    .defaults = dcqcn_defaults,
    .problem = dcqcn_problem,
    .start = dcqcn_start,
    .update = dcqcn_update,
};
