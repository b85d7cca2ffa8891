/*
 * registry.c — the cases this runner implements: manifest id -> body. The
 * manifest (conformance/cases.json) says what each case is; the runner
 * checks that the two lists agree (runner.c).
 */
#include "conf.h"

/* pl_poll.c */
conf_case_fn pl_poll_returns_count_zero_or_minus_one;
conf_case_fn pl_poll_infinite_and_immediate;
conf_case_fn pl_poll_revents_is_a_snapshot;
/* pl_registration.c */
conf_case_fn pl_add_twice_is_conflict;
conf_case_fn pl_timer_owner_and_destroy_busy;
conf_case_fn pl_socket_in_two_pollers;
conf_case_fn pl_missing_source_is_not_found;
conf_case_fn pl_bad_and_unsupported_bits;
conf_case_fn pl_completion_bit_sources_and_kinds;
conf_case_fn pl_completion_bit_has_one_owner;
/* pl_wait_events.c */
conf_case_fn pl_closed_socket_pinned_pollerr_once;
conf_case_fn pl_fd_pri_and_error_bits;
conf_case_fn pl_event_fields_per_kind;
conf_case_fn pl_event_array_is_caller_owned;
conf_case_fn pl_signal_does_not_interrupt_waits;
/* pl_completion.c */
conf_case_fn pl_completion_level_and_calls_consume_nothing;
conf_case_fn pl_writable_record_holds_out_and_completion;
conf_case_fn pl_completion_last_read_clears;
conf_case_fn pl_completions_beyond_event_capacity;
conf_case_fn pl_reply_behind_data_waits;
/* pl_lifetime.c */
conf_case_fn pl_destroy_during_wait_is_busy;
conf_case_fn pl_calls_during_wait_are_busy;
conf_case_fn pl_new_enomem_and_destroy_nulls;
conf_case_fn pl_size_counts_registrations;
conf_case_fn pl_wait_results;
conf_case_fn pl_nothing_waitable_returns_at_once;
conf_case_fn pl_error_out_may_be_null;
/* sc_submit.c */
conf_case_fn sc01_oneway_admission_and_errors;
conf_case_fn sc02_capacity_wait_single_submit;
conf_case_fn sc03_waiter_pool_full;
conf_case_fn sc06_send_timeout_validation;
/* sc_request.c */
conf_case_fn sc09_first_outcome_wins;
conf_case_fn sc11_no_resubmit_to_another_owner;
conf_case_fn sc19_no_resend_after_acceptance;
conf_case_fn sc20_outcomes_by_type;
/* sc_raw.c */
conf_case_fn sc12_cs_reply_held_in_fifo;
conf_case_fn sc13_mesh_reply_while_paused;
conf_case_fn sc14_raw_reply_to_dealer_backpressured;
conf_case_fn sc15_raw_reply_to_router_hwm_free;
/* sc_dispatch.c */
conf_case_fn sc16_exactly_once_under_races;
conf_case_fn sc17_callback_on_new_turn;
conf_case_fn sc18_dispatcher_cap;
/* jq_owner.c */
conf_case_fn jq04_failed_check_leaves_no_trace;
/* jq_permits.c */
conf_case_fn jq02_permit_accounting;
conf_case_fn jq03_no_receive_without_permit;
conf_case_fn jq05_saturated_ingress_waits;
conf_case_fn jq14_reply_reaches_paused_client;
conf_case_fn jq15_no_holding_while_waiting;
conf_case_fn jq20_completions_need_no_permit;
/* jq_pressure.c */
conf_case_fn jq01_independent_profiles;
conf_case_fn jq11_hysteresis;
conf_case_fn jq12_latest_state_wins;
conf_case_fn jq13_flow_state_sockets;
/* jq_flow.c (JQ-21 is SC-12's body, sc12_cs_reply_held_in_fifo) */
conf_case_fn jq06_cs_bypass_keeps_fifo;
conf_case_fn jq07_cross_connection_progress;
conf_case_fn jq16_room_is_not_an_error;
conf_case_fn jq17_fifo_never_rejects;
conf_case_fn jq18_no_handler_only_recorded;
/* jq_raw.c */
conf_case_fn jq08_bounded_rotation;
conf_case_fn jq09_per_peer_accounting;
conf_case_fn jq10_malformed_input;
conf_case_fn jq19_core_hwm_backpressure;
conf_case_fn jq22_no_retained_receive_or_retry;
/* x_terminators.c */
conf_case_fn x1_terminator_surface;
conf_case_fn x2_completion_isolation;

