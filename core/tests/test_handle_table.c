/*
 * test_handle_table.c — unit tests of the handle table (core/src/handle.c):
 * the encoding refuses every value but the exact one, generations make
 * released handles stale, the close gate and the shut/leave-last protocol
 * count calls in flight correctly, the table grows, and generations wrap
 * without ever issuing 0. Internal API; the public guarantees are in
 * test_handles.c.
 *
 * Each test binary is its own process, so the table starts empty here:
 * test_one_bit_flips relies on that (it runs first).
 */
#include "util/handle.h"
#include "zltest.h"

#include <pthread.h>
#include <stdlib.h>

static int dummy_objects[4];

static uint32_t index_of(void *h) { return (uint32_t)((uintptr_t)h & 0xFFFFFF); }
static uint32_t gen_of(void *h) { return (uint32_t)((uintptr_t)h >> 24); }

static void *new_handle(int kind, void *obj, zl_hslot_t **slot)
{
    void *h = NULL;
    ZT_EQ_INT(zl_handle_new(kind, obj, &h, slot), 0);
    ZT_CHECK(h != NULL);
    return h;
}

/* close + release: what every destroy does. */
static void end_handle(void *h, int kind)
{
    void *obj;
    zl_hslot_t *slot;
    ZT_EQ_INT(zl_handle_close(h, kind, &obj, &slot), 0);
    zl_handle_release(slot);
}

static void test_one_bit_flips(void)
{
    /* The only live handle in the table: any other value is refused. */
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_SOCKET, &dummy_objects[0], &slot);
    void *obj = NULL;
    zl_hslot_t *s2 = NULL;
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_SOCKET, &obj, &s2), 0);
    ZT_CHECK(obj == &dummy_objects[0] && s2 == slot);
    zl_handle_leave(s2);
    for (int bit = 0; bit < 64; bit++) {
        void *x = (void *)((uintptr_t)h ^ ((uintptr_t)1 << bit));
        for (int kind = ZL_HANDLE_CTX; kind <= ZL_HANDLE_TIMER; kind++) {
            int rc = zl_handle_enter(x, kind, &obj, &s2);
            ZT_CHECK(rc == EFAULT || rc == ESTALE);
            ZT_CHECK(zl_handle_state(x, kind) != 0);
        }
    }
    /* And it still works, uncounted by the refusals. */
    ZT_EQ_INT(zl_handle_state(h, ZL_HANDLE_SOCKET), 0);
    end_handle(h, ZL_HANDLE_SOCKET);
}

static void test_kind_and_shape(void)
{
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_POLLER, &dummy_objects[1], &slot);
    ZT_EQ_INT(zl_handle_kind(h), ZL_HANDLE_POLLER);
    ZT_EQ_INT(zl_handle_kind(NULL), 0);
    ZT_EQ_INT(zl_handle_kind(&slot), 0); /* a stack address */
    void *obj;
    zl_hslot_t *s2;
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_TIMER, &obj, &s2), EFAULT);
    ZT_EQ_INT(zl_handle_enter(NULL, ZL_HANDLE_POLLER, &obj, &s2), EFAULT);
    void *obj2;
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_SOCKET, &obj2, &s2), EFAULT);
    end_handle(h, ZL_HANDLE_POLLER);
}

static void test_close_gate_and_release(void)
{
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_TIMER, &dummy_objects[2], &slot);
    void *obj;
    zl_hslot_t *s2;
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_TIMER, &obj, &s2), 0);
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_TIMER, &obj, &s2), 0);
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_TIMER, &obj, &s2), EBUSY);
    zl_handle_leave(slot);
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_TIMER, &obj, &s2), EBUSY);
    zl_handle_leave(slot);
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_TIMER, &obj, &s2), 0);
    ZT_CHECK(obj == &dummy_objects[2] && s2 == slot);
    /* Closing: refused, and a second close is told apart from garbage. */
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_TIMER, &obj, &s2), ESHUTDOWN);
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_TIMER, &obj, &s2), ESHUTDOWN);
    ZT_EQ_INT(zl_handle_state(h, ZL_HANDLE_TIMER), ESHUTDOWN);
    zl_handle_release(slot);
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_TIMER, &obj, &s2), ESTALE);
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_TIMER, &obj, &s2), ESTALE);
    ZT_EQ_INT(zl_handle_state(h, ZL_HANDLE_TIMER), ESTALE);
    /* A newer generation than the slot ever had: never issued. */
    void *future = (void *)((uintptr_t)h + ((uintptr_t)5 << 24));
    ZT_EQ_INT(zl_handle_enter(future, ZL_HANDLE_TIMER, &obj, &s2), EFAULT);
}

static void test_shut_and_last_leaver(void)
{
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_CTX, &dummy_objects[3], &slot);
    void *obj;
    zl_hslot_t *s2;
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_CTX, &obj, &s2), 0); /* "term" */
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_CTX, &obj, &s2), 0); /* another call */
    zl_handle_shut(slot);
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_CTX, &obj, &s2), ESHUTDOWN);
    ZT_CHECK(!zl_handle_leave_last(slot));
    ZT_CHECK(zl_handle_leave_last(slot)); /* the last one frees */
    zl_handle_release(slot);
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_CTX, &obj, &s2), ESTALE);
    /* leave_last is false for a slot that was never shut. */
    void *g = new_handle(ZL_HANDLE_CTX, &dummy_objects[3], &slot);
    ZT_EQ_INT(zl_handle_enter(g, ZL_HANDLE_CTX, &obj, &s2), 0);
    ZT_CHECK(!zl_handle_leave_last(slot));
    end_handle(g, ZL_HANDLE_CTX);
}

