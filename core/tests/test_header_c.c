/*
 * test_header_c.c — zlink.h as a strict C11 application sees it.
 *
 * Compiled with -std=c11 -Wall -Wextra -Werror -pedantic and linked against
 * the shared library libzlink.so.1 (not the static core), so it proves that
 *  - the header compiles warning-free as strict C11 and is include-guarded;
 *  - every public macro, enum constant and type is usable, and each value a
 *    binding or a peer depends on is pinned here at compile time: changing a
 *    published value breaks this build on purpose (doc/abi.md);
 *  - every function keeps its published signature (checked with _Generic,
 *    which evaluates nothing, so no function is linked just for this);
 *  - the version, strerror and errno functions are exported and agree with
 *    the header.
 * When you add something to zlink.h, pin it here and in test_header_cpp.cc;
 * //abi:header_tests_cover_header fails until you do.
 *
 * No test framework on purpose: zltest.h needs POSIX, this file must not.
 */
#include "zlink.h"
#include "zlink.h" /* a second include must be harmless */

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ZLINK_H
#error "zlink.h must define its include guard ZLINK_H"
#endif

#define PIN(expr, value) _Static_assert((expr) == (value), #expr " == " #value)

/* fn has exactly the type ret (*) args. */
#define SIG(fn, ret, args) \
    _Static_assert(_Generic(&fn, ret (*) args: 1, default: 0), #fn " keeps its signature")

/* ---------------------------------------------------------------- version */

PIN(ZLINK_MAKE_VERSION(1, 2, 3), 10203);
PIN(ZLINK_VERSION,
    ZLINK_MAKE_VERSION(ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR, ZLINK_VERSION_PATCH));
/* libzlink.so.1 and the ZLINK_1.x symbol versions belong to major 1. */
PIN(ZLINK_VERSION_MAJOR, 1);
_Static_assert(ZLINK_VERSION_MINOR >= 0 && ZLINK_VERSION_MINOR < 100, "minor fits 2 digits");
_Static_assert(ZLINK_VERSION_PATCH >= 0 && ZLINK_VERSION_PATCH < 100, "patch fits 2 digits");

/* ------------------------------------------------------------------ errno */

PIN(ZLINK_HAUSNUMERO, 156384712);
PIN(EFSM, ZLINK_HAUSNUMERO + 51);
PIN(ENOCOMPATPROTO, ZLINK_HAUSNUMERO + 52);
PIN(ETERM, ZLINK_HAUSNUMERO + 53);
PIN(EMTHREAD, ZLINK_HAUSNUMERO + 54);
PIN(ETERM, 156384765);

/* The errno names zlink.h supplies where the platform lacks them; every one
 * must be a positive value that zlink_strerror can describe. */
static const struct {
    const char *name;
    int value;
} errnos[] = {
    {"ENOTSUP", ENOTSUP},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT},
    {"ENOBUFS", ENOBUFS},
    {"ENETDOWN", ENETDOWN},
    {"EADDRINUSE", EADDRINUSE},
    {"EADDRNOTAVAIL", EADDRNOTAVAIL},
    {"ECONNREFUSED", ECONNREFUSED},
    {"EINPROGRESS", EINPROGRESS},
    {"ENOTSOCK", ENOTSOCK},
    {"EMSGSIZE", EMSGSIZE},
    {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"ENETUNREACH", ENETUNREACH},
    {"ECONNABORTED", ECONNABORTED},
    {"ECONNRESET", ECONNRESET},
    {"ENOTCONN", ENOTCONN},
    {"ETIMEDOUT", ETIMEDOUT},
    {"EHOSTUNREACH", EHOSTUNREACH},
    {"ENETRESET", ENETRESET},
    {"ESTALE", ESTALE},
    {"EALREADY", EALREADY},
    {"EDEADLK", EDEADLK},
    {"ESHUTDOWN", ESHUTDOWN},
    {"EPROTOTYPE", EPROTOTYPE},
    {"EOVERFLOW", EOVERFLOW},
    {"EFSM", EFSM},
    {"ENOCOMPATPROTO", ENOCOMPATPROTO},
    {"ETERM", ETERM},
    {"EMTHREAD", EMTHREAD},
};

#if defined(__linux__)
/* On Linux every standard name exists, so zlink.h must not replace any. */
_Static_assert(ENOTSUP < ZLINK_HAUSNUMERO && EPROTONOSUPPORT < ZLINK_HAUSNUMERO &&
                   ENOBUFS < ZLINK_HAUSNUMERO && ENETDOWN < ZLINK_HAUSNUMERO &&
                   EADDRINUSE < ZLINK_HAUSNUMERO && EADDRNOTAVAIL < ZLINK_HAUSNUMERO &&
                   ECONNREFUSED < ZLINK_HAUSNUMERO && EINPROGRESS < ZLINK_HAUSNUMERO &&
                   ENOTSOCK < ZLINK_HAUSNUMERO && EMSGSIZE < ZLINK_HAUSNUMERO &&
                   EAFNOSUPPORT < ZLINK_HAUSNUMERO && ENETUNREACH < ZLINK_HAUSNUMERO &&
                   ECONNABORTED < ZLINK_HAUSNUMERO && ECONNRESET < ZLINK_HAUSNUMERO &&
                   ENOTCONN < ZLINK_HAUSNUMERO && ETIMEDOUT < ZLINK_HAUSNUMERO &&
                   EHOSTUNREACH < ZLINK_HAUSNUMERO && ENETRESET < ZLINK_HAUSNUMERO &&
                   ESTALE < ZLINK_HAUSNUMERO && EALREADY < ZLINK_HAUSNUMERO &&
                   EDEADLK < ZLINK_HAUSNUMERO && ESHUTDOWN < ZLINK_HAUSNUMERO &&
                   EPROTOTYPE < ZLINK_HAUSNUMERO && EOVERFLOW < ZLINK_HAUSNUMERO,
               "Linux errno values are used as they are");
#endif

/* ---------------------------------------------------------- result enums
 * Published values: never change one (doc/abi.md). Each enum is int-sized. */

