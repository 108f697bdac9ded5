/* Reading models, systems and strategies from YAML or JSON files and from
 * the presets embedded at build time. One document may hold any of the
 * sections `model:`, `system:` and `strategy:`; each is a mapping, or a
 * preset name for model and system. Unknown keys are errors, and every
 * error names file:line:column and the key path. */
#ifndef COMET_CONFIG_H
#define COMET_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include "comet/buf.h"
#include "comet/error.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

/* Enough for a full inline system with 8 network dimensions plus model and
 * strategy; further keys are not recorded (errors then point at a parent). */
#define COMET_SRCMAP_MAX 256
#define COMET_SRCMAP_FILES 8

/* Where each key of the read documents was, so that errors found later
 * (for example by comet_strategy_resolve, which names "strategy.tp") can
 * be pointed at the file position. Several files may contribute: each
 * entry names the file it came from. */
typedef struct comet_srcmap_entry {
    char key[96];
    int line;
    int column;
    int file;          /* index into comet_srcmap.files */
} comet_srcmap_entry;

typedef struct comet_srcmap {
    int n_files;
    int current;       /* file the reader is recording now */
    char files[COMET_SRCMAP_FILES][256];
    int n;
    comet_srcmap_entry entries[COMET_SRCMAP_MAX];
} comet_srcmap;

typedef struct comet_job {
    bool has_model, has_system, has_strategy;
    comet_model model;
    comet_system system;
    comet_strategy strategy;       /* starts from comet_strategy_defaults */
    comet_srcmap srcmap;
} comet_job;

/* Zero the job and set strategy defaults. */
void comet_job_init(comet_job *job);

/* Parse a document held in memory; `filename` is used in errors only.
 * Sections present overwrite those of job. */
comet_status comet_config_read_text(const char *text, size_t len, const char *filename,
                                    comet_job *job, comet_error *err);
comet_status comet_config_read_file(const char *path, comet_job *job, comet_error *err);

/* Presets embedded at build time from presets/{models,systems}/NAME.yaml. */
comet_status comet_preset_model(const char *name, comet_model *out, comet_error *err);
comet_status comet_preset_system(const char *name, comet_system *out, comet_error *err);
/* NULL-terminated list of names; kind is "models", "systems", "strategies",
 * "studies" or "validation". */
const char *const *comet_preset_names(const char *kind);
/* Source text of a preset, or NULL. */
const char *comet_preset_text(const char *kind, const char *name);

/* Append sys as a YAML document `system:` with every key the system
 * reader takes (docs/config.md, Schema), written from the reader's own
 * field tables so that reading it back gives the same struct (quantities
 * with units chosen to parse back to the same double). Keys at their
 * defaults may be left out. COMET_ENOMEM when the buffer failed. */
comet_status comet_system_write_yaml(const comet_system *sys, comet_buf *out, comet_error *err);

/* Kinds of quantity a text like "1 GiB" or "50 GB/s" may hold. */
typedef enum comet_unit_kind {
    COMET_UNIT_BYTES = 0,
    COMET_UNIT_BANDWIDTH,
    COMET_UNIT_TIME,
    COMET_UNIT_FLOP_RATE,
    COMET_UNIT_FLOPS
} comet_unit_kind;

/* Parse a quantity with its unit into SI (bytes, bytes/s, s, FLOP/s,
 * FLOP), as config files do; `what` names it in errors (e.g. "--size"). */
comet_status comet_parse_quantity(const char *text, comet_unit_kind kind, const char *what,
                                  double *out, comet_error *err);

/* Fill in an error's file/line/column from the source map when it names a
 * key the document set and has no position yet. */
void comet_srcmap_locate(const comet_srcmap *map, comet_error *err);

#endif
