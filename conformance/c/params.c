/*
 * params.c — reading a case's parameters (conf.h).
 */
#include "conf.h"
#include "zltest.h"

long long conf_int(const conf_params_t *params, const char *key)
{
    const cj_value_t *v = cj_get(params, key);
    if (v == NULL)
        ZT_FAIL("parameter \"%s\" is missing from the manifest", key);
    if (v->kind != CJ_INT)
        ZT_FAIL("parameter \"%s\" is a %s, not an integer", key, cj_kind_name(v->kind));
    return v->num;
}

size_t conf_strings(const conf_params_t *params, const char *key, const char **out, size_t cap)
{
    const cj_value_t *v = cj_get(params, key);
    if (v == NULL)
        ZT_FAIL("parameter \"%s\" is missing from the manifest", key);
    if (v->kind != CJ_ARRAY || v->n == 0)
        ZT_FAIL("parameter \"%s\" must be a non-empty array of strings", key);
    if (v->n > cap)
        ZT_FAIL("parameter \"%s\" has %zu strings, this case takes at most %zu", key, v->n, cap);
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].kind != CJ_STRING)
            ZT_FAIL("parameter \"%s\"[%zu] is a %s, not a string", key, i,
                    cj_kind_name(v->items[i].kind));
        out[i] = v->items[i].str;
    }
    return v->n;
}
