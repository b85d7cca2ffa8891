/*
 * zlink.h — the public C ABI of ZLink.
 *
 * This is the only header an application includes. It compiles as C11 and as
 * C++ (every declaration is inside extern "C"). Everything a binding needs is
 * here: version macros, the typed result families with their fixed values,
 * the extended errno numbers, options, the message type and the socket calls.
 *
 * ABI rules (see doc/abi.md):
 *  - The version below is the single source; the build reads it from here.
 *  - Exported symbols carry a version node: ZLINK_1.0 for the Core, ZLINK_1.1
 *    for the framework runtime (zlink/framework.h) (abi/zlink.map).
 *  - Result enum values never change once published.
 *  - Public structs that may grow carry a struct_size field.
 */
#ifndef ZLINK_H
#define ZLINK_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

#define ZLINK_VERSION_MAJOR 1
#define ZLINK_VERSION_MINOR 4
#define ZLINK_VERSION_PATCH 0

#define ZLINK_MAKE_VERSION(major, minor, patch) \
    ((major) * 10000 + (minor) * 100 + (patch))
#define ZLINK_VERSION \
    ZLINK_MAKE_VERSION(ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR, ZLINK_VERSION_PATCH)

/* ------------------------------------------------------------ export macro */

#if defined(_WIN32)
#  if defined(ZLINK_BUILDING)
#    define ZLINK_EXPORT __declspec(dllexport)
#  else
#    define ZLINK_EXPORT __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define ZLINK_EXPORT __attribute__((visibility("default")))
#else
#  define ZLINK_EXPORT
#endif

/* ------------------------------------------------------------------ errno */

/* Base of the errno numbers ZLink defines itself. */
#define ZLINK_HAUSNUMERO 156384712

/* Used only where the platform lacks the name (never on Linux). */
#ifndef ENOTSUP
#define ENOTSUP (ZLINK_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZLINK_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZLINK_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZLINK_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZLINK_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZLINK_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZLINK_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZLINK_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZLINK_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZLINK_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZLINK_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZLINK_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZLINK_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZLINK_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZLINK_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZLINK_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZLINK_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZLINK_HAUSNUMERO + 18)
#endif
/* Always available: the platform value where it exists, ours otherwise. */
#ifndef ESTALE
#define ESTALE (ZLINK_HAUSNUMERO + 19)
#endif
#ifndef EALREADY
#define EALREADY (ZLINK_HAUSNUMERO + 20)
#endif
#ifndef EDEADLK
#define EDEADLK (ZLINK_HAUSNUMERO + 21)
#endif
#ifndef ESHUTDOWN
#define ESHUTDOWN (ZLINK_HAUSNUMERO + 22)
#endif
#ifndef EPROTOTYPE
#define EPROTOTYPE (ZLINK_HAUSNUMERO + 23)
#endif
#ifndef EOVERFLOW
#define EOVERFLOW (ZLINK_HAUSNUMERO + 24)
#endif
/* ZLink's own conditions; the same value on every platform. */
#define EFSM (ZLINK_HAUSNUMERO + 51)
#define ENOCOMPATPROTO (ZLINK_HAUSNUMERO + 52)
#define ETERM (ZLINK_HAUSNUMERO + 53)
#define EMTHREAD (ZLINK_HAUSNUMERO + 54)

/*
 * ZLINK_ERRNO_TEXTS(X): every errno the ZLink API reports, one row
 * X(name, text) each; text is what zlink_strerror(name) returns, the same on
 * every platform. Bindings map errno by name, never by number: the numbers
 * of the platform names differ between platforms.
 */
#define ZLINK_ERRNO_TEXTS(X)                                        \
    X(EPERM, "Operation not permitted")                             \
    X(ENOENT, "No such target or endpoint")                         \
    X(EINTR, "Interrupted call")                                    \
    X(EIO, "Input/output error")                                    \
    X(EAGAIN, "Resource temporarily unavailable")                   \
    X(ENOMEM, "Out of memory")                                      \
    X(EACCES, "Not admitted or not authorized")                     \
    X(EFAULT, "Invalid handle or pointer")                          \
    X(EBUSY, "Object is busy")                                      \
    X(EEXIST, "Already exists")                                     \
    X(EINVAL, "Invalid argument")                                   \
    X(EMFILE, "Too many sockets or open files")                     \
    X(ENAMETOOLONG, "Endpoint name too long")                       \
    X(ENODEV, "No such device or host")                             \
    X(EPROTO, "Protocol error")                                     \
    X(ECANCELED, "Operation canceled")                              \
    X(ENOTSUP, "Operation not supported")                           \
    X(EPROTONOSUPPORT, "Transport or protocol not supported")       \
    X(ENOBUFS, "No buffer space available")                         \
    X(ENETDOWN, "Network is down")                                  \
    X(EADDRINUSE, "Address already in use")                         \
    X(EADDRNOTAVAIL, "Address not available")                       \
    X(ECONNREFUSED, "Connection refused")                           \
    X(EINPROGRESS, "Operation in progress")                         \
    X(ENOTSOCK, "Not a socket")                                     \
    X(EMSGSIZE, "Message too long")                                 \
    X(EAFNOSUPPORT, "Address family not supported")                 \
    X(ENETUNREACH, "Network is unreachable")                        \
    X(ECONNABORTED, "Connection aborted")                           \
    X(ECONNRESET, "Connection reset by peer")                       \
    X(ENOTCONN, "Not connected")                                    \
    X(ETIMEDOUT, "Timed out")                                       \
    X(EHOSTUNREACH, "Host is unreachable")                          \
    X(ENETRESET, "Connection reset by network")                     \
    X(ESTALE, "Stale handle")                                       \
    X(EALREADY, "Operation already in progress")                    \
    X(EDEADLK, "Call would deadlock")                               \
    X(ESHUTDOWN, "Object is shutting down")                         \
    X(EPROTOTYPE, "Wrong socket type for this operation")           \
    X(EOVERFLOW, "Identifier space exhausted")                      \
    X(EFSM, "Operation not valid in the current state")             \
    X(ENOCOMPATPROTO, "Incompatible protocol")                      \
    X(ETERM, "Context was terminated")                              \
    X(EMTHREAD, "Call not allowed on this thread")

/* ---------------------------------------------------------- result families
 *
 * Every call returns a typed result: 0 means success, any other value names
 * the failure and zlink_errno() holds the matching errno (see doc/errors.md).
 * Each family lives in its own numeric range so a value names its family.
 *
 * The result table. Families, values, names and the errno mapping are
 * written once, here, as X-macros; the enums below are generated from them,
 * and so are zlink_result_name(), the library's errno -> result mapping and
 * results.json (`bazel build //abi:results_json`), from which the language
 * bindings generate their error types.
 *
 *  ZLINK_<F>_RESULTS(X)    one row X(name, value) per value of family F.
 *  ZLINK_<F>_ERRNO_MAP(X)  one row X(errno, result) per errno that maps to a
 *                          result of F; an errno without a row maps to the
 *                          family's fallback. errno itself is kept as it was.
 *  ZLINK_RESULT_FAMILIES(X)
 *      one row X(family, type, RESULTS, ERRNO_MAP, fallback, named) per
 *      family: its name as a string, its enum type, its two tables, the
 *      result of an unmapped errno, and named = 1 when zlink_result_name()
 *      names the family's values (0 for send_complete only, see there).
 *
 * A published row never changes (doc/abi.md): a new value is a new row at
 * the end of its family, pinned in both header tests.
 */

/* Submits: zlink_send, zlink_send_rid, zlink_request, zlink_reply,
 * zlink_reply_error, zlink_publish. */
#define ZLINK_SUBMIT_RESULTS(X)                 \
    X(ZLINK_SUBMIT_OK, 0)                       \
    X(ZLINK_SUBMIT_BACKPRESSURED, 1)            \
    X(ZLINK_SUBMIT_NOT_CONNECTED, 2)            \
    X(ZLINK_SUBMIT_NOT_FOUND, 3)                \
    X(ZLINK_SUBMIT_TERMINATED, 4)               \
    X(ZLINK_SUBMIT_INVALID_HANDLE, 5)           \
    X(ZLINK_SUBMIT_INVALID_ARGUMENT, 6)         \
    X(ZLINK_SUBMIT_NOT_SUPPORTED, 7)            \
    X(ZLINK_SUBMIT_INVALID_STATE, 8)            \
    X(ZLINK_SUBMIT_THREAD_VIOLATION, 9)         \
    X(ZLINK_SUBMIT_OUT_OF_MEMORY, 10)           \
    X(ZLINK_SUBMIT_SEQ_EXHAUSTED, 11)           \
    X(ZLINK_SUBMIT_INTERNAL, 12)                \
    X(ZLINK_SUBMIT_NOT_ADMITTED, 13)

