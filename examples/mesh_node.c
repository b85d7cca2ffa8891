/*
 * mesh_node — one node of the demo's RouteMesh "demo" (one process).
 *
 * Server role (--weight W): the node listens on a tcp endpoint (port 0 by
 * default), prints "LISTENING <endpoint>" first, and serves channel
 * "pricing" at weight W (request "quote") and node-direct requests
 * ("whoami"); both are answered with the node's name. It serves until
 * stdin reaches end of file or SIGTERM / SIGINT arrives, then shuts down
 * and prints what it answered.
 *
 * Client role (one or more --peer NAME=ENDPOINT): the node only connects.
 * It waits until every peer is ready (hello / admit done), sends --count
 * requests to channel "pricing" with 16 in flight and prints how the
 * weighted select-one split them, sends one node-direct request to the last
 * peer, shuts down and exits 1 if a check failed.
 *
 * Threads: main; handlers on the runtime's handler threads; completion
 * callbacks on its completion lane. The client's tally is guarded by
 * tally.lk, the server's counters are atomics.
 *
 * Usage: mesh_node --name B --weight 100 [--endpoint tcp://127.0.0.1:0]
 *        mesh_node --name A --peer B=EP --peer C=EP [--count 2000]
 */
#include "demo_util.h"

#include <stdatomic.h>

#define MAX_PEERS 8
#define WINDOW 16

static const char *name;
static atomic_long answered_channel, answered_node;

/* ------------------------------------------------------------------ server */

/* Both packets: reply with the node's name. A runtime handler thread. */
static void on_request(zlink_turn_t *turn, void *user)
{
    atomic_long *counter = user;
    zlink_fw_result_t rc;
    zlink_call_t *reply = zlink_turn_reply(turn, &rc);
    if (reply != NULL) {
        if (zlink_call_set_payload(reply, zlink_turn_packet(turn), "text/plain", name,
                                   strlen(name)) == ZLINK_FW_OK)
            zlink_call_start(reply, NULL, NULL);
        zlink_call_release(reply);
    }
    atomic_fetch_add(counter, 1);
    zlink_turn_end(turn, 0, NULL);
}

static int serve(const char *endpoint, int weight)
{
    int sigfd = demo_block_stop_signals();
    if (sigfd < 0) {
        perror("mesh_node: signalfd");
        return 1;
    }
    zlink_fw_result_t rc;
    zlink_host_t *host = zlink_host_new(name, &rc);
    if (host == NULL)
        demo_die(name, "zlink_host_new", rc);
    if ((rc = zlink_host_add_mesh_node(host, "demo", name, strlen(name), endpoint)) != 0)
        demo_die(name, "zlink_host_add_mesh_node", rc);
    if ((rc = zlink_mesh_add_channel_server(host, "demo", "pricing", weight)) != 0)
        demo_die(name, "zlink_mesh_add_channel_server", rc);
    if ((rc = zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, "pricing",
                                     ZLINK_MESSAGE_REQUEST, "quote", on_request,
                                     &answered_channel)) != 0)
        demo_die(name, "zlink_host_add_handler (channel)", rc);
    if ((rc = zlink_host_add_handler(host, ZLINK_OWNER_NODE, "demo", ZLINK_MESSAGE_REQUEST,
                                     "whoami", on_request, &answered_node)) != 0)
        demo_die(name, "zlink_host_add_handler (node)", rc);
    if ((rc = zlink_host_start(host)) != ZLINK_FW_OK)
        demo_die(name, "zlink_host_start", rc);
    char bound[256];
    if ((rc = zlink_host_endpoint(host, "demo", bound, sizeof bound)) != ZLINK_FW_OK)
        demo_die(name, "zlink_host_endpoint", rc);
    printf("LISTENING %s\n", bound);

    const char *why = demo_wait_for_stop(sigfd);
    rc = zlink_host_shutdown(host, ZLINK_MS(5000));
    zlink_host_destroy(host);
    close(sigfd);
    printf("%s: stopped (%s); shut down: %s; answered %ld \"pricing\" requests (weight %d) "
           "and %ld node-direct requests\n",
           name, why, demo_outcome_name(rc), atomic_load(&answered_channel), weight,
           atomic_load(&answered_node));
    return rc == ZLINK_FW_OK ? 0 : 1;
}

