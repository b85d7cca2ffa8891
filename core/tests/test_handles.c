/*
 * test_handles.c — handles never crash the caller (issue 7, item 6).
 *
 * Every exported function that takes a handle is called with handles that
 * are not what it wants: NULL, small integers, all-ones, pointers to stack
 * buffers (zeroed, or starting with a word an object header might start
 * with), a live handle of every other kind, and stale handles of its own
 * kind (a closed socket, a socket whose context was then terminated, a
 * terminated context, a destroyed poller or timer, a closed monitor). Each
 * call must give its family's documented result and errno, change nothing,
 * and (run under --config=asan) read no freed or foreign memory. The table
 * below names every such function; //abi:handle_tests_cover_header checks
 * it against zlink.h, so a new handle-taking function cannot be missed
 * (functions without a handle are listed in no_handle[] for the same
 * check).
 *
 * The framework's handles (zlink_host_t, zlink_call_t, zlink_turn_t) are in
 * the same table with roles of their own: each framework function gets
 * NULL, garbage, forged stack buffers, every live handle of another kind
 * (Core and framework), its own kind's live handle with any one bit flipped,
 * and a destroyed host, a released call or an ended turn. It must give its
 * documented bad-handle result (ZLINK_FW_INVALID_HANDLE; NULL with *result
 * INVALID_HANDLE; -1), leave zlink_errno alone (framework calls never set
 * it) and change nothing; the Core functions get the live framework
 * handles as one more wrong kind. The live framework fixtures are two
 * serving hosts (a ClientServer server and its client), a call that was
 * built but not started, and an open request turn, which still answers
 * once the table ran.
 *
 *   test_bad_handles_everywhere      the table, once with fresh stale handles
 *                                    and once after their slots were reused
 *   test_stale_socket_after_reuse    a stale handle never reaches the object
 *                                    that reuses its slot
 *   test_destroy_busy_while_inside   close/destroy is EBUSY while a call is
 *                                    inside (blocked receive, wait, hold)
 *   test_race_socket_close           close and ctx_term while another thread
 *                                    hammers the socket handle
 *   test_race_poller_destroy, test_race_timer_destroy,
 *   test_race_monitor_close          the same for the other kinds
 *   test_race_ctx_term               ctx_term while another thread calls
 *                                    zlink_ctx_get / zlink_socket on it
 *
 * Public API only.
 */
#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* Normalized results of calls that do not return a typed result. */
#define R_NULL (-1000LL)      /* a pointer-returning call returned NULL */
#define R_PTR (-1001LL)       /* ... returned a handle (closed again) */
#define R_NOT_MINUS1 (-1002LL) /* an int call that should fail did not return -1 */
#define R_POLLERR (-1003LL)   /* zlink_poll: 1 item, revents POLLERR */
#define R_CHANGED (-1004LL)   /* a destroy call changed *handle_p on failure */
#define R_OTHER (-1005LL)     /* zlink_poll returned something else */

/* expect_t.err: zlink_errno must be what it was before the call (the
 * framework never sets it); expect_call plants ERRNO_MARK first. */
#define ERR_KEPT (-2)
#define ERRNO_MARK ESTALE

typedef struct expect {
    long long result;
    int err;
} expect_t;

#define EX(r, e) {(long long)(r), (e)}
#define UNUSED_EX {0, 0}

/* What the handle under test stands for in a call. */
enum {
    ROLE_CTX,
    ROLE_SOCKET,
    ROLE_MONITOR,
    ROLE_POLLER,
    ROLE_TIMER,
    ROLE_SOURCE, /* zlink_poller_add/_modify/_remove: socket, monitor or timer */
    ROLE_ITEM,   /* zlink_pollitem_t.socket: socket or monitor (NULL: an FD) */
    ROLE_HOST,   /* framework handles (zlink/framework.h) */
    ROLE_CALL,
    ROLE_TURN
};

typedef struct entry {
    const char *name;
    int role;
    long long (*call)(void *h);
    expect_t inval;         /* NULL, garbage, forged, a live handle of another kind */
    expect_t stale;         /* a stale handle of the role's kind (SOURCE, ITEM: a socket) */
    expect_t stale_monitor; /* SOURCE, ITEM: a closed monitor */
    expect_t stale_timer;   /* SOURCE: a destroyed timer */
} entry_t;

/* ------------------------------------------------------------- fixtures */

static struct {
    void *ctx;      /* live */
    void *sock;     /* live PAIR in ctx, with monitor open on it */
    void *monitor;  /* live */
    void *poller;   /* live, nothing registered */
    void *timer;    /* live, stopped, not registered */
    /* stale */
    void *closed_sock;  /* closed, ctx still alive */
    void *termed_sock;  /* closed, then its ctx terminated */
    void *termed_ctx;
    void *closed_monitor;
    void *dead_poller;
    void *dead_timer;
} F;

/* The framework fixtures (fw_fixtures_make). turn and dead_turn are set by
 * the server's handlers on a worker thread, hence atomic. */
static struct {
    zlink_host_t *srv;          /* serving, CS server channel "svc" */
    zlink_host_t *cli;          /* serving, CS client of "svc" */
    zlink_call_t *call;         /* live, built, never started */
    _Atomic(zlink_turn_t *) turn; /* live: the open turn of request "hold" */
    zlink_host_t *dead_host;    /* destroyed */
    zlink_call_t *dead_call;    /* released */
    _Atomic(zlink_turn_t *) dead_turn; /* ended */
    _Atomic int hold_done;      /* completions of the "hold" request */
    _Atomic int hold_result;
    char hold_reply[8];         /* its reply payload, copied in the callback */
} FW;

/* ------------------------------------------------------ the call wrappers
 * Each makes one call with h in the handle position and valid other
 * arguments, and returns the (normalized) result. */

static long long msg_call_done(zlink_msg_t *m, long long r)
{
    zlink_msg_close(m); /* consumed parts are left empty but initialized */
    return r;
}

static zlink_msg_t one_part(void)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 1), ZLINK_CONFIG_OK);
    return m;
}

static const zlink_routing_id_t RID = {1, {'r'}};

/* context */
static long long c_ctx_shutdown(void *h) { return zlink_ctx_shutdown(h); }
static long long c_ctx_term(void *h) { return zlink_ctx_term(h); }
static long long c_ctx_set(void *h) { return zlink_ctx_set(h, ZLINK_MAX_SOCKETS, 100); }
static long long c_ctx_get(void *h)
{
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int v = zlink_ctx_get(h, ZLINK_IO_THREADS, &err);
    return v == -1 ? err : R_NOT_MINUS1;
}
static long long c_ctx_set_data(void *h)
{
    uint64_t v = 1;
    return zlink_ctx_set_data(h, ZLINK_CORE_BUDGET_BYTES, &v, sizeof v);
}
static long long c_ctx_get_data(void *h)
{
    uint64_t v = 0;
    size_t n = sizeof v;
    return zlink_ctx_get_data(h, ZLINK_CORE_BUDGET_BYTES, &v, &n);
}
static long long c_socket(void *h)
{
    void *s = zlink_socket(h, ZLINK_PAIR);
    if (s == NULL)
        return R_NULL;
    zlink_close(s);
    return R_PTR;
}

/* socket */
static long long c_close(void *h) { return zlink_close(h); }
static long long c_setsockopt(void *h)
{
    int v = 10;
    return zlink_setsockopt(h, ZLINK_SNDTIMEO, &v, sizeof v);
}
static long long c_getsockopt(void *h)
{
    int v = 0;
    size_t n = sizeof v;
    return zlink_getsockopt(h, ZLINK_SNDTIMEO, &v, &n);
}
static long long c_set_routing_id(void *h) { return zlink_set_routing_id(h, "id", 2); }
static long long c_bind(void *h) { return zlink_bind(h, "inproc://handles-bind"); }
static long long c_connect(void *h) { return zlink_connect(h, "inproc://handles-none"); }
static long long c_unbind(void *h) { return zlink_unbind(h, "inproc://handles-none"); }
static long long c_disconnect(void *h) { return zlink_disconnect(h, "inproc://handles-none"); }
static long long c_disconnect_rid(void *h) { return zlink_disconnect_rid(h, &RID); }
static long long c_send(void *h)
{
    zlink_msg_t m = one_part();
    zlink_completion_id_t id = 7;
    return msg_call_done(&m, zlink_send(h, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id));
}
static long long c_send_rid(void *h)
{
    zlink_msg_t m = one_part();
    return msg_call_done(&m, zlink_send_rid(h, &RID, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL,
                                            NULL));
}
static long long c_publish(void *h)
{
    zlink_msg_t m = one_part();
    return msg_call_done(&m, zlink_publish(h, "t", &m, 1, ZLINK_SEND_FLAGS_DONTWAIT));
}
static long long c_recv(void *h)
{
    zlink_msg_t parts[2];
    size_t count = 0;
    return zlink_recv(h, NULL, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT);
}
static long long c_stream_recv_packet(void *h)
{
    const zlink_routing_id_t *rid = NULL;
    zlink_msg_t hdr, body;
    zlink_msg_init(&hdr);
    zlink_msg_init(&body);
    long long r = zlink_stream_recv_packet(h, &rid, &hdr, &body, ZLINK_RECV_FLAGS_DONTWAIT);
    zlink_msg_close(&hdr);
    zlink_msg_close(&body);
    return r;
}

