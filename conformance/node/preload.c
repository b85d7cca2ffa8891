/*
 * preload.c — a test-only LD_PRELOAD library for two Node runner cases
 * whose point JavaScript cannot reach on its own. The case starts a child
 * node process with this library preloaded; the child drives it by sending
 * real-time signals to its own pid (Node.js resets signals 1..31 at start,
 * not the real-time ones), and reads its answers from the FIFO named by
 * ZLINK_PRELOAD_ACK (8-byte little-endian counts).
 *
 * PL-15: PESTER_SIG has a handler installed WITHOUT SA_RESTART. On
 * TRIGGER_SIG a helper thread sends PESTER_SIG ZLINK_PRELOAD_SIGNALS times
 * (10 ms apart) to every thread of the process except the main thread and
 * itself (so the pool thread blocked in zlink_poll or zlink_poller_wait is
 * interrupted), then answers the number of signals sent.
 *
 * PL-23: ARM_SIG makes malloc, calloc, realloc and aligned allocations
 * that libzlink.so.1 itself asks for on the signalled (main) thread fail
 * with ENOMEM, as an exhausted system would; DISARM_SIG ends that and
 * answers how many requests failed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "conformance/native/alloc_fail.h"

#define PESTER_SIG (SIGRTMIN + 6)
#define TRIGGER_SIG (SIGRTMIN + 7)
#define ARM_SIG (SIGRTMIN + 8)
#define DISARM_SIG (SIGRTMIN + 9)

static atomic_long delivered;
static sem_t go;

static void answer(uint64_t v)
{
    const char *path = getenv("ZLINK_PRELOAD_ACK");
    if (path == NULL)
        return;
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    if (fd < 0)
        return;
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    ssize_t n = write(fd, b, sizeof b);
    (void)n;
    close(fd);
}

static void on_pester(int sig)
{
    (void)sig;
    atomic_fetch_add(&delivered, 1);
}

static void on_trigger(int sig)
{
    (void)sig;
    sem_post(&go);
}

static void on_arm(int sig)
{
    (void)sig;
    af_arm();
}

static void on_disarm(int sig)
{
    (void)sig;
    answer(af_disarm());
}

static uint64_t pester_all(int rounds)
{
    pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
    uint64_t sent = 0;
    for (int r = 0; r < rounds; r++) {
        DIR *d = opendir("/proc/self/task");
        if (d == NULL)
            return sent;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            pid_t tid = (pid_t)atoi(e->d_name);
            if (tid <= 0 || tid == pid || tid == self)
                continue;
            if (syscall(SYS_tgkill, pid, tid, PESTER_SIG) == 0)
                sent++;
        }
        closedir(d);
        struct timespec ts = {0, 10 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    return sent;
}

static void *pester_main(void *arg)
{
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, PESTER_SIG);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    const char *n = getenv("ZLINK_PRELOAD_SIGNALS");
    int rounds = n != NULL ? atoi(n) : 1;
    for (;;) {
        while (sem_wait(&go) != 0) {
        }
        answer(pester_all(rounds));
    }
    return NULL;
}

__attribute__((constructor)) static void preload_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_pester;
    sa.sa_flags = 0; /* no SA_RESTART: the point of PL-15 */
    sigaction(PESTER_SIG, &sa, NULL);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_trigger;
    sigaction(TRIGGER_SIG, &sa, NULL);
    sa.sa_handler = on_arm;
    sigaction(ARM_SIG, &sa, NULL);
    sa.sa_handler = on_disarm;
    sigaction(DISARM_SIG, &sa, NULL);
    sem_init(&go, 0, 0);
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_create(&th, &at, pester_main, NULL);
    pthread_attr_destroy(&at);
}
