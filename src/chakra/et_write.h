/* Internal to src/chakra: one rank's Chakra trace written to an
 * open stream, so comet_et_write and the export (which writes every rank
 * of a set before renaming any, see comet/files.h) share the encoder. */
#ifndef COMET_CHAKRA_ET_WRITE_H
#define COMET_CHAKRA_ET_WRITE_H

#include <stdbool.h>
#include <stdio.h>
#include "comet/chakra.h"

/* A GlobalMetadata with `version`, then the nodes; false when a write or
 * an allocation failed. */
bool chakra_write_nodes(FILE *f, const char *version, const comet_et_node *nodes, size_t n);

#endif
