/* Presets: model, system, strategy and study descriptions and validation
 * tables embedded in the library at build time (tools/embed.c), so
 * `model: gpt3-175b` works without an install path. This file finds them
 * by kind and name; a preset is an ordinary config document, read (and
 * its nesting bounded) by the document reader in config.c. */
#include <string.h>

#include "comet/config.h"
#include "presets.h"

const comet_embedded_preset *cfg_preset_find(const char *kind, const char *name)
{
    for (size_t i = 0; kind && name && i < comet_embedded_preset_count; i++) {
        const comet_embedded_preset *p = &comet_embedded_presets[i];
        if (strcmp(p->kind, kind) == 0 && strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

const char *const *comet_preset_names(const char *kind)
{
    static const struct {
        const char *kind;
        const char *const *names;
    } lists[] = {
        {"models", comet_embedded_model_names},
        {"systems", comet_embedded_system_names},
        {"strategies", comet_embedded_strategy_names},
        {"studies", comet_embedded_study_names},
        {"validation", comet_embedded_validation_names},
    };
    for (size_t i = 0; kind && i < sizeof lists / sizeof lists[0]; i++)
        if (strcmp(lists[i].kind, kind) == 0)
            return lists[i].names;
    return NULL;
}

const char *comet_preset_text(const char *kind, const char *name)
{
    const comet_embedded_preset *p = cfg_preset_find(kind, name);
    return p ? p->text : NULL;
}
