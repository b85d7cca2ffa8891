/*
 * zlink_jni.c — the one native file of the Java binding: it loads
 * libzlink.so.1, resolves its exports and moves values between the JVM and
 * the C ABI. It decides nothing: every result comes from libzlink and goes
 * back to Java as the number libzlink gave.
 *
 * Design notes
 * ------------
 * Loading. io.zlink.ZLink finds libzlink.so.1 (a system property, the jar's
 * resources, java.library.path) and passes its path and the generated
 * export list (Tables.EXPORTS) to init(). init dlopen()s that path with
 * RTLD_LOCAL, resolves EVERY name of the list with dlsym and fails fast
 * with the first missing name; the function pointers this file calls are
 * then taken from that resolved list, by name. zlink_version()'s major
 * must equal the table's. Nothing links against libzlink at build time
 * (only the prototypes of zlink.h are used, through __typeof__), so the
 * Java side decides which file is loaded.
 *
 * Threads. A handler turn runs on the framework worker that opened it:
 * the trampoline attaches the worker to the JVM the first time (a daemon
 * thread "zlink-handler", detached by a thread-key destructor when the
 * worker exits) and calls Host.runTurn there, as a C handler would run;
 * a turn the handler ended before returning lets the worker go on with
 * the gate's next turn without waking another thread. The workers are
 * runtime contexts already (C marks them). Completions do not run on the
 * C dispatcher: the completion function of a held start (below) pushes
 * its event onto the one process-wide native queue (zj_queue_t: a mutex,
 * a condition variable and a singly linked list) and returns at once;
 * the Java completion pump (io.zlink.Pump, a runtime context through
 * zlink_runtime_context_enter) blocks in takeBatch() and pulls every
 * event queued by then in one crossing (the producer signals only a
 * consumer that is asleep).
 * A host's zj_queue_t only keeps its handler records (freed with it).
 *
 * Memory of an operation: call_start allocates one zj_event_t (the
 * operation) and starts the call with zlink_call_start_held, handing the
 * event to libzlink as the completion's user pointer. The completion
 * function copies the outcome struct and the call handle into it (the
 * strings and payload it points to belong to the call, which libzlink
 * keeps while the slot is held), queues it and returns: the C dispatcher
 * goes on with the next completion at once. The pump delivers it and then
 * frees it with eventFree, which first calls zlink_call_callback_done: the
 * call's dispatcher slot stays reserved until the Java completion (the
 * stage and the dependent actions it runs synchronously) has returned, so
 * the dispatcher's capacity (a callback blocked in user code counts),
 * shutdown waiting for running callbacks, and the one FIFO order (one
 * queue, one pump thread) hold as for a C callback. A refused start frees
 * the operation at once. zj_live_ops counts the operations allocated and
 * not yet freed (the tests read it).
 *
 * Locks: each queue's mutex, a leaf, held only to link or unlink an event.
 */
#include <jni.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlink.h"

/* ------------------------------------------------------------ the exports
 * The functions this file calls; each pointer comes from the resolved
 * export list by name. */
#define ZJ_FUNCS(X)                                                                    \
    X(zlink_version) X(zlink_errno) X(zlink_strerror) X(zlink_result_name)              \
    X(zlink_ctx_new) X(zlink_ctx_term) X(zlink_ctx_shutdown) X(zlink_ctx_set)            \
    X(zlink_socket) X(zlink_close) X(zlink_setsockopt) X(zlink_getsockopt)               \
    X(zlink_set_routing_id) X(zlink_bind) X(zlink_connect) X(zlink_unbind)               \
    X(zlink_disconnect) X(zlink_msg_init) X(zlink_msg_init_size) X(zlink_msg_data)       \
    X(zlink_msg_size) X(zlink_msg_close) X(zlink_multipart_close) X(zlink_send)          \
    X(zlink_send_rid) X(zlink_recv) X(zlink_router_recv) X(zlink_request)                \
    X(zlink_reply) X(zlink_reply_submit) X(zlink_socket_set_receive_flow_state)          \
    X(zlink_completion_recv) X(zlink_completion_close) X(zlink_socket_monitor_open)      \
    X(zlink_monitor_status) X(zlink_monitor_close)                                       \
    X(zlink_poll) X(zlink_poller_new) X(zlink_poller_destroy) X(zlink_poller_size) X(zlink_poller_add) \
    X(zlink_poller_modify) X(zlink_poller_remove) X(zlink_poller_add_fd)                 \
    X(zlink_poller_modify_fd) X(zlink_poller_remove_fd) X(zlink_poller_add_timer)        \
    X(zlink_poller_remove_timer) X(zlink_poller_wait) X(zlink_timer_new)                 \
    X(zlink_timer_destroy) X(zlink_timer_start) X(zlink_timer_stop) X(zlink_timer_recv)  \
    X(zlink_host_new) X(zlink_host_set_option) X(zlink_host_get_option)                  \
    X(zlink_host_add_cs_server) X(zlink_host_add_cs_client) X(zlink_channel_set_option)  \
    X(zlink_channel_get_option) X(zlink_host_add_mesh_node) X(zlink_mesh_connect)        \
    X(zlink_mesh_set_option) X(zlink_mesh_get_option) X(zlink_mesh_add_channel_client)   \
    X(zlink_mesh_add_channel_server) X(zlink_mesh_set_weight) X(zlink_host_endpoint)     \
    X(zlink_mesh_ready_peers) X(zlink_host_add_handler) X(zlink_host_start)              \
    X(zlink_host_shutdown) X(zlink_host_destroy) X(zlink_host_state) X(zlink_host_status) \
    X(zlink_host_capacity) X(zlink_host_owner_status) X(zlink_host_reset_metrics)        \
    X(zlink_host_metric) X(zlink_call_send_to_channel) X(zlink_call_request_to_channel)  \
    X(zlink_call_send_to_node) X(zlink_call_request_to_node) X(zlink_call_set_payload)   \
    X(zlink_call_set_timeout) X(zlink_call_set_metadata) X(zlink_call_start)             \
    X(zlink_call_wait) X(zlink_call_yield) X(zlink_call_cancel) X(zlink_call_release)    \
    X(zlink_call_start_held) X(zlink_call_callback_done)                                 \
    X(zlink_turn_kind) X(zlink_turn_packet) X(zlink_turn_content_type)                   \
    X(zlink_turn_payload) X(zlink_turn_metadata) X(zlink_turn_source)                    \
    X(zlink_turn_sequence) X(zlink_turn_reply) X(zlink_turn_reply_error)                 \
    X(zlink_turn_end) X(zlink_turn_respond) X(zlink_runtime_context_enter)               \
    X(zlink_runtime_context_leave) X(zlink_in_runtime_context) X(zlink_error_kind_name)

#define ZJ_DECLARE(name) static __typeof__(&name) p_##name;
ZJ_FUNCS(ZJ_DECLARE)
#undef ZJ_DECLARE

#define Z(name) (p_##name)
#define H(x) ((void *)(intptr_t)(x))
#define J(p) ((jlong)(intptr_t)(p))

static void *zj_lib;

/* --------------------------------------------------------------- queues */

enum { ZJ_EV_COMPLETION = 2 };

typedef struct zj_event {
    struct zj_event *next;
    int type;
    int64_t id;      /* COMPLETION: the operation's id */
    void *handle;    /* the call */
    zlink_outcome_t oc;
} zj_event_t;

typedef struct zj_handler {
    struct zj_handler *next;
    jobject host;    /* a global reference to the io.zlink.Host */
    int64_t id;
} zj_handler_t;

typedef struct zj_queue {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    zj_event_t *head, *tail;
    int closed;
    int waiting;             /* consumers asleep in takeBatch (signalled only then) */
    zj_handler_t *handlers;  /* freed with the queue */
} zj_queue_t;

static zj_queue_t *zj_completions;
static atomic_long zj_live_ops;

static zj_queue_t *queue_new(void)
{
    zj_queue_t *q = calloc(1, sizeof *q);
    if (q) {
        pthread_mutex_init(&q->lk, NULL);
        pthread_cond_init(&q->cv, NULL);
    }
    return q;
}

/* Called by C framework threads; never blocks beyond the leaf lock. */
static void queue_push(zj_queue_t *q, zj_event_t *ev)
{
    ev->next = NULL;
    pthread_mutex_lock(&q->lk);
    if (q->tail)
        q->tail->next = ev;
    else
        q->head = ev;
    q->tail = ev;
    int wake = q->waiting > 0;
    pthread_mutex_unlock(&q->lk);
    if (wake)
        pthread_cond_signal(&q->cv);
}

