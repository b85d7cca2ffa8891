/* blockers.h — test-only: blocking C handlers that hold a host's threads.
 *
 * JQ-08 needs every record of its senders waiting in the target host's
 * Core while the host has free permits and does not receive. The C and
 * C++ runners get there with handlers that block at a gate; a Java or
 * Node handler never holds a C thread, so their runners load a small
 * native helper (conformance/java/native/jq08_jni.c, conformance/node/
 * native/jq08_napi.c) that registers these handlers on the host handle the
 * binding exposes and opens the gates when the case says so. This header
 * is the part both helpers share; each wraps it for its runtime.
 *
 * It links nothing of ZLink: blk_init resolves the two functions it calls
 * from the libzlink the binding already loaded (RTLD_NOLOAD, so never a
 * second copy). Threads: handlers run on the host's threads, the other
 * functions on the runner's. Lock: one mutex per gate (a leaf).
 */
#ifndef CONF_NATIVE_BLOCKERS_H
#define CONF_NATIVE_BLOCKERS_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "zlink.h"

#define BLK_GATES 2

typedef struct blk_gate {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int open;    /* set by blk_open, cleared by blk_reset */
    int waiting; /* threads inside the blocker now */
    int passed;  /* blocker turns that ended */
} blk_gate_t;

static blk_gate_t blk_gates[BLK_GATES] = {
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
};

typedef zlink_fw_result_t (*blk_add_handler_fn)(zlink_host_t *, zlink_owner_kind_t,
                                                const char *, zlink_message_kind_t,
                                                const char *, zlink_handler_fn, void *);
typedef zlink_fw_result_t (*blk_turn_end_fn)(zlink_turn_t *, int, const char *);

static blk_add_handler_fn blk_add_handler;
static blk_turn_end_fn blk_turn_end;

static blk_gate_t *blk_gate(int i)
{
    return i >= 0 && i < BLK_GATES ? &blk_gates[i] : NULL;
}

/* The blocking handler: waits at its gate, then ends the turn. */
static void blk_on_blocker(zlink_turn_t *turn, void *user)
{
    blk_gate_t *g = user;
    pthread_mutex_lock(&g->lk);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lk);
    g->waiting--;
    g->passed++;
    pthread_mutex_unlock(&g->lk);
    blk_turn_end(turn, 0, NULL);
}

/* Resolves the two functions from the loaded library at path. Returns 0,
 * or -1 with why (cap bytes) saying what is missing. */
static int blk_init(const char *path, char *why, size_t cap)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) {
        snprintf(why, cap, "jq08 helper: %s is not loaded in this process: %s", path, dlerror());
        return -1;
    }
    blk_add_handler = (blk_add_handler_fn)dlsym(lib, "zlink_host_add_handler");
    blk_turn_end = (blk_turn_end_fn)dlsym(lib, "zlink_turn_end");
    if (blk_add_handler == NULL) {
        snprintf(why, cap, "jq08 helper: missing export zlink_host_add_handler");
        return -1;
    }
    if (blk_turn_end == NULL) {
        snprintf(why, cap, "jq08 helper: missing export zlink_turn_end");
        return -1;
    }
    return 0;
}

/* A one-way handler of channel (packet) on host that blocks at gate: the
 * zlink_fw_result_t of zlink_host_add_handler, -1 for bad arguments. */
static int blk_add(uint64_t host, int gate, const char *channel, const char *packet)
{
    blk_gate_t *g = blk_gate(gate);
    if (g == NULL || blk_add_handler == NULL || host == 0 || channel == NULL || packet == NULL)
        return -1;
    return blk_add_handler((zlink_host_t *)(uintptr_t)host, ZLINK_OWNER_CHANNEL, channel,
                           ZLINK_MESSAGE_SEND, packet, blk_on_blocker, g);
}

/* Threads waiting at gate (what 0) or blocker turns that ended (what 1);
 * -1 for a bad gate. */
static int blk_state(int gate, int what)
{
    blk_gate_t *g = blk_gate(gate);
    if (g == NULL)
        return -1;
    pthread_mutex_lock(&g->lk);
    int v = what == 0 ? g->waiting : g->passed;
    pthread_mutex_unlock(&g->lk);
    return v;
}

/* Lets every blocker of gate end its turn. */
static void blk_open(int gate)
{
    blk_gate_t *g = blk_gate(gate);
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lk);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lk);
}

/* Closes every gate for the next round: 0, or -1 (nothing changed) while
 * a thread still waits at one. */
static int blk_reset(void)
{
    for (int i = 0; i < BLK_GATES; i++) {
        pthread_mutex_lock(&blk_gates[i].lk);
        int busy = blk_gates[i].waiting;
        pthread_mutex_unlock(&blk_gates[i].lk);
        if (busy)
            return -1;
    }
    for (int i = 0; i < BLK_GATES; i++) {
        pthread_mutex_lock(&blk_gates[i].lk);
        blk_gates[i].open = 0;
        blk_gates[i].passed = 0;
        pthread_mutex_unlock(&blk_gates[i].lk);
    }
    return 0;
}

#endif