static long long c_router_recv(void *h)
{
    zlink_msg_t parts[2];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    return zlink_router_recv(h, &rid, &tok, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT);
}
static long long c_subscribe(void *h)
{
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    char topic[8];
    const zlink_routing_id_t *rid = NULL;
    return zlink_subscribe(h, &rid, topic, sizeof topic, &tlen, parts, 2, &count,
                           ZLINK_RECV_FLAGS_DONTWAIT);
}
static long long c_completion_recv(void *h)
{
    zlink_completion_t rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    return zlink_completion_recv(h, &rec, ZLINK_RECV_FLAGS_DONTWAIT);
}
static long long c_request(void *h)
{
    zlink_msg_t m = one_part();
    return msg_call_done(&m, zlink_request(h, NULL, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, 0, NULL,
                                           NULL));
}
static long long c_reply(void *h)
{
    zlink_msg_t m = one_part();
    return msg_call_done(&m, zlink_reply(h, &RID, 12345, &m, 1));
}
static long long c_reply_error(void *h)
{
    zlink_msg_t m = one_part();
    return msg_call_done(&m, zlink_reply_error(h, &RID, 12345, ENOENT, &m, 1));
}
static long long c_routes_snapshot(void *h)
{
    zlink_router_route_t rows[2];
    size_t count = 0;
    return zlink_router_routes_snapshot(h, rows, 2, &count);
}
static long long c_route_generation(void *h)
{
    return (long long)zlink_router_recv_route_generation(h);
}
static long long c_flow_state(void *h)
{
    return zlink_socket_set_receive_flow_state(h, ZLINK_RECEIVE_FLOW_RUNNING);
}
static long long c_monitor_open(void *h)
{
    zlink_monitor_config_t cfg = {ZLINK_EVENT_ALL, 0, 0};
    void *m = zlink_socket_monitor_open(h, &cfg);
    if (m == NULL)
        return R_NULL;
    zlink_monitor_close(&m);
    return R_PTR;
}
static long long c_set_subscription(void *h) { return zlink_set_subscription(h, "a"); }
static long long c_unset_subscription(void *h) { return zlink_unset_subscription(h, "a"); }
static long long c_subscription_at(void *h)
{
    char buf[8];
    size_t len = sizeof buf;
    int pattern = 5;
    return zlink_subscription_at(h, 0, buf, &len, &pattern);
}

/* monitor */
static long long c_monitor_recv(void *h)
{
    zlink_monitor_event_t ev;
    return zlink_socket_monitor_recv(h, &ev, ZLINK_RECV_FLAGS_DONTWAIT);
}
static long long c_monitor_status(void *h)
{
    zlink_monitor_status_t st;
    return zlink_monitor_status(h, &st);
}
static long long c_monitor_close(void *h)
{
    void *x = h;
    long long r = zlink_monitor_close(&x);
    return x == h ? r : R_CHANGED;
}

/* poller */
static long long c_poller_destroy(void *h)
{
    void *x = h;
    long long r = zlink_poller_destroy(&x);
    return x == h ? r : R_CHANGED;
}
static long long c_poller_size(void *h)
{
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int n = zlink_poller_size(h, &err);
    return n == -1 ? err : R_NOT_MINUS1;
}
static long long c_poller_add(void *h) { return zlink_poller_add(h, F.sock, NULL, ZLINK_POLLIN); }
static long long c_poller_modify(void *h) { return zlink_poller_modify(h, F.sock, ZLINK_POLLIN); }
static long long c_poller_remove(void *h) { return zlink_poller_remove(h, F.sock); }
static long long c_poller_add_fd(void *h) { return zlink_poller_add_fd(h, 0, NULL, ZLINK_POLLIN); }
static long long c_poller_modify_fd(void *h) { return zlink_poller_modify_fd(h, 0, ZLINK_POLLIN); }
static long long c_poller_remove_fd(void *h) { return zlink_poller_remove_fd(h, 0); }
static long long c_poller_add_timer(void *h) { return zlink_poller_add_timer(h, F.timer, NULL); }
static long long c_poller_remove_timer(void *h) { return zlink_poller_remove_timer(h, F.timer); }
static long long c_poller_wait(void *h)
{
    zlink_poller_event_t ev[4];
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int n = zlink_poller_wait(h, ev, 4, 0, &err);
    return n == -1 ? err : R_NOT_MINUS1;
}

/* poller sources (h is the source; the poller is the live fixture) */
static long long c_src_add(void *h) { return zlink_poller_add(F.poller, h, NULL, ZLINK_POLLIN); }
static long long c_src_modify(void *h) { return zlink_poller_modify(F.poller, h, ZLINK_POLLIN); }
static long long c_src_remove(void *h) { return zlink_poller_remove(F.poller, h); }
static long long c_src_add_timer(void *h) { return zlink_poller_add_timer(F.poller, h, NULL); }
static long long c_src_remove_timer(void *h) { return zlink_poller_remove_timer(F.poller, h); }

/* zlink_poll items */
static long long c_poll_item(void *h)
{
    zlink_pollitem_t it = {h, -1, ZLINK_POLLIN, 0};
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int n = zlink_poll(&it, 1, 0, &err);
    if (n == -1)
        return err;
    if (n == 1 && it.revents == ZLINK_POLLERR)
        return R_POLLERR;
    return R_OTHER;
}

/* timer */
static long long c_timer_destroy(void *h)
{
    void *x = h;
    long long r = zlink_timer_destroy(&x);
    return x == h ? r : R_CHANGED;
}
static long long c_timer_start(void *h) { return zlink_timer_start(h, 1000000, 0); }
static long long c_timer_stop(void *h) { return zlink_timer_stop(h); }
static long long c_timer_recv(void *h)
{
    uint64_t count = 99;
    return zlink_timer_recv(h, &count, ZLINK_RECV_FLAGS_DONTWAIT);
}

/* framework: host (h is the host; the other arguments are valid). A call
 * that writes through an out argument although it failed returns
 * R_CHANGED. */
static void fw_never(zlink_turn_t *turn, void *user)
{
    (void)user;
    zlink_turn_end(turn, 0, NULL);
}
static long long fw_out_kept(long long r, int64_t v) { return v == 77 ? r : R_CHANGED; }
static long long c_host_set_option(void *h)
{
    return zlink_host_set_option(h, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, ZLINK_MS(1234));
}
static long long c_host_get_option(void *h)
{
    int64_t v = 77;
    return fw_out_kept(zlink_host_get_option(h, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, &v), v);
}
static long long c_host_add_cs_server(void *h)
{
    return zlink_host_add_cs_server(h, "x-srv", "inproc://handles-fw-none");
}
static long long c_host_add_cs_client(void *h)
{
    return zlink_host_add_cs_client(h, "x-cli", "inproc://handles-fw-none");
}
static long long c_channel_set_option(void *h)
{
    return zlink_channel_set_option(h, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT, ZLINK_MS(5));
}
static long long c_channel_get_option(void *h)
{
    int64_t v = 77;
    return fw_out_kept(zlink_channel_get_option(h, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT, &v), v);
}
static long long c_host_add_mesh_node(void *h)
{
    return zlink_host_add_mesh_node(h, "mesh", "n1", 2, NULL);
}
static long long c_mesh_connect(void *h)
{
    return zlink_mesh_connect(h, "mesh", "inproc://handles-fw-none", "n2", 2);
}
static long long c_mesh_set_option(void *h)
{
    return zlink_mesh_set_option(h, "mesh", ZLINK_NODE_OPT_REQUEST_TIMEOUT, ZLINK_MS(5));
}
static long long c_mesh_get_option(void *h)
{
    int64_t v = 77;
    return fw_out_kept(zlink_mesh_get_option(h, "mesh", ZLINK_NODE_OPT_REQUEST_TIMEOUT, &v), v);
}
static long long c_mesh_add_channel_client(void *h)
{
    return zlink_mesh_add_channel_client(h, "mesh", "chan");
}
static long long c_mesh_add_channel_server(void *h)
{
    return zlink_mesh_add_channel_server(h, "mesh", "chan", 100);
}
static long long c_mesh_set_weight(void *h) { return zlink_mesh_set_weight(h, "mesh", "chan", 5); }
static long long c_host_endpoint(void *h)
{
    char buf[64] = "kept";
    long long r = zlink_host_endpoint(h, "svc", buf, sizeof buf);
    return strcmp(buf, "kept") == 0 ? r : R_CHANGED;
}
static long long c_mesh_ready_peers(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    int n = zlink_mesh_ready_peers(h, "mesh", &r);
    return n == -1 ? r : R_NOT_MINUS1;
}
static long long c_host_add_handler(void *h)
{
    return zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "x",
                                  fw_never, NULL);
}
static long long c_host_add_handler_ex(void *h)
{
    return zlink_host_add_handler_ex(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "x",
                                     fw_never, NULL, ZLINK_HANDLER_HANDOFF);
}
static long long c_host_start(void *h) { return zlink_host_start(h); }
static long long c_host_shutdown(void *h) { return zlink_host_shutdown(h, ZLINK_MS(100)); }
static long long c_host_destroy(void *h) { return zlink_host_destroy(h); }
static long long c_host_state(void *h) { return zlink_host_state(h); }
static long long c_host_status(void *h)
{
    zlink_host_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    st.state = 77;
    long long r = zlink_host_status(h, &st);
    return st.state == 77 ? r : R_CHANGED;
}
static long long c_host_capacity(void *h)
{
    zlink_host_capacity_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.profile = 77;
    long long r = zlink_host_capacity(h, &c);
    return c.profile == 77 ? r : R_CHANGED;
}
static long long c_host_reset_metrics(void *h) { return zlink_host_reset_metrics(h); }
static long long c_host_owner_status(void *h)
{
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    st.busy = 77;
    long long r = zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st);
    return st.busy == 77 ? r : R_CHANGED;
}
static long long c_host_metric(void *h)
{
    int64_t v = 77;
    return fw_out_kept(zlink_host_metric(h, "zlink.host.protocol_errors", "", &v), v);
}
/* builders: NULL with *result, or a call (released again) */
static long long fw_built(zlink_call_t *c, const zlink_fw_result_t *r)
{
    if (c == NULL)
        return *r;
    zlink_call_release(c);
    return R_PTR;
}
static long long c_call_send_to_channel(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_call_send_to_channel(h, "svc", &r), &r);
}
static long long c_call_request_to_channel(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_call_request_to_channel(h, "svc", &r), &r);
}
static long long c_call_send_to_node(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_call_send_to_node(h, "mesh", "n2", 2, &r), &r);
}
static long long c_call_request_to_node(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_call_request_to_node(h, "mesh", "n2", 2, &r), &r);
}