/* The framework's worker threads run Java handlers themselves: a worker
 * is attached to the JVM (as a daemon thread) the first time it runs a
 * turn and detached when it exits (the key's destructor). */
static JavaVM *zj_vm;
static jmethodID zj_run_turn; /* Host.runTurn(long, long) */
static pthread_key_t zj_attached;

static void detach_thread(void *unused)
{
    (void)unused;
    (*zj_vm)->DetachCurrentThread(zj_vm);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    (void)reserved;
    zj_vm = vm;
    if (pthread_key_create(&zj_attached, detach_thread) != 0)
        return JNI_ERR;
    return JNI_VERSION_1_8;
}

static JNIEnv *worker_env(void)
{
    JNIEnv *env = NULL;
    if ((*zj_vm)->GetEnv(zj_vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK)
        return env;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, "zlink-handler", NULL};
    if ((*zj_vm)->AttachCurrentThreadAsDaemon(zj_vm, (void **)&env, &args) != JNI_OK)
        return NULL;
    pthread_setspecific(zj_attached, (void *)1);
    return env;
}

/* On a framework worker: runs the Java handler (Host.runTurn ends the
 * turn, or leaves it to the handler's stage). The worker is then busy
 * as it is with a C handler, and a turn ended before this returns lets
 * the worker go on with the gate's next turn itself. */
static void turn_trampoline(zlink_turn_t *turn, void *user)
{
    zj_handler_t *h = user;
    JNIEnv *env = worker_env();
    if (!env) {
        Z(zlink_turn_end)(turn, 1, "the Java binding cannot attach a worker to the JVM");
        return;
    }
    (*env)->CallVoidMethod(env, h->host, zj_run_turn, (jlong)h->id, J(turn));
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env); /* runTurn catches; an Error got out */
        (*env)->ExceptionClear(env);
    }
}

/* The completion function (the C dispatcher's lane) of a held start:
 * queues the outcome and the call for the completion pump and returns.
 * The slot stays reserved until eventFree says the Java side is done. */
static void completion_fn(zlink_call_t *call, const zlink_outcome_t *oc, void *user)
{
    zj_event_t *ev = user;
    ev->oc = *oc;
    ev->handle = call;
    queue_push(zj_completions, ev);
}

/* ------------------------------------------------------------- helpers */

/* Strings cross as UTF-8, the encoding C validates and puts on the wire
 * (JNI's own "modified UTF-8" writes a character outside the BMP as two
 * 3-byte surrogates and U+0000 as C0 80, which C refuses as text). A Java
 * string that has no UTF-8 form C can take as a C string (a U+0000, which
 * would cut it short, or a lone surrogate) is refused: str_get gives NULL
 * and h->fail = ZLINK_FW_INVALID_ARGUMENT (INTERNAL_FAILURE when there is
 * no memory), and the function returns that result without calling C. A
 * short string (names, packets, content types) is converted on the stack,
 * so it costs no malloc. */
typedef struct {
    char *heap;      /* the UTF-8 when it did not fit small */
    int fail;        /* 0, or the result a refused string gives */
    char small[256];
} zj_str_t;

enum { ZJ_UNITS = 128 }; /* UTF-16 units read onto the stack at once */

/* Appends the UTF-8 of units u[0..n) at out (room for 3 bytes per unit);
 * *hi carries a high surrogate over from the previous chunk. Returns the
 * end, or NULL for a U+0000 or a lone surrogate. */
static char *utf8_put(char *out, const jchar *u, jsize n, jchar *hi)
{
    for (jsize i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (*hi) {
            if (c < 0xDC00 || c > 0xDFFF)
                return NULL;
            c = 0x10000 + (((uint32_t)*hi - 0xD800) << 10) + (c - 0xDC00);
            *hi = 0;
            *out++ = (char)(0xF0 | c >> 18);
            *out++ = (char)(0x80 | (c >> 12 & 0x3F));
            *out++ = (char)(0x80 | (c >> 6 & 0x3F));
            *out++ = (char)(0x80 | (c & 0x3F));
        } else if (c == 0 || (c >= 0xDC00 && c <= 0xDFFF)) {
            return NULL;
        } else if (c >= 0xD800 && c <= 0xDBFF) {
            *hi = (jchar)c;
        } else if (c < 0x80) {
            *out++ = (char)c;
        } else if (c < 0x800) {
            *out++ = (char)(0xC0 | c >> 6);
            *out++ = (char)(0x80 | (c & 0x3F));
        } else {
            *out++ = (char)(0xE0 | c >> 12);
            *out++ = (char)(0x80 | (c >> 6 & 0x3F));
            *out++ = (char)(0x80 | (c & 0x3F));
        }
    }
    return out;
}

static const char *str_get(JNIEnv *env, jstring js, zj_str_t *h)
{
    h->heap = NULL;
    h->fail = 0;
    if (!js)
        return NULL;
    jsize len = (*env)->GetStringLength(env, js);
    char *dst = h->small;
    if ((size_t)len * 3 + 1 > sizeof h->small) {
        dst = h->heap = malloc((size_t)len * 3 + 1);
        if (!dst) {
            h->fail = ZLINK_FW_INTERNAL_FAILURE;
            return NULL;
        }
    }
    jchar units[ZJ_UNITS], hi = 0;
    char *w = dst;
    for (jsize at = 0; at < len && w; at += ZJ_UNITS) {
        jsize n = len - at < ZJ_UNITS ? len - at : ZJ_UNITS;
        (*env)->GetStringRegion(env, js, at, n, units);
        w = utf8_put(w, units, n, &hi);
    }
    if (!w || hi) {
        free(h->heap);
        h->heap = NULL;
        h->fail = ZLINK_FW_INVALID_ARGUMENT;
        return NULL;
    }
    *w = 0;
    return dst;
}

static void str_put(zj_str_t *h)
{
    free(h->heap);
    h->heap = NULL;
}

/* The first refusal of up to two converted strings (b may be NULL), or 0. */
static int str_fail(const zj_str_t *a, const zj_str_t *b)
{
    return a->fail ? a->fail : b && b->fail ? b->fail : 0;
}

/* The Java string of C's UTF-8 s (NULL gives null). A byte that is not
 * part of a well-formed sequence becomes U+FFFD (C gives only valid text;
 * this keeps a bad one from reaching the JVM as undefined input). */
