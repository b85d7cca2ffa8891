/*
 * conf.h — what a case of the C conformance runner sees: its parameters
 * (the "params" object of its entry in conformance/cases.json) and the
 * registry that maps case ids to case bodies.
 *
 * A case body is a void function that uses the zltest checks (ZT_CHECK,
 * ZT_EQ_INT ...): the first failed check ends the case's process with a
 * "file:line: ..." message, which the runner reports as the case's detail.
 * A case runs in a process of its own (runner.c), so it may install signal
 * handlers, start threads and leave nothing behind for the next case.
 * Cases use the public API only: the runner links libzlink.so.1 and
 * includes zlink.h (and the public-API test helpers of core/tests).
 */
#ifndef CONF_H
#define CONF_H

#include <jansson.h>
#include <stddef.h>

/* The case's "params" object, as Jansson read it (manifest.c). */
typedef json_t conf_params_t;

/* The integer parameter key; a missing or non-integer parameter fails the
 * case (the manifest is the only source of parameter values). */
long long conf_int(const conf_params_t *params, const char *key);

/* The array-of-strings parameter key: writes up to cap pointers (owned by
 * the manifest) to out and returns how many there are; a missing, empty or
 * ill-typed parameter, or more than cap strings, fails the case. */
size_t conf_strings(const conf_params_t *params, const char *key, const char **out, size_t cap);

typedef void conf_case_fn(const conf_params_t *params);

typedef struct conf_impl {
    const char *id;
    conf_case_fn *run;
} conf_impl_t;

/* Every case this runner implements (registry.c). */
extern const conf_impl_t conf_impls[];
extern const size_t conf_impl_count;

/* Allocation failure on demand (alloc_fail.c): between begin and end every
 * malloc, calloc and realloc (and aligned allocation) on the calling thread
 * fails with ENOMEM, as when the system is out of memory. end returns how
 * many allocations failed. */
void conf_alloc_fail_begin(void);
unsigned conf_alloc_fail_end(void);

#endif /* CONF_H */