/* framework: call */
static long long c_call_set_payload(void *h) { return zlink_call_set_payload(h, "p", "", "x", 1); }
static long long c_call_set_timeout(void *h) { return zlink_call_set_timeout(h, ZLINK_MS(5)); }
static long long c_call_set_metadata(void *h) { return zlink_call_set_metadata(h, "k", "v"); }
static long long c_call_start(void *h) { return zlink_call_start(h, NULL, NULL); }
static long long c_call_wait(void *h)
{
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    return zlink_call_wait(h, &o);
}
static long long c_call_yield(void *h) { return zlink_call_yield(h, NULL, NULL); }
static void c_noop_done(zlink_call_t *c, const zlink_outcome_t *o, void *u)
{
    (void)c, (void)o, (void)u;
}
static long long c_call_start_held(void *h) { return zlink_call_start_held(h, c_noop_done, NULL); }
static long long c_call_callback_done(void *h) { return zlink_call_callback_done(h); }
static long long c_call_cancel(void *h) { return zlink_call_cancel(h); }
static long long c_call_release(void *h) { return zlink_call_release(h); }

/* framework: turn */
static long long c_turn_kind(void *h) { return zlink_turn_kind(h); }
static long long c_turn_sequence(void *h) { return (long long)zlink_turn_sequence(h); }
static long long c_turn_packet(void *h) { return zlink_turn_packet(h) == NULL ? R_NULL : R_PTR; }
static long long c_turn_content_type(void *h)
{
    return zlink_turn_content_type(h) == NULL ? R_NULL : R_PTR;
}
static long long c_turn_payload(void *h)
{
    size_t n = 99;
    const void *p = zlink_turn_payload(h, &n);
    return p == NULL && n == 0 ? R_NULL : R_OTHER;
}
static long long c_turn_metadata(void *h)
{
    return zlink_turn_metadata(h, "k") == NULL ? R_NULL : R_PTR;
}
static long long c_turn_source(void *h)
{
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    rid.size = 7;
    long long r = zlink_turn_source(h, &rid);
    return rid.size == 7 ? r : R_CHANGED;
}
static long long c_turn_reply(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_turn_reply(h, &r), &r);
}
static long long c_turn_reply_error(void *h)
{
    zlink_fw_result_t r = ZLINK_FW_OK;
    return fw_built(zlink_turn_reply_error(h, ZLINK_ERROR_REJECTED, "no", &r), &r);
}
static long long c_turn_end(void *h) { return zlink_turn_end(h, 0, NULL); }
static long long c_turn_respond(void *h) { return zlink_turn_respond(h, "m", "", "x", 1); }

static long long c_reply_submit(void *h)
{
    zlink_msg_t m = one_part();
    zlink_completion_id_t id = 7;
    return msg_call_done(&m, zlink_reply_submit(h, &RID, 12345, 0, &m, 1,
                                                ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id));
}

/* ------------------------------------------------------------- the table
 * H(function, role, call, result for invalid handles, for stale ones,
 *   [SOURCE/ITEM: for a closed monitor, for a destroyed timer]). */

