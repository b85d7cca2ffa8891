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
#include <jni.h>


#include "conformance/native/blockers.h"

/* init(libPath) -> null, or why the helper cannot work. */
JNIEXPORT jstring JNICALL Java_io_zlink_conformance_JqRotation_nInit(JNIEnv *env, jclass cls,
                                                                      jstring jpath)
{
    (void)cls;
    char why[512];
    const char *path = (*env)->GetStringUTFChars(env, jpath, NULL);
    if (path == NULL)
        return NULL; /* OutOfMemoryError pending */
    int rc = blk_init(path, why, sizeof why);
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    return rc != 0 ? (*env)->NewStringUTF(env, why) : NULL;
}

/* addBlocker(host, gate, channel, packet) -> the zlink_fw_result_t of
 * zlink_host_add_handler (a one-way handler of the channel). */
JNIEXPORT jint JNICALL Java_io_zlink_conformance_JqRotation_nAddBlocker(JNIEnv *env, jclass cls,
                                                                         jlong host, jint gate,
                                                                         jstring jchan,
                                                                         jstring jpacket)
{
    (void)cls;
    const char *chan = (*env)->GetStringUTFChars(env, jchan, NULL);
    const char *packet = (*env)->GetStringUTFChars(env, jpacket, NULL);
    jint r = blk_add((uint64_t)host, gate, chan, packet);
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
    return blk_state(gate, what);
}

/* open(gate): lets every blocker of the gate end its turn. */
JNIEXPORT void JNICALL Java_io_zlink_conformance_JqRotation_nOpen(JNIEnv *env, jclass cls,
                                                                   jint gate)
{
    (void)env;
    (void)cls;
    blk_open(gate);
}

/* reset(): closes every gate for the next round; -1 (nothing changed)
 * while a thread still waits at one. */
JNIEXPORT jint JNICALL Java_io_zlink_conformance_JqRotation_nReset(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return blk_reset();
}
