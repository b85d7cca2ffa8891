/*
 * params.c — reading a case's parameters (conf.h) from the Jansson values
 * of its manifest entry.
 */
#include "conf.h"
#include "zltest.h"

/* What v is, for messages. */
static const char *kind_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER: return "integer";
    case JSON_REAL: return "number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "value";
}

long long conf_int(const conf_params_t *params, const char *key)
{
    const json_t *v = json_object_get(params, key);
    if (v == NULL)
        ZT_FAIL("parameter \"%s\" is missing from the manifest", key);
    if (!json_is_integer(v))
        ZT_FAIL("parameter \"%s\" is a %s, not an integer", key, kind_name(v));
    return (long long)json_integer_value(v);
}

size_t conf_strings(const conf_params_t *params, const char *key, const char **out, size_t cap)
{
    const json_t *v = json_object_get(params, key);
    if (v == NULL)
        ZT_FAIL("parameter \"%s\" is missing from the manifest", key);
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0)
        ZT_FAIL("parameter \"%s\" must be a non-empty array of strings", key);
    if (n > cap)
        ZT_FAIL("parameter \"%s\" has %zu strings, this case takes at most %zu", key, n, cap);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(v, i);
        if (!json_is_string(s))
            ZT_FAIL("parameter \"%s\"[%zu] is a %s, not a string", key, i, kind_name(s));
        out[i] = json_string_value(s);
    }
    return n;
}