#define H(fn, role, call, ...) {#fn, role, call, __VA_ARGS__}
/* The trailing expectations are only given where they apply (zeroed). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define CFG_IH EX(ZLINK_CONFIG_INVALID_HANDLE, EFAULT)
#define CFG_SHUT EX(ZLINK_CONFIG_INVALID_STATE, ESHUTDOWN)
#define CLOSE_IH EX(ZLINK_CLOSE_INVALID_HANDLE, EFAULT)
#define SUB_IH EX(ZLINK_SUBMIT_INVALID_HANDLE, EFAULT)
#define SUB_SHUT EX(ZLINK_SUBMIT_TERMINATED, ESHUTDOWN)
#define RECV_IH EX(ZLINK_RECV_INVALID_HANDLE, EFAULT)
#define RECV_SHUT EX(ZLINK_RECV_INVALID_STATE, ESHUTDOWN)
#define CONN_IH EX(ZLINK_CONNECT_INVALID_HANDLE, EFAULT)
#define CONN_SHUT EX(ZLINK_CONNECT_BUSY, ESHUTDOWN)
#define NULL_IH EX(R_NULL, EFAULT)
#define NF EX(ZLINK_CONFIG_NOT_FOUND, ENOENT)
#define FW_IH EX(ZLINK_FW_INVALID_HANDLE, ERR_KEPT)
#define FW_MINUS1 EX(-1, ERR_KEPT)
#define FW_NULL EX(R_NULL, ERR_KEPT)
#define FW_ZERO EX(0, ERR_KEPT)

static const entry_t entries[] = {
    /* context */
    H(zlink_ctx_shutdown, ROLE_CTX, c_ctx_shutdown, CLOSE_IH, CLOSE_IH),
    H(zlink_ctx_term, ROLE_CTX, c_ctx_term, CLOSE_IH, CLOSE_IH),
    H(zlink_ctx_set, ROLE_CTX, c_ctx_set, CFG_IH, CFG_IH),
    H(zlink_ctx_get, ROLE_CTX, c_ctx_get, CFG_IH, CFG_IH),
    H(zlink_ctx_set_data, ROLE_CTX, c_ctx_set_data, CFG_IH, CFG_IH),
    H(zlink_ctx_get_data, ROLE_CTX, c_ctx_get_data, CFG_IH, CFG_IH),
    H(zlink_socket, ROLE_CTX, c_socket, NULL_IH, NULL_IH),
    /* socket: a stale one answers as a closed socket, context alive or not */
    H(zlink_close, ROLE_SOCKET, c_close, CLOSE_IH, EX(ZLINK_CLOSE_INVALID_HANDLE, ESTALE)),
    H(zlink_setsockopt, ROLE_SOCKET, c_setsockopt, CFG_IH, CFG_SHUT),
    H(zlink_getsockopt, ROLE_SOCKET, c_getsockopt, CFG_IH, CFG_SHUT),
    H(zlink_set_routing_id, ROLE_SOCKET, c_set_routing_id,
      EX(ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP), CFG_SHUT),
    H(zlink_bind, ROLE_SOCKET, c_bind, EX(ZLINK_BIND_INVALID_HANDLE, EFAULT),
      EX(ZLINK_BIND_INVALID_HANDLE, ESHUTDOWN)),
    H(zlink_connect, ROLE_SOCKET, c_connect, CONN_IH, CONN_SHUT),
    H(zlink_unbind, ROLE_SOCKET, c_unbind, CONN_IH, CONN_SHUT),
    H(zlink_disconnect, ROLE_SOCKET, c_disconnect, CONN_IH, CONN_SHUT),
    H(zlink_disconnect_rid, ROLE_SOCKET, c_disconnect_rid, CONN_IH, CONN_SHUT),
    H(zlink_send, ROLE_SOCKET, c_send, SUB_IH, SUB_SHUT),
    H(zlink_send_rid, ROLE_SOCKET, c_send_rid, SUB_IH, SUB_SHUT),
    H(zlink_publish, ROLE_SOCKET, c_publish, SUB_IH, SUB_SHUT),
    H(zlink_recv, ROLE_SOCKET, c_recv, RECV_IH, RECV_SHUT),
    H(zlink_router_recv, ROLE_SOCKET, c_router_recv, RECV_IH, RECV_SHUT),
    H(zlink_stream_recv_packet, ROLE_SOCKET, c_stream_recv_packet, RECV_IH, RECV_SHUT),
    H(zlink_subscribe, ROLE_SOCKET, c_subscribe, RECV_IH, RECV_SHUT),
    H(zlink_completion_recv, ROLE_SOCKET, c_completion_recv, RECV_IH, RECV_SHUT),
    H(zlink_request, ROLE_SOCKET, c_request, SUB_IH, SUB_SHUT),
    H(zlink_reply, ROLE_SOCKET, c_reply, SUB_IH, SUB_SHUT),
    H(zlink_reply_error, ROLE_SOCKET, c_reply_error, SUB_IH, SUB_SHUT),
    H(zlink_reply_submit, ROLE_SOCKET, c_reply_submit, SUB_IH, SUB_SHUT),
    H(zlink_router_routes_snapshot, ROLE_SOCKET, c_routes_snapshot, CFG_IH, CFG_SHUT),
    H(zlink_router_recv_route_generation, ROLE_SOCKET, c_route_generation, EX(0, EFAULT),
      EX(0, EFAULT)),
    /* contract: IH once teardown finished */
    H(zlink_socket_set_receive_flow_state, ROLE_SOCKET, c_flow_state, CFG_IH, CFG_IH),
    H(zlink_socket_monitor_open, ROLE_SOCKET, c_monitor_open, NULL_IH, EX(R_NULL, ESHUTDOWN)),
    H(zlink_set_subscription, ROLE_SOCKET, c_set_subscription, CFG_IH, CFG_SHUT),
    H(zlink_unset_subscription, ROLE_SOCKET, c_unset_subscription, CFG_IH, CFG_SHUT),
    H(zlink_subscription_at, ROLE_SOCKET, c_subscription_at, CFG_IH, CFG_SHUT),
    /* monitor */
    H(zlink_socket_monitor_recv, ROLE_MONITOR, c_monitor_recv, RECV_IH, RECV_IH),
    H(zlink_monitor_status, ROLE_MONITOR, c_monitor_status, CFG_IH, CFG_IH),
    H(zlink_monitor_close, ROLE_MONITOR, c_monitor_close, CLOSE_IH, CLOSE_IH),
    /* poller */
    H(zlink_poller_destroy, ROLE_POLLER, c_poller_destroy, CLOSE_IH, CLOSE_IH),
    H(zlink_poller_size, ROLE_POLLER, c_poller_size, CFG_IH, CFG_IH),
    H(zlink_poller_add, ROLE_POLLER, c_poller_add, CFG_IH, CFG_IH),
    H(zlink_poller_modify, ROLE_POLLER, c_poller_modify, CFG_IH, CFG_IH),
    H(zlink_poller_remove, ROLE_POLLER, c_poller_remove, CFG_IH, CFG_IH),
    H(zlink_poller_add_fd, ROLE_POLLER, c_poller_add_fd, CFG_IH, CFG_IH),
    H(zlink_poller_modify_fd, ROLE_POLLER, c_poller_modify_fd, CFG_IH, CFG_IH),
    H(zlink_poller_remove_fd, ROLE_POLLER, c_poller_remove_fd, CFG_IH, CFG_IH),
    H(zlink_poller_add_timer, ROLE_POLLER, c_poller_add_timer, CFG_IH, CFG_IH),
    H(zlink_poller_remove_timer, ROLE_POLLER, c_poller_remove_timer, CFG_IH, CFG_IH),
    H(zlink_poller_wait, ROLE_POLLER, c_poller_wait, CFG_IH, CFG_IH),
    /* poller sources: closed sockets and monitors are known (add: a closed
     * source; modify/remove: not registered), destroyed timers are not */
    H(zlink_poller_add, ROLE_SOURCE, c_src_add, CFG_IH, CFG_SHUT, CFG_SHUT, CFG_IH),
    H(zlink_poller_modify, ROLE_SOURCE, c_src_modify, CFG_IH, NF, NF, CFG_IH),
    H(zlink_poller_remove, ROLE_SOURCE, c_src_remove, CFG_IH, NF, NF, CFG_IH),
    H(zlink_poller_add_timer, ROLE_TIMER, c_src_add_timer, CFG_IH, CFG_IH),
    H(zlink_poller_remove_timer, ROLE_TIMER, c_src_remove_timer, CFG_IH, CFG_IH),
    /* zlink_poll: a closed socket or monitor item reports POLLERR */
    H(zlink_poll, ROLE_ITEM, c_poll_item, CFG_IH, EX(R_POLLERR, -1), EX(R_POLLERR, -1)),
    /* timer */
    H(zlink_timer_destroy, ROLE_TIMER, c_timer_destroy, CLOSE_IH, CLOSE_IH),
    H(zlink_timer_start, ROLE_TIMER, c_timer_start, CFG_IH, CFG_IH),
    H(zlink_timer_stop, ROLE_TIMER, c_timer_stop, CFG_IH, CFG_IH),
    H(zlink_timer_recv, ROLE_TIMER, c_timer_recv, RECV_IH, RECV_IH),
    /* framework: a bad host, call or turn is INVALID_HANDLE (NULL with
     * *result INVALID_HANDLE, -1), stale or not; errno is never set */
    H(zlink_host_set_option, ROLE_HOST, c_host_set_option, FW_IH, FW_IH),
    H(zlink_host_get_option, ROLE_HOST, c_host_get_option, FW_IH, FW_IH),
    H(zlink_host_add_cs_server, ROLE_HOST, c_host_add_cs_server, FW_IH, FW_IH),
    H(zlink_host_add_cs_client, ROLE_HOST, c_host_add_cs_client, FW_IH, FW_IH),
    H(zlink_channel_set_option, ROLE_HOST, c_channel_set_option, FW_IH, FW_IH),
    H(zlink_channel_get_option, ROLE_HOST, c_channel_get_option, FW_IH, FW_IH),
    H(zlink_host_add_mesh_node, ROLE_HOST, c_host_add_mesh_node, FW_IH, FW_IH),
    H(zlink_mesh_connect, ROLE_HOST, c_mesh_connect, FW_IH, FW_IH),
    H(zlink_mesh_set_option, ROLE_HOST, c_mesh_set_option, FW_IH, FW_IH),
    H(zlink_mesh_get_option, ROLE_HOST, c_mesh_get_option, FW_IH, FW_IH),
    H(zlink_mesh_add_channel_client, ROLE_HOST, c_mesh_add_channel_client, FW_IH, FW_IH),
    H(zlink_mesh_add_channel_server, ROLE_HOST, c_mesh_add_channel_server, FW_IH, FW_IH),
    H(zlink_mesh_set_weight, ROLE_HOST, c_mesh_set_weight, FW_IH, FW_IH),
    H(zlink_host_endpoint, ROLE_HOST, c_host_endpoint, FW_IH, FW_IH),
    H(zlink_mesh_ready_peers, ROLE_HOST, c_mesh_ready_peers, FW_IH, FW_IH),
    H(zlink_host_add_handler, ROLE_HOST, c_host_add_handler, FW_IH, FW_IH),
    H(zlink_host_add_handler_ex, ROLE_HOST, c_host_add_handler_ex, FW_IH, FW_IH),
    H(zlink_host_start, ROLE_HOST, c_host_start, FW_IH, FW_IH),
    H(zlink_host_shutdown, ROLE_HOST, c_host_shutdown, FW_IH, FW_IH),
    H(zlink_host_destroy, ROLE_HOST, c_host_destroy, FW_IH, FW_IH),
    H(zlink_host_state, ROLE_HOST, c_host_state, FW_MINUS1, FW_MINUS1),
    H(zlink_host_status, ROLE_HOST, c_host_status, FW_IH, FW_IH),
    H(zlink_host_metric, ROLE_HOST, c_host_metric, FW_IH, FW_IH),
    H(zlink_host_capacity, ROLE_HOST, c_host_capacity, FW_IH, FW_IH),
    H(zlink_host_reset_metrics, ROLE_HOST, c_host_reset_metrics, FW_IH, FW_IH),
    H(zlink_host_owner_status, ROLE_HOST, c_host_owner_status, FW_IH, FW_IH),
    H(zlink_call_send_to_channel, ROLE_HOST, c_call_send_to_channel, FW_IH, FW_IH),
    H(zlink_call_request_to_channel, ROLE_HOST, c_call_request_to_channel, FW_IH, FW_IH),
    H(zlink_call_send_to_node, ROLE_HOST, c_call_send_to_node, FW_IH, FW_IH),
    H(zlink_call_request_to_node, ROLE_HOST, c_call_request_to_node, FW_IH, FW_IH),
    H(zlink_call_set_payload, ROLE_CALL, c_call_set_payload, FW_IH, FW_IH),
    H(zlink_call_set_timeout, ROLE_CALL, c_call_set_timeout, FW_IH, FW_IH),
    H(zlink_call_set_metadata, ROLE_CALL, c_call_set_metadata, FW_IH, FW_IH),
    H(zlink_call_start, ROLE_CALL, c_call_start, FW_IH, FW_IH),
    H(zlink_call_wait, ROLE_CALL, c_call_wait, FW_IH, FW_IH),
    H(zlink_call_start_held, ROLE_CALL, c_call_start_held, FW_IH, FW_IH),
    H(zlink_call_callback_done, ROLE_CALL, c_call_callback_done, FW_IH, FW_IH),
    H(zlink_call_yield, ROLE_CALL, c_call_yield, FW_IH, FW_IH),
    H(zlink_call_cancel, ROLE_CALL, c_call_cancel, FW_IH, FW_IH),
    H(zlink_call_release, ROLE_CALL, c_call_release, FW_IH, FW_IH),
    H(zlink_turn_kind, ROLE_TURN, c_turn_kind, FW_MINUS1, FW_MINUS1),
    H(zlink_turn_sequence, ROLE_TURN, c_turn_sequence, FW_ZERO, FW_ZERO),
    H(zlink_turn_packet, ROLE_TURN, c_turn_packet, FW_NULL, FW_NULL),
    H(zlink_turn_content_type, ROLE_TURN, c_turn_content_type, FW_NULL, FW_NULL),
    H(zlink_turn_payload, ROLE_TURN, c_turn_payload, FW_NULL, FW_NULL),
    H(zlink_turn_metadata, ROLE_TURN, c_turn_metadata, FW_NULL, FW_NULL),
    H(zlink_turn_source, ROLE_TURN, c_turn_source, FW_IH, FW_IH),
    H(zlink_turn_reply, ROLE_TURN, c_turn_reply, FW_IH, FW_IH),
    H(zlink_turn_reply_error, ROLE_TURN, c_turn_reply_error, FW_IH, FW_IH),
    H(zlink_turn_end, ROLE_TURN, c_turn_end, FW_IH, FW_IH),
    H(zlink_turn_respond, ROLE_TURN, c_turn_respond, FW_IH, FW_IH),
};

/* Exported functions that take no handle (messages and completion records
 * are caller-owned memory, not handles). Listed so that the coverage check
 * can tell "forgotten" from "nothing to test". */
#define NO_HANDLE(fn) #fn
static const char *const no_handle[] = {
    NO_HANDLE(zlink_errno),        NO_HANDLE(zlink_strerror),
    NO_HANDLE(zlink_result_name),
    NO_HANDLE(zlink_version),      NO_HANDLE(zlink_has),
    NO_HANDLE(zlink_ctx_new),      NO_HANDLE(zlink_poller_new),
    NO_HANDLE(zlink_timer_new),    NO_HANDLE(zlink_msg_init),
    NO_HANDLE(zlink_msg_init_size), NO_HANDLE(zlink_msg_init_data),
    NO_HANDLE(zlink_msg_close),    NO_HANDLE(zlink_msg_move),
    NO_HANDLE(zlink_msg_copy),     NO_HANDLE(zlink_msg_adopt),
    NO_HANDLE(zlink_msg_data),     NO_HANDLE(zlink_msg_size),
    NO_HANDLE(zlink_msg_refcnt),   NO_HANDLE(zlink_multipart_close),
    NO_HANDLE(zlink_completion_close),
    /* framework */
    NO_HANDLE(zlink_host_new),     NO_HANDLE(zlink_runtime_context_enter),
    NO_HANDLE(zlink_runtime_context_leave), NO_HANDLE(zlink_in_runtime_context),
    NO_HANDLE(zlink_error_kind_name),
};