const conf_impl_t conf_impls[] = {
    {"PL-01", pl_poll_returns_count_zero_or_minus_one},
    {"PL-02", pl_poll_infinite_and_immediate},
    {"PL-03", pl_poll_revents_is_a_snapshot},
    {"PL-04", pl_add_twice_is_conflict},
    {"PL-05", pl_timer_owner_and_destroy_busy},
    {"PL-06", pl_socket_in_two_pollers},
    {"PL-07", pl_missing_source_is_not_found},
    {"PL-08", pl_bad_and_unsupported_bits},
    {"PL-09", pl_completion_bit_sources_and_kinds},
    {"PL-10", pl_completion_bit_has_one_owner},
    {"PL-11", pl_closed_socket_pinned_pollerr_once},
    {"PL-12", pl_fd_pri_and_error_bits},
    {"PL-13", pl_event_fields_per_kind},
    {"PL-14", pl_event_array_is_caller_owned},
    {"PL-15", pl_signal_does_not_interrupt_waits},
    {"PL-16", pl_completion_level_and_calls_consume_nothing},
    {"PL-17", pl_writable_record_holds_out_and_completion},
    {"PL-18", pl_completion_last_read_clears},
    {"PL-19", pl_completions_beyond_event_capacity},
    {"PL-20", pl_reply_behind_data_waits},
    {"PL-21", pl_destroy_during_wait_is_busy},
    {"PL-22", pl_calls_during_wait_are_busy},
    {"PL-23", pl_new_enomem_and_destroy_nulls},
    {"PL-24", pl_size_counts_registrations},
    {"PL-25", pl_wait_results},
    {"PL-26", pl_nothing_waitable_returns_at_once},
    {"PL-27", pl_error_out_may_be_null},
    {"SC-01", sc01_oneway_admission_and_errors},
    {"SC-02", sc02_capacity_wait_single_submit},
    {"SC-03", sc03_waiter_pool_full},
    {"SC-06", sc06_send_timeout_validation},
    {"SC-09", sc09_first_outcome_wins},
    {"SC-11", sc11_no_resubmit_to_another_owner},
    {"SC-12", sc12_cs_reply_held_in_fifo},
    {"SC-13", sc13_mesh_reply_while_paused},
    {"SC-14", sc14_raw_reply_to_dealer_backpressured},
    {"SC-15", sc15_raw_reply_to_router_hwm_free},
    {"SC-16", sc16_exactly_once_under_races},
    {"SC-17", sc17_callback_on_new_turn},
    {"SC-18", sc18_dispatcher_cap},
    {"SC-19", sc19_no_resend_after_acceptance},
    {"SC-20", sc20_outcomes_by_type},
    {"JQ-01", jq01_independent_profiles},
    {"JQ-02", jq02_permit_accounting},
    {"JQ-03", jq03_no_receive_without_permit},
    {"JQ-04", jq04_failed_check_leaves_no_trace},
    {"JQ-05", jq05_saturated_ingress_waits},
    {"JQ-06", jq06_cs_bypass_keeps_fifo},
    {"JQ-07", jq07_cross_connection_progress},
    {"JQ-08", jq08_bounded_rotation},
    {"JQ-09", jq09_per_peer_accounting},
    {"JQ-10", jq10_malformed_input},
    {"JQ-11", jq11_hysteresis},
    {"JQ-12", jq12_latest_state_wins},
    {"JQ-13", jq13_flow_state_sockets},
    {"JQ-14", jq14_reply_reaches_paused_client},
    {"JQ-15", jq15_no_holding_while_waiting},
    {"JQ-16", jq16_room_is_not_an_error},
    {"JQ-17", jq17_fifo_never_rejects},
    {"JQ-18", jq18_no_handler_only_recorded},
    {"JQ-19", jq19_core_hwm_backpressure},
    {"JQ-20", jq20_completions_need_no_permit},
    {"JQ-21", sc12_cs_reply_held_in_fifo},
    {"JQ-22", jq22_no_retained_receive_or_retry},
    {"X-1", x1_terminator_surface},
    {"X-2", x2_completion_isolation},
};

const size_t conf_impl_count = sizeof conf_impls / sizeof conf_impls[0];
