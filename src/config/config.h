/* The config folder's interface to the rest of the library; the other
 * headers of src/config/ are private to it. Most of what config/ offers is
 * public (comet/config.h, comet/study.h, comet/results.h and the ASTRA-sim
 * readers of comet/chakra.h); this is what a writer of files needs to
 * write only what these readers take back: the kinds of quantity and
 * their sane ranges. */
#ifndef COMET_CONFIG_CONFIG_H
#define COMET_CONFIG_CONFIG_H

#include <stdbool.h>

#include "comet/system.h"

typedef enum cfg_unit_kind {
    CFG_UNIT_BYTES = 0,
    CFG_UNIT_BANDWIDTH,
    CFG_UNIT_TIME,
    CFG_UNIT_FLOP_RATE,
    CFG_UNIT_FLOPS,
    CFG_UNIT_COUNT
} cfg_unit_kind;

/* Sane ranges, one per kind of quantity: a nonzero value outside its
 * kind's range is a typo (no real system is that slow or that large) and
 * would overflow the models' arithmetic into inf, NaN or a stalled
 * simulation. Every reader of a quantity (config files, CLI flags, ASTRA-sim
 * inputs) checks here. Zero is left to the callers that allow it. */
bool cfg_units_in_range(cfg_unit_kind kind, double si_value);
/* The range for messages: "1 KB/s to 10 PB/s". */
const char *cfg_units_range(cfg_unit_kind kind);

/* ASTRA-sim's words for comet's network, as its network and system files
 * spell them (astra_reader.c reads them, the Chakra export writes them):
 * the topologies by comet_topology value, NULL-terminated, and the
 * collective implementations by comet_algorithm value (the reader also
 * takes ASTRA-sim's other spellings). */
extern const char *const cfg_astra_topology_names[COMET_TOPO_COUNT + 1];
extern const char *const cfg_astra_algorithm_names[COMET_ALGO_COUNT];
/* The all-to-all implementation the export writes for each comet_algorithm:
 * comet's ring and double-binary-tree all-to-all is the pairwise exchange,
 * n-1 messages of S/n one after the other, which ASTRA-sim calls direct
 * with a window of 1 ("direct1"); its "ring" all-to-all forwards every
 * block around the ring, n(n-1)/2 neighbour steps (Ring.cc), and its
 * "doubleBinaryTree" runs the all-reduce tree. */
extern const char *const cfg_astra_all_to_all_names[COMET_ALGO_COUNT];

/* Links a message crosses on one dimension of topology t in ASTRA-sim:
 * its latency is per link, comet's per message, so comet's latency is
 * ASTRA-sim's times this (2 through a switch, else 1). */
static inline double cfg_astra_links_per_message(comet_topology t)
{
    return t == COMET_TOPO_SWITCH ? 2.0 : 1.0;
}

#endif
