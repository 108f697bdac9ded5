/* RoCE congestion control on the fabric (docs/roce.md): which scheme a
 * network dimension runs and its parameters. NONE keeps the ideal max-min
 * flow model (docs/fabric.md); the others run the fluid model: switch
 * egress queues with finite buffers, ECN marking between kmin and kmax,
 * PFC PAUSE at xoff per ingress link and RESUME at xon, and per flow the
 * sender's rate control (none for PFC alone, DCQCN, HPCC). */
#ifndef COMET_CONGESTION_H
#define COMET_CONGESTION_H

#include <stddef.h>

typedef enum comet_cc_scheme {
    COMET_CC_NONE = 0, /* ideal max-min sharing, no queues (today's flow model) */
    COMET_CC_PFC,      /* lossless queues with PFC, senders at line rate */
    COMET_CC_DCQCN,    /* DCQCN over PFC (Zhu et al., SIGCOMM 2015) */
    COMET_CC_HPCC,     /* HPCC over PFC (Li et al., SIGCOMM 2019) */
    COMET_CC_COUNT
} comet_cc_scheme;

/* Every value in SI units (bytes, seconds, bytes/s); a zero means "the
 * scheme's default" (comet_cc_defaults fills them). */
typedef struct comet_cc_params {
    comet_cc_scheme scheme;
    /* switches */
    double mtu;          /* bytes per packet (ECN marks packets) */
    double buffer;       /* what one egress queue may hold */
    double xoff, xon;    /* PFC: PAUSE an ingress link past xoff bytes, RESUME under xon */
    double kmin, kmax;   /* ECN: marking from kmin, every packet past kmax */
    double pmax;         /* marking probability at kmax */
    /* the fluid model */
    double step;         /* time step, s */
    double max_time;     /* simulated time past which a run is refused, s */
    /* DCQCN's reaction point */
    double g;            /* alpha's gain */
    double rai;          /* additive increase, bytes/s */
    double rate_timer;   /* rate increase timer T, s */
    double byte_counter; /* rate increase byte counter B, bytes */
    double alpha_timer;  /* alpha update period, s */
    double cnp_interval; /* the notification point's CNP interval, s */
    double fast_recovery; /* F: increase events before additive increase */
    double min_rate;     /* a sender never goes below, bytes/s */
    /* HPCC */
    double eta;          /* target utilization */
    double max_stage;    /* additive increases before a multiplicative update */
    double wai;          /* additive increase, bytes of window */
} comet_cc_params;

const char *comet_cc_scheme_name(comet_cc_scheme s);
int comet_cc_scheme_parse(const char *name, comet_cc_scheme *out);

/* Fills every zero of p with its scheme's default (docs/roce.md cites
 * each); line is the port's bandwidth in bytes/s (thresholds that scale
 * with it). */
void comet_cc_defaults(comet_cc_params *p, double line);

/* The first problem with p (after defaults): NULL when none, else the key
 * at fault ("kmin", "xon", "buffer", "rai", ...) with why into msg. */
const char *comet_cc_problem(const comet_cc_params *p, char *msg, size_t cap);

#endif