/* zlink_submit_result_t */
PIN(sizeof(zlink_submit_result_t), 4);
PIN(ZLINK_SUBMIT_OK, 0);
PIN(ZLINK_SUBMIT_BACKPRESSURED, 1);
PIN(ZLINK_SUBMIT_NOT_CONNECTED, 2);
PIN(ZLINK_SUBMIT_NOT_FOUND, 3);
PIN(ZLINK_SUBMIT_TERMINATED, 4);
PIN(ZLINK_SUBMIT_INVALID_HANDLE, 5);
PIN(ZLINK_SUBMIT_INVALID_ARGUMENT, 6);
PIN(ZLINK_SUBMIT_NOT_SUPPORTED, 7);
PIN(ZLINK_SUBMIT_INVALID_STATE, 8);
PIN(ZLINK_SUBMIT_THREAD_VIOLATION, 9);
PIN(ZLINK_SUBMIT_OUT_OF_MEMORY, 10);
PIN(ZLINK_SUBMIT_SEQ_EXHAUSTED, 11);
PIN(ZLINK_SUBMIT_INTERNAL, 12);
PIN(ZLINK_SUBMIT_NOT_ADMITTED, 13);
/* zlink_request_result_t */
PIN(sizeof(zlink_request_result_t), 4);
PIN(ZLINK_REQUEST_OK, 0);
PIN(ZLINK_REQUEST_TIMED_OUT, 101);
PIN(ZLINK_REQUEST_NOT_FOUND, 102);
PIN(ZLINK_REQUEST_TERMINATED, 103);
PIN(ZLINK_REQUEST_PROTOCOL_ERROR, 104);
PIN(ZLINK_REQUEST_INTERNAL, 105);
PIN(ZLINK_REQUEST_REJECTED, 106);
PIN(ZLINK_REQUEST_CONFLICT, 107);
PIN(ZLINK_REQUEST_BUSY, 108);
PIN(ZLINK_REQUEST_NOT_CONNECTED, 109);
PIN(ZLINK_REQUEST_INVALID_ARGUMENT, 110);
PIN(ZLINK_REQUEST_INVALID_STATE, 111);
PIN(ZLINK_REQUEST_NOT_SUPPORTED, 112);
PIN(ZLINK_REQUEST_BACKPRESSURED, 113);
/* zlink_recv_result_t */
PIN(sizeof(zlink_recv_result_t), 4);
PIN(ZLINK_RECV_OK, 0);
PIN(ZLINK_RECV_NO_DATA, 201);
PIN(ZLINK_RECV_BUSY, 202);
PIN(ZLINK_RECV_TERMINATED, 203);
PIN(ZLINK_RECV_INVALID_HANDLE, 204);
PIN(ZLINK_RECV_NOT_SUPPORTED, 205);
PIN(ZLINK_RECV_INTERNAL, 206);
PIN(ZLINK_RECV_BUFFER_TOO_SMALL, 207);
PIN(ZLINK_RECV_INVALID_STATE, 208);
/* zlink_handler_result_t */
PIN(sizeof(zlink_handler_result_t), 4);
PIN(ZLINK_HANDLER_OK, 0);
PIN(ZLINK_HANDLER_INVALID_ARGUMENT, 301);
PIN(ZLINK_HANDLER_BUSY, 302);
PIN(ZLINK_HANDLER_NOT_SUPPORTED, 303);
PIN(ZLINK_HANDLER_DEADLOCK, 304);
PIN(ZLINK_HANDLER_INVALID_HANDLE, 305);
PIN(ZLINK_HANDLER_INTERNAL, 306);
/* zlink_close_result_t */
PIN(sizeof(zlink_close_result_t), 4);
PIN(ZLINK_CLOSE_OK, 0);
PIN(ZLINK_CLOSE_BUSY, 401);
PIN(ZLINK_CLOSE_SHUTDOWN, 402);
PIN(ZLINK_CLOSE_INVALID_HANDLE, 403);
PIN(ZLINK_CLOSE_INTERNAL, 404);
/* zlink_bind_result_t */
PIN(sizeof(zlink_bind_result_t), 4);
PIN(ZLINK_BIND_OK, 0);
PIN(ZLINK_BIND_INVALID_ARGUMENT, 501);
PIN(ZLINK_BIND_ADDR_IN_USE, 502);
PIN(ZLINK_BIND_NOT_SUPPORTED, 503);
PIN(ZLINK_BIND_INVALID_HANDLE, 504);
PIN(ZLINK_BIND_INTERNAL, 505);
/* zlink_connect_result_t */
PIN(sizeof(zlink_connect_result_t), 4);
PIN(ZLINK_CONNECT_OK, 0);
PIN(ZLINK_CONNECT_INVALID_ARGUMENT, 601);
PIN(ZLINK_CONNECT_NOT_SUPPORTED, 602);
PIN(ZLINK_CONNECT_INVALID_HANDLE, 603);
PIN(ZLINK_CONNECT_INTERNAL, 604);
PIN(ZLINK_CONNECT_NOT_FOUND, 605);
PIN(ZLINK_CONNECT_CONFLICT, 606);
PIN(ZLINK_CONNECT_BUSY, 607);
PIN(ZLINK_CONNECT_AUTH_FAILED, 608);
/* zlink_config_result_t */
PIN(sizeof(zlink_config_result_t), 4);
PIN(ZLINK_CONFIG_OK, 0);
PIN(ZLINK_CONFIG_INVALID_HANDLE, 701);
PIN(ZLINK_CONFIG_INVALID_ARGUMENT, 702);
PIN(ZLINK_CONFIG_NOT_SUPPORTED, 703);
PIN(ZLINK_CONFIG_INTERNAL, 704);
PIN(ZLINK_CONFIG_INVALID_STATE, 705);
PIN(ZLINK_CONFIG_NOT_FOUND, 706);
PIN(ZLINK_CONFIG_CONFLICT, 707);
PIN(ZLINK_CONFIG_BUFFER_TOO_SMALL, 708);
PIN(ZLINK_CONFIG_BUSY, 709);
/* ------------------------------------------------------------ result table
 * The X-macro tables the result enums are generated from (zlink.h): every
 * row names its constant with the value pinned above, each table has the
 * pinned number of rows (a new row needs a new pin), and every family's
 * type is int-sized. The library's view of the same rows is checked in
 * main(). */
#define ROW_PIN(name, value) PIN(name, value);
ZLINK_SUBMIT_RESULTS(ROW_PIN)
ZLINK_REQUEST_RESULTS(ROW_PIN)
ZLINK_RECV_RESULTS(ROW_PIN)
ZLINK_HANDLER_RESULTS(ROW_PIN)
ZLINK_CLOSE_RESULTS(ROW_PIN)
ZLINK_BIND_RESULTS(ROW_PIN)
ZLINK_CONNECT_RESULTS(ROW_PIN)
ZLINK_CONFIG_RESULTS(ROW_PIN)
ZLINK_SEND_COMPLETE_RESULTS(ROW_PIN)
ZLINK_FW_RESULTS(ROW_PIN)

#define COUNT_ROW(a, b) +1
PIN(0 ZLINK_SUBMIT_RESULTS(COUNT_ROW), 14);
PIN(0 ZLINK_REQUEST_RESULTS(COUNT_ROW), 14);
PIN(0 ZLINK_RECV_RESULTS(COUNT_ROW), 9);
PIN(0 ZLINK_HANDLER_RESULTS(COUNT_ROW), 7);
PIN(0 ZLINK_CLOSE_RESULTS(COUNT_ROW), 5);
PIN(0 ZLINK_BIND_RESULTS(COUNT_ROW), 6);
PIN(0 ZLINK_CONNECT_RESULTS(COUNT_ROW), 9);
PIN(0 ZLINK_CONFIG_RESULTS(COUNT_ROW), 10);
PIN(0 ZLINK_SEND_COMPLETE_RESULTS(COUNT_ROW), 2);
PIN(0 ZLINK_FW_RESULTS(COUNT_ROW), 17);
PIN(0 ZLINK_SUBMIT_ERRNO_MAP(COUNT_ROW), 23);
PIN(0 ZLINK_REQUEST_ERRNO_MAP(COUNT_ROW), 20);
PIN(0 ZLINK_RECV_ERRNO_MAP(COUNT_ROW), 10);
PIN(0 ZLINK_HANDLER_ERRNO_MAP(COUNT_ROW), 1);
PIN(0 ZLINK_CLOSE_ERRNO_MAP(COUNT_ROW), 5);
PIN(0 ZLINK_BIND_ERRNO_MAP(COUNT_ROW), 10);
PIN(0 ZLINK_CONNECT_ERRNO_MAP(COUNT_ROW), 13);
PIN(0 ZLINK_CONFIG_ERRNO_MAP(COUNT_ROW), 14);
PIN(0 ZLINK_SEND_COMPLETE_ERRNO_MAP(COUNT_ROW), 0);
PIN(0 ZLINK_FW_ERRNO_MAP(COUNT_ROW), 0);
PIN(0 ZLINK_ERRNO_TEXTS(COUNT_ROW), 44);

#define COUNT_FAMILY(family, type, results, errno_map, fallback, named) +1
#define COUNT_NAMED(family, type, results, errno_map, fallback, named) +(named)
#define FAMILY_SIZE(family, type, results, errno_map, fallback, named) PIN(sizeof(type), 4);
PIN(0 ZLINK_RESULT_FAMILIES(COUNT_FAMILY), 10);
PIN(0 ZLINK_RESULT_FAMILIES(COUNT_NAMED), 9);
ZLINK_RESULT_FAMILIES(FAMILY_SIZE)

/* Every errno text, and every value of every family, as rows. */
static const struct {
    int value;
    const char *text;
} errno_texts[] = {
#define TEXT_ROW(name, text) {name, text},
    ZLINK_ERRNO_TEXTS(TEXT_ROW)
};

static const struct {
    int value;
    const char *name;
} result_rows[] = {
#define NAME_ROW(name, value) {value, #name},
#define NAMED_ROWS(family, type, results, errno_map, fallback, named) results(NAME_ROW)
    ZLINK_RESULT_FAMILIES(NAMED_ROWS)
};

/* zlink_send_flags_t */
PIN(sizeof(zlink_send_flags_t), 4);
PIN(ZLINK_SEND_FLAGS_NONE, 0);
PIN(ZLINK_SEND_FLAGS_DONTWAIT, 1);
/* zlink_recv_flags_t */
PIN(sizeof(zlink_recv_flags_t), 4);
PIN(ZLINK_RECV_FLAGS_NONE, 0);
PIN(ZLINK_RECV_FLAGS_DONTWAIT, 1);

/* ----------------------------------------------------------- flag enums */

PIN(sizeof(zlink_send_flags_t), 4);
PIN(ZLINK_SEND_FLAGS_NONE, 0);
PIN(ZLINK_SEND_FLAGS_DONTWAIT, 1);
PIN(sizeof(zlink_recv_flags_t), 4);
PIN(ZLINK_RECV_FLAGS_NONE, 0);
PIN(ZLINK_RECV_FLAGS_DONTWAIT, 1);
PIN(ZLINK_DONTWAIT, ZLINK_SEND_FLAGS_DONTWAIT);
PIN(ZLINK_DONTWAIT, ZLINK_RECV_FLAGS_DONTWAIT);

/* ------------------------------------------ options, socket types, limits */

