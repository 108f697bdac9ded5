/* Private to src/network: the congestion-control family (docs/roce.md).
 * A scheme is a struct of function pointers, one file per member
 * (cc_none.c, cc_pfc.c, cc_dcqcn.c, cc_hpcc.c), enum -> member in
 * registry.c, like the topologies and algorithms of families.h; what the
 * members share, the switches' defaults and the parameters' check, is
 * cc.c. The fluid engine (cc_fluid.c) owns the switches' side (egress
 * queues, ECN marking, PFC) and asks each flow's scheme, once per time
 * step, for the rate its sender may inject, from the congestion signals
 * of its path. */
#ifndef COMET_NETWORK_CC_H
#define COMET_NETWORK_CC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comet/congestion.h"

/* A sender's state, the fields its scheme uses (one struct for all). */
typedef struct cc_state {
    double rate;        /* what the sender may inject now, bytes/s */
    double line;        /* its port's bandwidth, bytes/s */
    double rtt;         /* the path's base round trip, s */
    /* DCQCN: current and target rate, alpha */
    double rc, rt, alpha;
    /* HPCC: window, reference window, filtered utilization, time to the
     * next reference update, additive-increase stage */
    double w, wc, u, next_wc;
    int stage;
} cc_state;

/* What the sender learns about its path during one step. */
typedef struct cc_signal {
    double p_mark;      /* fraction of its packets ECN-marked (1 - prod(1 - p_link)) */
    double u_max;       /* HPCC: max over links of q / (B T) + txRate / B */
} cc_signal;

typedef struct cc_scheme {
    comet_cc_scheme id;
    bool fluid;         /* false: the ideal max-min engine (none) */
    bool ecn;           /* switches mark packets (the sender reads p_mark) */
    bool telemetry;     /* switches stamp queue and rate (the sender reads u_max) */
    bool clocked;       /* updates once per RTT (a steady rate within one says nothing) */
    /* Its parameters' defaults (zeros of p filled; switch keys are the
     * fluid engine's, cc_switch_defaults). */
    void (*defaults)(comet_cc_params *p, double line);
    /* The first problem with its own keys, after the switches' passed
     * (as comet_cc_problem); NULL: it has none. */
    const char *(*problem)(const comet_cc_params *p, char *msg, size_t cap);
    /* A new flow's sender, st->line and st->rtt set. */
    void (*start)(const comet_cc_params *p, cc_state *st);
    /* One step of h seconds: the sender's rate from the signal. */
    void (*update)(const comet_cc_params *p, const cc_signal *s, double h, cc_state *st);
} cc_scheme;

extern const cc_scheme cc_scheme_none;  /* cc_none.c */
extern const cc_scheme cc_scheme_pfc;   /* cc_pfc.c */
extern const cc_scheme cc_scheme_dcqcn; /* cc_dcqcn.c */
extern const cc_scheme cc_scheme_hpcc;  /* cc_hpcc.c */

extern const cc_scheme *const cc_schemes[COMET_CC_COUNT]; /* registry.c */

static inline const cc_scheme *cc_scheme_of(comet_cc_scheme s)
{
    return (unsigned)s < COMET_CC_COUNT ? cc_schemes[s] : &cc_scheme_none;
}

/* The switches' defaults every lossless scheme shares (cc.c). */
void cc_switch_defaults(comet_cc_params *p, double line);

#endif