static jstring str_new(JNIEnv *env, const char *s)
{
    if (!s)
        return NULL;
    static const jchar empty[1] = {0};
    size_t n = strlen(s);
    if (n == 0)
        return (*env)->NewString(env, empty, 0);
    jchar small[256], *u = small;
    if (n > sizeof small / sizeof small[0] && !(u = malloc(n * sizeof *u))) {
        (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                         "zlink: no memory for a string");
        return NULL;
    }
    u[0] = 0; /* n > 0, so the loop writes it; this tells the compiler */
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    jsize k = 0;
    while (p < end) {
        uint32_t c = *p, cp, min;
        size_t len;
        if (c < 0x80) {
            u[k++] = (jchar)c;
            p++;
            continue;
        }
        if ((c & 0xE0) == 0xC0)
            len = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            len = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            len = 4, cp = c & 0x07, min = 0x10000;
        else
            len = 0, cp = 0, min = 1;
        size_t i = 1;
        for (; len && i < len && p + i < end && (p[i] & 0xC0) == 0x80; i++)
            cp = cp << 6 | (p[i] & 0x3F);
        if (!len || i < len || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            u[k++] = 0xFFFD;
            p++;
            continue;
        }
        if (cp >= 0x10000) {
            u[k++] = (jchar)(0xD800 + ((cp - 0x10000) >> 10));
            u[k++] = (jchar)(0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            u[k++] = (jchar)cp;
        }
        p += len;
    }
    jstring r = (*env)->NewString(env, u, k);
    if (u != small)
        free(u);
    return r;
}

/* A copy of b's bytes (malloc, at least 1 byte) into *out; *n its length. */
static int bytes_get(JNIEnv *env, jbyteArray b, void **out, size_t *n)
{
    *n = b ? (size_t)(*env)->GetArrayLength(env, b) : 0;
    *out = malloc(*n ? *n : 1);
    if (!*out)
        return -1;
    if (*n)
        (*env)->GetByteArrayRegion(env, b, 0, (jsize)*n, *out);
    return 0;
}

/* bytes_get into small (ZJ_SMALL bytes, the caller's stack) when b fits:
 * C copies what it is given, so most payloads need no malloc. */
enum { ZJ_SMALL = 4096 };

static int bytes_in(JNIEnv *env, jbyteArray b, char *small, void **out, size_t *n)
{
    *n = b ? (size_t)(*env)->GetArrayLength(env, b) : 0;
    if (*n > ZJ_SMALL)
        return bytes_get(env, b, out, n);
    *out = small;
    if (*n)
        (*env)->GetByteArrayRegion(env, b, 0, (jsize)*n, (jbyte *)small);
    return 0;
}

static jbyteArray bytes_new(JNIEnv *env, const void *p, size_t n)
{
    jbyteArray a = (*env)->NewByteArray(env, (jsize)n);
    if (a && n)
        (*env)->SetByteArrayRegion(env, a, 0, (jsize)n, p);
    return a;
}

static void set_int(JNIEnv *env, jintArray a, jint v)
{
    if (a)
        (*env)->SetIntArrayRegion(env, a, 0, 1, &v);
}

static void set_long(JNIEnv *env, jlongArray a, jlong v)
{
    if (a)
        (*env)->SetLongArrayRegion(env, a, 0, 1, &v);
}

static int rid_from(JNIEnv *env, jbyteArray b, zlink_routing_id_t *rid)
{
    memset(rid, 0, sizeof *rid);
    jsize n = b ? (*env)->GetArrayLength(env, b) : 0;
    if (n > 255)
        return -1;
    rid->size = (uint8_t)n;
    if (n)
        (*env)->GetByteArrayRegion(env, b, 0, n, (jbyte *)rid->data);
    return 0;
}

#define JFN(ret, name) JNIEXPORT ret JNICALL Java_io_zlink_Native_##name

/* -------------------------------------------------------------- loading */

/* Resolves every name of names; NULL, or the first missing name (a new
 * Java string). */
static jstring resolve_all(JNIEnv *env, void *lib, jobjectArray names)
{
    jsize n = (*env)->GetArrayLength(env, names);
    for (jsize i = 0; i < n; i++) {
        jstring js = (*env)->GetObjectArrayElement(env, names, i);
        zj_str_t h;
        const char *name = str_get(env, js, &h);
        void *sym = name ? dlsym(lib, name) : NULL;
        str_put(&h);
        if (!sym)
            return js;
        (*env)->DeleteLocalRef(env, js);
    }
    return NULL;
}

static int listed(JNIEnv *env, jobjectArray names, const char *want)
{
    jsize n = (*env)->GetArrayLength(env, names);
    for (jsize i = 0; i < n; i++) {
        jstring js = (*env)->GetObjectArrayElement(env, names, i);
        zj_str_t h;
        const char *name = str_get(env, js, &h);
        int eq = name && strcmp(name, want) == 0;
        str_put(&h);
        (*env)->DeleteLocalRef(env, js);
        if (eq)
            return 1;
    }
    return 0;
}

/* init(path, exports, major): null on success, else the reason, which
 * names the missing export. */
JFN(jstring, init)(JNIEnv *env, jclass cls, jstring jpath, jobjectArray names, jint major)
{
    (void)cls;
    char msg[512];
    if (zj_lib)
        return NULL;
    zj_str_t h;
    const char *path = str_get(env, jpath, &h);
    if (!path) /* dlopen(NULL) would give the main program */
        return (*env)->NewStringUTF(env, "the library path is not a valid string");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(msg, sizeof msg, "cannot load %s: %s", path ? path : "(null)", why ? why : "?");
        str_put(&h);
        return str_new(env, msg);
    }
    str_put(&h);
    jstring missing = resolve_all(env, lib, names);
    if (missing) {
        const char *m = (*env)->GetStringUTFChars(env, missing, NULL);
        snprintf(msg, sizeof msg, "libzlink lacks the export %s", m);
        (*env)->ReleaseStringUTFChars(env, missing, m);
        dlclose(lib);
        return str_new(env, msg);
    }
#define ZJ_RESOLVE(name)                                                               \
    if (!listed(env, names, #name)) {                                                  \
        dlclose(lib);                                                                  \
        return (*env)->NewStringUTF(env, "the export table lacks " #name);             \
    }                                                                                  \
    p_##name = (__typeof__(p_##name))dlsym(lib, #name);
    ZJ_FUNCS(ZJ_RESOLVE)
#undef ZJ_RESOLVE
    int ma = -1, mi = -1, pa = -1;
    p_zlink_version(&ma, &mi, &pa);
    if (ma != major) {
        snprintf(msg, sizeof msg, "libzlink is version %d.%d.%d, the binding needs major %d",
                 ma, mi, pa, (int)major);
        dlclose(lib);
        return str_new(env, msg);
    }
    zj_completions = queue_new();
    if (!zj_completions) {
        dlclose(lib);
        return (*env)->NewStringUTF(env, "out of memory");
    }
    zj_lib = lib;
    return NULL;
}

/* The first of names the loaded library does not export, or null. */
JFN(jstring, missingExport)(JNIEnv *env, jclass cls, jobjectArray names)
{
    (void)cls;
    return resolve_all(env, zj_lib, names);
}

JFN(jintArray, version)(JNIEnv *env, jclass cls)
{
    (void)cls;
    jint v[3];
    int a, b, c;
    Z(zlink_version)(&a, &b, &c);
    v[0] = a, v[1] = b, v[2] = c;
    jintArray r = (*env)->NewIntArray(env, 3);
    (*env)->SetIntArrayRegion(env, r, 0, 3, v);
    return r;
}

JFN(jlong, liveOperations)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return atomic_load(&zj_live_ops);
}

JFN(jstring, resultName)(JNIEnv *env, jclass cls, jint v)
{
    (void)cls;
    return str_new(env, Z(zlink_result_name)(v));
}

JFN(jstring, errorKindName)(JNIEnv *env, jclass cls, jint k)
{
    (void)cls;
    return str_new(env, Z(zlink_error_kind_name)(k));
}

JFN(jint, lastErrno)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return Z(zlink_errno)();
}

JFN(jstring, strerror)(JNIEnv *env, jclass cls, jint e)
{
    (void)cls;
    return str_new(env, Z(zlink_strerror)(e));
}

JFN(jint, runtimeContextEnter)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return Z(zlink_runtime_context_enter)();
}

JFN(jint, runtimeContextLeave)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return Z(zlink_runtime_context_leave)();
}

JFN(jboolean, inRuntimeContext)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return Z(zlink_in_runtime_context)() ? JNI_TRUE : JNI_FALSE;
}

/* ------------------------------------------------------ queues and events */

JFN(jlong, completionQueue)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return J(zj_completions);
}

JFN(jlong, queueNew)(JNIEnv *env, jclass cls)
{
    (void)env, (void)cls;
    return J(queue_new());
}

/* Frees a closed queue no thread waits on, its handler records and any
 * event left in it. */
JFN(void, queueFree)(JNIEnv *env, jclass cls, jlong jq)
{
    (void)cls;
    zj_queue_t *q = H(jq);
    if (!q)
        return;
    while (q->head) {
        zj_event_t *e = q->head;
        q->head = e->next;
        free(e);
    }
    while (q->handlers) {
        zj_handler_t *h = q->handlers;
        q->handlers = h->next;
        (*env)->DeleteGlobalRef(env, h->host);
        free(h);
    }
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->lk);
    free(q);
}

/* Blocks until an event is queued or the queue is
 * closed and empty (0), then unlinks up to out.length / 4 events at once
 * and writes each one's address, id, result and remote code at
 * out[4i..4i+4) and, for result OK, its payload (a new byte[]; else null) at
 * payloads[i]; returns how many. */
JFN(jint, takeBatch)(JNIEnv *env, jclass cls, jlong jq, jlongArray jout, jobjectArray payloads)
{
    (void)cls;
    zj_queue_t *q = H(jq);
    enum { CAP = 64 };
    jlong buf[4 * CAP];
    jsize cap = (*env)->GetArrayLength(env, jout) / 4;
    if (cap > CAP)
        cap = CAP;
    pthread_mutex_lock(&q->lk);
    while (!q->head && !q->closed) {
        q->waiting++;
        pthread_cond_wait(&q->cv, &q->lk);
        q->waiting--;
    }
    zj_event_t *first = q->head, *e = first, *last = NULL;
    jsize n = 0;
    while (e && n < cap) {
        last = e;
        e = e->next;
        n++;
    }
    q->head = e;
    if (!e)
        q->tail = NULL;
    pthread_mutex_unlock(&q->lk);
    if (last)
        last->next = NULL;
    jsize i = 0;
    for (e = first; e; e = e->next, i++) {
        buf[4 * i] = J(e);
        buf[4 * i + 1] = e->id;
        buf[4 * i + 2] = e->oc.result;
        buf[4 * i + 3] = (jlong)e->oc.remote_code;
        jbyteArray p = e->oc.result == 0 && e->oc.payload
                           ? bytes_new(env, e->oc.payload, e->oc.payload_size) : NULL;
        /* No memory for the array: the events are already taken, so the
         * error is not raised here (it would stop the batch); the payload
         * stays null and CallBase reads it again, where the
         * OutOfMemoryError fails that call's stage. */
        if (!p && (*env)->ExceptionCheck(env))
            (*env)->ExceptionClear(env);
        (*env)->SetObjectArrayElement(env, payloads, i, p);
        if (p)
            (*env)->DeleteLocalRef(env, p);
    }
    if (n)
        (*env)->SetLongArrayRegion(env, jout, 0, 4 * n, buf);
    return n;
}