PIN(ZLINK_IO_THREADS, 1);
PIN(ZLINK_MAX_SOCKETS, 2);
PIN(ZLINK_SOCKET_LIMIT, 3);
PIN(ZLINK_THREAD_PRIORITY, 3);
PIN(ZLINK_THREAD_SCHED_POLICY, 4);
PIN(ZLINK_MAX_MSGSZ, 5);
PIN(ZLINK_MSG_T_SIZE, 6);
PIN(ZLINK_THREAD_AFFINITY_CPU_ADD, 7);
PIN(ZLINK_THREAD_AFFINITY_CPU_REMOVE, 8);
PIN(ZLINK_THREAD_NAME_PREFIX, 9);
PIN(ZLINK_CTX_OPT_BLOCKY, 10);
PIN(ZLINK_AUTO_HWM_ENABLE, 12);
PIN(ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS, 14);
PIN(ZLINK_PROFILE, 17);
PIN(ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES, 19);
PIN(ZLINK_RUNTIME_MEMORY_LIMIT_BYTES, 20);
PIN(ZLINK_CORE_BUDGET_BYTES, 21);
PIN(ZLINK_SPIN_US, 22);
PIN(ZLINK_IO_SPIN_US, 23);
PIN(ZLINK_SPIN_US_MAX, 10000);
PIN(ZLINK_IO_THREADS_DFLT, 4);
PIN(ZLINK_MAX_SOCKETS_DFLT, 4095);
PIN(ZLINK_PROFILE_COMPACT, 0);
PIN(ZLINK_PROFILE_LOW_LATENCY, 1);
PIN(ZLINK_PROFILE_BALANCED, 2);
PIN(ZLINK_PROFILE_THROUGHPUT, 3);
PIN(ZLINK_PAIR, 0x1001);
PIN(ZLINK_PUB, 0x1002);
PIN(ZLINK_SUB, 0x1003);
PIN(ZLINK_DEALER, 0x1004);
PIN(ZLINK_ROUTER, 0x1005);
PIN(ZLINK_XPUB, 0x1006);
PIN(ZLINK_XSUB, 0x1007);
PIN(ZLINK_STREAM, 0x1008);
PIN(ZLINK_AFFINITY, 0x3001);
PIN(ZLINK_SNDBUF, 0x3005);
PIN(ZLINK_RCVBUF, 0x3006);
PIN(ZLINK_FD, 0x3007);
PIN(ZLINK_EVENTS, 0x3008);
PIN(ZLINK_TYPE, 0x3009);
PIN(ZLINK_LINGER, 0x300A);
PIN(ZLINK_RECONNECT_IVL, 0x300B);
PIN(ZLINK_BACKLOG, 0x300C);
PIN(ZLINK_RECONNECT_IVL_MAX, 0x300D);
PIN(ZLINK_MAXMSGSIZE, 0x300E);
PIN(ZLINK_SNDHWM, 0x300F);
PIN(ZLINK_RCVHWM, 0x3010);
PIN(ZLINK_RCVTIMEO, 0x3012);
PIN(ZLINK_SNDTIMEO, 0x3013);
PIN(ZLINK_LAST_ENDPOINT, 0x3014);
PIN(ZLINK_TCP_KEEPALIVE, 0x3015);
PIN(ZLINK_TCP_KEEPALIVE_CNT, 0x3016);
PIN(ZLINK_TCP_KEEPALIVE_IDLE, 0x3017);
PIN(ZLINK_TCP_KEEPALIVE_INTVL, 0x3018);
PIN(ZLINK_IMMEDIATE, 0x3019);
PIN(ZLINK_IPV6, 0x301A);
PIN(ZLINK_CONFLATE, 0x301B);
PIN(ZLINK_TOS, 0x301C);
PIN(ZLINK_HANDSHAKE_IVL, 0x301D);
PIN(ZLINK_BLOCKY, 0x301E);
PIN(ZLINK_INVERT_MATCHING, 0x3020);
PIN(ZLINK_CONNECT_TIMEOUT, 0x3024);
PIN(ZLINK_TCP_MAXRT, 0x3025);
PIN(ZLINK_BINDTODEVICE, 0x3027);
PIN(ZLINK_ZMP_METADATA, 0x3030);
PIN(ZLINK_TCP_NODELAY, 0x3031);
PIN(ZLINK_OPT_RID_DUPLICATE_POLICY, 0x3033);
PIN(ZLINK_RID_DUPLICATE_REJECT, 0);
PIN(ZLINK_RID_DUPLICATE_HANDOVER, 1);
PIN(ZLINK_ROUTER_MANDATORY, 0x3101);
PIN(ZLINK_ROUTER_PROBE, 0x3103);
PIN(ZLINK_CONNECT_ROUTING_ID, 0x3104);
PIN(ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, 0x3105);
PIN(ZLINK_ROUTER_WEIGHT, 0x3106);
PIN(ZLINK_DEALER_PROBE, 0x3201);
PIN(ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, 0x3202);
PIN(ZLINK_DEALER_WEIGHT, 0x3203);
PIN(ZLINK_PUB_NODROP, 0x3305);
PIN(ZLINK_PUB_TOPICS_COUNT, 0x3307);
PIN(ZLINK_SUB_TOPICS_COUNT, 0x3400);
PIN(ZLINK_STREAM_NOTIFY, 0x3501);
PIN(ZLINK_STREAM_OPT_RECV_MODE, 0x3502);
PIN(ZLINK_STREAM_RECV_UNSPECIFIED, 0);
PIN(ZLINK_STREAM_RECV_RAW, 1);
PIN(ZLINK_STREAM_RECV_PACKET, 2);
PIN(ZLINK_WEIGHT_MIN, 0);
PIN(ZLINK_WEIGHT_MAX, 10000);
PIN(ZLINK_WEIGHT_DFLT, 100);
PIN(ZLINK_HWM_DFLT, 4096000u);
PIN(ZLINK_TIMEO_DFLT, 1000);
PIN(ZLINK_REQUEST_TIMEOUT_DFLT, 5000);
PIN(ZLINK_MSG_INLINE_MAX, 29);

/* ------------------------------------------------------------------ types */

PIN(sizeof(zlink_msg_t), 64);
_Static_assert(alignof(zlink_msg_t) >= alignof(void *), "zlink_msg_t is pointer-aligned");
_Static_assert(alignof(zlink_msg_t) >= alignof(uint64_t), "zlink_msg_t is u64-aligned");
_Static_assert(ZLINK_MSG_INLINE_MAX < sizeof(zlink_msg_t), "inline payload fits");
PIN(sizeof(zlink_routing_id_t), 256);

/* completion queue */
PIN(ZLINK_COMPLETION_SEND, 1);
PIN(ZLINK_COMPLETION_REQUEST, 2);
PIN(ZLINK_COMPLETION_WRITABLE, 3);
PIN(ZLINK_SEND_ADMITTED, 0);
PIN(ZLINK_SEND_TERMINAL, 202);
PIN(sizeof(zlink_completion_kind_t), 4);
PIN(sizeof(zlink_send_complete_result_t), 4);
PIN(offsetof(zlink_completion_t, struct_size), 0);
PIN(offsetof(zlink_completion_t, kind), 4);
PIN(offsetof(zlink_completion_t, completion_id), 8);
PIN(offsetof(zlink_completion_t, user_context), 16);
PIN(offsetof(zlink_completion_t, peer_rid), 24);
PIN(offsetof(zlink_completion_t, send_result), 280);
PIN(offsetof(zlink_completion_t, send_terminal_errno), 284);
PIN(offsetof(zlink_completion_t, request_result), 288);
PIN(offsetof(zlink_completion_t, reply_parts), 296);
PIN(offsetof(zlink_completion_t, reply_part_count), 304);
PIN(sizeof(zlink_completion_t), 312);
/* receive flow */
PIN(ZLINK_RECEIVE_FLOW_RUNNING, 0);
PIN(ZLINK_RECEIVE_FLOW_PAUSED, 1);
PIN(sizeof(zlink_receive_flow_state_t), 4);
/* router routes */
PIN(offsetof(zlink_router_route_t, rid), 0);
PIN(offsetof(zlink_router_route_t, route_generation), 256);
PIN(sizeof(zlink_router_route_t), 264);

PIN(offsetof(zlink_routing_id_t, size), 0);
PIN(offsetof(zlink_routing_id_t, data), 1);
PIN(sizeof(((zlink_routing_id_t *)0)->data), 255);
PIN(sizeof(zlink_completion_id_t), 8);
PIN(sizeof(zlink_reply_token_t), 8);
_Static_assert((zlink_completion_id_t)-1 > 0, "completion ids are unsigned");
_Static_assert((zlink_reply_token_t)-1 > 0, "reply tokens are unsigned");

/* A function of type zlink_free_fn. */
static void free_with_hint(void *data, void *hint)
{
    (void)hint;
    free(data);
}
static zlink_free_fn *const free_fn_check = free_with_hint;

/* ZLINK_EXPORT on a consumer's redeclaration must be accepted. */
ZLINK_EXPORT int zlink_errno(void);

/* -------------------------------------------------------------- functions */

