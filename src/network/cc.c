/* The congestion-control family's shared part (cc.h, docs/roce.md): the
 * switches' defaults every lossless scheme starts from, and the public
 * entries that fill and check a dimension's parameters, the switches'
 * keys here and a scheme's own through its member (cc_dcqcn.c,
 * cc_hpcc.c). It sits below both engines: the fabric reads it when it is
 * built, before any flow runs, so the check and the defaults do not live
 * in the fluid engine (cc_fluid.c). */
#include "cc.h"

#include <stdio.h>

void cc_switch_defaults(comet_cc_params *p, double line)
{
    (void)line;
    /* RoCE's largest MTU */
    if (p->mtu <= 0)
        p->mtu = 4096;
    /* what one congested egress queue may take of a 64 MB shared-buffer
     * switch chip (a Tomahawk-3 class part): our choice */
    if (p->buffer <= 0)
        p->buffer = 16.0 * 1048576.0;
    /* ECN: NVIDIA's RoCE switch defaults (Onyx `roce`: absolute marking,
     * min 150 KB, max 1500 KB) and the DCQCN paper's Pmax of 1 % */
    if (p->kmin <= 0)
        p->kmin = 150e3;
    if (p->kmax <= 0)
        p->kmax = 1500e3;
    if (p->pmax <= 0)
        p->pmax = 0.01;
    /* PFC per ingress port: our choice, past kmin so ECN acts first on a
     * port a few flows share; resume two MTUs lower */
    if (p->xoff <= 0)
        p->xoff = 512e3;
    if (p->xon <= 0)
        p->xon = p->xoff - 2.0 * p->mtu > 0.0 ? p->xoff - 2.0 * p->mtu : p->xoff / 2.0;
    /* 1 us: 50 KB a step at 400 Gb/s, under kmin; DCQCN's timers are 50x */
    if (p->step <= 0)
        p->step = 1e-6;
    if (p->max_time <= 0)
        p->max_time = 10.0;
}

void comet_cc_defaults(comet_cc_params *p, double line)
{
    if (p->scheme == COMET_CC_NONE)
        return;
    cc_scheme_of(p->scheme)->defaults(p, line);
}

/* The keys every lossless scheme shares: the switches' and the fluid
 * model's. */
static const char *switch_problem(const comet_cc_params *p, char *msg, size_t cap)
{
    if (!(p->mtu >= 64.0)) {
        snprintf(msg, cap, "an MTU of %g bytes is below 64", p->mtu);
        return "mtu";
    }
    if (!(p->buffer >= p->mtu)) {
        snprintf(msg, cap, "a buffer of %g bytes is smaller than one MTU (%g bytes)", p->buffer,
                 p->mtu);
        return "buffer";
    }
    if (!(p->kmin <= p->kmax)) {
        snprintf(msg, cap, "kmin (%g bytes) is above kmax (%g bytes)", p->kmin, p->kmax);
        return "kmin";
    }
    if (!(p->pmax > 0.0 && p->pmax <= 1.0)) {
        snprintf(msg, cap, "pmax %g is not a probability in (0, 1]", p->pmax);
        return "pmax";
    }
    if (!(p->xon <= p->xoff)) {
        snprintf(msg, cap, "xon (%g bytes) is above xoff (%g bytes)", p->xon, p->xoff);
        return "xon";
    }
    if (!(p->xoff <= p->buffer)) {
        snprintf(msg, cap, "xoff (%g bytes) is above the buffer (%g bytes)", p->xoff, p->buffer);
        return "xoff";
    }
    if (!(p->step > 0.0 && p->step <= 1e-3)) {
        snprintf(msg, cap, "a time step of %g s is not in (0, 1 ms]", p->step);
        return "step";
    }
    if (!(p->max_time > 0.0 && p->max_time / p->step <= 1e10)) {
        snprintf(msg, cap, "max_time %g s is not positive or is past 1e10 steps", p->max_time);
        return "max_time";
    }
    return NULL;
}

const char *comet_cc_problem(const comet_cc_params *p, char *msg, size_t cap)
{
    if (p->scheme == COMET_CC_NONE)
        return NULL;
    const char *key = switch_problem(p, msg, cap);
    const cc_scheme *cs = cc_scheme_of(p->scheme);
    if (!key && cs->problem)
        key = cs->problem(p, msg, cap);
    return key;
}