#define EV ((zj_event_t *)H(ev))
JFN(jint, eventResult)(JNIEnv *e, jclass c, jlong ev) { (void)e, (void)c; return EV->oc.result; }
JFN(jint, eventRemoteCode)(JNIEnv *e, jclass c, jlong ev)
{
    (void)e, (void)c;
    return (jint)EV->oc.remote_code;
}
JFN(jstring, eventMessage)(JNIEnv *e, jclass c, jlong ev)
{
    (void)c;
    return str_new(e, EV->oc.message ? EV->oc.message : "");
}
JFN(jbyteArray, eventPayload)(JNIEnv *e, jclass c, jlong ev)
{
    (void)c;
    return EV->oc.payload ? bytes_new(e, EV->oc.payload, EV->oc.payload_size) : NULL;
}
JFN(jstring, eventPacket)(JNIEnv *e, jclass c, jlong ev)
{
    (void)c;
    return str_new(e, EV->oc.packet ? EV->oc.packet : "");
}
JFN(jstring, eventContentType)(JNIEnv *e, jclass c, jlong ev)
{
    (void)c;
    return str_new(e, EV->oc.content_type ? EV->oc.content_type : "");
}
/* Frees an event. A completion's: after zlink_call_callback_done, which
 * gives the call's dispatcher slot back (the Java completion has
 * returned; a call the application released meanwhile ended its hold at
 * release, and done then answers INVALID_HANDLE, which changes nothing). */
JFN(void, eventFree)(JNIEnv *e, jclass c, jlong ev)
{
    (void)e, (void)c;
    if (EV && EV->type == ZJ_EV_COMPLETION) {
        /* counted out first: whoever waits for the slot (a shutdown)
         * sees the operation gone once done returns */
        atomic_fetch_sub(&zj_live_ops, 1);
        Z(zlink_call_callback_done)(EV->handle);
    }
    free(EV);
}
#undef EV

/* ---------------------------------------------------------------- hosts */

JFN(jlong, hostNew)(JNIEnv *env, jclass cls, jstring jname, jintArray res)
{
    (void)cls;
    zj_str_t h;
    zlink_fw_result_t r = 0;
    const char *name = str_get(env, jname, &h);
    zlink_host_t *host = (r = str_fail(&h, NULL)) ? NULL : Z(zlink_host_new)(name, &r);
    str_put(&h);
    set_int(env, res, r);
    return J(host);
}

JFN(jint, hostSetOption)(JNIEnv *e, jclass c, jlong h, jint opt, jlong v)
{
    (void)e, (void)c;
    return Z(zlink_host_set_option)(H(h), opt, v);
}

JFN(jint, hostGetOption)(JNIEnv *env, jclass c, jlong h, jint opt, jlongArray out)
{
    (void)c;
    int64_t v = 0;
    zlink_fw_result_t r = Z(zlink_host_get_option)(H(h), opt, &v);
    set_long(env, out, v);
    return r;
}

/* The string-taking host functions: which = 0 add_cs_server(a, b),
 * 1 add_cs_client(a, b), 2 mesh_add_channel_client(a, b). */
JFN(jint, hostAdd)(JNIEnv *env, jclass c, jint which, jlong h, jstring ja, jstring jb)
{
    (void)c;
    zj_str_t ha, hb;
    const char *a = str_get(env, ja, &ha), *b = str_get(env, jb, &hb);
    zlink_fw_result_t r = ZLINK_FW_INVALID_ARGUMENT;
    if (str_fail(&ha, &hb))
        r = str_fail(&ha, &hb);
    else if (which == 0)
        r = Z(zlink_host_add_cs_server)(H(h), a, b);
    else if (which == 1)
        r = Z(zlink_host_add_cs_client)(H(h), a, b);
    else if (which == 2)
        r = Z(zlink_mesh_add_channel_client)(H(h), a, b);
    str_put(&ha);
    str_put(&hb);
    return r;
}

/* which = 0 channel, 1 mesh. */
JFN(jint, nodeSetOption)(JNIEnv *env, jclass c, jint which, jlong h, jstring jn, jint opt,
                         jlong v)
{
    (void)c;
    zj_str_t hn;
    const char *n = str_get(env, jn, &hn);
    zlink_fw_result_t r = str_fail(&hn, NULL);
    if (!r)
        r = which == 0 ? Z(zlink_channel_set_option)(H(h), n, opt, v)
                       : Z(zlink_mesh_set_option)(H(h), n, opt, v);
    str_put(&hn);
    return r;
}

JFN(jint, nodeGetOption)(JNIEnv *env, jclass c, jint which, jlong h, jstring jn, jint opt,
                         jlongArray out)
{
    (void)c;
    zj_str_t hn;
    int64_t v = 0;
    const char *n = str_get(env, jn, &hn);
    zlink_fw_result_t r = str_fail(&hn, NULL);
    if (!r)
        r = which == 0 ? Z(zlink_channel_get_option)(H(h), n, opt, &v)
                       : Z(zlink_mesh_get_option)(H(h), n, opt, &v);
    str_put(&hn);
    set_long(env, out, v);
    return r;
}

JFN(jint, addMeshNode)(JNIEnv *env, jclass c, jlong h, jstring jmesh, jbyteArray jrid,
                       jstring jep)
{
    (void)c;
    zj_str_t hm, he;
    void *rid;
    size_t n;
    if (bytes_get(env, jrid, &rid, &n))
        return ZLINK_FW_INTERNAL_FAILURE;
    const char *mesh = str_get(env, jmesh, &hm), *ep = str_get(env, jep, &he);
    zlink_fw_result_t r = str_fail(&hm, &he);
    if (!r)
        r = Z(zlink_host_add_mesh_node)(H(h), mesh, rid, n, ep);
    str_put(&hm);
    str_put(&he);
    free(rid);
    return r;
}

JFN(jint, meshConnect)(JNIEnv *env, jclass c, jlong h, jstring jmesh, jstring jep,
                       jbyteArray jrid)
{
    (void)c;
    zj_str_t hm, he;
    void *rid;
    size_t n;
    if (bytes_get(env, jrid, &rid, &n))
        return ZLINK_FW_INTERNAL_FAILURE;
    const char *mesh = str_get(env, jmesh, &hm), *ep = str_get(env, jep, &he);
    zlink_fw_result_t r = str_fail(&hm, &he);
    if (!r)
        r = Z(zlink_mesh_connect)(H(h), mesh, ep, rid, n);
    str_put(&hm);
    str_put(&he);
    free(rid);
    return r;
}

/* which = 0 mesh_add_channel_server, 1 mesh_set_weight. */
JFN(jint, meshWeight)(JNIEnv *env, jclass c, jint which, jlong h, jstring jmesh, jstring jch,
                      jint weight)
{
    (void)c;
    zj_str_t hm, hc;
    const char *m = str_get(env, jmesh, &hm), *ch = str_get(env, jch, &hc);
    zlink_fw_result_t r = str_fail(&hm, &hc);
    if (!r)
        r = which == 0 ? Z(zlink_mesh_add_channel_server)(H(h), m, ch, weight)
                       : Z(zlink_mesh_set_weight)(H(h), m, ch, weight);
    str_put(&hm);
    str_put(&hc);
    return r;
}

JFN(jstring, hostEndpoint)(JNIEnv *env, jclass c, jlong h, jstring jname, jintArray res)
{
    (void)c;
    char buf[512];
    zj_str_t hn;
    const char *name = str_get(env, jname, &hn);
    zlink_fw_result_t r = str_fail(&hn, NULL);
    if (!r)
        r = Z(zlink_host_endpoint)(H(h), name, buf, sizeof buf);
    str_put(&hn);
    set_int(env, res, r);
    return r == 0 ? str_new(env, buf) : NULL;
}

