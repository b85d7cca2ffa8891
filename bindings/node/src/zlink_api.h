/*
 * zlink_api.h — the addon's view of libzlink.so.1: one function pointer per
 * export the addon calls, resolved by dlsym at load (loader.cc), never by
 * the dynamic linker. The addon is not linked against libzlink, so a library
 * that lacks a name fails zlink.load() with that name instead of crashing
 * the process when the addon is loaded.
 *
 * zlink.h is included for its types and declarations only; decltype(&name)
 * gives each pointer the header's own signature, so a signature change in
 * the header is a compile error here, not a silent mismatch.
 *
 * Threads: `zl` is written once by zl_load on the JavaScript thread before
 * any other addon function can run, and only read afterwards.
 */
#ifndef ZLINK_NODE_API_H
#define ZLINK_NODE_API_H

#include "zlink.h"

#define ZLINK_NODE_FUNCTIONS(X)                                                  \
    X(zlink_version) X(zlink_errno) X(zlink_strerror) X(zlink_result_name)       \
    X(zlink_ctx_new) X(zlink_ctx_shutdown) X(zlink_ctx_term) X(zlink_ctx_set)    \
    X(zlink_ctx_get) X(zlink_socket) X(zlink_close) X(zlink_setsockopt)          \
    X(zlink_getsockopt) X(zlink_set_routing_id) X(zlink_bind) X(zlink_connect)   \
    X(zlink_unbind) X(zlink_disconnect) X(zlink_msg_init) X(zlink_msg_init_size) \
    X(zlink_msg_close) X(zlink_msg_data) X(zlink_msg_size)                       \
    X(zlink_multipart_close) X(zlink_send) X(zlink_send_rid) X(zlink_recv)       \
    X(zlink_router_recv) X(zlink_completion_recv) X(zlink_completion_close)      \
    X(zlink_request) X(zlink_reply) X(zlink_reply_error) X(zlink_reply_submit) \
    X(zlink_socket_monitor_open) X(zlink_monitor_status) X(zlink_monitor_close)                         \
    X(zlink_socket_set_receive_flow_state) X(zlink_poll) X(zlink_poller_new)     \
    X(zlink_poller_destroy) X(zlink_poller_size) X(zlink_poller_add)             \
    X(zlink_poller_modify) X(zlink_poller_remove) X(zlink_poller_add_fd)         \
    X(zlink_poller_modify_fd) X(zlink_poller_remove_fd)                          \
    X(zlink_poller_add_timer) X(zlink_poller_remove_timer) X(zlink_poller_wait)  \
    X(zlink_timer_new) X(zlink_timer_destroy) X(zlink_timer_start)               \
    X(zlink_timer_stop) X(zlink_timer_recv)                                      \
    X(zlink_host_new) X(zlink_host_set_option) X(zlink_host_get_option)          \
    X(zlink_host_add_cs_server) X(zlink_host_add_cs_client)                      \
    X(zlink_channel_set_option) X(zlink_channel_get_option)                      \
    X(zlink_host_add_mesh_node) X(zlink_mesh_connect) X(zlink_mesh_set_option)   \
    X(zlink_mesh_get_option) X(zlink_mesh_add_channel_client)                    \
    X(zlink_mesh_add_channel_server) X(zlink_mesh_set_weight)                    \
    X(zlink_host_endpoint) X(zlink_mesh_ready_peers) X(zlink_host_add_handler)   \
    X(zlink_host_add_handler_ex)                                                 \
    X(zlink_host_start) X(zlink_host_shutdown) X(zlink_host_destroy)             \
    X(zlink_host_state) X(zlink_host_status) X(zlink_host_capacity)              \
    X(zlink_host_owner_status) X(zlink_host_reset_metrics) X(zlink_host_metric)  \
    X(zlink_call_send_to_channel) X(zlink_call_request_to_channel)               \
    X(zlink_call_send_to_node) X(zlink_call_request_to_node)                     \
    X(zlink_call_set_payload) X(zlink_call_set_timeout)                          \
    X(zlink_call_set_metadata) X(zlink_call_start) X(zlink_call_yield)           \
    X(zlink_call_cancel) X(zlink_call_release) X(zlink_turn_kind)                \
    X(zlink_call_start_held) X(zlink_call_callback_done)                         \
    X(zlink_turn_packet) X(zlink_turn_content_type) X(zlink_turn_payload)        \
    X(zlink_turn_metadata) X(zlink_turn_source) X(zlink_turn_sequence)           \
    X(zlink_turn_reply) X(zlink_turn_reply_error) X(zlink_turn_end) X(zlink_turn_respond)            \
    X(zlink_runtime_context_enter) X(zlink_runtime_context_leave)                \
    X(zlink_in_runtime_context)

struct zl_api {
#define ZLINK_NODE_FIELD_(name) decltype(&::name) name;
    ZLINK_NODE_FUNCTIONS(ZLINK_NODE_FIELD_)
#undef ZLINK_NODE_FIELD_
};

extern zl_api zl;

#endif