static void test_reuse_bumps_generation(void)
{
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_SOCKET, &dummy_objects[0], &slot);
    uint32_t idx = index_of(h), gen = gen_of(h);
    end_handle(h, ZL_HANDLE_SOCKET);
    /* Free slots are reused oldest first: allocate until idx comes back. */
    enum { MAX = 100000 };
    void **all = calloc(MAX, sizeof *all);
    ZT_CHECK(all != NULL);
    int n = 0;
    void *again = NULL;
    while (n < MAX) {
        zl_hslot_t *s;
        all[n] = new_handle(ZL_HANDLE_MONITOR, &dummy_objects[1], &s);
        if (index_of(all[n++]) == idx) {
            again = all[n - 1];
            break;
        }
    }
    ZT_CHECK(again != NULL);
    ZT_EQ_INT(gen_of(again), gen + 1);
    void *obj;
    zl_hslot_t *s2;
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_SOCKET, &obj, &s2), ESTALE);
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_MONITOR, &obj, &s2), EFAULT);
    ZT_EQ_INT(zl_handle_state(again, ZL_HANDLE_MONITOR), 0);
    /* Many handles at once: the table grew; each resolves to its object. */
    int first = n;
    while (n < 5000) {
        zl_hslot_t *s;
        all[n] = new_handle(ZL_HANDLE_MONITOR, &all[n], &s);
        n++;
    }
    for (int i = first; i < n; i++) {
        ZT_EQ_INT(zl_handle_enter(all[i], ZL_HANDLE_MONITOR, &obj, &s2), 0);
        ZT_CHECK(obj == &all[i]);
        zl_handle_leave(s2);
    }
    for (int i = 0; i < n; i++)
        end_handle(all[i], ZL_HANDLE_MONITOR);
    free(all);
}

static void test_generation_wraps_past_zero(void)
{
    zl_hslot_t *slot;
    void *h = new_handle(ZL_HANDLE_SOCKET, &dummy_objects[0], &slot);
    void *obj;
    zl_hslot_t *s2;
    ZT_EQ_INT(zl_handle_close(h, ZL_HANDLE_SOCKET, &obj, &s2), 0);
    /* Pretend the slot has been reused 2^32 - 1 times. */
    atomic_store(&slot->word, 0xFFFFFFFFull << 32 | (uint64_t)ZL_HANDLE_SOCKET << 28 | (1ull << 27));
    zl_handle_release(slot);
    ZT_EQ_U64(atomic_load(&slot->word) >> 32, 1); /* 0 is skipped */
    ZT_EQ_INT(zl_handle_enter(h, ZL_HANDLE_SOCKET, &obj, &s2), EFAULT);
}

/* Many threads enter and leave one handle while a closer tries the gate:
 * the gate opens only with nobody inside, and every count comes back. */
typedef struct gate_race {
    void *h;
    _Atomic int closed;
    _Atomic long inside;  /* what the threads believe is inside */
    _Atomic int violated;
} gate_race_t;

static void *enterer(void *arg)
{
    gate_race_t *g = arg;
    for (;;) {
        void *obj;
        zl_hslot_t *s;
        int rc = zl_handle_enter(g->h, ZL_HANDLE_POLLER, &obj, &s);
        if (rc != 0) {
            if (rc != ESHUTDOWN && rc != ESTALE)
                atomic_store(&g->violated, 1);
            return NULL;
        }
        atomic_fetch_add(&g->inside, 1);
        if (atomic_load(&g->closed))
            atomic_store(&g->violated, 1); /* inside a closed slot */
        atomic_fetch_sub(&g->inside, 1);
        zl_handle_leave(s);
    }
}

static void test_gate_race(void)
{
    for (int round = 0; round < 20; round++) {
        gate_race_t g = {0};
        zl_hslot_t *slot;
        g.h = new_handle(ZL_HANDLE_POLLER, &dummy_objects[2], &slot);
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            ZT_EQ_INT(pthread_create(&th[i], NULL, enterer, &g), 0);
        void *obj;
        zl_hslot_t *s2;
        long busy = 0;
        for (;;) {
            int rc = zl_handle_close(g.h, ZL_HANDLE_POLLER, &obj, &s2);
            if (rc == 0)
                break;
            ZT_EQ_INT(rc, EBUSY);
            busy++;
        }
        atomic_store(&g.closed, 1);
        ZT_EQ_INT(atomic_load(&g.inside), 0);
        for (int i = 0; i < 3; i++)
            ZT_EQ_INT(pthread_join(th[i], NULL), 0);
        ZT_EQ_INT(atomic_load(&g.violated), 0);
        ZT_EQ_U64(atomic_load(&slot->word) & ZL_HW_COUNT_MASK, 0);
        zl_handle_release(slot);
        (void)busy;
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(test_one_bit_flips),
    ZT_CASE(test_kind_and_shape),
    ZT_CASE(test_close_gate_and_release),
    ZT_CASE(test_shut_and_last_leaver),
    ZT_CASE(test_reuse_bumps_generation),
    ZT_CASE(test_generation_wraps_past_zero),
    ZT_CASE(test_gate_race),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
