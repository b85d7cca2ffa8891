/*
 * jq08_jni.c — TEST-ONLY JNI helper of the Java conformance runner's JQ-08
 * (conformance/java/src/io/zlink/conformance/JqRotation.java).
 *
 * Why it exists: JQ-08 needs every record of A1..A3 waiting in B's Core
 * queues while B has free permits and stays RUNNING. The C body
 * (conformance/c/jq_raw.c) gets there by holding both of B's host threads
 * (HANDLER_THREADS 1 = two threads) inside two blocking handlers, so no
 * thread is left to receive. A Java handler never holds a C thread (the
 * binding's trampoline queues the turn to a pump and returns), so this
 * library registers two blocking C handlers on B through the C ABI, on
 * the host pointer Host.nativeHandle() gives, before B starts. Each waits
 * at its own gate until the runner opens it; the runner reads how many
 * threads wait at each gate. The observed rotation is the Java handler's.
 *
 * It links nothing of ZLink: init() takes the path of the libzlink.so.1
 * the binding loaded (ZLink.loadedLibraryPath()), gets that already loaded
 * copy with RTLD_NOLOAD (never a second copy) and resolves the two
 * functions it calls by name, failing with the missing one.
 *
 * Threads: the blockers run on B's host threads; the other functions on
 * the case's thread. Lock: one mutex per gate (a leaf).
 */
#define _GNU_SOURCE
#include <jni.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "zlink.h"

#define NGATES 2

typedef struct gate {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int open;    /* set by open(), cleared by reset() */
    int waiting; /* threads inside the blocker now */
    int passed;  /* blocker turns that ended */
} gate_t;

static gate_t gates[NGATES] = {
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
};

typedef zlink_fw_result_t (*add_handler_fn)(zlink_host_t *, zlink_owner_kind_t, const char *,
                                            zlink_message_kind_t, const char *,
                                            zlink_handler_fn, void *);
typedef zlink_fw_result_t (*turn_end_fn)(zlink_turn_t *, int, const char *);

static add_handler_fn add_handler;
static turn_end_fn turn_end;

/* The blocking handler: waits at its gate, then ends the turn. */
static void on_blocker(zlink_turn_t *turn, void *user)
{
    gate_t *g = user;
    pthread_mutex_lock(&g->lk);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lk);
    g->waiting--;
    g->passed++;
    pthread_mutex_unlock(&g->lk);
    turn_end(turn, 0, NULL);
}

static gate_t *gate_at(jint i)
{
    return i >= 0 && i < NGATES ? &gates[i] : NULL;
}

/* init(libPath) -> null, or why the helper cannot work. */
JNIEXPORT jstring JNICALL Java_io_zlink_conformance_JqRotation_nInit(JNIEnv *env, jclass cls,
                                                                      jstring jpath)
{
    (void)cls;
    char why[512];
    const char *path = (*env)->GetStringUTFChars(env, jpath, NULL);
    if (path == NULL)
        return NULL; /* OutOfMemoryError pending */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        snprintf(why, sizeof why, "jq08 helper: %s is not loaded in this process: %s", path,
                 dlerror());
    } else {
        add_handler = (add_handler_fn)dlsym(lib, "zlink_host_add_handler");
        turn_end = (turn_end_fn)dlsym(lib, "zlink_turn_end");
        why[0] = 0;
        if (add_handler == NULL)
            snprintf(why, sizeof why, "jq08 helper: missing export zlink_host_add_handler");
        else if (turn_end == NULL)
            snprintf(why, sizeof why, "jq08 helper: missing export zlink_turn_end");
    }
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    return why[0] ? (*env)->NewStringUTF(env, why) : NULL;
}

/* addBlocker(host, gate, channel, packet) -> the zlink_fw_result_t of
 * zlink_host_add_handler (a one-way handler of the channel). */
JNIEXPORT jint JNICALL Java_io_zlink_conformance_JqRotation_nAddBlocker(JNIEnv *env, jclass cls,
                                                                         jlong host, jint gate,
                                                                         jstring jchan,
                                                                         jstring jpacket)
{
    (void)cls;
    gate_t *g = gate_at(gate);
    if (g == NULL || add_handler == NULL || host == 0)
        return -1;
    const char *chan = (*env)->GetStringUTFChars(env, jchan, NULL);
    const char *packet = (*env)->GetStringUTFChars(env, jpacket, NULL);
    jint r = -1;
    if (chan != NULL && packet != NULL)
        r = add_handler((zlink_host_t *)(intptr_t)host, ZLINK_OWNER_CHANNEL, chan,
                        ZLINK_MESSAGE_SEND, packet, on_blocker, g);
    if (chan != NULL)
        (*env)->ReleaseStringUTFChars(env, jchan, chan);
    if (packet != NULL)
        (*env)->ReleaseStringUTFChars(env, jpacket, packet);
    return r;
}

/* state(gate, what): 0 waiting, 1 passed; -1 for a bad gate. */
JNIEXPORT jint JNICALL Java_io_zlink_conformance_JqRotation_nState(JNIEnv *env, jclass cls,
                                                                    jint gate, jint what)
{
    (void)env;
    (void)cls;
    gate_t *g = gate_at(gate);
    if (g == NULL)
        return -1;
    pthread_mutex_lock(&g->lk);
    int v = what == 0 ? g->waiting : g->passed;
    pthread_mutex_unlock(&g->lk);
    return v;
}

/* open(gate): lets every blocker of the gate end its turn. */
JNIEXPORT void JNICALL Java_io_zlink_conformance_JqRotation_nOpen(JNIEnv *env, jclass cls,
                                                                   jint gate)
{
    (void)env;
    (void)cls;
    gate_t *g = gate_at(gate);
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lk);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lk);
}

/* reset(): closes every gate for the next round; -1 (nothing changed)
 * while a thread still waits at one. */
JNIEXPORT jint JNICALL Java_io_zlink_conformance_JqRotation_nReset(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    for (int i = 0; i < NGATES; i++) {
        pthread_mutex_lock(&gates[i].lk);
        int busy = gates[i].waiting;
        pthread_mutex_unlock(&gates[i].lk);
        if (busy)
            return -1;
    }
    for (int i = 0; i < NGATES; i++) {
        pthread_mutex_lock(&gates[i].lk);
        gates[i].open = 0;
        gates[i].passed = 0;
        pthread_mutex_unlock(&gates[i].lk);
    }
    return 0;
}