JFN(jint, meshReadyPeers)(JNIEnv *env, jclass c, jlong h, jstring jmesh, jintArray res)
{
    (void)c;
    zj_str_t hm;
    zlink_fw_result_t r = 0;
    const char *mesh = str_get(env, jmesh, &hm);
    int n = (r = str_fail(&hm, NULL)) ? -1 : Z(zlink_mesh_ready_peers)(H(h), mesh, &r);
    str_put(&hm);
    set_int(env, res, r);
    return n;
}

/* Registers a handler whose turns run self.runTurn(id, turn) on the
 * worker; its record is kept with queue (freed by queueFree). */
JFN(jint, addHandler)(JNIEnv *env, jclass c, jlong h, jlong jq, jobject self, jint owner,
                      jstring jowner, jint kind, jstring jpacket, jlong id)
{
    (void)c;
    zj_queue_t *q = H(jq);
    if (!zj_run_turn) {
        jclass hc = (*env)->GetObjectClass(env, self);
        zj_run_turn = (*env)->GetMethodID(env, hc, "runTurn", "(JJ)V");
        if (!zj_run_turn)
            return ZLINK_FW_INTERNAL_FAILURE;
    }
    zj_handler_t *hd = calloc(1, sizeof *hd);
    if (!hd)
        return ZLINK_FW_INTERNAL_FAILURE;
    hd->host = (*env)->NewGlobalRef(env, self);
    hd->id = id;
    if (!hd->host) {
        free(hd);
        return ZLINK_FW_INTERNAL_FAILURE;
    }
    zj_str_t ho, hp;
    const char *oname = str_get(env, jowner, &ho), *packet = str_get(env, jpacket, &hp);
    zlink_fw_result_t r = str_fail(&ho, &hp);
    if (!r)
        r = Z(zlink_host_add_handler)(H(h), (zlink_owner_kind_t)owner, oname,
                                      (zlink_message_kind_t)kind, packet, turn_trampoline, hd);
    str_put(&ho);
    str_put(&hp);
    if (r != 0) {
        (*env)->DeleteGlobalRef(env, hd->host);
        free(hd);
        return r;
    }
    pthread_mutex_lock(&q->lk);
    hd->next = q->handlers;
    q->handlers = hd;
    pthread_mutex_unlock(&q->lk);
    return 0;
}

/* which = 0 start, 1 destroy, 2 state, 3 reset_metrics. */
JFN(jint, hostDo)(JNIEnv *e, jclass c, jint which, jlong h)
{
    (void)e, (void)c;
    switch (which) {
    case 0: return Z(zlink_host_start)(H(h));
    case 1: return Z(zlink_host_destroy)(H(h));
    case 2: return Z(zlink_host_state)(H(h));
    case 3: return Z(zlink_host_reset_metrics)(H(h));
    default: return ZLINK_FW_INVALID_ARGUMENT;
    }
}

JFN(jint, hostShutdown)(JNIEnv *e, jclass c, jlong h, jlong deadline)
{
    (void)e, (void)c;
    return Z(zlink_host_shutdown)(H(h), deadline);
}

static void put_longs(JNIEnv *env, jlongArray out, const jlong *v, jsize n)
{
    jsize cap = (*env)->GetArrayLength(env, out);
    (*env)->SetLongArrayRegion(env, out, 0, n < cap ? n : cap, v);
}

/* The status snapshot as longs, in the struct's field order. */
JFN(jint, hostStatus)(JNIEnv *env, jclass c, jlong h, jlongArray out)
{
    (void)c;
    zlink_host_status_t s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    zlink_fw_result_t r = Z(zlink_host_status)(H(h), &s);
    jlong v[] = {s.state, s.is_ready, s.accepting_work, (jlong)s.requests_inflight,
                 (jlong)s.oneway_waiting, (jlong)s.admission_waiters_max,
                 (jlong)s.dispatcher_in_use, (jlong)s.dispatcher_capacity,
                 (jlong)s.turns_running, (jlong)s.turns_queued, (jlong)s.max_queued_jobs,
                 (jlong)s.permits_in_use};
    if (r == 0)
        put_longs(env, out, v, sizeof v / sizeof v[0]);
    return r;
}

JFN(jint, hostCapacity)(JNIEnv *env, jclass c, jlong h, jlongArray out)
{
    (void)c;
    zlink_host_capacity_t s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    zlink_fw_result_t r = Z(zlink_host_capacity)(H(h), &s);
    jlong v[] = {s.profile, (jlong)s.manual_max, s.pause_percent, s.resume_percent,
                 (jlong)s.effective_processors, (jlong)s.effective_max, (jlong)s.pause_count,
                 (jlong)s.resume_count, (jlong)s.reserved_supply_permits, (jlong)s.queued_jobs,
                 (jlong)s.permits_in_use, (jlong)s.peak_permits_in_use, s.pressure_state,
                 s.current_pause_ns, s.cumulative_pause_ns, (jlong)s.transitions_paused,
                 (jlong)s.transitions_running, (jlong)s.capacity_waiters,
                 (jlong)s.capacity_waits, s.capacity_wait_ns,
                 (jlong)s.flow_state_config_failures};
    if (r == 0)
        put_longs(env, out, v, sizeof v / sizeof v[0]);
    return r;
}

JFN(jint, ownerStatus)(JNIEnv *env, jclass c, jlong h, jint owner, jstring jname,
                       jlongArray out)
{
    (void)c;
    zlink_owner_status_t s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    zj_str_t hn;
    const char *name = str_get(env, jname, &hn);
    zlink_fw_result_t r = str_fail(&hn, NULL);
    if (!r)
        r = Z(zlink_host_owner_status)(H(h), (zlink_owner_kind_t)owner, name, &s);
    str_put(&hn);
    jlong v[] = {s.busy, (jlong)s.accepted_seq, (jlong)s.queued_records, (jlong)s.queued_bytes,
                 (jlong)s.running_records, (jlong)s.running_bytes, (jlong)s.handled};
    if (r == 0)
        put_longs(env, out, v, sizeof v / sizeof v[0]);
    return r;
}

JFN(jint, hostMetric)(JNIEnv *env, jclass c, jlong h, jstring jname, jstring jlabels,
                      jlongArray out)
{
    (void)c;
    zj_str_t hn, hl;
    int64_t v = 0;
    const char *name = str_get(env, jname, &hn), *labels = str_get(env, jlabels, &hl);
    zlink_fw_result_t r = str_fail(&hn, &hl);
    if (!r)
        r = Z(zlink_host_metric)(H(h), name, labels, &v);
    str_put(&hn);
    str_put(&hl);
    set_long(env, out, v);
    return r;
}

/* ---------------------------------------------------------------- calls */

/* which = 0 send_to_channel, 1 request_to_channel, 2 send_to_node,
 * 3 request_to_node (rid only for the node builders). */
JFN(jlong, callNew)(JNIEnv *env, jclass c, jint which, jlong h, jstring jname, jbyteArray jrid,
                    jintArray res)
{
    (void)c;
    zj_str_t hn;
    const char *name = str_get(env, jname, &hn);
    zlink_fw_result_t r = 0;
    zlink_call_t *call = NULL;
    void *rid = NULL;
    size_t n = 0;
    if (str_fail(&hn, NULL) || (which >= 2 && bytes_get(env, jrid, &rid, &n))) {
        set_int(env, res, str_fail(&hn, NULL) ? str_fail(&hn, NULL) : ZLINK_FW_INTERNAL_FAILURE);
        str_put(&hn);
        return 0;
    }
    switch (which) {
    case 0: call = Z(zlink_call_send_to_channel)(H(h), name, &r); break;
    case 1: call = Z(zlink_call_request_to_channel)(H(h), name, &r); break;
    case 2: call = Z(zlink_call_send_to_node)(H(h), name, rid, n, &r); break;
    case 3: call = Z(zlink_call_request_to_node)(H(h), name, rid, n, &r); break;
    default: r = ZLINK_FW_INVALID_ARGUMENT;
    }
    free(rid);
    str_put(&hn);
    set_int(env, res, r);
    return J(call);
}

JFN(jint, callSetPayload)(JNIEnv *env, jclass c, jlong call, jstring jpacket, jstring jct,
                          jbyteArray jdata)
{
    (void)c;
    zj_str_t hp, hc;
    char small[ZJ_SMALL];
    void *data;
    size_t n;
    if (bytes_in(env, jdata, small, &data, &n))
        return ZLINK_FW_INTERNAL_FAILURE;
    const char *packet = str_get(env, jpacket, &hp), *ct = str_get(env, jct, &hc);
    zlink_fw_result_t r = str_fail(&hp, &hc);
    if (!r)
        r = Z(zlink_call_set_payload)(H(call), packet, ct, data, n);
    str_put(&hp);
    str_put(&hc);
    if (data != small)
        free(data);
    return r;
}

