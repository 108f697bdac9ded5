/* Internal: recording and finding key positions in a comet_srcmap. */
#ifndef COMET_CONFIG_SRCMAP_H
#define COMET_CONFIG_SRCMAP_H

#include "comet/config.h"

/* Record the following keys as coming from file (entries of other files
 * stay; with more than COMET_SRCMAP_FILES files the oldest slot is reused). */
void cfg_srcmap_use_file(comet_srcmap *m, const char *file);
/* Record (or move) key; silently ignored when the map is full. */
void cfg_srcmap_add(comet_srcmap *m, const char *key, int line, int column);
/* Remove key and every key below it ("model" removes "model.layers"). */
void cfg_srcmap_drop(comet_srcmap *m, const char *key);
/* The entry of key or of its nearest recorded parent, or NULL. */
const comet_srcmap_entry *cfg_srcmap_find(const comet_srcmap *m, const char *key);
/* The file an entry came from. */
const char *cfg_srcmap_file(const comet_srcmap *m, const comet_srcmap_entry *e);

#endif