SIG(zlink_errno, int, (void));
SIG(zlink_strerror, const char *, (int));
SIG(zlink_result_name, const char *, (int));
SIG(zlink_version, void, (int *, int *, int *));
SIG(zlink_has, int, (const char *));
SIG(zlink_ctx_new, void *, (void));
SIG(zlink_ctx_shutdown, zlink_close_result_t, (void *));
SIG(zlink_ctx_term, zlink_close_result_t, (void *));
SIG(zlink_ctx_set, zlink_config_result_t, (void *, int, int));
SIG(zlink_ctx_get, int, (void *, int, zlink_config_result_t *));
SIG(zlink_ctx_set_data, zlink_config_result_t, (void *, int, const void *, size_t));
SIG(zlink_ctx_get_data, zlink_config_result_t, (void *, int, void *, size_t *));
SIG(zlink_socket, void *, (void *, int));
SIG(zlink_close, zlink_close_result_t, (void *));
SIG(zlink_setsockopt, zlink_config_result_t, (void *, int, const void *, size_t));
SIG(zlink_getsockopt, zlink_config_result_t, (void *, int, void *, size_t *));
SIG(zlink_set_routing_id, zlink_config_result_t, (void *, const void *, size_t));
SIG(zlink_bind, zlink_bind_result_t, (void *, const char *));
SIG(zlink_connect, zlink_connect_result_t, (void *, const char *));
SIG(zlink_unbind, zlink_connect_result_t, (void *, const char *));
SIG(zlink_disconnect, zlink_connect_result_t, (void *, const char *));
SIG(zlink_disconnect_rid, zlink_connect_result_t, (void *, const zlink_routing_id_t *));
SIG(zlink_msg_init, zlink_config_result_t, (zlink_msg_t *));
SIG(zlink_msg_init_size, zlink_config_result_t, (zlink_msg_t *, size_t));
SIG(zlink_msg_init_data, zlink_config_result_t, (zlink_msg_t *, void *, size_t, zlink_free_fn *, void *));
SIG(zlink_msg_close, zlink_config_result_t, (zlink_msg_t *));
SIG(zlink_msg_move, zlink_config_result_t, (zlink_msg_t *, zlink_msg_t *));
SIG(zlink_msg_copy, zlink_config_result_t, (zlink_msg_t *, zlink_msg_t *));
SIG(zlink_msg_adopt, zlink_config_result_t, (zlink_msg_t *, zlink_msg_t *));
SIG(zlink_msg_data, void *, (zlink_msg_t *));
SIG(zlink_msg_size, size_t, (const zlink_msg_t *));
SIG(zlink_msg_refcnt, int, (const zlink_msg_t *, zlink_config_result_t *));
SIG(zlink_multipart_close, void, (zlink_msg_t *, size_t));
SIG(zlink_send, zlink_submit_result_t, (void *, zlink_msg_t *, size_t, zlink_send_flags_t, void *, zlink_completion_id_t *));
SIG(zlink_send_rid, zlink_submit_result_t, (void *, const zlink_routing_id_t *, zlink_msg_t *, size_t, zlink_send_flags_t, void *, zlink_completion_id_t *));
SIG(zlink_publish, zlink_submit_result_t, (void *, const char *, zlink_msg_t *, size_t, zlink_send_flags_t));
SIG(zlink_recv, zlink_recv_result_t, (void *, const zlink_routing_id_t **, zlink_msg_t *, size_t, size_t *, zlink_recv_flags_t));
SIG(zlink_router_recv, zlink_recv_result_t, (void *, const zlink_routing_id_t **, zlink_reply_token_t *, zlink_msg_t *, size_t, size_t *, zlink_recv_flags_t));
SIG(zlink_subscribe, zlink_recv_result_t, (void *, const zlink_routing_id_t **, char *, size_t, size_t *, zlink_msg_t *, size_t, size_t *, zlink_recv_flags_t));
SIG(zlink_stream_recv_packet, zlink_recv_result_t, (void *, const zlink_routing_id_t **, zlink_msg_t *, zlink_msg_t *, zlink_recv_flags_t));
SIG(zlink_set_subscription, zlink_config_result_t, (void *, const char *));
SIG(zlink_unset_subscription, zlink_config_result_t, (void *, const char *));
SIG(zlink_subscription_at, zlink_config_result_t, (void *, size_t, char *, size_t *, int *));
SIG(zlink_completion_recv, zlink_recv_result_t, (void *, zlink_completion_t *, zlink_recv_flags_t));
SIG(zlink_completion_close, void, (zlink_completion_t *));
SIG(zlink_router_routes_snapshot, zlink_config_result_t, (void *, zlink_router_route_t *, size_t, size_t *));
SIG(zlink_router_recv_route_generation, uint64_t, (void *));
SIG(zlink_request, zlink_submit_result_t, (void *, const zlink_routing_id_t *, zlink_msg_t *, size_t, zlink_send_flags_t, uint32_t, void *, zlink_completion_id_t *));
SIG(zlink_reply, zlink_submit_result_t, (void *, const zlink_routing_id_t *, zlink_reply_token_t, zlink_msg_t *, size_t));
SIG(zlink_reply_error, zlink_submit_result_t, (void *, const zlink_routing_id_t *, zlink_reply_token_t, int, zlink_msg_t *, size_t));
SIG(zlink_reply_submit, zlink_submit_result_t, (void *, const zlink_routing_id_t *, zlink_reply_token_t, int, zlink_msg_t *, size_t, zlink_send_flags_t, void *, zlink_completion_id_t *));
SIG(zlink_socket_set_receive_flow_state, zlink_config_result_t, (void *, zlink_receive_flow_state_t));


/* ---------------------------------------------------------------- polling */

PIN(ZLINK_POLLIN, 1);
PIN(ZLINK_POLLOUT, 2);
PIN(ZLINK_POLLERR, 4);
PIN(ZLINK_POLLPRI, 8);
PIN(ZLINK_POLLITEMS_DFLT, 16);
PIN(ZLINK_POLLCOMPLETION, 32);
PIN(ZLINK_POLLROUTE, 64);
PIN(ZLINK_HAVE_POLLER, 1);
PIN(ZLINK_POLLER_SOURCE_SOCKET, 1);
PIN(ZLINK_POLLER_SOURCE_FD, 2);
PIN(ZLINK_POLLER_SOURCE_TIMER, 3);
PIN(sizeof(zlink_poller_event_flag_e), 4);
PIN(sizeof(zlink_poller_source_kind_t), 4);
PIN(sizeof(zlink_poller_event_mask_t), sizeof(short));
PIN(sizeof(zlink_fd_t), sizeof(int));
PIN(offsetof(zlink_pollitem_t, socket), 0);
PIN(offsetof(zlink_pollitem_t, fd), sizeof(void *));
PIN(offsetof(zlink_pollitem_t, events), sizeof(void *) + sizeof(zlink_fd_t));
PIN(offsetof(zlink_pollitem_t, revents), sizeof(void *) + sizeof(zlink_fd_t) + sizeof(short));
#if UINTPTR_MAX > 0xFFFFFFFFu
PIN(sizeof(zlink_pollitem_t), 16);
PIN(offsetof(zlink_poller_event_t, source_kind), 0);
PIN(offsetof(zlink_poller_event_t, socket), 8);
PIN(offsetof(zlink_poller_event_t, fd), 16);
PIN(offsetof(zlink_poller_event_t, timer), 24);
PIN(offsetof(zlink_poller_event_t, user_data), 32);
PIN(offsetof(zlink_poller_event_t, events), 40);
PIN(sizeof(zlink_poller_event_t), 48);
#endif
SIG(zlink_poll, int, (zlink_pollitem_t *, int, long, zlink_config_result_t *));
SIG(zlink_poller_new, void *, (void));
SIG(zlink_poller_destroy, zlink_close_result_t, (void **));
SIG(zlink_poller_size, int, (void *, zlink_config_result_t *));
SIG(zlink_poller_add, zlink_config_result_t, (void *, void *, void *, short));
SIG(zlink_poller_modify, zlink_config_result_t, (void *, void *, short));
SIG(zlink_poller_remove, zlink_config_result_t, (void *, void *));
SIG(zlink_poller_add_fd, zlink_config_result_t, (void *, zlink_fd_t, void *, short));
SIG(zlink_poller_modify_fd, zlink_config_result_t, (void *, zlink_fd_t, short));
SIG(zlink_poller_remove_fd, zlink_config_result_t, (void *, zlink_fd_t));
SIG(zlink_poller_add_timer, zlink_config_result_t, (void *, void *, void *));
SIG(zlink_poller_remove_timer, zlink_config_result_t, (void *, void *));
SIG(zlink_poller_wait, int, (void *, zlink_poller_event_t *, int, long, zlink_config_result_t *));
SIG(zlink_timer_new, void *, (void));
SIG(zlink_timer_destroy, zlink_close_result_t, (void **));
SIG(zlink_timer_start, zlink_config_result_t, (void *, uint64_t, uint64_t));
SIG(zlink_timer_stop, zlink_config_result_t, (void *));
SIG(zlink_timer_recv, zlink_recv_result_t, (void *, uint64_t *, zlink_recv_flags_t));