JFN(jint, callSetTimeout)(JNIEnv *e, jclass c, jlong call, jlong ns)
{
    (void)e, (void)c;
    return Z(zlink_call_set_timeout)(H(call), ns);
}

JFN(jint, callSetMetadata)(JNIEnv *env, jclass c, jlong call, jstring jk, jstring jv)
{
    (void)c;
    zj_str_t hk, hv;
    const char *k = str_get(env, jk, &hk), *v = str_get(env, jv, &hv);
    zlink_fw_result_t r = str_fail(&hk, &hv);
    if (!r)
        r = Z(zlink_call_set_metadata)(H(call), k, v);
    str_put(&hk);
    str_put(&hv);
    return r;
}

/* zlink_call_start_held (yield = 0) or zlink_call_yield (1) with a new
 * operation carrying id; a refused terminator frees the operation. */
JFN(jint, callStart)(JNIEnv *e, jclass c, jlong call, jlong id, jint yield)
{
    (void)e, (void)c;
    zj_event_t *op = calloc(1, sizeof *op);
    if (!op)
        return ZLINK_FW_INTERNAL_FAILURE;
    op->type = ZJ_EV_COMPLETION;
    op->id = id;
    atomic_fetch_add(&zj_live_ops, 1);
    zlink_fw_result_t r = yield ? Z(zlink_call_yield)(H(call), completion_fn, op)
                                : Z(zlink_call_start_held)(H(call), completion_fn, op);
    if (r != 0) {
        atomic_fetch_sub(&zj_live_ops, 1);
        free(op);
    }
    return r;
}

/* zlink_call_wait into a new event (type 0, not an operation) that the
 * caller reads with the event accessors and frees; res gets the result. */
JFN(jlong, callWait)(JNIEnv *env, jclass c, jlong call, jintArray res)
{
    (void)c;
    zj_event_t *ev = calloc(1, sizeof *ev);
    if (!ev) {
        set_int(env, res, ZLINK_FW_INTERNAL_FAILURE);
        return 0;
    }
    ev->oc.struct_size = sizeof ev->oc;
    zlink_fw_result_t r = Z(zlink_call_wait)(H(call), &ev->oc);
    set_int(env, res, r);
    return J(ev);
}

JFN(jint, callCancel)(JNIEnv *e, jclass c, jlong call)
{
    (void)e, (void)c;
    return Z(zlink_call_cancel)(H(call));
}

JFN(jint, callRelease)(JNIEnv *e, jclass c, jlong call)
{
    (void)e, (void)c;
    return Z(zlink_call_release)(H(call));
}

/* ---------------------------------------------------------------- turns */

JFN(jint, turnKind)(JNIEnv *e, jclass c, jlong t)
{
    (void)e, (void)c;
    return Z(zlink_turn_kind)(H(t));
}

JFN(jstring, turnPacket)(JNIEnv *env, jclass c, jlong t)
{
    (void)c;
    return str_new(env, Z(zlink_turn_packet)(H(t)));
}

JFN(jstring, turnContentType)(JNIEnv *env, jclass c, jlong t)
{
    (void)c;
    return str_new(env, Z(zlink_turn_content_type)(H(t)));
}

JFN(jbyteArray, turnPayload)(JNIEnv *env, jclass c, jlong t)
{
    (void)c;
    size_t n = 0;
    const void *p = Z(zlink_turn_payload)(H(t), &n);
    return bytes_new(env, p, p ? n : 0);
}

JFN(jstring, turnMetadata)(JNIEnv *env, jclass c, jlong t, jstring jk)
{
    (void)c;
    zj_str_t hk;
    const char *k = str_get(env, jk, &hk);
    const char *v = str_fail(&hk, NULL) ? NULL : Z(zlink_turn_metadata)(H(t), k);
    str_put(&hk);
    return str_new(env, v);
}

JFN(jbyteArray, turnSource)(JNIEnv *env, jclass c, jlong t)
{
    (void)c;
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    if (Z(zlink_turn_source)(H(t), &rid) != 0)
        return NULL;
    return bytes_new(env, rid.data, rid.size);
}

JFN(jlong, turnSequence)(JNIEnv *e, jclass c, jlong t)
{
    (void)e, (void)c;
    return (jlong)Z(zlink_turn_sequence)(H(t));
}

/* kind < 0: zlink_turn_reply; else zlink_turn_reply_error(kind, message). */
JFN(jlong, turnReply)(JNIEnv *env, jclass c, jlong t, jint kind, jstring jmsg, jintArray res)
{
    (void)c;
    zlink_fw_result_t r = 0;
    zlink_call_t *call;
    if (kind < 0) {
        call = Z(zlink_turn_reply)(H(t), &r);
    } else {
        zj_str_t hm;
        const char *msg = str_get(env, jmsg, &hm);
        call = (r = str_fail(&hm, NULL))
                   ? NULL
                   : Z(zlink_turn_reply_error)(H(t), (zlink_error_kind_t)kind, msg, &r);
        str_put(&hm);
    }
    set_int(env, res, r);
    return J(call);
}

JFN(jint, turnEnd)(JNIEnv *env, jclass c, jlong t, jboolean failed, jstring jmsg)
{
    (void)c;
    zj_str_t hm;
    const char *msg = str_get(env, jmsg, &hm);
    zlink_fw_result_t r = str_fail(&hm, NULL);
    if (!r)
        r = Z(zlink_turn_end)(H(t), failed ? 1 : 0, msg);
    str_put(&hm);
    return r;
}

JFN(jint, turnRespond)(JNIEnv *env, jclass c, jlong t, jstring jpacket, jstring jct,
                       jbyteArray jdata)
{
    (void)c;
    zj_str_t hp, hc;
    char small[ZJ_SMALL];
    void *data;
    size_t n;
    if (bytes_in(env, jdata, small, &data, &n))
        return ZLINK_FW_INTERNAL_FAILURE;
    const char *packet = str_get(env, jpacket, &hp), *ct = str_get(env, jct, &hc);
    zlink_fw_result_t r = str_fail(&hp, &hc);
    if (!r)
        r = Z(zlink_turn_respond)(H(t), packet, ct, data, n);
    str_put(&hp);
    str_put(&hc);
    if (data != small)
        free(data);
    return r;
}

/* ----------------------------------------------------------------- Core */

JFN(jlong, ctxNew)(JNIEnv *e, jclass c)
{
    (void)e, (void)c;
    return J(Z(zlink_ctx_new)());
}

/* which = 0 term, 1 shutdown. */
JFN(jint, ctxEnd)(JNIEnv *e, jclass c, jint which, jlong ctx)
{
    (void)e, (void)c;
    return which ? Z(zlink_ctx_shutdown)(H(ctx)) : Z(zlink_ctx_term)(H(ctx));
}

JFN(jint, ctxSet)(JNIEnv *e, jclass c, jlong ctx, jint opt, jint v)
{
    (void)e, (void)c;
    return Z(zlink_ctx_set)(H(ctx), opt, v);
}

JFN(jlong, socketNew)(JNIEnv *e, jclass c, jlong ctx, jint type)
{
    (void)e, (void)c;
    return J(Z(zlink_socket)(H(ctx), type));
}

JFN(jint, socketClose)(JNIEnv *e, jclass c, jlong s)
{
    (void)e, (void)c;
    return Z(zlink_close)(H(s));
}

/* The socket's monitor (every event bit off: the status is what is read). */
JFN(jlong, monitorOpen)(JNIEnv *e, jclass c, jlong s)
{
    (void)e, (void)c;
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    return J(Z(zlink_socket_monitor_open)(H(s), &cfg));
}

/* The status into out: state_flags, detail_flags, the four pending
 * counters, the five flow-state counters. */
JFN(jint, monitorStatus)(JNIEnv *env, jclass c, jlong mon, jlongArray out)
{
    (void)c;
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    st.abi_version = ZLINK_MONITOR_STATUS_ABI_VERSION;
    st.struct_size = sizeof st;
    int r = Z(zlink_monitor_status)(H(mon), &st);
    jlong v[11] = {st.state_flags, st.detail_flags, (jlong)st.snd_pending_msgs,
                   (jlong)st.snd_pending_bytes, (jlong)st.rcv_pending_msgs,
                   (jlong)st.rcv_pending_bytes, (jlong)st.flow_paused_connections,
                   (jlong)st.flow_pause_applied_total, (jlong)st.flow_resume_applied_total,
                   (jlong)st.flow_state_stale_total, (jlong)st.flow_pause_duration_ms};
    (*env)->SetLongArrayRegion(env, out, 0, 11, v);
    return r;
}