#define ZLINK_SUBMIT_ERRNO_MAP(X)                       \
    X(EAGAIN, ZLINK_SUBMIT_BACKPRESSURED)               \
    X(ETIMEDOUT, ZLINK_SUBMIT_BACKPRESSURED)            \
    X(ENOBUFS, ZLINK_SUBMIT_BACKPRESSURED)              \
    X(ENOTCONN, ZLINK_SUBMIT_NOT_CONNECTED)             \
    X(EHOSTUNREACH, ZLINK_SUBMIT_NOT_CONNECTED)         \
    X(ENOENT, ZLINK_SUBMIT_NOT_FOUND)                   \
    X(ETERM, ZLINK_SUBMIT_TERMINATED)                   \
    X(ESHUTDOWN, ZLINK_SUBMIT_TERMINATED)               \
    X(EFAULT, ZLINK_SUBMIT_INVALID_HANDLE)              \
    X(EINVAL, ZLINK_SUBMIT_INVALID_ARGUMENT)            \
    X(EMSGSIZE, ZLINK_SUBMIT_INVALID_ARGUMENT)          \
    X(ENOTSUP, ZLINK_SUBMIT_NOT_SUPPORTED)              \
    X(EBUSY, ZLINK_SUBMIT_INVALID_STATE)                \
    X(ESTALE, ZLINK_SUBMIT_INVALID_STATE)               \
    X(EALREADY, ZLINK_SUBMIT_INVALID_STATE)             \
    X(EDEADLK, ZLINK_SUBMIT_THREAD_VIOLATION)           \
    X(EPERM, ZLINK_SUBMIT_THREAD_VIOLATION)             \
    X(EMTHREAD, ZLINK_SUBMIT_THREAD_VIOLATION)          \
    X(ENOMEM, ZLINK_SUBMIT_OUT_OF_MEMORY)               \
    X(EOVERFLOW, ZLINK_SUBMIT_SEQ_EXHAUSTED)            \
    X(EACCES, ZLINK_SUBMIT_NOT_ADMITTED)                \
    X(ECONNREFUSED, ZLINK_SUBMIT_NOT_ADMITTED)          \
    X(EPROTOTYPE, ZLINK_SUBMIT_NOT_ADMITTED)

/* Request completions: request_result of a REQUEST completion record; an
 * error reply's errno is mapped with the errno map. */
#define ZLINK_REQUEST_RESULTS(X)                \
    X(ZLINK_REQUEST_OK, 0)                      \
    X(ZLINK_REQUEST_TIMED_OUT, 101)             \
    X(ZLINK_REQUEST_NOT_FOUND, 102)             \
    X(ZLINK_REQUEST_TERMINATED, 103)            \
    X(ZLINK_REQUEST_PROTOCOL_ERROR, 104)        \
    X(ZLINK_REQUEST_INTERNAL, 105)              \
    X(ZLINK_REQUEST_REJECTED, 106)              \
    X(ZLINK_REQUEST_CONFLICT, 107)              \
    X(ZLINK_REQUEST_BUSY, 108)                  \
    X(ZLINK_REQUEST_NOT_CONNECTED, 109)         \
    X(ZLINK_REQUEST_INVALID_ARGUMENT, 110)      \
    X(ZLINK_REQUEST_INVALID_STATE, 111)         \
    X(ZLINK_REQUEST_NOT_SUPPORTED, 112)         \
    X(ZLINK_REQUEST_BACKPRESSURED, 113)

#define ZLINK_REQUEST_ERRNO_MAP(X)                      \
    X(ETIMEDOUT, ZLINK_REQUEST_TIMED_OUT)               \
    X(ENOENT, ZLINK_REQUEST_NOT_FOUND)                  \
    X(ETERM, ZLINK_REQUEST_TERMINATED)                  \
    X(EPROTO, ZLINK_REQUEST_PROTOCOL_ERROR)             \
    X(ENOCOMPATPROTO, ZLINK_REQUEST_PROTOCOL_ERROR)     \
    X(EACCES, ZLINK_REQUEST_REJECTED)                   \
    X(ECONNREFUSED, ZLINK_REQUEST_REJECTED)             \
    X(ECANCELED, ZLINK_REQUEST_REJECTED)                \
    X(EEXIST, ZLINK_REQUEST_CONFLICT)                   \
    X(ESTALE, ZLINK_REQUEST_CONFLICT)                   \
    X(EBUSY, ZLINK_REQUEST_BUSY)                        \
    X(ENOTCONN, ZLINK_REQUEST_NOT_CONNECTED)            \
    X(EHOSTUNREACH, ZLINK_REQUEST_NOT_CONNECTED)        \
    X(EINVAL, ZLINK_REQUEST_INVALID_ARGUMENT)           \
    X(EFAULT, ZLINK_REQUEST_INVALID_ARGUMENT)           \
    X(EFSM, ZLINK_REQUEST_INVALID_STATE)                \
    X(EALREADY, ZLINK_REQUEST_INVALID_STATE)            \
    X(ENOTSUP, ZLINK_REQUEST_NOT_SUPPORTED)             \
    X(EAGAIN, ZLINK_REQUEST_BACKPRESSURED)              \
    X(ENOBUFS, ZLINK_REQUEST_BACKPRESSURED)

/* Receives: zlink_recv, zlink_router_recv, zlink_subscribe, zlink_xpub_recv,
 * zlink_stream_recv_packet, zlink_completion_recv, the monitor and timer
 * receives. EINVAL is INVALID_STATE in this family (doc/errors.md). */
#define ZLINK_RECV_RESULTS(X)                   \
    X(ZLINK_RECV_OK, 0)                         \
    X(ZLINK_RECV_NO_DATA, 201)                  \
    X(ZLINK_RECV_BUSY, 202)                     \
    X(ZLINK_RECV_TERMINATED, 203)               \
    X(ZLINK_RECV_INVALID_HANDLE, 204)           \
    X(ZLINK_RECV_NOT_SUPPORTED, 205)            \
    X(ZLINK_RECV_INTERNAL, 206)                 \
    X(ZLINK_RECV_BUFFER_TOO_SMALL, 207)         \
    X(ZLINK_RECV_INVALID_STATE, 208)

#define ZLINK_RECV_ERRNO_MAP(X)                         \
    X(EAGAIN, ZLINK_RECV_NO_DATA)                       \
    X(ETIMEDOUT, ZLINK_RECV_NO_DATA)                    \
    X(EBUSY, ZLINK_RECV_BUSY)                           \
    X(ETERM, ZLINK_RECV_TERMINATED)                     \
    X(EFAULT, ZLINK_RECV_INVALID_HANDLE)                \
    X(ENOTSUP, ZLINK_RECV_NOT_SUPPORTED)                \
    X(ENOBUFS, ZLINK_RECV_BUFFER_TOO_SMALL)             \
    X(EINVAL, ZLINK_RECV_INVALID_STATE)                 \
    X(ESTALE, ZLINK_RECV_INVALID_STATE)                 \
    X(ESHUTDOWN, ZLINK_RECV_INVALID_STATE)

/* Handlers: kept in the ABI; no call returns them yet (doc/errors.md). */
#define ZLINK_HANDLER_RESULTS(X)                \
    X(ZLINK_HANDLER_OK, 0)                      \
    X(ZLINK_HANDLER_INVALID_ARGUMENT, 301)      \
    X(ZLINK_HANDLER_BUSY, 302)                  \
    X(ZLINK_HANDLER_NOT_SUPPORTED, 303)         \
    X(ZLINK_HANDLER_DEADLOCK, 304)              \
    X(ZLINK_HANDLER_INVALID_HANDLE, 305)        \
    X(ZLINK_HANDLER_INTERNAL, 306)

#define ZLINK_HANDLER_ERRNO_MAP(X)                      \
    X(EDEADLK, ZLINK_HANDLER_DEADLOCK)

/* Closes: zlink_close, zlink_ctx_shutdown, zlink_ctx_term, the destroy and
 * close calls of pollers, timers and monitors. */
#define ZLINK_CLOSE_RESULTS(X)                  \
    X(ZLINK_CLOSE_OK, 0)                        \
    X(ZLINK_CLOSE_BUSY, 401)                    \
    X(ZLINK_CLOSE_SHUTDOWN, 402)                \
    X(ZLINK_CLOSE_INVALID_HANDLE, 403)          \
    X(ZLINK_CLOSE_INTERNAL, 404)

#define ZLINK_CLOSE_ERRNO_MAP(X)                        \
    X(EBUSY, ZLINK_CLOSE_BUSY)                          \
    X(EDEADLK, ZLINK_CLOSE_BUSY)                        \
    X(ESHUTDOWN, ZLINK_CLOSE_SHUTDOWN)                  \
    X(EFAULT, ZLINK_CLOSE_INVALID_HANDLE)               \
    X(ESTALE, ZLINK_CLOSE_INVALID_HANDLE)

/* Binds: zlink_bind. */
#define ZLINK_BIND_RESULTS(X)                   \
    X(ZLINK_BIND_OK, 0)                         \
    X(ZLINK_BIND_INVALID_ARGUMENT, 501)         \
    X(ZLINK_BIND_ADDR_IN_USE, 502)              \
    X(ZLINK_BIND_NOT_SUPPORTED, 503)            \
    X(ZLINK_BIND_INVALID_HANDLE, 504)           \
    X(ZLINK_BIND_INTERNAL, 505)

#define ZLINK_BIND_ERRNO_MAP(X)                         \
    X(EINVAL, ZLINK_BIND_INVALID_ARGUMENT)              \
    X(ENAMETOOLONG, ZLINK_BIND_INVALID_ARGUMENT)        \
    X(ENODEV, ZLINK_BIND_INVALID_ARGUMENT)              \
    X(EADDRINUSE, ZLINK_BIND_ADDR_IN_USE)               \
    X(EADDRNOTAVAIL, ZLINK_BIND_ADDR_IN_USE)            \
    X(ENOTSUP, ZLINK_BIND_NOT_SUPPORTED)                \
    X(EPROTONOSUPPORT, ZLINK_BIND_NOT_SUPPORTED)        \
    X(EFAULT, ZLINK_BIND_INVALID_HANDLE)                \
    X(ESTALE, ZLINK_BIND_INVALID_HANDLE)                \
    X(ESHUTDOWN, ZLINK_BIND_INVALID_HANDLE)

/* Connects: zlink_connect, zlink_disconnect, zlink_unbind,
 * zlink_disconnect_rid. */
#define ZLINK_CONNECT_RESULTS(X)                \
    X(ZLINK_CONNECT_OK, 0)                      \
    X(ZLINK_CONNECT_INVALID_ARGUMENT, 601)      \
    X(ZLINK_CONNECT_NOT_SUPPORTED, 602)         \
    X(ZLINK_CONNECT_INVALID_HANDLE, 603)        \
    X(ZLINK_CONNECT_INTERNAL, 604)              \
    X(ZLINK_CONNECT_NOT_FOUND, 605)             \
    X(ZLINK_CONNECT_CONFLICT, 606)              \
    X(ZLINK_CONNECT_BUSY, 607)                  \
    X(ZLINK_CONNECT_AUTH_FAILED, 608)