/* Links and runs a few polling calls as an application would. */
static int polling_smoke(void)
{
    zlink_pollitem_t item;
    zlink_poller_event_t ev;
    zlink_config_result_t err = ZLINK_CONFIG_INTERNAL;
    void *poller = zlink_poller_new();
    void *timer = zlink_timer_new();
    uint64_t count = 0;
    int ok = poller != NULL && timer != NULL;

    memset(&item, 0, sizeof item);
    ok = ok && zlink_poll(&item, 1, 0, &err) == 0 && err == ZLINK_CONFIG_OK;
    ok = ok && zlink_poller_size(poller, NULL) == 0;
    ok = ok && zlink_poller_add_timer(poller, timer, NULL) == ZLINK_CONFIG_OK;
    ok = ok && zlink_timer_start(timer, 1000, 1) == ZLINK_CONFIG_OK;
    ok = ok && zlink_poller_wait(poller, &ev, 1, -1, NULL) == 1;
    ok = ok && ev.source_kind == ZLINK_POLLER_SOURCE_TIMER && ev.timer == timer;
    ok = ok && zlink_timer_recv(timer, &count, ZLINK_RECV_FLAGS_DONTWAIT) == ZLINK_RECV_OK;
    ok = ok && count == 1;
    ok = ok && zlink_poller_remove_timer(poller, timer) == ZLINK_CONFIG_OK;
    ok = ok && zlink_poller_destroy(&poller) == ZLINK_CLOSE_OK && poller == NULL;
    ok = ok && zlink_timer_destroy(&timer) == ZLINK_CLOSE_OK && timer == NULL;
    return ok;
}

/* --------------------------------------------------------- socket monitor */

PIN(ZLINK_EVENT_CONNECTED, 1u << 0);
PIN(ZLINK_EVENT_CONNECT_DELAYED, 1u << 1);
PIN(ZLINK_EVENT_CONNECT_RETRIED, 1u << 2);
PIN(ZLINK_EVENT_LISTENING, 1u << 3);
PIN(ZLINK_EVENT_BIND_FAILED, 1u << 4);
PIN(ZLINK_EVENT_ACCEPTED, 1u << 5);
PIN(ZLINK_EVENT_ACCEPT_FAILED, 1u << 6);
PIN(ZLINK_EVENT_CLOSED, 1u << 7);
PIN(ZLINK_EVENT_CLOSE_FAILED, 1u << 8);
PIN(ZLINK_EVENT_DISCONNECTED, 1u << 9);
PIN(ZLINK_EVENT_MONITOR_STOPPED, 1u << 10);
PIN(ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 1u << 11);
PIN(ZLINK_EVENT_CONNECTION_READY, 1u << 12);
PIN(ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, 1u << 13);
PIN(ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, 1u << 14);
PIN(ZLINK_EVENT_PEER_WEIGHT_CHANGED, 1u << 15);
PIN(ZLINK_EVENT_SEND_FLOW_PAUSED, 1u << 16);
PIN(ZLINK_EVENT_SEND_FLOW_RESUMED, 1u << 17);
PIN(ZLINK_EVENT_FLOW_STATE_STALE, 1u << 18);
PIN(ZLINK_EVENT_ALL, 0x7FFFFu);
PIN(ZLINK_DISCONNECT_UNKNOWN, 0);
PIN(ZLINK_DISCONNECT_HANDSHAKE_FAILED, 3);
PIN(ZLINK_DISCONNECT_TRANSPORT_ERROR, 4);
PIN(ZLINK_DISCONNECT_CTX_TERM, 5);
PIN(ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_HELLO, 0x10000013u);
PIN(ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_READY, 0x10000016u);
PIN(ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION, 0u);
PIN(ZLINK_MONITOR_TRANSPORT_LANE_COMPLETION, 1u);
PIN(ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE, 1u << 0);
PIN(ZLINK_MONITOR_EVENT_FLAG_SEND_FLOW_WRITABLE, 1u << 1);
PIN(ZLINK_MONITOR_EVENT_FLAG_FLOW_STATE_STALE_EPOCH, 1u << 3);
PIN(sizeof(zlink_monitor_config_t), 16);
PIN(offsetof(zlink_monitor_config_t, events), 0);
PIN(offsetof(zlink_monitor_config_t, reserved), 4);
PIN(offsetof(zlink_monitor_config_t, monitor_hwm_bytes), 8);
PIN(offsetof(zlink_monitor_event_t, event), 0);
PIN(offsetof(zlink_monitor_event_t, value), 8);
PIN(offsetof(zlink_monitor_event_t, rid), 16);
PIN(offsetof(zlink_monitor_event_t, local_addr), 272);
PIN(offsetof(zlink_monitor_event_t, remote_addr), 528);
PIN(offsetof(zlink_monitor_event_t, connection_id), 784);
PIN(offsetof(zlink_monitor_event_t, transport_lane), 792);
PIN(offsetof(zlink_monitor_event_t, flags), 796);
PIN(sizeof(zlink_monitor_event_t), 800);
PIN(ZLINK_MONITOR_EVENT_CHARGE, 864);
PIN(ZLINK_MONITOR_HWM_DFLT, 4096u * 864u);
PIN(ZLINK_MONITOR_STATUS_ABI_VERSION, 4u);
PIN(ZLINK_MONITOR_SOURCE_SOCKET, 1u);
PIN(ZLINK_MONITOR_STATE_READY, 1u);
PIN(ZLINK_MONITOR_STATE_BOUND_READY, 2u);
PIN(ZLINK_MONITOR_STATE_CLOSED, 8u);
PIN(ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS, 2u);
PIN(ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS, 4u);
PIN(ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUDGET, 8u);
PIN(ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUFFERS, 16u);
PIN(ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE, 32u);
PIN(offsetof(zlink_monitor_status_t, abi_version), 0);
PIN(offsetof(zlink_monitor_status_t, struct_size), 4);
PIN(offsetof(zlink_monitor_status_t, source_kind), 8);
PIN(offsetof(zlink_monitor_status_t, state_flags), 12);
PIN(offsetof(zlink_monitor_status_t, detail_flags), 16);
PIN(offsetof(zlink_monitor_status_t, reserved), 20);
PIN(offsetof(zlink_monitor_status_t, snd_pending_msgs), 24);
PIN(offsetof(zlink_monitor_status_t, snd_pending_bytes), 32);
PIN(offsetof(zlink_monitor_status_t, rcv_pending_msgs), 40);
PIN(offsetof(zlink_monitor_status_t, rcv_pending_bytes), 48);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_enabled), 56);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_profile), 60);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_planned_sndhwm_bytes), 64);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_planned_rcvhwm_bytes), 72);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_last_recalc_ms), 80);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_last_recalc_reason), 88);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_send_blocked_ratio_ppm), 92);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_deferred_sndhwm_bytes), 96);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_deferred_rcvhwm_bytes), 104);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_deferred_sndhwm_valid), 112);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_deferred_rcvhwm_valid), 116);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_applied_sndhwm_bytes), 120);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_applied_rcvhwm_bytes), 128);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_effective_sndbuf), 136);
PIN(offsetof(zlink_monitor_status_t, auto_hwm_effective_rcvbuf), 140);
PIN(offsetof(zlink_monitor_status_t, snd_bytes_in_flight), 144);
PIN(offsetof(zlink_monitor_status_t, rcv_bytes_in_flight), 152);
PIN(offsetof(zlink_monitor_status_t, minimum_core_message_charge_bytes), 160);
PIN(offsetof(zlink_monitor_status_t, oversize_message_admission_count), 168);
PIN(offsetof(zlink_monitor_status_t, oversize_message_admission_max_bytes), 176);
PIN(offsetof(zlink_monitor_status_t, flow_paused_connections), 184);
PIN(offsetof(zlink_monitor_status_t, flow_pause_applied_total), 192);
PIN(offsetof(zlink_monitor_status_t, flow_resume_applied_total), 200);
PIN(offsetof(zlink_monitor_status_t, flow_state_stale_total), 208);
PIN(offsetof(zlink_monitor_status_t, flow_pause_duration_ms), 216);
PIN(sizeof(zlink_monitor_status_t), 224);
SIG(zlink_socket_monitor_open, void *, (void *, const zlink_monitor_config_t *));
SIG(zlink_socket_monitor_recv, zlink_recv_result_t, (void *, zlink_monitor_event_t *, zlink_recv_flags_t));
SIG(zlink_monitor_status, zlink_config_result_t, (void *, zlink_monitor_status_t *));
SIG(zlink_monitor_close, zlink_close_result_t, (void **));

/* Links and runs the monitor calls as an application would. */
static int monitor_smoke(void)
{
    zlink_monitor_config_t cfg;
    zlink_monitor_event_t ev;
    zlink_monitor_status_t st;
    void *ctx = zlink_ctx_new();
    void *s = ctx != NULL ? zlink_socket(ctx, ZLINK_PAIR) : NULL;
    void *m;
    int ok;

    memset(&cfg, 0, sizeof cfg);
    cfg.events = ZLINK_EVENT_ALL;
    m = s != NULL ? zlink_socket_monitor_open(s, &cfg) : NULL;
    ok = m != NULL;
    ok = ok && zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT) == ZLINK_RECV_NO_DATA;
    ok = ok && zlink_monitor_status(m, &st) == ZLINK_CONFIG_OK;
    ok = ok && st.abi_version == ZLINK_MONITOR_STATUS_ABI_VERSION &&
         st.struct_size == sizeof st && st.source_kind == ZLINK_MONITOR_SOURCE_SOCKET;
    ok = ok && zlink_close(s) == ZLINK_CLOSE_OK;
    ok = ok && zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE) == ZLINK_RECV_OK &&
         ev.event == ZLINK_EVENT_MONITOR_STOPPED;
    ok = ok && zlink_monitor_close(&m) == ZLINK_CLOSE_OK && m == NULL;
    ok = ok && zlink_ctx_term(ctx) == ZLINK_CLOSE_OK;
    return ok;
}