/* ----------------------------------------------------------- the driver */

/* Leaves ERRNO_MARK in this thread's zlink_errno (a second close of a
 * closed socket is CLOSE_INVALID_HANDLE/ESTALE). */
static void errno_mark(void)
{
    ZT_EQ_INT(zlink_close(F.closed_sock), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), ERRNO_MARK);
}

static void expect_call(const entry_t *e, const char *what, void *h, expect_t want)
{
    if (want.err == ERR_KEPT)
        errno_mark();
    long long r = e->call(h);
    int err = zlink_errno();
    int want_err = want.err == ERR_KEPT ? ERRNO_MARK : want.err;
    if (r != want.result || (want_err >= 0 && err != want_err))
        ZT_FAIL("%s(%s): result %lld errno %d (%s), want %lld errno %d (%s%s)", e->name, what,
                r, err, zlink_strerror(err), want.result, want_err,
                want_err >= 0 ? zlink_strerror(want_err) : "any",
                want.err == ERR_KEPT ? ", left as it was" : "");
}

static bool fw_role(int role)
{
    return role == ROLE_HOST || role == ROLE_CALL || role == ROLE_TURN;
}

/* A live framework handle the test holds (a forged value equal to one is
 * not forged). */
static bool fw_is_live(const void *h)
{
    return h == FW.srv || h == FW.cli || h == FW.call || h == atomic_load(&FW.turn);
}

/* The role's own live handle with each one bit flipped: a near miss of a
 * real handle (another slot, generation or kind) is refused like garbage. */
static void run_forged_fw(const entry_t *e)
{
    void *own = e->role == ROLE_HOST   ? (void *)FW.srv
                : e->role == ROLE_CALL ? (void *)FW.call
                                       : (void *)atomic_load(&FW.turn);
    for (unsigned b = 0; b < sizeof(uintptr_t) * 8; b++) {
        void *h = (void *)((uintptr_t)own ^ ((uintptr_t)1 << b));
        if (!fw_is_live(h))
            expect_call(e, "a live handle with one bit flipped", h, e->inval);
    }
}

/* Words an object header might begin with; a forged buffer starting with
 * one must not be taken for an object. */
static const uint32_t forged_words[] = {0, 0x5A534F43u, 0x5A435458u, 0x5A504F4Cu,
                                        0x5A544D52u, 0x5A4D4F4Eu, 0x5A444544u, 0xFFFFFFFFu};

static void run_invalid(const entry_t *e)
{
    expect_t inval = e->inval;
    if (e->role == ROLE_ITEM)
        /* socket NULL makes an FD item, and fd -1 with events is EINVAL */
        expect_call(e, "NULL", NULL, (expect_t)EX(ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL));
    else
        expect_call(e, "NULL", NULL, inval);
    void *garbage[] = {(void *)(uintptr_t)1, (void *)(uintptr_t)0x1000,
                       (void *)(uintptr_t)0xdeadbeef, (void *)UINTPTR_MAX,
                       (void *)(uintptr_t)0xA000000000000000ull,
                       (void *)(uintptr_t)0xAFFFFFFFFFFFFFFFull};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        expect_call(e, "garbage", garbage[i], inval);
    /* Stack memory that looks like an object: 4 KiB, aligned, zeroed but
     * for its first word. */
    _Alignas(64) unsigned char buf[4096];
    for (size_t i = 0; i < sizeof forged_words / sizeof forged_words[0]; i++) {
        memset(buf, 0, sizeof buf);
        memcpy(buf, &forged_words[i], sizeof forged_words[i]);
        expect_call(e, "stack buffer", buf, inval);
        expect_call(e, "stack buffer + 1", buf + 1, inval);
    }
    /* Live handles of every kind the role does not take. */
    struct {
        int role;
        void *h;
        const char *name;
    } live[] = {{ROLE_CTX, F.ctx, "a context"},     {ROLE_SOCKET, F.sock, "a socket"},
                {ROLE_MONITOR, F.monitor, "a monitor"}, {ROLE_POLLER, F.poller, "a poller"},
                {ROLE_TIMER, F.timer, "a timer"},       {ROLE_HOST, FW.srv, "a host"},
                {ROLE_HOST, FW.cli, "another host"},    {ROLE_CALL, FW.call, "a call"},
                {ROLE_TURN, atomic_load(&FW.turn), "a turn"}};
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++) {
        int k = live[i].role;
        if (k == e->role)
            continue;
        if ((e->role == ROLE_SOURCE || e->role == ROLE_ITEM) &&
            (k == ROLE_SOCKET || k == ROLE_MONITOR))
            continue; /* valid there */
        if (e->role == ROLE_SOURCE && k == ROLE_TIMER)
            continue; /* valid there */
        if (e->role == ROLE_ITEM && k == ROLE_TIMER) {
            /* documented: a timer in a zlink_poll item */
            expect_call(e, live[i].name, live[i].h,
                        (expect_t)EX(ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP));
            continue;
        }
        expect_call(e, live[i].name, live[i].h, inval);
    }
    if (fw_role(e->role))
        run_forged_fw(e);
}

static void run_stale(const entry_t *e)
{
    switch (e->role) {
    case ROLE_CTX:
        expect_call(e, "terminated context", F.termed_ctx, e->stale);
        break;
    case ROLE_SOCKET:
        expect_call(e, "closed socket", F.closed_sock, e->stale);
        expect_call(e, "socket after ctx_term", F.termed_sock, e->stale);
        break;
    case ROLE_MONITOR:
        expect_call(e, "closed monitor", F.closed_monitor, e->stale);
        break;
    case ROLE_POLLER:
        expect_call(e, "destroyed poller", F.dead_poller, e->stale);
        break;
    case ROLE_TIMER:
        expect_call(e, "destroyed timer", F.dead_timer, e->stale);
        break;
    case ROLE_SOURCE:
        expect_call(e, "closed socket", F.closed_sock, e->stale);
        expect_call(e, "socket after ctx_term", F.termed_sock, e->stale);
        expect_call(e, "closed monitor", F.closed_monitor, e->stale_monitor);
        expect_call(e, "destroyed timer", F.dead_timer, e->stale_timer);
        break;
    case ROLE_ITEM:
        expect_call(e, "closed socket", F.closed_sock, e->stale);
        expect_call(e, "socket after ctx_term", F.termed_sock, e->stale);
        expect_call(e, "closed monitor", F.closed_monitor, e->stale_monitor);
        break;
    case ROLE_HOST:
        expect_call(e, "destroyed host", FW.dead_host, e->stale);
        break;
    case ROLE_CALL:
        expect_call(e, "released call", FW.dead_call, e->stale);
        break;
    case ROLE_TURN:
        expect_call(e, "ended turn", atomic_load(&FW.dead_turn), e->stale);
        break;
    }
}

