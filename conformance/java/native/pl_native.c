/*
 * pl_native.c — test-only native help for the Java runner's PL cases
 * (io.zlink.conformance.PlNative): what the JVM cannot do by itself and
 * the cases need around the binding, never instead of it. It calls no
 * libzlink function.
 *
 *  - file descriptors: pipes, a loopback TCP pair, one-byte reads and
 *    writes, urgent (MSG_OOB) data, close (PL-01, 12, 13, 14, 25, 27);
 *  - signals (PL-15): a SIGUSR1 handler installed WITHOUT SA_RESTART that
 *    counts deliveries, the caller's kernel thread id, tgkill;
 *  - allocation failure on demand (PL-23): when this library is in
 *    LD_PRELOAD it is the process's malloc, calloc, realloc,
 *    aligned_alloc and posix_memalign (passing through to glibc), and
 *    between allocFailBegin and allocFailEnd the requests that code of
 *    libzlink.so.1 makes on the calling thread fail with ENOMEM, as on an
 *    exhausted system. Loaded by System.load only (no preload), those
 *    functions are not the process's and preloaded() says so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <jni.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PN(ret, name) JNIEXPORT ret JNICALL Java_io_zlink_conformance_PlNative_##name

/* ------------------------------------------------------------------ fds */

PN(jint, pipe)(JNIEnv *env, jclass c, jintArray out)
{
    (void)c;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -errno;
    jint v[2] = {fds[0], fds[1]};
    (*env)->SetIntArrayRegion(env, out, 0, 2, v);
    return 0;
}

/* A connected loopback TCP pair: out = {client, server}. */
PN(jint, tcpPair)(JNIEnv *env, jclass c, jintArray out)
{
    (void)c;
    int lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lst < 0)
        return -errno;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    int cl = -1, sv = -1, rc = 0;
    if (bind(lst, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lst, 1) != 0 ||
        getsockname(lst, (struct sockaddr *)&sa, &len) != 0 ||
        (cl = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        connect(cl, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        (sv = accept4(lst, NULL, NULL, SOCK_CLOEXEC)) < 0)
        rc = -errno;
    close(lst);
    if (rc != 0) {
        if (cl >= 0)
            close(cl);
        return rc;
    }
    jint v[2] = {cl, sv};
    (*env)->SetIntArrayRegion(env, out, 0, 2, v);
    return 0;
}

/* 1 written, or -errno. oob: one byte of urgent TCP data. */
PN(jint, writeByte)(JNIEnv *env, jclass c, jint fd, jboolean oob)
{
    (void)env, (void)c;
    ssize_t n = oob ? send(fd, "!", 1, MSG_OOB) : write(fd, "!", 1);
    return n < 0 ? -errno : (jint)n;
}

/* The byte read, -1 at end of file, or -1000 - errno. */
PN(jint, readByte)(JNIEnv *env, jclass c, jint fd)
{
    (void)env, (void)c;
    unsigned char b;
    ssize_t n = read(fd, &b, 1);
    return n == 1 ? b : n == 0 ? -1 : -1000 - errno;
}

PN(jint, close)(JNIEnv *env, jclass c, jint fd)
{
    (void)env, (void)c;
    return close(fd) == 0 ? 0 : -errno;
}

/* -------------------------------------------------------------- signals */

static atomic_long g_delivered;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&g_delivered, 1);
}

/* SIGUSR1 with a counting handler and sa_flags 0: no SA_RESTART. */
PN(jint, installNoRestart)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGUSR1, &sa, NULL) == 0 ? 0 : -errno;
}

PN(jlong, delivered)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    return atomic_load(&g_delivered);
}

PN(jint, gettid)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    return (jint)syscall(SYS_gettid);
}

PN(jint, signalThread)(JNIEnv *env, jclass c, jint tid)
{
    (void)env, (void)c;
    return syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0 ? 0 : -errno;
}

/* ------------------------------------------------- allocation failure */

#include "conformance/native/alloc_fail.h"

/* Whether this library's malloc is the process's (it is in LD_PRELOAD). */
PN(jboolean, preloaded)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    return dlsym(RTLD_DEFAULT, "malloc") == (void *)malloc;
}

/* Starts failing libzlink's requests on this thread; 0, or -1 when
 * libzlink.so.1 is not loaded yet. */
PN(jint, allocFailBegin)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    if (af_locate() != 0)
        return -1;
    af_arm();
    return 0;
}

/* Ends it; the number of requests that failed. */
PN(jint, allocFailEnd)(JNIEnv *env, jclass c)
{
    (void)env, (void)c;
    return (jint)af_disarm();
}
