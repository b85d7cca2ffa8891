/* layout_probe.c — prints, as JSON, sizeof and offsetof of every C struct
 * the .NET binding marshals, from the public header itself. LayoutTests.cs
 * compares the binding's structs with this output (never with numbers of
 * its own). Stand-in until //abi:layout_json is in main. */
#include <stddef.h>
#include <stdio.h>

#include "zlink.h"

static int first;
#define BEGIN(T) do { printf("%s\"%s\": {\"size\": %zu, \"fields\": {", first ? "" : ",\n", #T, sizeof(T)); first = 0; int f_ = 1;
#define FIELD(T, F) printf("%s\"%s\": %zu", f_ ? "" : ", ", #F, offsetof(T, F)); f_ = 0;
#define END() (void)f_; printf("}}"); } while (0)

int main(void)
{
    first = 1;
    printf("{\n");
    BEGIN(zlink_outcome_t)
    FIELD(zlink_outcome_t, struct_size) FIELD(zlink_outcome_t, result) FIELD(zlink_outcome_t, remote_code)
    FIELD(zlink_outcome_t, reserved) FIELD(zlink_outcome_t, message) FIELD(zlink_outcome_t, payload)
    FIELD(zlink_outcome_t, payload_size) FIELD(zlink_outcome_t, packet) FIELD(zlink_outcome_t, content_type)
    END();
    BEGIN(zlink_host_status_t)
    FIELD(zlink_host_status_t, struct_size) FIELD(zlink_host_status_t, state) FIELD(zlink_host_status_t, is_ready)
    FIELD(zlink_host_status_t, accepting_work) FIELD(zlink_host_status_t, requests_inflight)
    FIELD(zlink_host_status_t, oneway_waiting) FIELD(zlink_host_status_t, admission_waiters_max)
    FIELD(zlink_host_status_t, dispatcher_in_use) FIELD(zlink_host_status_t, dispatcher_capacity)
    FIELD(zlink_host_status_t, turns_running) FIELD(zlink_host_status_t, turns_queued)
    FIELD(zlink_host_status_t, max_queued_jobs) FIELD(zlink_host_status_t, permits_in_use)
    FIELD(zlink_host_status_t, reserved)
    END();
    BEGIN(zlink_host_capacity_t)
    FIELD(zlink_host_capacity_t, struct_size) FIELD(zlink_host_capacity_t, profile) FIELD(zlink_host_capacity_t, manual_max)
    FIELD(zlink_host_capacity_t, pause_percent) FIELD(zlink_host_capacity_t, resume_percent)
    FIELD(zlink_host_capacity_t, effective_processors) FIELD(zlink_host_capacity_t, effective_max)
    FIELD(zlink_host_capacity_t, pause_count) FIELD(zlink_host_capacity_t, resume_count)
    FIELD(zlink_host_capacity_t, reserved_supply_permits) FIELD(zlink_host_capacity_t, queued_jobs)
    FIELD(zlink_host_capacity_t, permits_in_use) FIELD(zlink_host_capacity_t, peak_permits_in_use)
    FIELD(zlink_host_capacity_t, pressure_state) FIELD(zlink_host_capacity_t, reserved0)
    FIELD(zlink_host_capacity_t, current_pause_ns) FIELD(zlink_host_capacity_t, cumulative_pause_ns)
    FIELD(zlink_host_capacity_t, transitions_paused) FIELD(zlink_host_capacity_t, transitions_running)
    FIELD(zlink_host_capacity_t, capacity_waiters) FIELD(zlink_host_capacity_t, capacity_waits)
    FIELD(zlink_host_capacity_t, capacity_wait_ns) FIELD(zlink_host_capacity_t, flow_state_config_failures)
    FIELD(zlink_host_capacity_t, reserved)
    END();
    BEGIN(zlink_owner_status_t)
    FIELD(zlink_owner_status_t, struct_size) FIELD(zlink_owner_status_t, busy) FIELD(zlink_owner_status_t, accepted_seq)
    FIELD(zlink_owner_status_t, queued_records) FIELD(zlink_owner_status_t, queued_bytes)
    FIELD(zlink_owner_status_t, running_records) FIELD(zlink_owner_status_t, running_bytes)
    FIELD(zlink_owner_status_t, handled) FIELD(zlink_owner_status_t, reserved)
    END();
    BEGIN(zlink_routing_id_t)
    FIELD(zlink_routing_id_t, size) FIELD(zlink_routing_id_t, data)
    END();
    BEGIN(zlink_msg_t)
    END();
    BEGIN(zlink_poller_event_t)
    FIELD(zlink_poller_event_t, source_kind) FIELD(zlink_poller_event_t, socket) FIELD(zlink_poller_event_t, fd)
    FIELD(zlink_poller_event_t, timer) FIELD(zlink_poller_event_t, user_data) FIELD(zlink_poller_event_t, events)
    END();
    BEGIN(zlink_pollitem_t)
    FIELD(zlink_pollitem_t, socket) FIELD(zlink_pollitem_t, fd) FIELD(zlink_pollitem_t, events) FIELD(zlink_pollitem_t, revents)
    END();
    printf("\n}\n");
    return 0;
}