/* The live fixtures still work and nothing was registered or changed. */
static void check_fixtures_intact(void)
{
    zlink_config_result_t err = ZLINK_CONFIG_INTERNAL;
    ZT_EQ_INT(zlink_ctx_get(F.ctx, ZLINK_MAX_SOCKETS, &err), ZLINK_MAX_SOCKETS_DFLT);
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    int v = 0;
    size_t n = sizeof v;
    ZT_EQ_INT(zlink_getsockopt(F.sock, ZLINK_SNDTIMEO, &v, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(v, 1234);
    ZT_EQ_INT(zlink_poller_size(F.poller, &err), 0);
    zlink_monitor_status_t st;
    ZT_EQ_INT(zlink_monitor_status(F.monitor, &st), ZLINK_CONFIG_OK);
    ZT_EQ_INT(st.state_flags & ZLINK_MONITOR_STATE_CLOSED, 0);
    uint64_t count = 0;
    ZT_EQ_INT(zlink_timer_recv(F.timer, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    /* framework: both hosts serve with their settings, the call is still
     * unfinished (a setter works), the turn still a request */
    ZT_EQ_INT(zlink_host_state(FW.srv), ZLINK_HOST_SERVING);
    ZT_EQ_INT(zlink_host_state(FW.cli), ZLINK_HOST_SERVING);
    int64_t t = 0;
    ZT_EQ_INT(zlink_host_get_option(FW.cli, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, &t),
              ZLINK_FW_OK);
    ZT_EQ_INT(t, ZLINK_MS(60000));
    ZT_EQ_INT(zlink_host_get_option(FW.srv, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT, &t),
              ZLINK_FW_OK);
    ZT_EQ_INT(t, ZLINK_DEFAULT_REQUEST_TIMEOUT);
    ZT_EQ_INT(zlink_call_set_metadata(FW.call, "k", "v"), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_turn_kind(atomic_load(&FW.turn)), ZLINK_MESSAGE_REQUEST);
    ZT_EQ_INT(atomic_load(&FW.hold_done), 0);
}

/* ------------------------------------------------- framework fixtures */

/* Server handlers (worker threads). "end" (a send) ends its turn at once
 * and leaves the dead handle; "hold" (a request) keeps its turn open. */
static void fw_on_end(zlink_turn_t *turn, void *user)
{
    (void)user;
    /* no ZT_ check off the test thread: a failed end leaves dead_turn
     * NULL, which the test thread reports */
    if (zlink_turn_end(turn, 0, NULL) == ZLINK_FW_OK)
        atomic_store(&FW.dead_turn, turn);
}

static void fw_on_hold(zlink_turn_t *turn, void *user)
{
    (void)user;
    atomic_store(&FW.turn, turn);
}

/* The "hold" request's completion (dispatcher thread). */
static void fw_on_hold_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    (void)user;
    size_t n = o->payload_size < sizeof FW.hold_reply - 1 ? o->payload_size
                                                          : sizeof FW.hold_reply - 1;
    if (o->payload != NULL)
        memcpy(FW.hold_reply, o->payload, n);
    FW.hold_reply[n] = '\0';
    atomic_store(&FW.hold_result, o->result);
    atomic_fetch_add(&FW.hold_done, 1);
}

static void fw_fixtures_make(void)
{
    zlink_fw_result_t r = ZLINK_FW_INTERNAL_FAILURE;
    char ep[64], bound[256];
    snprintf(ep, sizeof ep, "inproc://handles-fw-%d", (int)getpid());
    memset(&FW, 0, sizeof FW);
    FW.srv = zlink_host_new("handles-srv", &r);
    ZT_CHECK(FW.srv != NULL && r == ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_add_cs_server(FW.srv, "svc", ep), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_add_handler(FW.srv, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND,
                                     "end", fw_on_end, NULL),
              ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_add_handler(FW.srv, ZLINK_OWNER_CHANNEL, "svc",
                                     ZLINK_MESSAGE_REQUEST, "hold", fw_on_hold, NULL),
              ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_start(FW.srv), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_endpoint(FW.srv, "svc", bound, sizeof bound), ZLINK_FW_OK);
    FW.cli = zlink_host_new("handles-cli", &r);
    ZT_CHECK(FW.cli != NULL && r == ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_add_cs_client(FW.cli, "svc", bound), ZLINK_FW_OK);
    /* long enough for the table to run under a sanitizer; also read back
     * to show the bad calls changed nothing */
    ZT_EQ_INT(zlink_host_set_option(FW.cli, ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT,
                                    ZLINK_MS(60000)),
              ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_start(FW.cli), ZLINK_FW_OK);

    /* An ended turn: a send whose handler ends at once. Waiting for the
     * send's acceptance, then for the handler. */
    zlink_call_t *c = zlink_call_send_to_channel(FW.cli, "svc", &r);
    ZT_CHECK(c != NULL);
    ZT_EQ_INT(zlink_call_set_payload(c, "end", "", "e", 1), ZLINK_FW_OK);
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    ZT_EQ_INT(zlink_call_wait(c, &o), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_release(c), ZLINK_FW_OK);
    ZT_EVENTUALLY(atomic_load(&FW.dead_turn) != NULL, 10000);
    /* The open turn: a request its handler does not answer yet. */
    c = zlink_call_request_to_channel(FW.cli, "svc", &r);
    ZT_CHECK(c != NULL);
    ZT_EQ_INT(zlink_call_set_payload(c, "hold", "", "h", 1), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_start(c, fw_on_hold_done, NULL), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_release(c), ZLINK_FW_OK); /* the runtime keeps it */
    ZT_EVENTUALLY(atomic_load(&FW.turn) != NULL, 10000);
    /* A live call, built and never started; a released one. */
    FW.call = zlink_call_send_to_channel(FW.cli, "svc", &r);
    ZT_CHECK(FW.call != NULL);
    FW.dead_call = zlink_call_request_to_channel(FW.cli, "svc", &r);
    ZT_CHECK(FW.dead_call != NULL);
    ZT_EQ_INT(zlink_call_release(FW.dead_call), ZLINK_FW_OK);
    /* A destroyed host (never started). */
    FW.dead_host = zlink_host_new("handles-dead", &r);
    ZT_CHECK(FW.dead_host != NULL);
    ZT_EQ_INT(zlink_host_destroy(FW.dead_host), ZLINK_FW_OK);
}

/* The open turn still answers once: its reply was not claimed by any bad
 * call, and the requester gets it. */
static void fw_fixtures_free(void)
{
    zlink_turn_t *turn = atomic_load(&FW.turn);
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    ZT_CHECK(p != NULL && n == 1 && memcmp(p, "h", 1) == 0);
    ZT_EQ_STR(zlink_turn_packet(turn), "hold");
    zlink_fw_result_t r = ZLINK_FW_INTERNAL_FAILURE;
    zlink_call_t *reply = zlink_turn_reply(turn, &r);
    ZT_CHECK(reply != NULL && r == ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_set_payload(reply, "pong", "", "ok", 2), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_start(reply, NULL, NULL), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_call_release(reply), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_turn_end(turn, 0, NULL), ZLINK_FW_OK);
    ZT_EVENTUALLY(atomic_load(&FW.hold_done) == 1, 10000);
    ZT_EQ_INT(atomic_load(&FW.hold_result), ZLINK_FW_OK);
    ZT_EQ_STR(FW.hold_reply, "ok");
    ZT_EQ_INT(zlink_call_release(FW.call), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_shutdown(FW.cli, ZLINK_MS(5000)), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_destroy(FW.cli), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_shutdown(FW.srv, ZLINK_MS(5000)), ZLINK_FW_OK);
    ZT_EQ_INT(zlink_host_destroy(FW.srv), ZLINK_FW_OK);
    ZT_EQ_INT(atomic_load(&FW.hold_done), 1);
}

static void fixtures_make(void)
{
    memset(&F, 0, sizeof F);
    F.ctx = zlink_ctx_new();
    ZT_CHECK(F.ctx != NULL);
    F.sock = zlink_socket(F.ctx, ZLINK_PAIR);
    ZT_CHECK(F.sock != NULL);
    int v = 1234;
    ZT_EQ_INT(zlink_setsockopt(F.sock, ZLINK_SNDTIMEO, &v, sizeof v), ZLINK_CONFIG_OK);
    zlink_monitor_config_t cfg = {ZLINK_EVENT_ALL, 0, 0};
    F.monitor = zlink_socket_monitor_open(F.sock, &cfg);
    ZT_CHECK(F.monitor != NULL);
    F.poller = zlink_poller_new();
    ZT_CHECK(F.poller != NULL);
    F.timer = zlink_timer_new();
    ZT_CHECK(F.timer != NULL);

    F.closed_sock = zlink_socket(F.ctx, ZLINK_DEALER);
    ZT_CHECK(F.closed_sock != NULL);
    ZT_EQ_INT(zlink_close(F.closed_sock), ZLINK_CLOSE_OK);

    F.termed_ctx = zlink_ctx_new();
    ZT_CHECK(F.termed_ctx != NULL);
    F.termed_sock = zlink_socket(F.termed_ctx, ZLINK_ROUTER);
    ZT_CHECK(F.termed_sock != NULL);
    ZT_EQ_INT(zlink_close(F.termed_sock), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(F.termed_ctx), ZLINK_CLOSE_OK);

    void *s2 = zlink_socket(F.ctx, ZLINK_SUB);
    ZT_CHECK(s2 != NULL);
    F.closed_monitor = zlink_socket_monitor_open(s2, &cfg);
    ZT_CHECK(F.closed_monitor != NULL);
    void *m = F.closed_monitor;
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    ZT_CHECK(m == NULL);
    ZT_EQ_INT(zlink_close(s2), ZLINK_CLOSE_OK);

    F.dead_poller = zlink_poller_new();
    ZT_CHECK(F.dead_poller != NULL);
    void *p = F.dead_poller;
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_OK);
    ZT_CHECK(p == NULL);
    F.dead_timer = zlink_timer_new();
    ZT_CHECK(F.dead_timer != NULL);
    void *t = F.dead_timer;
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_CHECK(t == NULL);
}

static void fixtures_free(void)
{
    ZT_EQ_INT(zlink_monitor_close(&F.monitor), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_close(F.sock), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_poller_destroy(&F.poller), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_timer_destroy(&F.timer), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(F.ctx), ZLINK_CLOSE_OK);
}

static void run_table(void)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        run_invalid(&entries[i]);
        run_stale(&entries[i]);
    }
    check_fixtures_intact();
}

/* Makes and ends many objects of every kind, so that the slots of the
 * stale fixtures are handed out again (whatever the reuse order). */
static void churn(int rounds)
{
    enum { N = 300 };
    static void *h[N];
    for (int r = 0; r < rounds; r++) {
        void *ctx = zlink_ctx_new();
        ZT_CHECK(ctx != NULL);
        for (int i = 0; i < N; i++) {
            switch (i % 4) {
            case 0: h[i] = zlink_socket(ctx, ZLINK_PAIR); break;
            case 1: h[i] = zlink_poller_new(); break;
            case 2: h[i] = zlink_timer_new(); break;
            default: h[i] = zlink_ctx_new(); break;
            }
            ZT_CHECK(h[i] != NULL);
        }
        for (int i = 0; i < N; i++) {
            switch (i % 4) {
            case 0: ZT_EQ_INT(zlink_close(h[i]), ZLINK_CLOSE_OK); break;
            case 1: ZT_EQ_INT(zlink_poller_destroy(&h[i]), ZLINK_CLOSE_OK); break;
            case 2: ZT_EQ_INT(zlink_timer_destroy(&h[i]), ZLINK_CLOSE_OK); break;
            default: ZT_EQ_INT(zlink_ctx_term(h[i]), ZLINK_CLOSE_OK); break;
            }
        }
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
        /* framework slots: calls and hosts made and ended again */
        static zlink_call_t *calls[N];
        zlink_fw_result_t fr;
        for (int i = 0; i < N; i++) {
            calls[i] = zlink_call_request_to_channel(FW.cli, "svc", &fr);
            ZT_CHECK(calls[i] != NULL);
        }
        for (int i = 0; i < N; i++)
            ZT_EQ_INT(zlink_call_release(calls[i]), ZLINK_FW_OK);
        for (int i = 0; i < 8; i++) {
            zlink_host_t *x = zlink_host_new("handles-churn", &fr);
            ZT_CHECK(x != NULL);
            ZT_EQ_INT(zlink_host_destroy(x), ZLINK_FW_OK);
        }
    }
}