#define ZLINK_CONNECT_ERRNO_MAP(X)                      \
    X(EINVAL, ZLINK_CONNECT_INVALID_ARGUMENT)           \
    X(ENAMETOOLONG, ZLINK_CONNECT_INVALID_ARGUMENT)     \
    X(ENODEV, ZLINK_CONNECT_INVALID_ARGUMENT)           \
    X(ENOTSUP, ZLINK_CONNECT_NOT_SUPPORTED)             \
    X(EPROTONOSUPPORT, ZLINK_CONNECT_NOT_SUPPORTED)     \
    X(EFAULT, ZLINK_CONNECT_INVALID_HANDLE)             \
    X(ENOENT, ZLINK_CONNECT_NOT_FOUND)                  \
    X(EEXIST, ZLINK_CONNECT_CONFLICT)                   \
    X(ESTALE, ZLINK_CONNECT_CONFLICT)                   \
    X(EADDRINUSE, ZLINK_CONNECT_CONFLICT)               \
    X(EBUSY, ZLINK_CONNECT_BUSY)                        \
    X(ESHUTDOWN, ZLINK_CONNECT_BUSY)                    \
    X(EACCES, ZLINK_CONNECT_AUTH_FAILED)

/* Configuration: options, messages, subscriptions, routing ids, the flow
 * setter, pollers, timers. BUSY (concurrent use of one object) has no errno
 * of its own: EBUSY is INVALID_STATE here, and the code that detects the
 * concurrent use returns BUSY with errno EBUSY itself. */
#define ZLINK_CONFIG_RESULTS(X)                 \
    X(ZLINK_CONFIG_OK, 0)                       \
    X(ZLINK_CONFIG_INVALID_HANDLE, 701)         \
    X(ZLINK_CONFIG_INVALID_ARGUMENT, 702)       \
    X(ZLINK_CONFIG_NOT_SUPPORTED, 703)          \
    X(ZLINK_CONFIG_INTERNAL, 704)               \
    X(ZLINK_CONFIG_INVALID_STATE, 705)          \
    X(ZLINK_CONFIG_NOT_FOUND, 706)              \
    X(ZLINK_CONFIG_CONFLICT, 707)               \
    X(ZLINK_CONFIG_BUFFER_TOO_SMALL, 708)       \
    X(ZLINK_CONFIG_BUSY, 709)

#define ZLINK_CONFIG_ERRNO_MAP(X)                       \
    X(EFAULT, ZLINK_CONFIG_INVALID_HANDLE)              \
    X(EINVAL, ZLINK_CONFIG_INVALID_ARGUMENT)            \
    X(EMSGSIZE, ZLINK_CONFIG_INVALID_ARGUMENT)          \
    X(ENOTSUP, ZLINK_CONFIG_NOT_SUPPORTED)              \
    X(EBUSY, ZLINK_CONFIG_INVALID_STATE)                \
    X(ESTALE, ZLINK_CONFIG_INVALID_STATE)               \
    X(EALREADY, ZLINK_CONFIG_INVALID_STATE)             \
    X(ESHUTDOWN, ZLINK_CONFIG_INVALID_STATE)            \
    X(ENOTCONN, ZLINK_CONFIG_INVALID_STATE)             \
    X(ETIMEDOUT, ZLINK_CONFIG_INVALID_STATE)            \
    X(EPROTO, ZLINK_CONFIG_INVALID_STATE)               \
    X(ENOENT, ZLINK_CONFIG_NOT_FOUND)                   \
    X(EEXIST, ZLINK_CONFIG_CONFLICT)                    \
    X(ENOBUFS, ZLINK_CONFIG_BUFFER_TOO_SMALL)

/* Framework calls (zlink/framework.h): 800 + an error kind (0..12), plus
 * three results that are not error kinds. Framework calls do not set
 * zlink_errno, so the family's errno map is empty. */
#define ZLINK_FW_RESULTS(X)                     \
    X(ZLINK_FW_OK, 0)                           \
    X(ZLINK_FW_NOT_FOUND, 800)                  \
    X(ZLINK_FW_ALREADY_EXISTS, 801)             \
    X(ZLINK_FW_TYPE_MISMATCH, 802)              \
    X(ZLINK_FW_NOT_CONFIGURED, 803)             \
    X(ZLINK_FW_REJECTED, 804)                   \
    X(ZLINK_FW_UNAVAILABLE, 805)                \
    X(ZLINK_FW_CAPACITY_EXCEEDED, 806)          \
    X(ZLINK_FW_DEADLINE_EXCEEDED, 807)          \
    X(ZLINK_FW_SHUTTING_DOWN, 808)              \
    X(ZLINK_FW_PROTOCOL_ERROR, 809)             \
    X(ZLINK_FW_INVALID_OPERATION, 810)          \
    X(ZLINK_FW_DATA_LOST, 811)                  \
    X(ZLINK_FW_INTERNAL_FAILURE, 812)           \
    X(ZLINK_FW_CANCELLED, 820)                  \
    X(ZLINK_FW_INVALID_ARGUMENT, 830)           \
    X(ZLINK_FW_INVALID_HANDLE, 831)

#define ZLINK_FW_ERRNO_MAP(X)

/* Every family, in this order. send_complete (the send_result of a WRITABLE
 * completion record) is defined with the completion queue below. */
#define ZLINK_RESULT_FAMILIES(X)                                                        \
    X("submit", zlink_submit_result_t, ZLINK_SUBMIT_RESULTS, ZLINK_SUBMIT_ERRNO_MAP,     \
      ZLINK_SUBMIT_INTERNAL, 1)                                                         \
    X("request", zlink_request_result_t, ZLINK_REQUEST_RESULTS, ZLINK_REQUEST_ERRNO_MAP, \
      ZLINK_REQUEST_INTERNAL, 1)                                                        \
    X("recv", zlink_recv_result_t, ZLINK_RECV_RESULTS, ZLINK_RECV_ERRNO_MAP,             \
      ZLINK_RECV_INTERNAL, 1)                                                           \
    X("handler", zlink_handler_result_t, ZLINK_HANDLER_RESULTS, ZLINK_HANDLER_ERRNO_MAP, \
      ZLINK_HANDLER_INTERNAL, 1)                                                        \
    X("close", zlink_close_result_t, ZLINK_CLOSE_RESULTS, ZLINK_CLOSE_ERRNO_MAP,         \
      ZLINK_CLOSE_INTERNAL, 1)                                                          \
    X("bind", zlink_bind_result_t, ZLINK_BIND_RESULTS, ZLINK_BIND_ERRNO_MAP,             \
      ZLINK_BIND_INTERNAL, 1)                                                           \
    X("connect", zlink_connect_result_t, ZLINK_CONNECT_RESULTS, ZLINK_CONNECT_ERRNO_MAP, \
      ZLINK_CONNECT_INTERNAL, 1)                                                        \
    X("config", zlink_config_result_t, ZLINK_CONFIG_RESULTS, ZLINK_CONFIG_ERRNO_MAP,     \
      ZLINK_CONFIG_INTERNAL, 1)                                                         \
    X("send_complete", zlink_send_complete_result_t, ZLINK_SEND_COMPLETE_RESULTS,        \
      ZLINK_SEND_COMPLETE_ERRNO_MAP, ZLINK_SEND_TERMINAL, 0)                            \
    X("framework", zlink_fw_result_t, ZLINK_FW_RESULTS, ZLINK_FW_ERRNO_MAP,              \
      ZLINK_FW_INTERNAL_FAILURE, 1)

/* Turns a row of a RESULTS table into an enumerator; zlink.h's own helper,
 * #undef'd after the last result enum (send_complete, below). */
#define ZLINK_RESULT_ENUMERATOR_(name, value) name = value,

