/* Internal: the table of presets embedded by tools/embed.c at build time
 * from presets/{models,systems,strategies,studies,validation}/NAME.yaml. */
#ifndef COMET_CONFIG_PRESETS_H
#define COMET_CONFIG_PRESETS_H

#include <stddef.h>

typedef struct comet_embedded_preset {
    const char *kind;   /* "models", "systems", "strategies", "studies" or "validation" */
    const char *name;   /* file name without .yaml */
    const char *text;
    size_t len;
} comet_embedded_preset;

extern const comet_embedded_preset comet_embedded_presets[];
extern const size_t comet_embedded_preset_count;
/* NULL-terminated names of each kind, in file-name order. */
extern const char *const comet_embedded_model_names[];
extern const char *const comet_embedded_system_names[];
extern const char *const comet_embedded_strategy_names[];
extern const char *const comet_embedded_study_names[];
extern const char *const comet_embedded_validation_names[];

/* The preset of this kind ("models", ...) and name, or NULL. */
const comet_embedded_preset *cfg_preset_find(const char *kind, const char *name);

#endif