/* ------------------------------------------------ framework (ZLINK_1.1)
 * zlink/framework.h, included by zlink.h: error kinds, the framework
 * result family (pinned with the result table above), durations, host
 * states and options, limits, the status and outcome structs, every
 * function's signature; framework_smoke() links and runs the calls that
 * need no peer. */

#ifndef ZLINK_FRAMEWORK_H
#error "zlink.h must include zlink/framework.h (guard ZLINK_FRAMEWORK_H)"
#endif

/* error kinds: 13, numbered as in every language */
PIN(sizeof(zlink_error_kind_t), 4);
PIN(ZLINK_ERROR_NOT_FOUND, 0);
PIN(ZLINK_ERROR_ALREADY_EXISTS, 1);
PIN(ZLINK_ERROR_TYPE_MISMATCH, 2);
PIN(ZLINK_ERROR_NOT_CONFIGURED, 3);
PIN(ZLINK_ERROR_REJECTED, 4);
PIN(ZLINK_ERROR_UNAVAILABLE, 5);
PIN(ZLINK_ERROR_CAPACITY_EXCEEDED, 6);
PIN(ZLINK_ERROR_DEADLINE_EXCEEDED, 7);
PIN(ZLINK_ERROR_SHUTTING_DOWN, 8);
PIN(ZLINK_ERROR_PROTOCOL_ERROR, 9);
PIN(ZLINK_ERROR_INVALID_OPERATION, 10);
PIN(ZLINK_ERROR_DATA_LOST, 11);
PIN(ZLINK_ERROR_INTERNAL_FAILURE, 12);
ZLINK_ERROR_KINDS(ROW_PIN)
PIN(0 ZLINK_ERROR_KINDS(COUNT_ROW), 13);

/* zlink_fw_result_t: 800 + kind, and three results that are no kind */
PIN(sizeof(zlink_fw_result_t), 4);
PIN(ZLINK_FW_OK, 0);
PIN(ZLINK_FW_NOT_FOUND, 800);
PIN(ZLINK_FW_ALREADY_EXISTS, 801);
PIN(ZLINK_FW_TYPE_MISMATCH, 802);
PIN(ZLINK_FW_NOT_CONFIGURED, 803);
PIN(ZLINK_FW_REJECTED, 804);
PIN(ZLINK_FW_UNAVAILABLE, 805);
PIN(ZLINK_FW_CAPACITY_EXCEEDED, 806);
PIN(ZLINK_FW_DEADLINE_EXCEEDED, 807);
PIN(ZLINK_FW_SHUTTING_DOWN, 808);
PIN(ZLINK_FW_PROTOCOL_ERROR, 809);
PIN(ZLINK_FW_INVALID_OPERATION, 810);
PIN(ZLINK_FW_DATA_LOST, 811);
PIN(ZLINK_FW_INTERNAL_FAILURE, 812);
PIN(ZLINK_FW_CANCELLED, 820);
PIN(ZLINK_FW_INVALID_ARGUMENT, 830);
PIN(ZLINK_FW_INVALID_HANDLE, 831);
PIN(ZLINK_FW_KIND_BASE, 800);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_NOT_FOUND, ZLINK_FW_NOT_FOUND);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_ALREADY_EXISTS, ZLINK_FW_ALREADY_EXISTS);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_TYPE_MISMATCH, ZLINK_FW_TYPE_MISMATCH);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_NOT_CONFIGURED, ZLINK_FW_NOT_CONFIGURED);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_REJECTED, ZLINK_FW_REJECTED);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_UNAVAILABLE, ZLINK_FW_UNAVAILABLE);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_CAPACITY_EXCEEDED, ZLINK_FW_CAPACITY_EXCEEDED);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_DEADLINE_EXCEEDED, ZLINK_FW_DEADLINE_EXCEEDED);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_SHUTTING_DOWN, ZLINK_FW_SHUTTING_DOWN);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_PROTOCOL_ERROR, ZLINK_FW_PROTOCOL_ERROR);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_INVALID_OPERATION, ZLINK_FW_INVALID_OPERATION);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_DATA_LOST, ZLINK_FW_DATA_LOST);
PIN(ZLINK_FW_KIND_BASE + ZLINK_ERROR_INTERNAL_FAILURE, ZLINK_FW_INTERNAL_FAILURE);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_NOT_FOUND), 1);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_INTERNAL_FAILURE), 1);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_OK), 0);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_CANCELLED), 0);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_INVALID_ARGUMENT), 0);
PIN(ZLINK_FW_IS_KIND(ZLINK_FW_INVALID_HANDLE), 0);
PIN(ZLINK_FW_KIND_OF(ZLINK_FW_DEADLINE_EXCEEDED), ZLINK_ERROR_DEADLINE_EXCEEDED);
PIN(ZLINK_FW_KIND_OF(ZLINK_FW_INTERNAL_FAILURE), ZLINK_ERROR_INTERNAL_FAILURE);

/* durations */
PIN(ZLINK_DURATION_INFINITE, INT64_MAX);
PIN(ZLINK_MS(1), 1000000);
PIN(ZLINK_MS(30000), 30000000000LL);
PIN(sizeof(ZLINK_MS(1)), sizeof(int64_t));

/* host states and options */
PIN(sizeof(zlink_host_state_t), 4);
PIN(ZLINK_HOST_PREPARING, 0);
PIN(ZLINK_HOST_SERVING, 1);
PIN(ZLINK_HOST_DRAINING, 2);
PIN(ZLINK_HOST_STOPPED, 3);
PIN(ZLINK_HOST_FAILED, 4);
PIN(ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, 1);
PIN(ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT, 2);
PIN(ZLINK_HOST_OPT_SHUTDOWN_TIMEOUT, 3);
PIN(ZLINK_HOST_OPT_ADMISSION_WAITERS, 4);
PIN(ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 5);
PIN(ZLINK_HOST_OPT_HANDLER_THREADS, 6);
/* the job queue (seed 001): options, profiles, pressure states */
PIN(ZLINK_HOST_OPT_JOB_QUEUE_PROFILE, 7);
PIN(ZLINK_HOST_OPT_PAUSE_PERCENT, 8);
PIN(ZLINK_HOST_OPT_RESUME_PERCENT, 9);
PIN(ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS, 10);
PIN(ZLINK_HOST_OPT_CORE_HWM_PROFILE, 11);
PIN(ZLINK_HOST_OPT_CORE_BUDGET_BYTES, 12);
PIN(ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES, 13);
PIN(sizeof(zlink_job_queue_profile_t), 4);
PIN(ZLINK_JOB_QUEUE_COMPACT, 0);
PIN(ZLINK_JOB_QUEUE_LOW_LATENCY, 1);
PIN(ZLINK_JOB_QUEUE_BALANCED, 2);
PIN(ZLINK_JOB_QUEUE_THROUGHPUT, 3);
PIN(sizeof(zlink_pressure_state_t), 4);
PIN(ZLINK_PRESSURE_RUNNING, 0);
PIN(ZLINK_PRESSURE_PAUSED, 1);
/* zlink_host_capacity_t: the capacity section, sized by the caller */
PIN(offsetof(zlink_host_capacity_t, struct_size), 0);
PIN(offsetof(zlink_host_capacity_t, profile), 4);
PIN(offsetof(zlink_host_capacity_t, manual_max), 8);
PIN(offsetof(zlink_host_capacity_t, pause_percent), 16);
PIN(offsetof(zlink_host_capacity_t, resume_percent), 20);
PIN(offsetof(zlink_host_capacity_t, effective_processors), 24);
PIN(offsetof(zlink_host_capacity_t, effective_max), 32);
PIN(offsetof(zlink_host_capacity_t, pause_count), 40);
PIN(offsetof(zlink_host_capacity_t, resume_count), 48);
PIN(offsetof(zlink_host_capacity_t, reserved_supply_permits), 56);
PIN(offsetof(zlink_host_capacity_t, queued_jobs), 64);
PIN(offsetof(zlink_host_capacity_t, permits_in_use), 72);
PIN(offsetof(zlink_host_capacity_t, peak_permits_in_use), 80);
PIN(offsetof(zlink_host_capacity_t, pressure_state), 88);
PIN(offsetof(zlink_host_capacity_t, reserved0), 92);
PIN(offsetof(zlink_host_capacity_t, current_pause_ns), 96);
PIN(offsetof(zlink_host_capacity_t, cumulative_pause_ns), 104);
PIN(offsetof(zlink_host_capacity_t, transitions_paused), 112);
PIN(offsetof(zlink_host_capacity_t, transitions_running), 120);
PIN(offsetof(zlink_host_capacity_t, capacity_waiters), 128);
PIN(offsetof(zlink_host_capacity_t, capacity_waits), 136);
PIN(offsetof(zlink_host_capacity_t, capacity_wait_ns), 144);
PIN(offsetof(zlink_host_capacity_t, flow_state_config_failures), 152);
PIN(offsetof(zlink_host_capacity_t, reserved), 160);
PIN(sizeof(((zlink_host_capacity_t *)0)->reserved), 64);
PIN(sizeof(zlink_host_capacity_t), 224);
/* zlink_owner_status_t: an owner's queue, sized by the caller */
PIN(offsetof(zlink_owner_status_t, struct_size), 0);
PIN(offsetof(zlink_owner_status_t, busy), 4);
PIN(offsetof(zlink_owner_status_t, accepted_seq), 8);
PIN(offsetof(zlink_owner_status_t, queued_records), 16);
PIN(offsetof(zlink_owner_status_t, queued_bytes), 24);
PIN(offsetof(zlink_owner_status_t, running_records), 32);
PIN(offsetof(zlink_owner_status_t, running_bytes), 40);
PIN(offsetof(zlink_owner_status_t, handled), 48);
PIN(offsetof(zlink_owner_status_t, reserved), 56);
PIN(sizeof(zlink_owner_status_t), 120);
PIN(ZLINK_NODE_OPT_SEND_TIMEOUT, 1);
PIN(ZLINK_NODE_OPT_REQUEST_TIMEOUT, 2);
PIN(ZLINK_NODE_OPT_SNDHWM, 3);
PIN(ZLINK_NODE_OPT_RCVHWM, 4);
PIN(ZLINK_DEFAULT_REQUEST_TIMEOUT, 30000000000LL);
PIN(ZLINK_DEFAULT_SEND_TIMEOUT, 1000000000LL);
PIN(ZLINK_DEFAULT_SHUTDOWN_TIMEOUT, 30000000000LL);
PIN(ZLINK_ADMISSION_WAITERS, 1024);
PIN(ZLINK_DISPATCHER_CAPACITY, 4096);
PIN(ZLINK_LIVENESS_PROBE_INTERVAL, 5000000000LL);
PIN(ZLINK_LIVENESS_DEADLINE, 15000000000LL);
PIN(ZLINK_METADATA_MAX, 1024);