JFN(jint, monitorClose)(JNIEnv *e, jclass c, jlong mon)
{
    (void)e, (void)c;
    void *m = H(mon);
    return Z(zlink_monitor_close)(&m);
}

JFN(jint, setsockopt)(JNIEnv *env, jclass c, jlong s, jint opt, jbyteArray jv)
{
    (void)c;
    void *v;
    size_t n;
    if (bytes_get(env, jv, &v, &n))
        return -1;
    zlink_config_result_t r = Z(zlink_setsockopt)(H(s), opt, v, n);
    free(v);
    return r;
}

/* Reads up to cap bytes of the option into out[0]. */
JFN(jint, getsockopt)(JNIEnv *env, jclass c, jlong s, jint opt, jint cap, jobjectArray out)
{
    (void)c;
    unsigned char buf[512];
    size_t n = (size_t)cap < sizeof buf ? (size_t)cap : sizeof buf;
    zlink_config_result_t r = Z(zlink_getsockopt)(H(s), opt, buf, &n);
    if (r == 0)
        (*env)->SetObjectArrayElement(env, out, 0, bytes_new(env, buf, n));
    return r;
}

JFN(jint, setRoutingId)(JNIEnv *env, jclass c, jlong s, jbyteArray jid)
{
    (void)c;
    void *v;
    size_t n;
    if (bytes_get(env, jid, &v, &n))
        return -1;
    zlink_config_result_t r = Z(zlink_set_routing_id)(H(s), v, n);
    free(v);
    return r;
}

/* which = 0 bind, 1 connect, 2 unbind, 3 disconnect. */
JFN(jint, endpoint)(JNIEnv *env, jclass c, jint which, jlong s, jstring jep)
{
    (void)c;
    zj_str_t he;
    const char *ep = str_get(env, jep, &he);
    int r;
    switch (which) {
    case 0: r = Z(zlink_bind)(H(s), ep); break;
    case 1: r = Z(zlink_connect)(H(s), ep); break;
    case 2: r = Z(zlink_unbind)(H(s), ep); break;
    default: r = Z(zlink_disconnect)(H(s), ep); break;
    }
    str_put(&he);
    return r;
}

/* parts as messages (msg[0..n) initialised); -1 when out of memory. */
static int parts_from(JNIEnv *env, jobjectArray jparts, zlink_msg_t **msgs, size_t *n)
{
    *n = (size_t)(*env)->GetArrayLength(env, jparts);
    *msgs = calloc(*n ? *n : 1, sizeof(zlink_msg_t));
    if (!*msgs)
        return -1;
    for (size_t i = 0; i < *n; i++) {
        jbyteArray b = (*env)->GetObjectArrayElement(env, jparts, (jsize)i);
        jsize len = b ? (*env)->GetArrayLength(env, b) : 0;
        Z(zlink_msg_init_size)(&(*msgs)[i], (size_t)len);
        if (len)
            (*env)->GetByteArrayRegion(env, b, 0, len, Z(zlink_msg_data)(&(*msgs)[i]));
        (*env)->DeleteLocalRef(env, b);
    }
    return 0;
}

static jobjectArray parts_to(JNIEnv *env, zlink_msg_t *msgs, size_t n)
{
    jclass bc = (*env)->FindClass(env, "[B");
    jobjectArray a = (*env)->NewObjectArray(env, (jsize)n, bc, NULL);
    for (size_t i = 0; a && i < n; i++) {
        jbyteArray b = bytes_new(env, Z(zlink_msg_data)(&msgs[i]), Z(zlink_msg_size)(&msgs[i]));
        (*env)->SetObjectArrayElement(env, a, (jsize)i, b);
        (*env)->DeleteLocalRef(env, b);
    }
    return a;
}

/* zlink_send (rid null) or zlink_send_rid; the wait token into idOut. */
JFN(jint, send)(JNIEnv *env, jclass c, jlong s, jbyteArray jrid, jobjectArray jparts,
                jint flags, jlongArray idOut)
{
    (void)c;
    zlink_msg_t *msgs;
    size_t n;
    zlink_routing_id_t rid;
    if (jrid && rid_from(env, jrid, &rid))
        return ZLINK_SUBMIT_INVALID_ARGUMENT;
    if (parts_from(env, jparts, &msgs, &n))
        return ZLINK_SUBMIT_INTERNAL;
    zlink_completion_id_t id = 0;
    zlink_submit_result_t r =
        jrid ? Z(zlink_send_rid)(H(s), &rid, msgs, n, (zlink_send_flags_t)flags, NULL, &id)
             : Z(zlink_send)(H(s), msgs, n, (zlink_send_flags_t)flags, NULL, &id);
    Z(zlink_multipart_close)(msgs, n);
    free(msgs);
    set_long(env, idOut, (jlong)id);
    return r;
}

/* zlink_request (rid null: DEALER); the completion id into idOut. */
JFN(jint, request)(JNIEnv *env, jclass c, jlong s, jbyteArray jrid, jobjectArray jparts,
                   jint flags, jint timeout_ms, jlongArray idOut)
{
    (void)c;
    zlink_msg_t *msgs;
    size_t n;
    zlink_routing_id_t rid;
    if (jrid && rid_from(env, jrid, &rid))
        return ZLINK_SUBMIT_INVALID_ARGUMENT;
    if (parts_from(env, jparts, &msgs, &n))
        return ZLINK_SUBMIT_INTERNAL;
    zlink_completion_id_t id = 0;
    zlink_submit_result_t r = Z(zlink_request)(H(s), jrid ? &rid : NULL, msgs, n,
                                               (zlink_send_flags_t)flags, (uint32_t)timeout_ms,
                                               NULL, &id);
    Z(zlink_multipart_close)(msgs, n);
    free(msgs);
    set_long(env, idOut, (jlong)id);
    return r;
}

JFN(jint, reply)(JNIEnv *env, jclass c, jlong s, jbyteArray jrid, jlong token,
                 jobjectArray jparts)
{
    (void)c;
    zlink_msg_t *msgs;
    size_t n;
    zlink_routing_id_t rid;
    if (rid_from(env, jrid, &rid))
        return ZLINK_SUBMIT_INVALID_ARGUMENT;
    if (parts_from(env, jparts, &msgs, &n))
        return ZLINK_SUBMIT_INTERNAL;
    zlink_submit_result_t r = Z(zlink_reply)(H(s), &rid, (zlink_reply_token_t)token, msgs, n);
    Z(zlink_multipart_close)(msgs, n);
    free(msgs);
    return r;
}

/* zlink_reply_submit: error 0 a reply, > 0 an error reply; the wait
 * token into idOut. */
JFN(jint, replySubmit)(JNIEnv *env, jclass c, jlong s, jbyteArray jrid, jlong token, jint error,
                       jobjectArray jparts, jint flags, jlongArray idOut)
{
    (void)c;
    zlink_msg_t *msgs;
    size_t n;
    zlink_routing_id_t rid;
    if (rid_from(env, jrid, &rid))
        return ZLINK_SUBMIT_INVALID_ARGUMENT;
    if (parts_from(env, jparts, &msgs, &n))
        return ZLINK_SUBMIT_INTERNAL;
    zlink_completion_id_t id = 0;
    zlink_submit_result_t r = Z(zlink_reply_submit)(H(s), &rid, (zlink_reply_token_t)token, error,
                                                    msgs, n, (zlink_send_flags_t)flags, NULL, &id);
    Z(zlink_multipart_close)(msgs, n);
    free(msgs);
    set_long(env, idOut, (jlong)id);
    return r;
}

JFN(jint, receiveFlow)(JNIEnv *e, jclass c, jlong s, jint state)
{
    (void)e, (void)c;
    return Z(zlink_socket_set_receive_flow_state)(H(s), (zlink_receive_flow_state_t)state);
}

#define ZJ_MAX_PARTS 64

/* zlink_recv (router = 0) or zlink_router_recv (1): out[0] the parts,
 * out[1] the routing id (or null); token[0] the reply token. */
