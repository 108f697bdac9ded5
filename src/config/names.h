/* Internal: the name tables behind the public *_name / *_parse functions,
 * shared with the config readers so that error messages can list the
 * accepted names. Each table is indexed by the enum value and ends in NULL. */
#ifndef COMET_CONFIG_NAMES_H
#define COMET_CONFIG_NAMES_H

#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

extern const char *const cfg_dtype_names[];
extern const char *const cfg_model_kind_names[];
extern const char *const cfg_collective_names[];
extern const char *const cfg_group_names[];
extern const char *const cfg_topology_names[];
extern const char *const cfg_algorithm_names[];
extern const char *const cfg_attach_names[];
extern const char *const cfg_recompute_names[];
extern const char *const cfg_objective_names[];

/* Index of name in a NULL-terminated table, or -1. */
int cfg_name_index(const char *const *names, const char *name);

/* The config readers store enums through an int (see fields.c). */
_Static_assert(sizeof(comet_dtype) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_model_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_collective) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_group) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_topology) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_algorithm) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_attach) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_recompute) == sizeof(int), "enum size");

#endif