/* ------------------------------------------------------------------ client */

typedef struct peer {
    char name[64];
    const char *endpoint;
    long answered; /* under tally.lk */
} peer_t;

static peer_t peers[MAX_PEERS];
static int npeers;

static struct {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    long total, started, done, other;
    int first_bad;
} tally;

static zlink_host_t *client_host;

static void on_quote(zlink_call_t *call, const zlink_outcome_t *o, void *user);

/* Starts the next "pricing" request. Called by main for the first window
 * and by on_quote on the completion lane, without tally.lk. */
static void quote_start(void)
{
    for (;;) {
        zlink_fw_result_t rc;
        zlink_call_t *c = zlink_call_request_to_channel(client_host, "pricing", &rc);
        if (c != NULL) {
            rc = zlink_call_set_payload(c, "quote", "text/plain", "EURUSD", 6);
            if (rc == ZLINK_FW_OK)
                rc = zlink_call_start(c, on_quote, NULL);
            if (rc == ZLINK_FW_OK)
                return;
            zlink_call_release(c);
        }
        pthread_mutex_lock(&tally.lk);
        if (tally.other++ == 0)
            tally.first_bad = rc;
        tally.done++;
        int again = tally.started < tally.total;
        if (again)
            tally.started++;
        pthread_cond_signal(&tally.cv);
        pthread_mutex_unlock(&tally.lk);
        if (!again)
            return;
    }
}

static void on_quote(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)user;
    int who = -1;
    if (o->result == ZLINK_FW_OK)
        for (int i = 0; i < npeers; i++)
            if (o->payload_size == strlen(peers[i].name) &&
                memcmp(o->payload, peers[i].name, o->payload_size) == 0)
                who = i;
    int result = o->result;
    zlink_call_release(call);
    pthread_mutex_lock(&tally.lk);
    if (who >= 0)
        peers[who].answered++;
    else if (tally.other++ == 0)
        tally.first_bad = result;
    tally.done++;
    int again = tally.started < tally.total;
    if (again)
        tally.started++;
    pthread_cond_signal(&tally.cv);
    pthread_mutex_unlock(&tally.lk);
    if (again)
        quote_start();
}