typedef enum zlink_submit_result {
    ZLINK_SUBMIT_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_submit_result_t;

typedef enum zlink_request_result {
    ZLINK_REQUEST_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_request_result_t;

typedef enum zlink_recv_result {
    ZLINK_RECV_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_recv_result_t;

typedef enum zlink_handler_result {
    ZLINK_HANDLER_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_handler_result_t;

typedef enum zlink_close_result {
    ZLINK_CLOSE_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_close_result_t;

typedef enum zlink_bind_result {
    ZLINK_BIND_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_bind_result_t;

typedef enum zlink_connect_result {
    ZLINK_CONNECT_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_connect_result_t;

typedef enum zlink_config_result {
    ZLINK_CONFIG_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_config_result_t;

typedef enum zlink_fw_result {
    ZLINK_FW_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_fw_result_t;

/* Thread-local errno of the last failed ZLink call on this thread.
 * Unspecified after a success. */
ZLINK_EXPORT int zlink_errno(void);
/* A static, never-freed description of errnum; never NULL; thread-safe.
 * Every errno of ZLINK_ERRNO_TEXTS gets its text from there. */
ZLINK_EXPORT const char *zlink_strerror(int errnum);
/* The symbolic name of value, static and never freed; never NULL;
 * thread-safe:
 *  - a nonzero value of any family named by ZLINK_RESULT_FAMILIES gives that
 *    value's constant ("ZLINK_SUBMIT_BACKPRESSURED"); the families' ranges
 *    never overlap, so the name also tells the family. 202 is
 *    "ZLINK_RECV_BUSY": ZLINK_SEND_TERMINAL shares its number but is not in
 *    this name space (it is a completion record field, not a call result);
 *  - 0, the success of every family, gives "OK";
 *  - an errno number of ZLink's own (ZLINK_HAUSNUMERO + n, such as ETERM)
 *    gives its errno name ("ETERM"); platform errno numbers are not named,
 *    since they overlap the result values;
 *  - anything else gives "unknown result". */
ZLINK_EXPORT const char *zlink_result_name(int value);
/* Writes the library's version. NULL arguments are undefined behaviour. */
ZLINK_EXPORT void zlink_version(int *major, int *minor, int *patch);
/* 1 when the build supports the transport or feature named by what. */
ZLINK_EXPORT int zlink_has(const char *what);

/* ---------------------------------------------------------------- handles
 *
 * Contexts, sockets, socket monitors, pollers and timers are handles:
 * opaque pointer-sized values, not addresses (never dereference one). Every
 * function checks its handle before touching anything, so a handle never
 * crashes the caller: NULL, a value that was never a handle, a pointer to
 * any memory, a live handle of another kind, or the handle of a closed,
 * destroyed or terminated object gives the function's INVALID_HANDLE (or
 * the equivalent documented for it) and changes nothing, before and after
 * zlink_ctx_term alike. A closed socket answers as a closed socket
 * (ESHUTDOWN; zlink_close ESTALE). zlink_close, zlink_poller_destroy,
 * zlink_timer_destroy and zlink_monitor_close fail with CLOSE_BUSY/EBUSY
 * while another call on that handle is inside; zlink_ctx_term never fails
 * for that reason. doc/errors.md, "Handles", lists every result.
 */

/* ---------------------------------------------------------------- context */

#define ZLINK_IO_THREADS 1
#define ZLINK_MAX_SOCKETS 2
#define ZLINK_SOCKET_LIMIT 3
#define ZLINK_THREAD_PRIORITY 3
#define ZLINK_THREAD_SCHED_POLICY 4
#define ZLINK_MAX_MSGSZ 5
#define ZLINK_MSG_T_SIZE 6
#define ZLINK_THREAD_AFFINITY_CPU_ADD 7
#define ZLINK_THREAD_AFFINITY_CPU_REMOVE 8
#define ZLINK_THREAD_NAME_PREFIX 9
#define ZLINK_CTX_OPT_BLOCKY 10
#define ZLINK_AUTO_HWM_ENABLE 12
#define ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS 14
#define ZLINK_PROFILE 17
#define ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES 19
#define ZLINK_RUNTIME_MEMORY_LIMIT_BYTES 20
#define ZLINK_CORE_BUDGET_BYTES 21
/* Low-latency mode (1.4). ZLINK_SPIN_US: how long, in microseconds, a
 * caller blocked in a send or receive keeps polling before it sleeps;
 * ZLINK_IO_SPIN_US: how long an I/O thread with nothing to do keeps polling
 * its connections and task queue before it sleeps. 0 (the default) never
 * spins; at most ZLINK_SPIN_US_MAX. Adaptive: a waiter spins only while its
 * last wait ended within the window (with a probe every eighth wait
 * otherwise), an I/O thread only after activity within one window, so an
 * idle context uses no CPU. A polling I/O thread needs a core of its own:
 * with fewer cores than busy threads it slows every round trip
 * (doc/performance.md). Changes apply from the next wait on. */
#define ZLINK_SPIN_US 22
#define ZLINK_IO_SPIN_US 23
#define ZLINK_SPIN_US_MAX 10000

#define ZLINK_IO_THREADS_DFLT 4
#define ZLINK_MAX_SOCKETS_DFLT 4095

#define ZLINK_PROFILE_COMPACT 0
#define ZLINK_PROFILE_LOW_LATENCY 1
#define ZLINK_PROFILE_BALANCED 2
#define ZLINK_PROFILE_THROUGHPUT 3

/* A new context, or NULL with errno set. */
ZLINK_EXPORT void *zlink_ctx_new(void);
/* Non-blocking: blocking calls on the context's sockets return ETERM. */
ZLINK_EXPORT zlink_close_result_t zlink_ctx_shutdown(void *ctx);
/* Called once. Shuts the context down (blocking calls get ETERM), blocks
 * until the application has closed every socket and their pending output
 * is flushed or their linger expired, then frees the context. Afterwards
 * the handle gives EFAULT everywhere (INVALID_HANDLE); a call another
 * thread is making on it meanwhile finishes safely. */
ZLINK_EXPORT zlink_close_result_t zlink_ctx_term(void *ctx);
ZLINK_EXPORT zlink_config_result_t zlink_ctx_set(void *ctx, int option, int value);
/* The option's value, or -1 with *result (may be NULL) and errno set. */
ZLINK_EXPORT int zlink_ctx_get(void *ctx, int option, zlink_config_result_t *result);
/* Byte-valued options: uint64 options take exactly 8 bytes. */
ZLINK_EXPORT zlink_config_result_t zlink_ctx_set_data(void *ctx, int option,
                                                      const void *data, size_t size);
ZLINK_EXPORT zlink_config_result_t zlink_ctx_get_data(void *ctx, int option,
                                                      void *data, size_t *size);

/* ---------------------------------------------------------------- sockets */

#define ZLINK_PAIR 0x1001
#define ZLINK_PUB 0x1002
#define ZLINK_SUB 0x1003
#define ZLINK_DEALER 0x1004
#define ZLINK_ROUTER 0x1005
#define ZLINK_XPUB 0x1006
#define ZLINK_XSUB 0x1007
#define ZLINK_STREAM 0x1008

/* Socket options: doc/options.md gives each one's type, range, default
 * and effect. Every option listed here does something; a number skipped
 * below is reserved (a later version may give it a meaning) and today is
 * refused with EINVAL like any unknown option:
 *   0x3003 0x3004 0x3011 0x3026  RATE, RECOVERY_IVL, MULTICAST_HOPS,
 *                                MAXTPDU: multicast, no such transport;
 *   0x3301 0x3302 0x3303 0x3304  PUB_VERBOSE, _VERBOSER, _MANUAL,
 *   0x3306 0x3308 0x3309         _MANUAL_LAST_VALUE, _WELCOME_MSG,
 *                                _APPROVE_SUBSCRIBE, _REJECT_SUBSCRIBE:
 *                                XPUB features, with XPUB. */
#define ZLINK_AFFINITY 0x3001            /* uint64 mask of I/O threads; 0 any */
#define ZLINK_SNDBUF 0x3005
#define ZLINK_RCVBUF 0x3006
#define ZLINK_FD 0x3007                  /* int, read-only: readable = read EVENTS */
#define ZLINK_EVENTS 0x3008              /* int, read-only: ZLINK_POLLIN | POLLOUT */
#define ZLINK_TYPE 0x3009
#define ZLINK_LINGER 0x300A
#define ZLINK_RECONNECT_IVL 0x300B
#define ZLINK_BACKLOG 0x300C
#define ZLINK_RECONNECT_IVL_MAX 0x300D
#define ZLINK_MAXMSGSIZE 0x300E          /* int64; <= 0 unlimited */
#define ZLINK_SNDHWM 0x300F              /* uint64 bytes; 0 unlimited */
#define ZLINK_RCVHWM 0x3010              /* uint64 bytes; 0 unlimited */
#define ZLINK_RCVTIMEO 0x3012            /* int ms; -1 infinite */
#define ZLINK_SNDTIMEO 0x3013            /* int ms; -1 infinite */
#define ZLINK_LAST_ENDPOINT 0x3014       /* string, read-only */
#define ZLINK_TCP_KEEPALIVE 0x3015       /* -1 OS default, 0 off, 1 on */
#define ZLINK_TCP_KEEPALIVE_CNT 0x3016   /* probes, 1..127; -1 OS default */
#define ZLINK_TCP_KEEPALIVE_IDLE 0x3017  /* s, 1..32767; -1 OS default */
#define ZLINK_TCP_KEEPALIVE_INTVL 0x3018 /* s, 1..32767; -1 OS default */
#define ZLINK_IMMEDIATE 0x3019           /* always 1; 0 is NOT_SUPPORTED */
#define ZLINK_IPV6 0x301A
#define ZLINK_CONFLATE 0x301B            /* 0 only in this version */
#define ZLINK_TOS 0x301C                 /* 0..255; 0 OS default */
#define ZLINK_HANDSHAKE_IVL 0x301D
#define ZLINK_BLOCKY 0x301E              /* NOT_SUPPORTED (CTX_OPT_BLOCKY) */
#define ZLINK_INVERT_MATCHING 0x3020     /* PUB, SUB */
#define ZLINK_CONNECT_TIMEOUT 0x3024
#define ZLINK_TCP_MAXRT 0x3025           /* ms (TCP_USER_TIMEOUT); 0 OS default */
#define ZLINK_BINDTODEVICE 0x3027        /* string, <= 15 bytes; "" none */
#define ZLINK_ZMP_METADATA 0x3030
#define ZLINK_TCP_NODELAY 0x3031
#define ZLINK_OPT_RID_DUPLICATE_POLICY 0x3033

#define ZLINK_RID_DUPLICATE_REJECT 0
#define ZLINK_RID_DUPLICATE_HANDOVER 1

#define ZLINK_ROUTER_MANDATORY 0x3101
#define ZLINK_ROUTER_PROBE 0x3103
#define ZLINK_CONNECT_ROUTING_ID 0x3104  /* set-only: names the next connect's peer */
#define ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS 0x3105
#define ZLINK_ROUTER_WEIGHT 0x3106

#define ZLINK_DEALER_PROBE 0x3201
#define ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS 0x3202
#define ZLINK_DEALER_WEIGHT 0x3203

#define ZLINK_PUB_NODROP 0x3305
#define ZLINK_PUB_TOPICS_COUNT 0x3307

#define ZLINK_SUB_TOPICS_COUNT 0x3400

/* STREAM: NOTIFY (RAW only) reports connect/disconnect as zero-length
 * records; RECV_MODE must be RAW or PACKET before the first successful
 * bind or connect and is fixed from then on (EBUSY). */
#define ZLINK_STREAM_NOTIFY 0x3501
#define ZLINK_STREAM_OPT_RECV_MODE 0x3502
#define ZLINK_STREAM_RECV_UNSPECIFIED 0
#define ZLINK_STREAM_RECV_RAW 1
#define ZLINK_STREAM_RECV_PACKET 2

/* Weight limits (DEALER_WEIGHT, ROUTER_WEIGHT). */
#define ZLINK_WEIGHT_MIN 0
#define ZLINK_WEIGHT_MAX 10000
#define ZLINK_WEIGHT_DFLT 100

/* Defaults. */
#define ZLINK_HWM_DFLT 4096000u
#define ZLINK_TIMEO_DFLT 1000
#define ZLINK_REQUEST_TIMEOUT_DFLT 5000

/* A routing id: 1..255 bytes. Received ids are borrowed views valid until
 * the next data receive on that socket, or its close. */
typedef struct zlink_routing_id {
    uint8_t size;
    uint8_t data[255];
} zlink_routing_id_t;

/* A new socket of type, or NULL with errno EINVAL, EMFILE or ETERM. */
ZLINK_EXPORT void *zlink_socket(void *ctx, int type);
/* The close gate: fails with EBUSY while another call is inside the socket;
 * once accepted, every later call gets ESHUTDOWN (or ESTALE). Unread records
 * are discarded; pending output is governed by ZLINK_LINGER. */
ZLINK_EXPORT zlink_close_result_t zlink_close(void *socket);

/* Integer options take an int (4 bytes); HWMs and AFFINITY take exactly 8
 * bytes (uint64_t); MAXMSGSIZE takes an int64_t; BINDTODEVICE a name (read
 * back NUL-terminated). Anything else gives EINVAL. */
ZLINK_EXPORT zlink_config_result_t zlink_setsockopt(void *socket, int option,
                                                    const void *value, size_t size);
/* *size is in/out: capacity in, bytes written out. */
ZLINK_EXPORT zlink_config_result_t zlink_getsockopt(void *socket, int option,
                                                    void *value, size_t *size);
/* Sets this socket's own routing id (1..255 bytes) for later binds and
 * connects. STREAM gives EINVAL; a non-socket handle ENOTSUP. */
ZLINK_EXPORT zlink_config_result_t zlink_set_routing_id(void *socket, const void *id,
                                                        size_t size);

/* Endpoints: "tcp://host:port" (port 0 or '*' = ephemeral), "ipc:///path",
 * "inproc://name". The bound address is read back via ZLINK_LAST_ENDPOINT. */
ZLINK_EXPORT zlink_bind_result_t zlink_bind(void *socket, const char *endpoint);
ZLINK_EXPORT zlink_connect_result_t zlink_connect(void *socket, const char *endpoint);
ZLINK_EXPORT zlink_connect_result_t zlink_unbind(void *socket, const char *endpoint);
/* Drops the reconnect intent and the connection made for endpoint. */
ZLINK_EXPORT zlink_connect_result_t zlink_disconnect(void *socket, const char *endpoint);
/* ROUTER and STREAM: closes the connection of the peer named rid (STREAM
 * ids are 4 bytes). Asynchronous: returns once the close is started.
 * NOT_FOUND when no live peer has that id; INVALID_ARGUMENT for a bad rid;
 * NOT_SUPPORTED on other socket types. */
ZLINK_EXPORT zlink_connect_result_t zlink_disconnect_rid(void *socket,
                                                         const zlink_routing_id_t *rid);

/* --------------------------------------------------------------- messages */

/* 64 bytes, opaque, pointer-aligned. Payloads up to ZLINK_MSG_INLINE_MAX
 * bytes live inside it; larger ones in a reference-counted buffer. */
typedef struct zlink_msg {
    union {
        unsigned char _opaque[64];
        void *_align_ptr;
        uint64_t _align_u64;
    } u;
} zlink_msg_t;

#define ZLINK_MSG_INLINE_MAX 29

typedef void(zlink_free_fn)(void *data, void *hint);

ZLINK_EXPORT zlink_config_result_t zlink_msg_init(zlink_msg_t *msg);
ZLINK_EXPORT zlink_config_result_t zlink_msg_init_size(zlink_msg_t *msg, size_t size);
/* Zero-copy: ffn(data, hint) runs when the last reference goes. A NULL ffn
 * borrows data; the caller keeps it alive until every copy is closed. ffn
 * runs on the thread that drops that reference: an I/O thread, a thread
 * closing a copy, or the sending thread inside zlink_send when a tcp or ipc
 * connection was idle and the record was written at once. It must not call
 * ZLink functions. */
ZLINK_EXPORT zlink_config_result_t zlink_msg_init_data(zlink_msg_t *msg, void *data,
                                                       size_t size, zlink_free_fn *ffn,
                                                       void *hint);
ZLINK_EXPORT zlink_config_result_t zlink_msg_close(zlink_msg_t *msg);
/* dst's old content is released; src is left empty (size 0). */
ZLINK_EXPORT zlink_config_result_t zlink_msg_move(zlink_msg_t *dst, zlink_msg_t *src);
/* dst shares src's buffer (atomic reference count). */
ZLINK_EXPORT zlink_config_result_t zlink_msg_copy(zlink_msg_t *dst, zlink_msg_t *src);
/* dst must be uninitialized; src becomes empty. On failure src keeps its
 * payload and dst stays uninitialized. */
ZLINK_EXPORT zlink_config_result_t zlink_msg_adopt(zlink_msg_t *dst, zlink_msg_t *src);
ZLINK_EXPORT void *zlink_msg_data(zlink_msg_t *msg);
ZLINK_EXPORT size_t zlink_msg_size(const zlink_msg_t *msg);
/* 1 for inline or borrowed payloads; -1 with *result set on error. */
ZLINK_EXPORT int zlink_msg_refcnt(const zlink_msg_t *msg, zlink_config_result_t *result);
/* zlink_msg_close on each of parts[0..n). */
ZLINK_EXPORT void zlink_multipart_close(zlink_msg_t *parts, size_t n);

/* ------------------------------------------------------------ send / recv */

typedef uint64_t zlink_completion_id_t;
typedef uint64_t zlink_reply_token_t;

typedef enum zlink_send_flags {
    ZLINK_SEND_FLAGS_NONE = 0,
    ZLINK_SEND_FLAGS_DONTWAIT = 1
} zlink_send_flags_t;

typedef enum zlink_recv_flags {
    ZLINK_RECV_FLAGS_NONE = 0,
    ZLINK_RECV_FLAGS_DONTWAIT = 1
} zlink_recv_flags_t;

#define ZLINK_DONTWAIT 1

/*
 * Ownership for every send call: each of parts[0..n) is consumed on success
 * AND on failure and left empty but initialized, so the caller may reuse or
 * close it. A failed send is invisible to the peer.
 *
 * Flags NONE waits for room up to the SNDTIMEO snapshot; DONTWAIT tries once.
 * completion_id_out (optional) is zeroed first; it receives a nonzero wait
 * token when a DONTWAIT submit is refused for lack of room.
 */
/* PAIR and DEALER. */
ZLINK_EXPORT zlink_submit_result_t zlink_send(void *socket, zlink_msg_t *parts, size_t n,
                                              zlink_send_flags_t flags, void *user_context,
                                              zlink_completion_id_t *completion_id_out);
/* ROUTER, and STREAM with n == 1 (a zero-length part closes that peer). */
ZLINK_EXPORT zlink_submit_result_t zlink_send_rid(void *socket, const zlink_routing_id_t *rid,
                                                  zlink_msg_t *parts, size_t n,
                                                  zlink_send_flags_t flags, void *user_context,
                                                  zlink_completion_id_t *completion_id_out);
/* PUB: topic (if not NULL) is sent as the first frame; NULL means parts[0]
 * is the topic. No completions. */
ZLINK_EXPORT zlink_submit_result_t zlink_publish(void *socket, const char *topic,
                                                 zlink_msg_t *parts, size_t n,
                                                 zlink_send_flags_t flags);

/*
 * Receive one whole record into parts[0..cap). On success *count parts are
 * the caller's (close them with zlink_multipart_close). When cap is too small
 * the result is BUFFER_TOO_SMALL, *count holds the needed count and nothing is
 * consumed. Flags NONE waits up to the RCVTIMEO snapshot.
 */
/* PAIR, DEALER (rid NULL) and STREAM in RAW mode (one part). */
ZLINK_EXPORT zlink_recv_result_t zlink_recv(void *socket, const zlink_routing_id_t **rid_opt,
                                            zlink_msg_t *parts, size_t cap, size_t *count,
                                            zlink_recv_flags_t flags);
/* ROUTER: *token is 0 for DATA, nonzero for a REQUEST. */
ZLINK_EXPORT zlink_recv_result_t zlink_router_recv(void *socket, const zlink_routing_id_t **rid,
                                                   zlink_reply_token_t *token,
                                                   zlink_msg_t *parts, size_t cap,
                                                   size_t *count, zlink_recv_flags_t flags);
/* SUB: the topic frame is copied into topic[0..tcap) (no NUL) and its length
 * written to *tlen; the remaining frames go to parts. */
ZLINK_EXPORT zlink_recv_result_t zlink_subscribe(void *socket, const zlink_routing_id_t **rid,
                                                 char *topic, size_t tcap, size_t *tlen,
                                                 zlink_msg_t *parts, size_t cap, size_t *count,
                                                 zlink_recv_flags_t flags);
/* STREAM in PACKET mode: one whole packet, framed on the wire as
 * [u16 BE header length][u32 BE body length][header][body], into hdr and
 * body, and *rid names its connection (a borrowed view, valid until the
 * next receive on this socket or its close). hdr and body must be
 * distinct, initialized and empty (zlink_msg_init): INVALID_STATE/EINVAL
 * otherwise, INVALID_HANDLE/EFAULT when NULL, and the packet stays queued.
 * Either length may be 0. Packets of one connection come in wire order;
 * across connections in the order they were completed. A STREAM in RAW
 * mode gives NOT_SUPPORTED (as zlink_recv does in PACKET mode). Sends stay
 * raw in both modes: zlink_send_rid writes its part's bytes as they are. */
ZLINK_EXPORT zlink_recv_result_t zlink_stream_recv_packet(void *socket,
                                                          const zlink_routing_id_t **rid,
                                                          zlink_msg_t *hdr, zlink_msg_t *body,
                                                          zlink_recv_flags_t flags);

/* ------------------------------------------------------ completion queue
 *
 * Each PAIR, DEALER, ROUTER and STREAM socket has a completion queue. A
 * DONTWAIT send refused for lack of room returns BACKPRESSURED with a
 * nonzero wait token in *completion_id_out; exactly one WRITABLE record
 * with that id (and the same user_context, and the routing id for ROUTER
 * and STREAM) follows when that target can take a record again
 * (send_result ADMITTED), or when the target was removed explicitly
 * (send_result TERMINAL, send_terminal_errno ENOENT). Nothing of the
 * refused record is kept: resubmit it. Records come out in append order.
 */
typedef enum zlink_completion_kind {
    ZLINK_COMPLETION_SEND = 1,     /* reserved by the ABI; never published */
    ZLINK_COMPLETION_REQUEST = 2,
    ZLINK_COMPLETION_WRITABLE = 3
} zlink_completion_kind_t;

/* send_result of a WRITABLE record: ADMITTED, or TERMINAL with the cause in
 * send_terminal_errno (every errno gives TERMINAL: the map is empty). It is
 * a field of the record, not a call result, so zlink_result_name() leaves
 * it out: TERMINAL shares the published value 202 with ZLINK_RECV_BUSY,
 * and 202 names the receive result. */
#define ZLINK_SEND_COMPLETE_RESULTS(X)          \
    X(ZLINK_SEND_ADMITTED, 0)                   \
    X(ZLINK_SEND_TERMINAL, 202)

#define ZLINK_SEND_COMPLETE_ERRNO_MAP(X)

typedef enum zlink_send_complete_result {
    ZLINK_SEND_COMPLETE_RESULTS(ZLINK_RESULT_ENUMERATOR_)
} zlink_send_complete_result_t;

#undef ZLINK_RESULT_ENUMERATOR_

typedef struct zlink_completion {
    uint32_t struct_size;            /* set to sizeof(zlink_completion_t) */
    zlink_completion_kind_t kind;
    zlink_completion_id_t completion_id;
    void *user_context;
    zlink_routing_id_t peer_rid;     /* ROUTER/STREAM WRITABLE, ROUTER REQUEST */
    zlink_send_complete_result_t send_result;
    int send_terminal_errno;
    zlink_request_result_t request_result;
    zlink_msg_t *reply_parts;        /* REQUEST: caller-owned, close the record */
    size_t reply_part_count;
} zlink_completion_t;

/* Pops one record into *out, which must be zeroed with struct_size set
 * (else INVALID_STATE/EINVAL and nothing is dequeued). NONE waits up to
 * RCVTIMEO; DONTWAIT returns NO_DATA at once. PAIR, DEALER, ROUTER,
 * STREAM; other types NOT_SUPPORTED. */
ZLINK_EXPORT zlink_recv_result_t zlink_completion_recv(void *socket, zlink_completion_t *out,
                                                       zlink_recv_flags_t flags);
/* Releases what a record owns and zeroes it, keeping struct_size.
 * Idempotent, NULL-safe; does nothing when struct_size is wrong. */
ZLINK_EXPORT void zlink_completion_close(zlink_completion_t *record);

/* -------------------------------------------------------- request/reply
 *
 * zlink_request sends a record as a REQUEST (DEALER: rid NULL, the target
 * is chosen like a send among ROUTER peers; ROUTER: the target's rid).
 * Admission follows the send rules (and DONTWAIT wait tokens). An admitted
 * request returns OK with a nonzero *completion_id_out and ends with
 * exactly one REQUEST record in the completion queue: the reply (OK,
 * reply_parts), an error reply (its errno mapped to request_result), a
 * timeout (TIMED_OUT; timeout_ms 0 = the socket's REQUEST_TIMEOUT option,
 * counted from admission) or the end of the connection it left on
 * (NOT_CONNECTED). A reply behind unread DATA on the same connection waits
 * for that DATA to be received.
 */
ZLINK_EXPORT zlink_submit_result_t zlink_request(void *socket, const zlink_routing_id_t *rid,
                                                 zlink_msg_t *parts, size_t n,
                                                 zlink_send_flags_t flags, uint32_t timeout_ms,
                                                 void *user_context,
                                                 zlink_completion_id_t *completion_id_out);
/* ROUTER: answers the REQUEST that zlink_router_recv returned with token
 * (nonzero) from src_rid. Synchronous: waits for room up to SNDTIMEO. One
 * successful reply per token; a failure keeps the token (retry the whole
 * reply). An unknown, used or mismatched token, or a source that is gone,
 * gives NOT_FOUND; a token another thread's reply is using gives
 * INVALID_STATE/EBUSY. To a DEALER the reply obeys the connection's HWM
 * and the peer's PAUSE; to a ROUTER it takes the HWM-free Completion lane.
 * Parts are consumed in every case. */
ZLINK_EXPORT zlink_submit_result_t zlink_reply(void *router, const zlink_routing_id_t *src_rid,
                                               zlink_reply_token_t token, zlink_msg_t *parts,
                                               size_t n);
/* Like zlink_reply, but answers with an error: the requester's REQUEST
 * record carries request_result mapped from error (a positive errno, e.g.
 * ENOENT -> NOT_FOUND, EBUSY -> BUSY; unlisted -> INTERNAL) and parts[0..n)
 * (n may be 0, parts may then be NULL) as its reply parts. error <= 0 gives
 * INVALID_ARGUMENT. */
ZLINK_EXPORT zlink_submit_result_t zlink_reply_error(void *router,
                                                     const zlink_routing_id_t *src_rid,
                                                     zlink_reply_token_t token, int error,
                                                     zlink_msg_t *parts, size_t n);

/* Like zlink_reply (error 0) or zlink_reply_error (error > 0) with send
 * flags (ZLINK_1.1): DONTWAIT never waits; refused for room (a DEALER
 * peer's HWM or PAUSE) it gives BACKPRESSURED, keeps the token, and puts a
 * wait token in *completion_id_out: one WRITABLE record (user_context, the
 * source's rid) follows when that peer can take a record; then submit the
 * whole reply again. A reply to a ROUTER peer never waits. Unknown flags
 * or error < 0 give INVALID_ARGUMENT. Parts are consumed in every case. */
ZLINK_EXPORT zlink_submit_result_t zlink_reply_submit(void *router,
                                                      const zlink_routing_id_t *src_rid,
                                                      zlink_reply_token_t token, int error,
                                                      zlink_msg_t *parts, size_t n,
                                                      zlink_send_flags_t flags,
                                                      void *user_context,
                                                      zlink_completion_id_t *completion_id_out);

/* ------------------------------------------------------------ ROUTER routes
 *
 * A ROUTER's selected routes: one row per routing id with a live pipe. The
 * generation is opaque and nonzero; compare it for equality only (it
 * changes when the routing id is served by another connection).
 * ZLINK_POLLROUTE is ready after any change and clears only after a
 * successful snapshot.
 */
typedef struct zlink_router_route {
    zlink_routing_id_t rid;
    uint64_t route_generation;
} zlink_router_route_t;

/* Writes every route into rows[0..cap) and *count. A cap too small gives
 * BUFFER_TOO_SMALL with *count = the rows needed (POLLROUTE stays ready).
 * Non-ROUTER sockets: NOT_SUPPORTED. */
ZLINK_EXPORT zlink_config_result_t zlink_router_routes_snapshot(void *router,
                                                                zlink_router_route_t *rows,
                                                                size_t cap, size_t *count);
/* The route generation of the record returned by the last successful
 * zlink_router_recv, or 0. */
ZLINK_EXPORT uint64_t zlink_router_recv_route_generation(void *router);

/* ------------------------------------------------------- receive flow
 *
 * DEALER and ROUTER: ask every peer to stop (PAUSED) or resume (RUNNING)
 * sending to this socket. One absolute state; setting the current state
 * again sends nothing. Returns once stored; peers connected later and
 * reconnecting peers learn the current state. A peer that is paused holds
 * records back at a record boundary (nothing is dropped): its blocking
 * sends wait, its DONTWAIT sends get BACKPRESSURED with a wait token, and
 * RESUME is a WRITABLE edge.
 */
typedef enum zlink_receive_flow_state {
    ZLINK_RECEIVE_FLOW_RUNNING = 0,
    ZLINK_RECEIVE_FLOW_PAUSED = 1
} zlink_receive_flow_state_t;

ZLINK_EXPORT zlink_config_result_t
zlink_socket_set_receive_flow_state(void *socket, zlink_receive_flow_state_t state);

/* --------------------------------------------------------- socket monitor
 *
 * A monitor observes one socket's connection life (bind, accept, connect,
 * handshake, disconnect, close) through its own bounded event queue, read
 * with zlink_socket_monitor_recv. It never changes the socket's routing or
 * queues, and a slow or absent reader never blocks the socket: when the
 * queue's byte budget is used up, each newly arriving event is dropped
 * (queued events are kept; nothing counts the drops). Events come out in
 * the order they were committed; there is no timestamp, and no order holds
 * between events committed on different I/O threads beyond that.
 *
 * One monitor per socket at a time. It stays open after its socket closes:
 * the close queues MONITOR_STOPPED, the last event; once that is read,
 * receives give INVALID_STATE/ESHUTDOWN. Receive and close of one monitor
 * must not run concurrently (single consumer; the caller serializes).
 * Every monitor must be closed with zlink_monitor_close.
 */

/* Event bits: the event field of an event, and the selection mask. */
#define ZLINK_EVENT_CONNECTED (1u << 0)         /* value 0 */
#define ZLINK_EVENT_CONNECT_DELAYED (1u << 1)   /* reconnect scheduled; value = delay ms */
#define ZLINK_EVENT_CONNECT_RETRIED (1u << 2)   /* reconnect attempt; value = delay ms */
#define ZLINK_EVENT_LISTENING (1u << 3)         /* value 0 */
#define ZLINK_EVENT_BIND_FAILED (1u << 4)       /* value = errno */
#define ZLINK_EVENT_ACCEPTED (1u << 5)          /* value 0 */
#define ZLINK_EVENT_ACCEPT_FAILED (1u << 6)     /* value = errno */
#define ZLINK_EVENT_CLOSED (1u << 7)            /* a listener or connecter closed */
#define ZLINK_EVENT_CLOSE_FAILED (1u << 8)      /* reserved; not reported */
#define ZLINK_EVENT_DISCONNECTED (1u << 9)      /* value = ZLINK_DISCONNECT_* */
#define ZLINK_EVENT_MONITOR_STOPPED (1u << 10)  /* the socket closed; last event */
#define ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL (1u << 11) /* value = errno */
#define ZLINK_EVENT_CONNECTION_READY (1u << 12) /* value = ready peer count */
#define ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL (1u << 13)  /* value = ZLINK_PROTOCOL_ERROR_* */
#define ZLINK_EVENT_HANDSHAKE_FAILED_AUTH (1u << 14)      /* reserved (no auth yet) */
#define ZLINK_EVENT_PEER_WEIGHT_CHANGED (1u << 15)        /* value = new weight */
#define ZLINK_EVENT_SEND_FLOW_PAUSED (1u << 16)           /* value = epoch */
#define ZLINK_EVENT_SEND_FLOW_RESUMED (1u << 17)          /* value = epoch */
#define ZLINK_EVENT_FLOW_STATE_STALE (1u << 18)           /* value = received epoch */
#define ZLINK_EVENT_ALL 0x7FFFFu

/* DISCONNECTED values. */
#define ZLINK_DISCONNECT_UNKNOWN 0          /* closed locally; a STREAM peer's orderly close */
#define ZLINK_DISCONNECT_HANDSHAKE_FAILED 3 /* ended before the handshake completed */
#define ZLINK_DISCONNECT_TRANSPORT_ERROR 4  /* lost: peer closed, reset, protocol error */
#define ZLINK_DISCONNECT_CTX_TERM 5         /* closed after the context was shut down */

/* HANDSHAKE_FAILED_PROTOCOL values. */
#define ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_HELLO 0x10000013u
#define ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_READY 0x10000016u

/* transport_lane values. Only the second (Completion) connection of a
 * ROUTER-ROUTER pair reports COMPLETION. */
#define ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION 0u
#define ZLINK_MONITOR_TRANSPORT_LANE_COMPLETION 1u

/* flags bits. EDGE: this CONNECTION_READY event is a logical peer becoming
 * ready (the count grew); without it the event is a count snapshot (a peer
 * went away). The other two belong to the receive-flow events. */
#define ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE (1u << 0)
#define ZLINK_MONITOR_EVENT_FLAG_SEND_FLOW_WRITABLE (1u << 1)
#define ZLINK_MONITOR_EVENT_FLAG_FLOW_STATE_STALE_EPOCH (1u << 3)

/* Options of zlink_socket_monitor_open (16 bytes). */
typedef struct zlink_monitor_config {
    uint32_t events;            /* ZLINK_EVENT_* bits to receive; 0 = none */
    uint32_t reserved;          /* must be 0 */
    uint64_t monitor_hwm_bytes; /* queue budget in bytes; 0 = ZLINK_MONITOR_HWM_DFLT */
} zlink_monitor_config_t;

/* One event, written whole (unused bytes zero) by zlink_socket_monitor_recv.
 * Addresses are NUL-terminated "tcp://..." / "ipc://..." strings, empty
 * when not known. connection_id names one physical connection in this
 * process (nonzero; for correlation only, no call takes it). */
typedef struct zlink_monitor_event {
    uint64_t event;             /* one ZLINK_EVENT_* bit */
    uint64_t value;             /* per event (see the bits above) */
    zlink_routing_id_t rid;     /* the peer's routing id, size 0 if none */
    char local_addr[256];
    char remote_addr[256];
    uint64_t connection_id;     /* 0 for listener/connecter events */
    uint32_t transport_lane;    /* ZLINK_MONITOR_TRANSPORT_LANE_* */
    uint32_t flags;             /* ZLINK_MONITOR_EVENT_FLAG_* */
} zlink_monitor_event_t;

/* Each queued event is charged this many bytes against monitor_hwm_bytes.
 * An event is admitted when the queue is empty (whatever the budget) or
 * when the queued charge plus its own stays within the budget. */
#define ZLINK_MONITOR_EVENT_CHARGE ((uint64_t)sizeof(zlink_monitor_event_t) + 64u)
/* The default budget: 4096 events. */
#define ZLINK_MONITOR_HWM_DFLT (4096u * ZLINK_MONITOR_EVENT_CHARGE)

/* Status snapshot. Groups of fields are valid only when their detail bit
 * is set; every field of a group whose bit is absent is 0. */
#define ZLINK_MONITOR_STATUS_ABI_VERSION 4u
#define ZLINK_MONITOR_SOURCE_SOCKET 1u

#define ZLINK_MONITOR_STATE_READY (1u << 0)       /* some peer is ready */
#define ZLINK_MONITOR_STATE_BOUND_READY (1u << 1) /* some tcp/ipc listener is bound */
#define ZLINK_MONITOR_STATE_CLOSED (1u << 3)      /* the socket is closed */

#define ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS (1u << 1)
#define ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS (1u << 2)
#define ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUDGET (1u << 3)
#define ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUFFERS (1u << 4)
#define ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE (1u << 5) /* DEALER and ROUTER */

typedef struct zlink_monitor_status {
    uint32_t abi_version;       /* ZLINK_MONITOR_STATUS_ABI_VERSION */
    uint32_t struct_size;       /* sizeof(zlink_monitor_status_t) */
    uint32_t source_kind;       /* ZLINK_MONITOR_SOURCE_SOCKET */
    uint32_t state_flags;       /* ZLINK_MONITOR_STATE_* */
    uint32_t detail_flags;      /* ZLINK_MONITOR_STATUS_DETAIL_* */
    uint32_t reserved;
    /* SND_PENDING_MSGS: records and bytes (charge) queued or in flight
     * toward peers; RCV_PENDING_MSGS: from peers, not yet received. The
     * four are read together under the socket's lock. */
    uint64_t snd_pending_msgs;
    uint64_t snd_pending_bytes;
    uint64_t rcv_pending_msgs;
    uint64_t rcv_pending_bytes;
    /* AUTO_HWM_BUDGET */
    uint32_t auto_hwm_enabled;
    uint32_t auto_hwm_profile;
    uint64_t auto_hwm_planned_sndhwm_bytes;
    uint64_t auto_hwm_planned_rcvhwm_bytes;
    uint64_t auto_hwm_last_recalc_ms;
    uint32_t auto_hwm_last_recalc_reason;
    uint32_t auto_hwm_send_blocked_ratio_ppm;
    uint64_t auto_hwm_deferred_sndhwm_bytes;  /* valid when ..._valid != 0 */
    uint64_t auto_hwm_deferred_rcvhwm_bytes;
    uint32_t auto_hwm_deferred_sndhwm_valid;
    uint32_t auto_hwm_deferred_rcvhwm_valid;
    /* AUTO_HWM_BUFFERS */
    uint64_t auto_hwm_applied_sndhwm_bytes;
    uint64_t auto_hwm_applied_rcvhwm_bytes;
    int32_t auto_hwm_effective_sndbuf;
    int32_t auto_hwm_effective_rcvbuf;
    uint64_t snd_bytes_in_flight;
    uint64_t rcv_bytes_in_flight;
    uint64_t minimum_core_message_charge_bytes;
    uint64_t oversize_message_admission_count;
    uint64_t oversize_message_admission_max_bytes;
    /* FLOW_STATE: how this socket's peers' receive flow looks from here. */
    uint64_t flow_paused_connections;   /* peers pausing us now */
    uint64_t flow_pause_applied_total;  /* PAUSED transitions applied */
    uint64_t flow_resume_applied_total; /* RUNNING transitions applied */
    uint64_t flow_state_stale_total;    /* FLOWSTATE frames ignored as stale */
    uint64_t flow_pause_duration_ms;    /* last completed pause (0: not tracked yet) */
} zlink_monitor_status_t;

/* Opens the monitor of socket. NULL with errno: EINVAL (cfg NULL, reserved
 * not 0, an event bit outside ZLINK_EVENT_ALL), EFAULT (not a socket),
 * ESHUTDOWN (socket closed), ETERM (context shut down), EBUSY (the socket
 * already has an open monitor), ENOMEM. */
ZLINK_EXPORT void *zlink_socket_monitor_open(void *socket, const zlink_monitor_config_t *cfg);
/* Pops the oldest event into *ev. NONE waits up to the monitored socket's
 * RCVTIMEO (read at the call; -1 infinite); DONTWAIT does not wait. With
 * nothing to return: NO_DATA/EAGAIN and *ev untouched; TERMINATED/ETERM
 * when the context was shut down; INVALID_STATE/ESHUTDOWN once the socket
 * closed and MONITOR_STOPPED was read. ev NULL or an unknown flag:
 * INVALID_STATE/EINVAL. Not a monitor: INVALID_HANDLE/EFAULT. */
ZLINK_EXPORT zlink_recv_result_t zlink_socket_monitor_recv(void *monitor,
                                                           zlink_monitor_event_t *ev,
                                                           zlink_recv_flags_t flags);
/* Writes a snapshot of the monitored socket (all of *st). */
ZLINK_EXPORT zlink_config_result_t zlink_monitor_status(void *monitor,
                                                        zlink_monitor_status_t *st);
/* Closes the monitor, discards its unread events and sets *monitor to
 * NULL. The socket may then open a new one. CLOSE_BUSY/EBUSY while another
 * call on the monitor is inside; CLOSE_INVALID_HANDLE/EFAULT when *monitor
 * is not an open monitor. */
ZLINK_EXPORT zlink_close_result_t zlink_monitor_close(void **monitor);

/* SUB prefix subscriptions: "" matches everything; '*' is literal. */
ZLINK_EXPORT zlink_config_result_t zlink_set_subscription(void *socket, const char *topic);
ZLINK_EXPORT zlink_config_result_t zlink_unset_subscription(void *socket, const char *topic);
/* The index-th subscription of a SUB in byte order (a snapshot), copied
 * into buf without a NUL; *len is in/out (capacity in, length out). A
 * buffer too small gives BUFFER_TOO_SMALL with *len = the length needed and
 * nothing written; an index past the end NOT_FOUND/ENOENT. *pattern (may be
 * NULL) is always 0: subscriptions are plain prefixes. */
ZLINK_EXPORT zlink_config_result_t zlink_subscription_at(void *socket, size_t index, char *buf,
                                                         size_t *len, int *pattern);

/* ================================================================ polling
 * Readiness of sockets, OS file descriptors and timers (seed 004 "Polling",
 * doc/decisions.md "Poller and timers"). Readiness is level-triggered, and
 * so is the wake-up: a source that becomes ready while a thread waits on it
 * ends that wait, whichever thread made the change. No call here ever
 * fails with EINTR: a wait interrupted by a signal resumes with the time
 * that remains. Results and errno follow doc/errors.md.
 */

#if defined _WIN32
typedef uintptr_t zlink_fd_t;
#else
typedef int zlink_fd_t;
#endif

typedef short zlink_poller_event_mask_t;

typedef enum zlink_poller_event_flag_e {
    ZLINK_POLLIN = 1,          /* a whole record (timer: a fire count) can be received */
    ZLINK_POLLOUT = 2,         /* a send or submit retry is worthwhile */
    ZLINK_POLLERR = 4,         /* a registered socket was closed (once); FD error bits */
    ZLINK_POLLPRI = 8,         /* FD only: platform POLLPRI */
    ZLINK_POLLITEMS_DFLT = 16, /* recommended initial item count; NOT an event bit */
    ZLINK_POLLCOMPLETION = 32, /* PAIR/DEALER/ROUTER/STREAM completion queue not empty */
    ZLINK_POLLROUTE = 64       /* ROUTER: the selected route of a routing id changed */
} zlink_poller_event_flag_e;

/* The public poller API is part of this build. */
#define ZLINK_HAVE_POLLER 1

typedef enum zlink_poller_source_kind_t {
    ZLINK_POLLER_SOURCE_SOCKET = 1,
    ZLINK_POLLER_SOURCE_FD = 2,
    ZLINK_POLLER_SOURCE_TIMER = 3
} zlink_poller_source_kind_t;

typedef struct zlink_pollitem_t {
    void *socket;      /* a socket, or NULL for an FD item */
    zlink_fd_t fd;     /* the FD when socket is NULL */
    short events;      /* bits to wait for; 0 = ignore this item */
    short revents;     /* set by zlink_poll (cleared on entry) */
} zlink_pollitem_t;

typedef struct zlink_poller_event_t {
    zlink_poller_source_kind_t source_kind;
    void *socket;      /* SOCKET events only, else NULL */
    zlink_fd_t fd;     /* FD events only, else -1 */
    void *timer;       /* TIMER events only, else NULL */
    void *user_data;   /* as given at registration */
    short events;      /* the ready bits */
} zlink_poller_event_t;

/* Waits once on items[0..item_count). Returns how many items have a
 * nonzero revents, 0 on timeout, -1 on failure with *error_out (may be
 * NULL) and errno set. timeout_ms < 0 waits without limit, 0 does not wait.
 * No item with events (item_count 0 included) returns 0 at once.
 * POLLCOMPLETION in an item is INVALID_ARGUMENT/EINVAL; a socket closed
 * before the call reports POLLERR. */
ZLINK_EXPORT int zlink_poll(zlink_pollitem_t *items, int item_count, long timeout_ms,
                            zlink_config_result_t *error_out);

/* A new poller, or NULL with errno ENOMEM. A poller belongs to no context. */
ZLINK_EXPORT void *zlink_poller_new(void);
/* Removes every registration and frees the poller; *poller_p becomes NULL.
 * CLOSE_BUSY/EBUSY while a wait (or any other call) is active on it. */
ZLINK_EXPORT zlink_close_result_t zlink_poller_destroy(void **poller_p);
/* The number of registrations, or -1 with *error_out (may be NULL) set. */
ZLINK_EXPORT int zlink_poller_size(void *poller, zlink_config_result_t *error_out);
/*
 * Registration. source is a socket, a socket monitor (reported as a SOCKET
 * source, POLLIN only) or a timer handle. A socket or monitor is pinned
 * until it is removed, so it may be closed first: it then reports POLLERR
 * once and stays registered. Errors (argument > handle > state > target):
 *   INVALID_ARGUMENT/EINVAL  unknown bit or ITEMS_DFLT in events; a negative
 *                            fd; COMPLETION on anything but a PAIR, DEALER,
 *                            ROUTER or STREAM socket
 *   INVALID_HANDLE/EFAULT    not a poller, or not a socket or timer
 *   BUSY/EBUSY               a wait is active on this poller
 *   NOT_SUPPORTED/ENOTSUP    a bit the source lacks (PRI on a socket, ROUTE
 *                            on a non-ROUTER, OUT on a timer ...)
 *   CONFLICT/EEXIST          already registered here
 *   NOT_FOUND/ENOENT         not registered here (modify, remove)
 *   INVALID_STATE/EBUSY      a timer held by another poller; a completion
 *                            bit owned by another poller
 *   INVALID_STATE/ESHUTDOWN  adding a socket that is already closed
 */
ZLINK_EXPORT zlink_config_result_t zlink_poller_add(void *poller, void *source, void *user_data,
                                                    short events);
ZLINK_EXPORT zlink_config_result_t zlink_poller_modify(void *poller, void *source, short events);
ZLINK_EXPORT zlink_config_result_t zlink_poller_remove(void *poller, void *source);
ZLINK_EXPORT zlink_config_result_t zlink_poller_add_fd(void *poller, zlink_fd_t fd,
                                                       void *user_data, short events);
ZLINK_EXPORT zlink_config_result_t zlink_poller_modify_fd(void *poller, zlink_fd_t fd,
                                                          short events);
ZLINK_EXPORT zlink_config_result_t zlink_poller_remove_fd(void *poller, zlink_fd_t fd);
/* A timer is registered for POLLIN; one poller at a time may hold it. */
ZLINK_EXPORT zlink_config_result_t zlink_poller_add_timer(void *poller, void *timer,
                                                          void *user_data);
ZLINK_EXPORT zlink_config_result_t zlink_poller_remove_timer(void *poller, void *timer);
/* Waits until a registered source is ready, then writes up to
 * event_capacity events (ready sources beyond it are reported by later
 * waits, in turn). Returns the number written, 0 on timeout, -1 with
 * *error_out (may be NULL) and errno set: INVALID_ARGUMENT/EINVAL for
 * events NULL or event_capacity <= 0; BUSY/EBUSY while another wait is
 * active; INTERNAL/ETERM when an unclosed registered socket's context was
 * shut down (until it is removed or closed). When no registration can
 * become ready (no nonzero mask, or only closed sockets) it returns at
 * once: a POLLERR not yet returned, otherwise 0. Consumes nothing. */
ZLINK_EXPORT int zlink_poller_wait(void *poller, zlink_poller_event_t *events, int event_capacity,
                                   long timeout_ms, zlink_config_result_t *error_out);

/* ----------------------------------------------------------------- timers
 * A timer fires every interval_ns nanoseconds after zlink_timer_start,
 * repeat times (0: until stopped). It runs no code and owns no thread:
 * fires are counted from the monotonic clock when somebody looks, and a
 * poller holding the timer wakes for them (POLLIN). One timer is not for
 * concurrent use by several application threads.
 */

/* A new, stopped timer, or NULL with errno ENOMEM. */
ZLINK_EXPORT void *zlink_timer_new(void);
/* Frees the timer; *timer_p becomes NULL. CLOSE_BUSY/EBUSY while a poller
 * holds it or another call is inside it (a blocked zlink_timer_recv);
 * INVALID_HANDLE/EFAULT for a bad handle. */
ZLINK_EXPORT zlink_close_result_t zlink_timer_destroy(void **timer_p);
/* (Re)starts the timer now: a new run whose first receive counts from 1
 * (unreceived fires of an earlier run are dropped). interval_ns 0 is
 * INVALID_ARGUMENT/EINVAL. */
ZLINK_EXPORT zlink_config_result_t zlink_timer_start(void *timer, uint64_t interval_ns,
                                                     uint64_t repeat);
/* No fire happens after the stop; fires already due can still be received. */
ZLINK_EXPORT zlink_config_result_t zlink_timer_stop(void *timer);
/* Writes the number of fires since the last receive (>= 1) to *count.
 * DONTWAIT: NO_DATA/EAGAIN when there is none. NONE: waits for the next
 * fire; NO_DATA/EAGAIN at once when the timer is stopped (or finished its
 * repeat count) and drained. count NULL or bad flags: INVALID_STATE/EINVAL
 * (the receive family's row for EINVAL); bad handle INVALID_HANDLE/EFAULT. */
ZLINK_EXPORT zlink_recv_result_t zlink_timer_recv(void *timer, uint64_t *count,
                                                  zlink_recv_flags_t flags);
/* ============================================================ end polling */

#ifdef __cplusplus
}
#endif

/* The framework runtime (ZLINK_1.1). */
#include "zlink/framework.h"

#endif /* ZLINK_H */
