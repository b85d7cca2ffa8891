/*
 * test_fw_input.c — hostile input at a framework server: records that are
 * not service wire v1 never reach a handler (framework-contract.md §4, JQ-10
 * in spirit): a request gets a protocol error, a one-way is counted as
 * dropped{reason=decode_error}, and the server keeps serving others.
 */
#include "fwtest.h"

/* A raw Core DEALER sends one bad request and two bad one-ways to a CS
 * server; a framework client's request afterwards is served normally. The
 * raw socket has a Core context of its own, so it reaches the server over
 * tcp and ipc (inproc names live in one context: the framework's). */
static void malformed_over(const char *tr)
{
    char ep[256], bound[256];
    fw_recorder_t rec;
    fw_recorder_init(&rec);
    fw_endpoint(ep, sizeof ep, tr, "input");
    zlink_host_t *server = fw_cs_server("server", ep, &rec, bound, sizeof bound);

    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *raw = zlink_socket(ctx, ZLINK_DEALER);
    ZT_CHECK(raw != NULL);
    int zero = 0;
    zlink_setsockopt(raw, ZLINK_LINGER, &zero, sizeof zero);
    FW_EQ(zlink_connect(raw, bound), ZLINK_CONNECT_OK);

    /* 1. a request whose frame is not a service record */
    zlink_msg_t part;
    zlink_msg_init_size(&part, 5);
    memcpy(zlink_msg_data(&part), "hello", 5);
    zlink_completion_id_t id = 0;
    FW_EQ(zlink_request(raw, NULL, &part, 1, ZLINK_SEND_FLAGS_NONE, 5000, NULL, &id),
          ZLINK_SUBMIT_OK);
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    FW_EQ(zlink_completion_recv(raw, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_REQUEST);
    FW_EQ(c.request_result, ZLINK_REQUEST_PROTOCOL_ERROR);
    zlink_completion_close(&c);

    /* 2. a one-way with the right prefix and a broken body, and one with
     *    too many frames */
    uint8_t bad[] = {'Z', 'M', 1, 18, 0, 1, 2, 3};
    zlink_msg_init_size(&part, sizeof bad);
    memcpy(zlink_msg_data(&part), bad, sizeof bad);
    FW_EQ(zlink_send(raw, &part, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    zlink_msg_t many[5];
    for (int i = 0; i < 5; i++) {
        zlink_msg_init_size(&many[i], 1);
        *(char *)zlink_msg_data(&many[i]) = 'x';
    }
    FW_EQ(zlink_send(raw, many, 5, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    int64_t v = 0;
    ZT_EVENTUALLY(zlink_host_metric(server, "zlink.mesh_node.messages.dropped",
                                    "reason=decode_error", &v) == ZLINK_FW_OK &&
                      v == 2,
                  3000);

    /* 3. the server still serves a well-formed client; no handler ever saw
     *    the bad records */
    zlink_host_t *client = fw_cs_client("client", bound);
    char reply[32];
    zlink_call_t *call = fw_call(client, 1, "good");
    FW_EQ(fw_wait(call, reply, sizeof reply), ZLINK_FW_OK);
    ZT_EQ_STR(reply, "good");
    zlink_call_release(call);
    ZT_EQ_INT(fw_recorder_count(&rec), 1);
    ZT_CHECK(zlink_host_metric(server, "zlink.host.protocol_errors", "", &v) == ZLINK_FW_OK &&
             v == 3);

    zlink_close(raw);
    zlink_ctx_term(ctx);
    FW_EQ(zlink_host_shutdown(client, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(server, ZLINK_MS(2000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(client), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(server), ZLINK_FW_OK);
}

static void malformed_records_tcp(void)
{
    malformed_over("tcp");
}

static void malformed_records_ipc(void)
{
    malformed_over("ipc");
}

int main(int argc, char **argv)
{
    static const zt_case_t cases[] = {
        ZT_CASE(malformed_records_tcp),
        ZT_CASE(malformed_records_ipc),
    };
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