/* handlers */
PIN(sizeof(zlink_owner_kind_t), 4);
PIN(ZLINK_OWNER_CHANNEL, 1);
PIN(ZLINK_OWNER_NODE, 2);
PIN(sizeof(zlink_handler_flags_t), 4);
PIN(ZLINK_HANDLER_HANDOFF, 1);
PIN(sizeof(zlink_message_kind_t), 4);
PIN(ZLINK_MESSAGE_SEND, 1);
PIN(ZLINK_MESSAGE_REQUEST, 2);

/* zlink_host_status_t: a snapshot the caller sizes (struct_size) */
PIN(offsetof(zlink_host_status_t, struct_size), 0);
PIN(offsetof(zlink_host_status_t, state), 4);
PIN(offsetof(zlink_host_status_t, is_ready), 8);
PIN(offsetof(zlink_host_status_t, accepting_work), 12);
PIN(offsetof(zlink_host_status_t, requests_inflight), 16);
PIN(offsetof(zlink_host_status_t, oneway_waiting), 24);
PIN(offsetof(zlink_host_status_t, admission_waiters_max), 32);
PIN(offsetof(zlink_host_status_t, dispatcher_in_use), 40);
PIN(offsetof(zlink_host_status_t, dispatcher_capacity), 48);
PIN(offsetof(zlink_host_status_t, turns_running), 56);
PIN(offsetof(zlink_host_status_t, turns_queued), 64);
PIN(offsetof(zlink_host_status_t, max_queued_jobs), 72);
PIN(offsetof(zlink_host_status_t, permits_in_use), 80);
PIN(offsetof(zlink_host_status_t, reserved), 88);
PIN(sizeof(((zlink_host_status_t *)0)->reserved), 64);
PIN(sizeof(zlink_host_status_t), 152);

/* zlink_outcome_t */
PIN(offsetof(zlink_outcome_t, struct_size), 0);
PIN(offsetof(zlink_outcome_t, result), 4);
PIN(offsetof(zlink_outcome_t, remote_code), 8);
PIN(offsetof(zlink_outcome_t, reserved), 12);
PIN(offsetof(zlink_outcome_t, message), 16);
#if UINTPTR_MAX > 0xFFFFFFFFu
PIN(offsetof(zlink_outcome_t, payload), 24);
PIN(offsetof(zlink_outcome_t, payload_size), 32);
PIN(offsetof(zlink_outcome_t, packet), 40);
PIN(offsetof(zlink_outcome_t, content_type), 48);
PIN(sizeof(zlink_outcome_t), 56);
#endif

/* callbacks: an application function of each type */
static void on_turn(zlink_turn_t *turn, void *user)
{
    (void)turn;
    (void)user;
}
static zlink_handler_fn const handler_fn_check = on_turn;
static void on_outcome(zlink_call_t *call, const zlink_outcome_t *outcome, void *user)
{
    (void)call;
    (void)outcome;
    (void)user;
}
static zlink_completion_fn const completion_fn_check = on_outcome;

SIG(zlink_host_new, zlink_host_t *, (const char *, zlink_fw_result_t *));
SIG(zlink_host_set_option, zlink_fw_result_t, (zlink_host_t *, int, int64_t));
SIG(zlink_host_get_option, zlink_fw_result_t, (zlink_host_t *, int, int64_t *));
SIG(zlink_host_add_cs_server, zlink_fw_result_t, (zlink_host_t *, const char *, const char *));
SIG(zlink_host_add_cs_client, zlink_fw_result_t, (zlink_host_t *, const char *, const char *));
SIG(zlink_channel_set_option, zlink_fw_result_t, (zlink_host_t *, const char *, int, int64_t));
SIG(zlink_channel_get_option, zlink_fw_result_t, (zlink_host_t *, const char *, int, int64_t *));
SIG(zlink_host_add_mesh_node, zlink_fw_result_t, (zlink_host_t *, const char *, const void *, size_t, const char *));
SIG(zlink_mesh_connect, zlink_fw_result_t, (zlink_host_t *, const char *, const char *, const void *, size_t));
SIG(zlink_mesh_set_option, zlink_fw_result_t, (zlink_host_t *, const char *, int, int64_t));
SIG(zlink_mesh_get_option, zlink_fw_result_t, (zlink_host_t *, const char *, int, int64_t *));
SIG(zlink_mesh_add_channel_client, zlink_fw_result_t, (zlink_host_t *, const char *, const char *));
SIG(zlink_mesh_add_channel_server, zlink_fw_result_t, (zlink_host_t *, const char *, const char *, int));
SIG(zlink_mesh_set_weight, zlink_fw_result_t, (zlink_host_t *, const char *, const char *, int));
SIG(zlink_host_endpoint, zlink_fw_result_t, (zlink_host_t *, const char *, char *, size_t));
SIG(zlink_mesh_ready_peers, int, (zlink_host_t *, const char *, zlink_fw_result_t *));
SIG(zlink_host_add_handler, zlink_fw_result_t, (zlink_host_t *, zlink_owner_kind_t, const char *, zlink_message_kind_t, const char *, zlink_handler_fn, void *));
SIG(zlink_host_add_handler_ex, zlink_fw_result_t, (zlink_host_t *, zlink_owner_kind_t, const char *, zlink_message_kind_t, const char *, zlink_handler_fn, void *, uint32_t));
SIG(zlink_host_start, zlink_fw_result_t, (zlink_host_t *));
SIG(zlink_host_shutdown, zlink_fw_result_t, (zlink_host_t *, int64_t));
SIG(zlink_host_destroy, zlink_fw_result_t, (zlink_host_t *));
SIG(zlink_host_state, int, (zlink_host_t *));
SIG(zlink_host_status, zlink_fw_result_t, (zlink_host_t *, zlink_host_status_t *));
SIG(zlink_host_metric, zlink_fw_result_t, (zlink_host_t *, const char *, const char *, int64_t *));
SIG(zlink_host_capacity, zlink_fw_result_t, (zlink_host_t *, zlink_host_capacity_t *));
SIG(zlink_host_reset_metrics, zlink_fw_result_t, (zlink_host_t *));
SIG(zlink_host_owner_status, zlink_fw_result_t,
    (zlink_host_t *, zlink_owner_kind_t, const char *, zlink_owner_status_t *));