JFN(jint, recv)(JNIEnv *env, jclass c, jlong s, jint router, jint flags, jobjectArray out,
                jlongArray token)
{
    (void)c;
    zlink_msg_t msgs[ZJ_MAX_PARTS];
    for (int i = 0; i < ZJ_MAX_PARTS; i++)
        Z(zlink_msg_init)(&msgs[i]);
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    size_t count = 0;
    zlink_recv_result_t r =
        router ? Z(zlink_router_recv)(H(s), &rid, &tok, msgs, ZJ_MAX_PARTS, &count,
                                      (zlink_recv_flags_t)flags)
               : Z(zlink_recv)(H(s), &rid, msgs, ZJ_MAX_PARTS, &count,
                               (zlink_recv_flags_t)flags);
    if (r == 0) {
        (*env)->SetObjectArrayElement(env, out, 0, parts_to(env, msgs, count));
        if (rid)
            (*env)->SetObjectArrayElement(env, out, 1, bytes_new(env, rid->data, rid->size));
        set_long(env, token, (jlong)tok);
    }
    Z(zlink_multipart_close)(msgs, ZJ_MAX_PARTS);
    return r;
}

/* One completion record: longs[0..5) = kind, id, send_result,
 * send_terminal_errno, request_result; out[0] reply parts, out[1] rid. */
JFN(jint, completionRecv)(JNIEnv *env, jclass c, jlong s, jint flags, jlongArray longs,
                          jobjectArray out)
{
    (void)c;
    zlink_completion_t rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    zlink_recv_result_t r = Z(zlink_completion_recv)(H(s), &rec, (zlink_recv_flags_t)flags);
    if (r == 0) {
        jlong v[5] = {rec.kind, (jlong)rec.completion_id, rec.send_result,
                      rec.send_terminal_errno, rec.request_result};
        put_longs(env, longs, v, 5);
        if (rec.reply_parts)
            (*env)->SetObjectArrayElement(env, out, 0,
                                          parts_to(env, rec.reply_parts, rec.reply_part_count));
        if (rec.peer_rid.size)
            (*env)->SetObjectArrayElement(env, out, 1,
                                          bytes_new(env, rec.peer_rid.data, rec.peer_rid.size));
    }
    Z(zlink_completion_close)(&rec);
    return r;
}

/* --------------------------------------------------------- poller, timer
 * The poll surface marshals only: arrays in, arrays out, the C answer
 * back as it came. A null Java array is C's NULL (events, items, the
 * error_out of zlink_poll, _size and _wait), so C's own checks answer. */

JFN(jlong, pollerNew)(JNIEnv *e, jclass c)
{
    (void)e, (void)c;
    return J(Z(zlink_poller_new)());
}

/* slot[0]: the handle in, what zlink_poller_destroy left in it out. */
JFN(jint, pollerDestroy)(JNIEnv *env, jclass c, jlongArray slot)
{
    (void)c;
    jlong v = 0;
    (*env)->GetLongArrayRegion(env, slot, 0, 1, &v);
    void *h = H(v);
    int r = Z(zlink_poller_destroy)(&h);
    set_long(env, slot, J(h));
    return r;
}

JFN(jint, pollerSize)(JNIEnv *env, jclass c, jlong p, jintArray res)
{
    (void)c;
    zlink_config_result_t r = 0;
    int n = Z(zlink_poller_size)(H(p), res ? &r : NULL);
    set_int(env, res, r);
    return n;
}

/* op: 0 add, 1 modify, 2 remove (socket); 3 add, 4 modify, 5 remove (fd);
 * 6 add timer, 7 remove timer. */
JFN(jint, pollerCtl)(JNIEnv *e, jclass c, jint op, jlong p, jlong src, jint fd, jlong user,
                     jint events)
{
    (void)e, (void)c;
    void *ud = H(user);
    switch (op) {
    case 0: return Z(zlink_poller_add)(H(p), H(src), ud, (short)events);
    case 1: return Z(zlink_poller_modify)(H(p), H(src), (short)events);
    case 2: return Z(zlink_poller_remove)(H(p), H(src));
    case 3: return Z(zlink_poller_add_fd)(H(p), fd, ud, (short)events);
    case 4: return Z(zlink_poller_modify_fd)(H(p), fd, (short)events);
    case 5: return Z(zlink_poller_remove_fd)(H(p), fd);
    case 6: return Z(zlink_poller_add_timer)(H(p), H(src), ud);
    case 7: return Z(zlink_poller_remove_timer)(H(p), H(src));
    default: return -1;
    }
}

/* A native array of n elements of size sz: the stack buffer when it fits,
 * else the heap (an OutOfMemoryError pending when that fails). */
static void *zj_scratch(JNIEnv *env, void *stack, size_t stack_size, size_t n, size_t sz)
{
    if (n * sz <= stack_size)
        return stack;
    void *m = malloc(n * sz);
    if (m == NULL)
        (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"), "poll arrays");
    return m;
}

/* Waits into a native array of cap events (NULL when out is null); event
 * i goes to out[6i..6i+6) = kind, socket, fd, timer, user data, events.
 * Returns C's count or -1 (res[0] the result; res null: NULL error_out). */
JFN(jint, pollerWait)(JNIEnv *env, jclass c, jlong p, jint cap, jlong timeout_ms,
                      jlongArray out, jintArray res)
{
    (void)c;
    zlink_poller_event_t stack[16], *ev = NULL;
    if (out != NULL && (ev = zj_scratch(env, stack, sizeof stack, cap > 0 ? cap : 1, sizeof *ev)) == NULL)
        return -1;
    zlink_config_result_t r = 0;
    int n = Z(zlink_poller_wait)(H(p), ev, cap, (long)timeout_ms, res ? &r : NULL);
    set_int(env, res, r);
    for (int i = 0; i < n; i++) {
        jlong v[6] = {ev[i].source_kind, J(ev[i].socket), ev[i].fd,
                      J(ev[i].timer),    J(ev[i].user_data), ev[i].events};
        (*env)->SetLongArrayRegion(env, out, 6 * i, 6, v);
    }
    if (ev != stack)
        free(ev);
    return n;
}

/* zlink_poll over count items packed in v (4 longs each: socket, fd,
 * events, revents; v null: NULL items); the revents C left, failures
 * included, go back into v. */
JFN(jint, poll)(JNIEnv *env, jclass c, jlongArray v, jint count, jlong timeout_ms, jintArray res)
{
    (void)c;
    zlink_pollitem_t stack[16], *it = NULL;
    jlong *raw = NULL;
    if (v != NULL) {
        if ((it = zj_scratch(env, stack, sizeof stack, count > 0 ? count : 1, sizeof *it)) == NULL)
            return -1;
        raw = (*env)->GetLongArrayElements(env, v, NULL);
        for (int i = 0; i < count; i++) {
            it[i].socket = H(raw[4 * i]);
            it[i].fd = (zlink_fd_t)raw[4 * i + 1];
            it[i].events = (short)raw[4 * i + 2];
            it[i].revents = (short)raw[4 * i + 3];
        }
        (*env)->ReleaseLongArrayElements(env, v, raw, JNI_ABORT);
    }
    zlink_config_result_t r = 0;
    int n = Z(zlink_poll)(it, count, (long)timeout_ms, res ? &r : NULL);
    set_int(env, res, r);
    for (int i = 0; v != NULL && i < count; i++) {
        jlong re = it[i].revents;
        (*env)->SetLongArrayRegion(env, v, 4 * i + 3, 1, &re);
    }
    if (it != stack)
        free(it);
    return n;
}

JFN(jlong, timerNew)(JNIEnv *e, jclass c)
{
    (void)e, (void)c;
    return J(Z(zlink_timer_new)());
}

JFN(jint, timerDestroy)(JNIEnv *env, jclass c, jlongArray slot)
{
    (void)c;
    jlong v = 0;
    (*env)->GetLongArrayRegion(env, slot, 0, 1, &v);
    void *h = H(v);
    int r = Z(zlink_timer_destroy)(&h);
    set_long(env, slot, J(h));
    return r;
}

JFN(jint, timerStart)(JNIEnv *e, jclass c, jlong t, jlong interval_ns, jlong repeat)
{
    (void)e, (void)c;
    return Z(zlink_timer_start)(H(t), (uint64_t)interval_ns, (uint64_t)repeat);
}

JFN(jint, timerStop)(JNIEnv *e, jclass c, jlong t)
{
    (void)e, (void)c;
    return Z(zlink_timer_stop)(H(t));
}

JFN(jint, timerRecv)(JNIEnv *env, jclass c, jlong t, jint flags, jlongArray count)
{
    (void)c;
    uint64_t n = 0;
    zlink_recv_result_t r = Z(zlink_timer_recv)(H(t), &n, (zlink_recv_flags_t)flags);
    set_long(env, count, (jlong)n);
    return r;
}
