/*
 * flow.c — receive-flow state (DEALER, ROUTER): a socket asks its peers to
 * stop (PAUSED) or resume (RUNNING) sending to it.
 *
 * Design notes
 *  - The state is one absolute value per socket. Setting the current value
 *    again sends nothing. A change goes to every attached peer as a
 *    FLOWSTATE control frame carrying the next epoch of that connection
 *    (epochs start at 1 per connection); a connection made later, or a
 *    reconnect, receives the current state at attach. A state never set
 *    sends nothing.
 *  - FLOWSTATE body (doc/protocol.md §8.3): "FLOWSTATE" (9 bytes), layout
 *    version 1 (1 byte), state (1 byte: 0 RUNNING, 1 PAUSED), epoch (u64
 *    BE): 19 bytes. Controls bypass the HWM and never split a record, so a
 *    PAUSE takes effect at a record boundary.
 *  - The receiving side keeps the last applied epoch per pipe. A duplicate
 *    or older epoch changes nothing and counts as stale. A PAUSE marks the
 *    pipe paused: senders treat it like a peer without room (DEALER skips
 *    it, ROUTER waits or reports BACKPRESSURED with a wait token). A RESUME
 *    clears the mark and wakes the socket, which publishes WRITABLE records
 *    and wakes blocked senders.
 *  - Monitor events on the sending side: SEND_FLOW_PAUSED / _RESUMED only
 *    for a real transition (value = epoch; RESUMED carries the WRITABLE flag
 *    when a record would fit now), FLOW_STATE_STALE for a duplicate or older
 *    epoch (value = the received epoch). Always reported on lane 0.
 *  - A FLOWSTATE that reaches a connection already ended (inproc: still
 *    queued beside the records when the peer went away) belongs to no
 *    current connection: it is dropped silently and only counted as stale
 *    (zl_flow_foreign); the next connection starts again at epoch 1.
 *  - ROUTER-ROUTER: FLOWSTATE travels on the Completion lane
 *    (zl_pipe_send_control picks it), so a full App lane cannot delay it.
 *  - Locks: s->lk for everything here (zl_flow_set takes it).
 */
#include "sock/sock_impl.h"
#include "sock/socket.h"

#include "util/platform.h"
#include "wire/zmp.h"

/* Under s->lk: sends state to p with p's next epoch. 0, EPIPE or ENOMEM
 * (nothing sent, the epoch not used). */
static int flow_send(zl_pipe_t *p, int state)
{
    uint8_t body[ZMP_FLOWSTATE_SIZE];
    zmp_flowstate_body(body, state == ZLINK_RECEIVE_FLOW_PAUSED, p->flow_epoch_out + 1);
    int rc = zl_pipe_send_control(p, ZMP_F_CONTROL, body, sizeof body);
    if (rc != ENOMEM)
        p->flow_epoch_out++;
    return rc;
}

int zl_flow_set(zl_socket_t *s, int state)
{
    zl_mutex_lock(&s->lk);
    int rc = 0;
    if (s->flow_state != state) {
        /* All or nothing: room on every peer's queue first. Without it the
         * state stays as it was and the caller gets ENOMEM. (The body is
         * 19 bytes, stored inline: only the queues can lack memory.) */
        uint8_t body[ZMP_FLOWSTATE_SIZE];
        zmp_flowstate_body(body, state == ZLINK_RECEIVE_FLOW_PAUSED, 0);
        ZL_FOREACH_PIPE(s, p) {
            if (p->attached && !p->ended &&
                zl_pipe_control_reserve(p, ZMP_F_CONTROL, body, sizeof body) == ENOMEM)
                rc = ENOMEM;
        }
        if (rc == 0) {
            s->flow_state = state;
            ZL_FOREACH_PIPE(s, p) {
                if (p->attached && !p->ended)
                    (void)flow_send(p, state); /* reserved */
            }
        }
    }
    zl_mutex_unlock(&s->lk);
    return rc;
}

int zl_flow_attach(zl_socket_t *s, zl_pipe_t *p)
{
    p->flow_epoch_out = 0;
    p->flow_epoch_in = 0;
    p->remote_paused = false;
    if (s->flow_state >= 0 && flow_send(p, s->flow_state) == ENOMEM)
        return ENOMEM;
    return 0;
}

static bool is_flowstate(const zl_frame_t *f)
{
    zlink_msg_t *m = (zlink_msg_t *)&f->msg;
    return (f->flags & ZMP_F_CONTROL) &&
           zmp_control_kind(zl_msg_data(m), zl_msg_size(m)) == ZMP_CTL_FLOWSTATE;
}

void zl_flow_foreign(zl_socket_t *s, const zl_frame_t *f)
{
    if ((s->type == ZLINK_DEALER || s->type == ZLINK_ROUTER) && is_flowstate(f))
        s->flow_stale_total++;
}

bool zl_flow_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    if (!is_flowstate(f))
        return false;
    zlink_msg_t *m = (zlink_msg_t *)&f->msg;
    bool paused;
    uint64_t e;
    if (zmp_parse_flowstate(zl_msg_data(m), zl_msg_size(m), &paused, &e) != 0)
        return true; /* malformed or a layout we do not know: ignored */
    if (e <= p->flow_epoch_in) {
        s->flow_stale_total++;
        zl_socket_event(s, true, ZLINK_EVENT_FLOW_STATE_STALE, e, p, NULL, NULL,
                        ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION,
                        ZLINK_MONITOR_EVENT_FLAG_FLOW_STATE_STALE_EPOCH);
        return true;
    }
    p->flow_epoch_in = e;
    if (paused == p->remote_paused)
        return true; /* no transition: no event */
    p->remote_paused = paused;
    if (paused) {
        s->flow_paused_conns++;
        s->flow_pause_total++;
        p->flow_pause_start_ns = zl_clock_ns();
        s->flow_last_pause_ns = p->flow_pause_start_ns;
        zl_socket_event(s, true, ZLINK_EVENT_SEND_FLOW_PAUSED, e, p, NULL, NULL,
                        ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION, 0);
    } else {
        s->flow_paused_conns--;
        s->flow_resume_total++;
        s->flow_last_pause_ms = (uint64_t)((zl_clock_ns() - p->flow_pause_start_ns) / 1000000);
        /* WRITABLE flag only when a record would really fit now. */
        uint32_t flags = zl_q_has_room(p->out, ZL_FRAME_OVERHEAD)
                             ? ZLINK_MONITOR_EVENT_FLAG_SEND_FLOW_WRITABLE
                             : 0;
        zl_socket_event(s, true, ZLINK_EVENT_SEND_FLOW_RESUMED, e, p, NULL, NULL,
                        ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION, flags);
        zl_pipe_stamp(p);  /* a wake edge: tokens ... */
        zl_socket_wake(s); /* ... and blocked senders */
    }
    return true;
}