static void test_bad_handles_everywhere(void)
{
    fixtures_make();
    fw_fixtures_make();
    ZT_CHECK(sizeof entries / sizeof entries[0] >= 50);
    ZT_CHECK(sizeof no_handle / sizeof no_handle[0] > 0);
    run_table();
    /* Once more after the stale handles' slots were reused by new objects
     * (sockets, pollers, timers, contexts), which must not answer for them. */
    churn(2);
    run_table();
    fw_fixtures_free();
    fixtures_free();
}

/* ------------------------------------------------- slot reuse, one thread */

static void test_stale_socket_after_reuse(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    enum { N = 2000 };
    void *stale[8] = {0};
    for (int i = 0; i < N; i++) {
        void *s = zlink_socket(ctx, ZLINK_PAIR);
        ZT_CHECK(s != NULL);
        int v = 1000 + i;
        ZT_EQ_INT(zlink_setsockopt(s, ZLINK_SNDTIMEO, &v, sizeof v), ZLINK_CONFIG_OK);
        /* Every handle closed so far is refused and writes nothing into s. */
        for (int k = 0; k < 8; k++) {
            if (stale[k] == NULL)
                continue;
            int w = 7;
            ZT_EQ_INT(zlink_setsockopt(stale[k], ZLINK_SNDTIMEO, &w, sizeof w),
                      ZLINK_CONFIG_INVALID_STATE);
            ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
            ZT_EQ_INT(zlink_close(stale[k]), ZLINK_CLOSE_INVALID_HANDLE);
            ZT_EQ_INT(zlink_errno(), ESTALE);
        }
        int got = 0;
        size_t n = sizeof got;
        ZT_EQ_INT(zlink_getsockopt(s, ZLINK_SNDTIMEO, &got, &n), ZLINK_CONFIG_OK);
        ZT_EQ_INT(got, 1000 + i);
        ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
        stale[i % 8] = s;
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    for (int k = 0; k < 8; k++) {
        int w = 7;
        ZT_EQ_INT(zlink_setsockopt(stale[k], ZLINK_SNDTIMEO, &w, sizeof w),
                  ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
    }
}

/* -------------------------------------- close gates of the other kinds */

typedef struct blocked_call {
    pthread_t th;
    void *h;
    int kind;             /* 0 timer recv, 1 monitor recv, 2 poller wait */
    _Atomic long tid;
    long long result;
    int err;
} blocked_call_t;

static void *blocked_main(void *arg)
{
    blocked_call_t *b = arg;
    atomic_store(&b->tid, zt_gettid());
    if (b->kind == 0) {
        uint64_t count = 0;
        b->result = zlink_timer_recv(b->h, &count, ZLINK_RECV_FLAGS_NONE);
    } else if (b->kind == 1) {
        zlink_monitor_event_t ev;
        b->result = zlink_socket_monitor_recv(b->h, &ev, ZLINK_RECV_FLAGS_NONE);
    } else {
        zlink_poller_event_t ev[1];
        zlink_config_result_t err = ZLINK_CONFIG_OK;
        b->result = zlink_poller_wait(b->h, ev, 1, -1, &err);
    }
    b->err = zlink_errno();
    return NULL;
}

static void blocked_start(blocked_call_t *b, void *h, int kind)
{
    memset(b, 0, sizeof *b);
    b->h = h;
    b->kind = kind;
    ZT_EQ_INT(pthread_create(&b->th, NULL, blocked_main, b), 0);
    ZT_EVENTUALLY(atomic_load(&b->tid) != 0, 5000);
    /* Sleeping inside ZLink (futex or ppoll), as the kernel reports it. */
    ZT_CHECK(zt_wait_blocked(atomic_load(&b->tid)));
}

static void test_destroy_busy_while_inside(void)
{
    /* A timer: destroy refuses while a receive sleeps in it... */
    void *t = zlink_timer_new();
    ZT_CHECK(t != NULL);
    ZT_EQ_INT(zlink_timer_start(t, 60ull * 1000000000ull, 0), ZLINK_CONFIG_OK);
    blocked_call_t b;
    blocked_start(&b, t, 0);
    void *x = t;
    ZT_EQ_INT(zlink_timer_destroy(&x), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(x == t);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK); /* wakes it: NO_DATA */
    ZT_EQ_INT(pthread_join(b.th, NULL), 0);
    ZT_EQ_INT(b.result, ZLINK_RECV_NO_DATA);
    /* ...and while a poller holds it, even with no call running. */
    void *p = zlink_poller_new();
    ZT_CHECK(p != NULL);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_destroy(&x), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_EQ_INT(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_OK);
    /* A poller: destroy refuses while a wait sleeps in it. */
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    blocked_start(&b, p, 2);
    void *y = p;
    ZT_EQ_INT(zlink_poller_destroy(&y), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(y == p);
    ZT_EQ_INT(write(fds[1], "x", 1), 1); /* ends the wait */
    ZT_EQ_INT(pthread_join(b.th, NULL), 0);
    ZT_EQ_INT(b.result, 1);
    ZT_EQ_INT(zlink_poller_destroy(&y), ZLINK_CLOSE_OK);
    ZT_CHECK(y == NULL);
    ZT_EQ_INT(zlink_poller_size(p, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_timer_destroy(&x), ZLINK_CLOSE_OK);
    ZT_CHECK(x == NULL);
    ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    close(fds[0]);
    close(fds[1]);

    /* A monitor: close refuses while a receive sleeps in it. */
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    ZT_CHECK(s != NULL);
    int infinite = -1;
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_RCVTIMEO, &infinite, sizeof infinite), ZLINK_CONFIG_OK);
    zlink_monitor_config_t cfg = {ZLINK_EVENT_ALL, 0, 0};
    void *m = zlink_socket_monitor_open(s, &cfg);
    ZT_CHECK(m != NULL);
    blocked_start(&b, m, 1);
    void *z = m;
    ZT_EQ_INT(zlink_monitor_close(&z), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(z == m);
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK); /* MONITOR_STOPPED wakes it */
    ZT_EQ_INT(pthread_join(b.th, NULL), 0);
    ZT_EQ_INT(b.result, ZLINK_RECV_OK);
    ZT_EQ_INT(zlink_monitor_close(&z), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &(zlink_monitor_event_t){0}, 0),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* --------------------------------------------------------------- races */

typedef struct hammer {
    pthread_t th;
    void *h;
    void *aux;                    /* a second handle some hammers use */
    _Atomic int stop;
    _Atomic long live_calls;      /* calls that found the object */
    _Atomic long dead_calls;      /* calls refused as closed/destroyed */
    int bad;                      /* a result that is neither (first one) */
    long long bad_result;
    int bad_errno;
    int bad_after_dead;           /* a live answer after a dead one */
} hammer_t;

static void hammer_note(hammer_t *hm, bool live, bool dead, long long r, int e)
{
    if (live) {
        if (atomic_load(&hm->dead_calls) > 0 && !hm->bad_after_dead)
            hm->bad_after_dead = 1;
        atomic_fetch_add(&hm->live_calls, 1);
    } else if (dead) {
        atomic_fetch_add(&hm->dead_calls, 1);
    } else if (!hm->bad) {
        hm->bad = 1;
        hm->bad_result = r;
        hm->bad_errno = e;
    }
}

static void hammer_check(hammer_t *hm)
{
    if (hm->bad)
        ZT_FAIL("unexpected result %lld errno %d (%s)", hm->bad_result, hm->bad_errno,
                zlink_strerror(hm->bad_errno));
    ZT_CHECK(!hm->bad_after_dead);
    ZT_CHECK(atomic_load(&hm->live_calls) > 0);
    ZT_CHECK(atomic_load(&hm->dead_calls) > 0);
}

/* Keeps calling until told to stop, but only after at least min dead
 * answers, so the calls overlap the close and follow it. */
#define HAMMER_DEAD_MIN 2000

static bool hammer_go_on(hammer_t *hm)
{
    return !atomic_load(&hm->stop) || atomic_load(&hm->dead_calls) < HAMMER_DEAD_MIN;
}

static void *socket_hammer(void *arg)
{
    hammer_t *hm = arg;
    unsigned i = 0;
    while (hammer_go_on(hm)) {
        int v = 0;
        size_t n = sizeof v;
        int r, e;
        switch (i++ % 4) {
        case 0:
            r = zlink_getsockopt(hm->h, ZLINK_SNDTIMEO, &v, &n);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_CONFIG_OK,
                        r == ZLINK_CONFIG_INVALID_STATE && e == ESHUTDOWN, r, e);
            break;
        case 1: {
            zlink_msg_t m;
            zlink_msg_init_size(&m, 4);
            r = zlink_send(hm->h, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL);
            e = zlink_errno();
            zlink_msg_close(&m);
            hammer_note(hm, r == ZLINK_SUBMIT_OK || r == ZLINK_SUBMIT_BACKPRESSURED,
                        r == ZLINK_SUBMIT_TERMINATED && e == ESHUTDOWN, r, e);
            break;
        }
        case 2: {
            zlink_msg_t parts[1];
            size_t count = 0;
            r = zlink_recv(hm->h, NULL, parts, 1, &count, ZLINK_RECV_FLAGS_DONTWAIT);
            e = zlink_errno();
            if (r == ZLINK_RECV_OK)
                zlink_multipart_close(parts, count);
            hammer_note(hm, r == ZLINK_RECV_OK || r == ZLINK_RECV_NO_DATA,
                        r == ZLINK_RECV_INVALID_STATE && e == ESHUTDOWN, r, e);
            break;
        }
        default: {
            zlink_pollitem_t it = {hm->h, -1, ZLINK_POLLIN | ZLINK_POLLOUT, 0};
            r = zlink_poll(&it, 1, 0, NULL);
            e = zlink_errno();
            hammer_note(hm, r >= 0 && !(it.revents & ZLINK_POLLERR),
                        r == 1 && it.revents == ZLINK_POLLERR, r, e);
            break;
        }
        }
    }
    return NULL;
}

/* The closer: retries while the gate says another call is inside (the
 * documented EBUSY), bounded; returns how many times it was refused. */
#define CLOSE_TRIES 100000000L

static long close_until_ok(zlink_close_result_t (*fn)(void *), void *h)
{
    long busy = 0;
    for (;;) {
        zlink_close_result_t r = fn(h);
        if (r == ZLINK_CLOSE_OK)
            return busy;
        ZT_EQ_INT(r, ZLINK_CLOSE_BUSY);
        ZT_EQ_INT(zlink_errno(), EBUSY);
        if (++busy > CLOSE_TRIES)
            ZT_FAIL("close never got through the gate");
    }
}

static zlink_close_result_t destroy_poller_fn(void *h) { return zlink_poller_destroy(&h); }
static zlink_close_result_t destroy_timer_fn(void *h) { return zlink_timer_destroy(&h); }
static zlink_close_result_t close_monitor_fn(void *h) { return zlink_monitor_close(&h); }

static void hammer_start(hammer_t *hm, void *h, void *(*fn)(void *))
{
    memset(hm, 0, sizeof *hm);
    hm->h = h;
    ZT_EQ_INT(pthread_create(&hm->th, NULL, fn, hm), 0);
    ZT_EVENTUALLY(atomic_load(&hm->live_calls) >= 1000, 5000);
}

static void hammer_finish(hammer_t *hm)
{
    atomic_store(&hm->stop, 1);
    ZT_EQ_INT(pthread_join(hm->th, NULL), 0);
    hammer_check(hm);
}

static void test_race_socket_close(void)
{
    long busy_total = 0;
    for (int round = 0; round < 20; round++) {
        void *ctx = zlink_ctx_new();
        ZT_CHECK(ctx != NULL);
        void *a = zlink_socket(ctx, ZLINK_PAIR), *b = zlink_socket(ctx, ZLINK_PAIR);
        ZT_CHECK(a != NULL && b != NULL);
        int zero = 0;
        ZT_EQ_INT(zlink_setsockopt(a, ZLINK_LINGER, &zero, sizeof zero), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_bind(b, "inproc://race"), ZLINK_BIND_OK);
        ZT_EQ_INT(zlink_connect(a, "inproc://race"), ZLINK_CONNECT_OK);
        hammer_t hm;
        hammer_start(&hm, a, socket_hammer);
        busy_total += close_until_ok(zlink_close, a);
        /* Keep hammering through the context's end, which frees the
         * socket's memory: the calls must still be refused, not crash. */
        ZT_EVENTUALLY(atomic_load(&hm.dead_calls) >= 100, 5000);
        ZT_EQ_INT(zlink_close(b), ZLINK_CLOSE_OK);
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
        hammer_finish(&hm);
    }
    printf("# socket close: %ld EBUSY refusals in 20 rounds\n", busy_total);
}

static void *poller_hammer(void *arg)
{
    hammer_t *hm = arg;
    unsigned i = 0;
    while (hammer_go_on(hm)) {
        int r, e;
        zlink_config_result_t err = ZLINK_CONFIG_INTERNAL;
        switch (i++ % 3) {
        case 0:
            r = zlink_poller_size(hm->h, &err);
            e = zlink_errno();
            hammer_note(hm, r >= 0 && err == ZLINK_CONFIG_OK,
                        r == -1 && err == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            break;
        case 1:
            r = zlink_poller_add(hm->h, hm->aux, NULL, ZLINK_POLLIN);
            e = zlink_errno();
            if (r == ZLINK_CONFIG_OK) {
                r = zlink_poller_remove(hm->h, hm->aux);
                e = zlink_errno();
                /* the destroy may come between add and remove */
                hammer_note(hm, r == ZLINK_CONFIG_OK,
                            r == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            } else {
                hammer_note(hm, false, r == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            }
            break;
        default: {
            zlink_poller_event_t ev[2];
            r = zlink_poller_wait(hm->h, ev, 2, 0, &err);
            e = zlink_errno();
            hammer_note(hm, r >= 0,
                        r == -1 && err == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            break;
        }
        }
    }
    return NULL;
}

static void test_race_poller_destroy(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    ZT_CHECK(s != NULL);
    long busy_total = 0;
    for (int round = 0; round < 20; round++) {
        void *p = zlink_poller_new();
        ZT_CHECK(p != NULL);
        hammer_t hm;
        memset(&hm, 0, sizeof hm);
        hm.h = p;
        hm.aux = s;
        ZT_EQ_INT(pthread_create(&hm.th, NULL, poller_hammer, &hm), 0);
        ZT_EVENTUALLY(atomic_load(&hm.live_calls) >= 1000, 5000);
        busy_total += close_until_ok(destroy_poller_fn, p);
        hammer_finish(&hm);
    }
    printf("# poller destroy: %ld EBUSY refusals in 20 rounds\n", busy_total);
    /* Every registration went with its poller: s can close at once. */
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static void *timer_hammer(void *arg)
{
    hammer_t *hm = arg;
    unsigned i = 0;
    while (hammer_go_on(hm)) {
        int r, e;
        switch (i++ % 3) {
        case 0:
            r = zlink_timer_start(hm->h, 1000, 0);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_CONFIG_OK,
                        r == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            break;
        case 1: {
            uint64_t count = 0;
            r = zlink_timer_recv(hm->h, &count, ZLINK_RECV_FLAGS_DONTWAIT);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_RECV_OK || r == ZLINK_RECV_NO_DATA,
                        r == ZLINK_RECV_INVALID_HANDLE && e == EFAULT, r, e);
            break;
        }
        default:
            r = zlink_timer_stop(hm->h);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_CONFIG_OK,
                        r == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
            break;
        }
    }
    return NULL;
}

static void test_race_timer_destroy(void)
{
    long busy_total = 0;
    for (int round = 0; round < 20; round++) {
        void *t = zlink_timer_new();
        ZT_CHECK(t != NULL);
        hammer_t hm;
        hammer_start(&hm, t, timer_hammer);
        busy_total += close_until_ok(destroy_timer_fn, t);
        hammer_finish(&hm);
    }
    printf("# timer destroy: %ld EBUSY refusals in 20 rounds\n", busy_total);
}

static void *monitor_hammer(void *arg)
{
    hammer_t *hm = arg;
    unsigned i = 0;
    while (hammer_go_on(hm)) {
        int r, e;
        if (i++ % 2 == 0) {
            zlink_monitor_status_t st;
            r = zlink_monitor_status(hm->h, &st);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_CONFIG_OK,
                        r == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
        } else {
            zlink_monitor_event_t ev;
            r = zlink_socket_monitor_recv(hm->h, &ev, ZLINK_RECV_FLAGS_DONTWAIT);
            e = zlink_errno();
            hammer_note(hm, r == ZLINK_RECV_OK || r == ZLINK_RECV_NO_DATA ||
                                (r == ZLINK_RECV_INVALID_STATE && e == ESHUTDOWN),
                        r == ZLINK_RECV_INVALID_HANDLE && e == EFAULT, r, e);
        }
    }
    return NULL;
}

static void test_race_monitor_close(void)
{
    long busy_total = 0;
    for (int round = 0; round < 20; round++) {
        void *ctx = zlink_ctx_new();
        ZT_CHECK(ctx != NULL);
        void *s = zlink_socket(ctx, ZLINK_DEALER);
        ZT_CHECK(s != NULL);
        zlink_monitor_config_t cfg = {ZLINK_EVENT_ALL, 0, 0};
        void *m = zlink_socket_monitor_open(s, &cfg);
        ZT_CHECK(m != NULL);
        hammer_t hm;
        hammer_start(&hm, m, monitor_hammer);
        if (round % 2 == 1) {
            /* the socket goes first: the monitor outlives it */
            ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
            s = NULL;
        }
        busy_total += close_until_ok(close_monitor_fn, m);
        ZT_EVENTUALLY(atomic_load(&hm.dead_calls) >= 100, 5000);
        if (s != NULL)
            ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
        hammer_finish(&hm);
    }
    printf("# monitor close: %ld EBUSY refusals in 20 rounds\n", busy_total);
}

static void *ctx_hammer(void *arg)
{
    hammer_t *hm = arg;
    unsigned i = 0;
    while (hammer_go_on(hm)) {
        int r, e;
        if (i++ % 2 == 0) {
            zlink_config_result_t err = ZLINK_CONFIG_INTERNAL;
            r = zlink_ctx_get(hm->h, ZLINK_IO_THREADS, &err);
            e = zlink_errno();
            hammer_note(hm, r > 0 && err == ZLINK_CONFIG_OK,
                        r == -1 && err == ZLINK_CONFIG_INVALID_HANDLE && e == EFAULT, r, e);
        } else {
            void *s = zlink_socket(hm->h, ZLINK_PAIR);
            e = zlink_errno();
            if (s != NULL) {
                hammer_note(hm, zlink_close(s) == ZLINK_CLOSE_OK, false, -1, zlink_errno());
            } else {
                /* ETERM once shutdown began: the context still answers */
                hammer_note(hm, e == ETERM, e == EFAULT, -1, e);
            }
        }
    }
    return NULL;
}

static void test_race_ctx_term(void)
{
    for (int round = 0; round < 50; round++) {
        void *ctx = zlink_ctx_new();
        ZT_CHECK(ctx != NULL);
        hammer_t hm;
        hammer_start(&hm, ctx, ctx_hammer);
        /* Never refused for the other thread's calls: term waits for the
         * sockets it makes and closes, then ends the handle; whichever
         * call leaves last frees the context. */
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
        hammer_finish(&hm);
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(test_bad_handles_everywhere),
    ZT_CASE(test_stale_socket_after_reuse),
    ZT_CASE(test_destroy_busy_while_inside),
    ZT_CASE(test_race_socket_close),
    ZT_CASE(test_race_poller_destroy),
    ZT_CASE(test_race_timer_destroy),
    ZT_CASE(test_race_monitor_close),
    ZT_CASE(test_race_ctx_term),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