static int connect_and_ask(long count)
{
    int failures = 0;
    zlink_fw_result_t rc;
    zlink_host_t *host = zlink_host_new(name, &rc);
    if (host == NULL)
        demo_die(name, "zlink_host_new", rc);
    client_host = host;
    if ((rc = zlink_host_add_mesh_node(host, "demo", name, strlen(name), NULL)) != 0)
        demo_die(name, "zlink_host_add_mesh_node", rc);
    if ((rc = zlink_mesh_add_channel_client(host, "demo", "pricing")) != 0)
        demo_die(name, "zlink_mesh_add_channel_client", rc);
    for (int i = 0; i < npeers; i++)
        if ((rc = zlink_mesh_connect(host, "demo", peers[i].endpoint, peers[i].name,
                                     strlen(peers[i].name))) != ZLINK_FW_OK)
            demo_die(name, "zlink_mesh_connect", rc);
    if ((rc = zlink_host_start(host)) != ZLINK_FW_OK)
        demo_die(name, "zlink_host_start", rc);

    /* Readiness has no event in the API: read the count until it is there
     * (10 s bound). */
    int64_t t0 = demo_now_ns();
    int ready = 0;
    while ((ready = zlink_mesh_ready_peers(host, "demo", NULL)) < npeers &&
           demo_now_ns() - t0 < ZLINK_MS(10000)) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    printf("%s: %d of %d peers ready after %.0f ms (hello / admit done)\n", name, ready, npeers,
           (double)(demo_now_ns() - t0) / 1e6);
    if (ready < npeers) {
        printf("%s: FAILED: the peers did not become ready\n", name);
        zlink_host_destroy(host);
        return 1;
    }

    /* Requests to the channel: weighted select-one picks a server each. */
    pthread_mutex_init(&tally.lk, NULL);
    demo_cond_init(&tally.cv);
    tally.total = count;
    int first = count < WINDOW ? (int)count : WINDOW;
    pthread_mutex_lock(&tally.lk);
    tally.started = first;
    pthread_mutex_unlock(&tally.lk);
    t0 = demo_now_ns();
    for (int i = 0; i < first; i++)
        quote_start();
    struct timespec bound = demo_deadline(60000);
    int timed_out = 0;
    pthread_mutex_lock(&tally.lk);
    while (tally.done < tally.total && !timed_out)
        timed_out = pthread_cond_timedwait(&tally.cv, &tally.lk, &bound) == ETIMEDOUT;
    double secs = (double)(demo_now_ns() - t0) / 1e6 / 1e3;
    printf("%s: %ld requests to channel \"pricing\" (%.0f calls/s):", name, tally.done,
           (double)tally.done / secs);
    for (int i = 0; i < npeers; i++)
        printf(" %s answered %ld (%.1f%%)%s", peers[i].name, peers[i].answered,
               100.0 * (double)peers[i].answered / (double)count,
               i + 1 < npeers ? "," : "");
    printf("\n");
    if (timed_out) {
        printf("%s: FAILED: only %ld of %ld requests completed in 60 s\n", name, tally.done,
               tally.total);
        fflush(stdout);
        _exit(1); /* calls still run; nothing to tear down safely */
    }
    if (tally.other > 0) {
        printf("%s: FAILED: %ld requests not answered by a peer (first: %s)\n", name,
               tally.other, demo_outcome_name(tally.first_bad));
        failures++;
    }
    for (int i = 0; i < npeers; i++)
        if (peers[i].answered == 0) {
            printf("%s: FAILED: %s answered none\n", name, peers[i].name);
            failures++;
        }
    pthread_mutex_unlock(&tally.lk);

    /* A node-direct request to the last peer, by its routing id. */
    const char *to = peers[npeers - 1].name;
    zlink_call_t *c = zlink_call_request_to_node(host, "demo", to, strlen(to), &rc);
    if (c == NULL)
        demo_die(name, "zlink_call_request_to_node", rc);
    zlink_call_set_payload(c, "whoami", "text/plain", "?", 1);
    zlink_outcome_t o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    printf("%s: node-direct request to %s -> %s, answered by %.*s\n", name, to,
           demo_outcome_name(rc), (int)o.payload_size,
           o.payload != NULL ? (const char *)o.payload : "nobody");
    if (rc != ZLINK_FW_OK || o.payload_size != strlen(to) ||
        memcmp(o.payload, to, o.payload_size) != 0) {
        printf("%s: FAILED: the node-direct request was not answered by %s\n", name, to);
        failures++;
    }
    zlink_call_release(c);

    rc = zlink_host_shutdown(host, ZLINK_MS(5000));
    zlink_host_destroy(host);
    printf("%s: shut down: %s\n", name, demo_outcome_name(rc));
    if (rc != ZLINK_FW_OK)
        failures++;
    pthread_mutex_destroy(&tally.lk);
    pthread_cond_destroy(&tally.cv);
    return failures == 0 ? 0 : 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: mesh_node --name N --weight W [--endpoint EP]\n"
                    "       mesh_node --name N --peer NAME=EP [--peer ...] [--count C]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *endpoint = "tcp://127.0.0.1:0";
    int weight = -1;
    long count = 2000;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (val == NULL)
            return usage();
        i++;
        if (strcmp(opt, "--name") == 0)
            name = val;
        else if (strcmp(opt, "--endpoint") == 0)
            endpoint = val;
        else if (strcmp(opt, "--weight") == 0)
            weight = atoi(val);
        else if (strcmp(opt, "--count") == 0)
            count = atol(val);
        else if (strcmp(opt, "--peer") == 0) {
            const char *eq = strchr(val, '=');
            if (eq == NULL || npeers == MAX_PEERS || eq == val ||
                (size_t)(eq - val) >= sizeof peers[0].name)
                return usage();
            memcpy(peers[npeers].name, val, (size_t)(eq - val));
            peers[npeers].endpoint = eq + 1;
            npeers++;
        } else
            return usage();
    }
    if (name == NULL || name[0] == '\0' || (weight < 0) == (npeers == 0) || count < 1)
        return usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    return weight >= 0 ? serve(endpoint, weight) : connect_and_ask(count);
}
