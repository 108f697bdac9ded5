/* Internal: the readers of the three sections of a config document and
 * the pieces they share (presets, whole documents). */
#ifndef COMET_CONFIG_SECTIONS_H
#define COMET_CONFIG_SECTIONS_H

#include "fields.h"

/* Ports per switch a Clos may have: radix^3 of a 3-tier Clos fits int64
 * (the system reader's radix key and a study's radix axis). */
#define CFG_MAX_RADIX 65536

/* How a section is read: a preset name (when kind is non-NULL), or a
 * mapping that may start from `preset: NAME` and then sets keys. */
typedef struct cfg_section {
    const char *kind;                       /* "models", "systems" or NULL */
    const cfg_field *fields;
    /* reads the mapping's keys instead of fields, when the table is made
     * at read time (may be NULL) */
    comet_status (*read)(cfg_ctx *c, const cfg_node *n, const char *path, void *obj);
    void (*defaults)(void *obj);
    void (*loosen)(void *obj);              /* before overriding a preset (may be NULL) */
    comet_status (*check)(cfg_ctx *c, const char *path, void *obj);  /* may be NULL */
} cfg_section;

comet_status cfg_section_read(cfg_ctx *c, const cfg_node *n, const char *path,
                              const cfg_section *sec, void *obj);

extern const cfg_section cfg_model_section;
extern const cfg_section cfg_system_section;
extern const cfg_section cfg_strategy_section;

/* A document's model:, system: and strategy: sections into the comet_job
 * at base (CFG_CUSTOM readers; a validation row's sections too). */
comet_status cfg_job_read_model(cfg_ctx *c, const cfg_node *n, const char *path, void *base);
comet_status cfg_job_read_system(cfg_ctx *c, const cfg_node *n, const char *path, void *base);
comet_status cfg_job_read_strategy(cfg_ctx *c, const cfg_node *n, const char *path, void *base);

/* A network dimension's `shape:` (a torus's or mesh's axes: 1 to 3 of 2..2^24
 * NPUs each) into the comet_net_dim at base; a study's shape axis reads each
 * of its values with it too. */
comet_status cfg_read_dim_shape(cfg_ctx *c, const cfg_node *n, const char *path, void *base);

/* Spans per group a strategy.placement mapping lists (0 when none). */
int cfg_placement_dims(const cfg_node *placement);

/* Fill out (a comet_model or comet_system, by kind) from the preset named
 * by scalar n; an unknown name is an error at n (or without a position
 * when n is NULL and the name is given instead). */
comet_status cfg_preset_load(const cfg_ctx *c, const cfg_node *n, const char *name,
                             const char *path, const char *kind, void *out);

/* A whole file into a NUL-terminated heap buffer (at most CFG_MAX_TEXT
 * bytes, or max). A file that cannot be opened, or is a directory, is bad
 * input; one that fails while being read is an I/O failure. */
comet_status cfg_load_file(const char *path, char **text, size_t *len, comet_error *err);
comet_status cfg_load_file_limit(const char *path, size_t max, char **text, size_t *len,
                                 comet_error *err);

/* Read one document into job (all or nothing). */
comet_status cfg_read_document(const char *text, size_t len, const char *file, int preset_depth,
                               comet_job *job, comet_error *err);

/* A document of one section, `name:` (a study, an allocation, a DeepPool
 * problem), read all or nothing: a zeroed scratch object of `size` bytes,
 * init(obj) for what the file may leave out (NULL: nothing), its source
 * map (a comet_srcmap at map_offset) started at the file, read(c, obj,
 * section) for the section's keys; out takes the object only when every
 * step succeeded. */
typedef struct cfg_one_section {
    const char *name;               /* "allocate" */
    const char *article;            /* "an": "expected an allocate: section" */
    const char *unnamed;            /* the file's name when none is given: "<allocate>" */
    size_t size, map_offset;
    void (*init)(void *obj);
    comet_status (*read)(cfg_ctx *c, void *obj, const cfg_node *section);
} cfg_one_section;

comet_status cfg_one_section_read_text(const cfg_one_section *d, const char *text, size_t len,
                                       const char *filename, void *out, comet_error *err);
/* The same from the file at path. */
comet_status cfg_one_section_read_file(const cfg_one_section *d, const char *path, void *out,
                                       comet_error *err);

#endif