SIG(zlink_turn_sequence, uint64_t, (zlink_turn_t *));
SIG(zlink_call_send_to_channel, zlink_call_t *, (zlink_host_t *, const char *, zlink_fw_result_t *));
SIG(zlink_call_request_to_channel, zlink_call_t *, (zlink_host_t *, const char *, zlink_fw_result_t *));
SIG(zlink_call_send_to_node, zlink_call_t *, (zlink_host_t *, const char *, const void *, size_t, zlink_fw_result_t *));
SIG(zlink_call_request_to_node, zlink_call_t *, (zlink_host_t *, const char *, const void *, size_t, zlink_fw_result_t *));
SIG(zlink_call_set_payload, zlink_fw_result_t, (zlink_call_t *, const char *, const char *, const void *, size_t));
SIG(zlink_call_set_timeout, zlink_fw_result_t, (zlink_call_t *, int64_t));
SIG(zlink_call_set_metadata, zlink_fw_result_t, (zlink_call_t *, const char *, const char *));
SIG(zlink_call_start, zlink_fw_result_t, (zlink_call_t *, zlink_completion_fn, void *));
SIG(zlink_call_wait, zlink_fw_result_t, (zlink_call_t *, zlink_outcome_t *));
SIG(zlink_call_start_held, zlink_fw_result_t, (zlink_call_t *, zlink_completion_fn, void *));
SIG(zlink_call_callback_done, zlink_fw_result_t, (zlink_call_t *));
SIG(zlink_call_yield, zlink_fw_result_t, (zlink_call_t *, zlink_completion_fn, void *));
SIG(zlink_call_cancel, zlink_fw_result_t, (zlink_call_t *));
SIG(zlink_call_release, zlink_fw_result_t, (zlink_call_t *));
SIG(zlink_turn_kind, int, (zlink_turn_t *));
SIG(zlink_turn_packet, const char *, (zlink_turn_t *));
SIG(zlink_turn_content_type, const char *, (zlink_turn_t *));
SIG(zlink_turn_payload, const void *, (zlink_turn_t *, size_t *));
SIG(zlink_turn_metadata, const char *, (zlink_turn_t *, const char *));
SIG(zlink_turn_source, zlink_fw_result_t, (zlink_turn_t *, zlink_routing_id_t *));
SIG(zlink_turn_reply, zlink_call_t *, (zlink_turn_t *, zlink_fw_result_t *));
SIG(zlink_turn_reply_error, zlink_call_t *, (zlink_turn_t *, zlink_error_kind_t, const char *, zlink_fw_result_t *));
SIG(zlink_turn_end, zlink_fw_result_t, (zlink_turn_t *, int, const char *));
SIG(zlink_turn_respond, zlink_fw_result_t,
    (zlink_turn_t *, const char *, const char *, const void *, size_t));
SIG(zlink_runtime_context_enter, zlink_fw_result_t, (void));
SIG(zlink_runtime_context_leave, zlink_fw_result_t, (void));
SIG(zlink_in_runtime_context, int, (void));
SIG(zlink_error_kind_name, const char *, (int));

/* Links and runs the framework calls that need no peer, as an application
 * would: a host in PREPARING, its options and status, a call built and
 * released, the runtime-context flag and the error kind names. */
static int framework_smoke(void)
{
    static const char *const kind_names[] = {
        "NotFound",    "AlreadyExists",    "TypeMismatch",     "NotConfigured",
        "Rejected",    "Unavailable",      "CapacityExceeded", "DeadlineExceeded",
        "ShuttingDown", "ProtocolError",   "InvalidOperation", "DataLost",
        "InternalFailure"};
    zlink_fw_result_t r = ZLINK_FW_INTERNAL_FAILURE;
    zlink_host_t *host = zlink_host_new("header-c", &r);
    zlink_host_status_t st;
    zlink_outcome_t out;
    zlink_call_t *call;
    int64_t v = 0;
    int ok = host != NULL && r == ZLINK_FW_OK;
    int k;

    for (k = 0; k < 13; k++)
        ok = ok && strcmp(zlink_error_kind_name(k), kind_names[k]) == 0;
    ok = ok && strcmp(zlink_error_kind_name(13), "unknown") == 0;
    ok = ok && zlink_host_state(host) == ZLINK_HOST_PREPARING;
    ok = ok && zlink_host_get_option(host, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, &v) ==
                   ZLINK_FW_OK &&
         v == ZLINK_DEFAULT_REQUEST_TIMEOUT;
    /* 400 us rounds up to 1 ms; INFINITE is refused and changes nothing */
    ok = ok && zlink_host_set_option(host, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT, 400000) ==
                   ZLINK_FW_OK;
    ok = ok && zlink_host_get_option(host, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT, &v) ==
                   ZLINK_FW_OK &&
         v == ZLINK_MS(1);
    ok = ok && zlink_host_set_option(host, ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT,
                                     ZLINK_DURATION_INFINITE) == ZLINK_FW_INVALID_ARGUMENT;
    ok = ok && zlink_host_get_option(host, ZLINK_HOST_OPT_ADMISSION_WAITERS, &v) ==
                   ZLINK_FW_OK &&
         v == ZLINK_ADMISSION_WAITERS;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    ok = ok && zlink_host_status(host, &st) == ZLINK_FW_OK && st.state == ZLINK_HOST_PREPARING &&
         st.dispatcher_capacity == ZLINK_DISPATCHER_CAPACITY &&
         st.admission_waiters_max == ZLINK_ADMISSION_WAITERS;
    call = zlink_call_request_to_channel(host, "svc", &r);
    ok = ok && call != NULL && r == ZLINK_FW_OK;
    ok = ok && zlink_call_set_payload(call, "p", "", "x", 1) == ZLINK_FW_OK;
    ok = ok && zlink_call_set_timeout(call, ZLINK_MS(5)) == ZLINK_FW_OK;
    ok = ok && zlink_call_set_metadata(call, "k", "v") == ZLINK_FW_OK;
    /* a synchronous terminator in a runtime context fails at once */
    ok = ok && zlink_in_runtime_context() == 0;
    ok = ok && zlink_runtime_context_enter() == ZLINK_FW_OK && zlink_in_runtime_context() == 1;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    ok = ok && zlink_call_wait(call, &out) == ZLINK_FW_INVALID_OPERATION;
    ok = ok && zlink_runtime_context_leave() == ZLINK_FW_OK && zlink_in_runtime_context() == 0;
    ok = ok && zlink_runtime_context_leave() == ZLINK_FW_INVALID_OPERATION;
    ok = ok && zlink_call_yield(call, completion_fn_check, NULL) == ZLINK_FW_INVALID_OPERATION;
    ok = ok && zlink_call_cancel(call) == ZLINK_FW_OK;
    ok = ok && zlink_call_release(call) == ZLINK_FW_OK;
    ok = ok && zlink_call_release(call) == ZLINK_FW_INVALID_HANDLE;
    ok = ok && zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST,
                                      "p", handler_fn_check, NULL) == ZLINK_FW_OK;
    ok = ok && zlink_host_destroy(host) == ZLINK_FW_OK;
    ok = ok && zlink_host_state(host) == -1;
    return ok;
}

/* ------------------------------------------------------------------- run */

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

int main(void)
{
    int major = -1, minor = -1, patch = -1;
    size_t i;

    zlink_version(&major, &minor, &patch);
    printf("# header %d.%d.%d, library %d.%d.%d\n", ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR,
           ZLINK_VERSION_PATCH, major, minor, patch);
    CHECK(major == ZLINK_VERSION_MAJOR);
    CHECK(minor == ZLINK_VERSION_MINOR);
    CHECK(patch == ZLINK_VERSION_PATCH);
    CHECK(ZLINK_MAKE_VERSION(major, minor, patch) == ZLINK_VERSION);

    for (i = 0; i < sizeof errnos / sizeof errnos[0]; i++) {
        const char *text = zlink_strerror(errnos[i].value);
        CHECK(errnos[i].value > 0);
        CHECK(text != NULL && text[0] != '\0');
        if (text == NULL || text[0] == '\0')
            fprintf(stderr, "  zlink_strerror(%s) is empty\n", errnos[i].name);
    }
    /* ZLink's own errnos must have their own text, not a generic fallback. */
    CHECK(strcmp(zlink_strerror(ETERM), zlink_strerror(EFSM)) != 0);
    CHECK(zlink_strerror(-12345) != NULL);
    /* The library's texts and names are the header's rows. */
    for (i = 0; i < sizeof errno_texts / sizeof errno_texts[0]; i++)
        CHECK(strcmp(zlink_strerror(errno_texts[i].value), errno_texts[i].text) == 0);
    /* 0 is "OK"; ZLINK_SEND_TERMINAL (an unnamed family) reads as the
     * receive result that shares its value. */
    for (i = 0; i < sizeof result_rows / sizeof result_rows[0]; i++) {
        const char *name = zlink_result_name(result_rows[i].value);
        const int send_terminal = result_rows[i].value == ZLINK_SEND_TERMINAL &&
                                  strcmp(result_rows[i].name, "ZLINK_SEND_TERMINAL") == 0;
        const char *want = result_rows[i].value == 0 ? "OK"
                           : send_terminal          ? "ZLINK_RECV_BUSY"
                                                    : result_rows[i].name;
        CHECK(name != NULL && strcmp(name, want) == 0);
    }
    CHECK(strcmp(zlink_result_name(ETERM), "ETERM") == 0);
    CHECK(strcmp(zlink_result_name(-1), "unknown result") == 0);
    (void)zlink_errno();

    CHECK(free_fn_check == free_with_hint);
    CHECK(monitor_smoke());
    CHECK(polling_smoke());
    CHECK(framework_smoke());

    if (failures != 0) {
        printf("not ok - test_header_c (%d failed checks)\n", failures);
        return 1;
    }
    printf("ok - test_header_c\n");
    return 0;
}
