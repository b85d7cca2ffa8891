/*
 * echo_server — the peer of every package install test (packages/README.md).
 *
 * One Host with one ClientServer server channel on a tcp endpoint and one
 * request handler: a request for packet "echo" is answered with a reply of
 * the same packet name, the same content type and the same payload bytes.
 * Any other packet has no handler, so the runtime answers NotFound. The
 * install test of each package (C, Java, .NET, Node) builds a client with
 * that package alone and talks to this server.
 *
 * Command line:
 *   echo_server [--endpoint tcp://127.0.0.1:0] [--channel echo]
 * Output on stdout, one line each, flushed at once:
 *   LISTENING <endpoint>           once serving; the port is resolved
 *   STOPPED <why> served <N>       at exit; why is stdin-eof, SIGTERM,
 *                                  SIGINT or SIGHUP; N the echo requests
 *                                  the handler answered
 * It serves until stdin reaches end of file or a stop signal arrives, then
 * shuts the host down (5 s drain) and exits 0; 1 when set-up or shutdown
 * fails (the reason on stderr), 2 for a bad command line.
 *
 * Threads: main (set-up, the stop wait, shutdown) and the runtime's own; the
 * handler runs on a runtime handler thread. The stop signals are blocked
 * before the host exists, so every runtime thread inherits the mask and
 * only main takes them, synchronously, through a signalfd.
 */
#include <zlink.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define ECHO_PACKET "echo"

static atomic_long served;

/* A request for "echo": reply with what came in and end the turn. */
static void on_echo(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t size = 0;
    const void *data = zlink_turn_payload(turn, &size);
    zlink_fw_result_t rc =
        zlink_turn_respond(turn, zlink_turn_packet(turn), zlink_turn_content_type(turn), data, size);
    if (rc == ZLINK_FW_OK) {
        atomic_fetch_add(&served, 1);
    } else {
        fprintf(stderr, "echo_server: zlink_turn_respond: %s\n", zlink_result_name(rc));
        /* Refused with the turn still open (INVALID_ARGUMENT): end it. */
        zlink_turn_end(turn, 1, "the echo reply was refused");
    }
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "echo_server: %s: %s (%d)\n", what, zlink_result_name(rc), rc);
    return 1;
}

/* Blocks until stdin is at end of file or a stop signal arrives on sigfd;
 * returns the word STOPPED prints. */
static const char *wait_for_stop(int sigfd)
{
    int stdin_open = 1;
    for (;;) {
        struct pollfd fds[2] = {{.fd = sigfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(fds, stdin_open ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return "poll-failed";
        }
        if (fds[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof si) == (ssize_t)sizeof si)
                return si.ssi_signo == SIGTERM  ? "SIGTERM"
                       : si.ssi_signo == SIGINT ? "SIGINT"
                                                : "SIGHUP";
        }
        if (stdin_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
            char buf[512];
            ssize_t got = read(0, buf, sizeof buf); /* what is read is ignored */
            if (got == 0)
                return "stdin-eof";
            if (got < 0 && errno != EINTR && errno != EAGAIN)
                stdin_open = 0; /* no usable stdin: signals only */
        }
    }
}

int main(int argc, char **argv)
{
    const char *endpoint = "tcp://127.0.0.1:0";
    const char *channel = "echo";
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--endpoint") == 0) {
            endpoint = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--channel") == 0) {
            channel = argv[++i];
        } else {
            fprintf(stderr, "usage: echo_server [--endpoint tcp://HOST:PORT] [--channel NAME]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &stop, NULL) != 0) {
        fprintf(stderr, "echo_server: cannot block the stop signals\n");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN); /* a closed stdout reader: EPIPE, not death */
    int sigfd = signalfd(-1, &stop, SFD_CLOEXEC);
    if (sigfd < 0) {
        perror("echo_server: signalfd");
        return 1;
    }

    zlink_fw_result_t rc;
    zlink_host_t *host = zlink_host_new("echo_server", &rc);
    if (host == NULL)
        return fail("zlink_host_new", rc);
    const char *step = "zlink_host_add_cs_server";
    rc = zlink_host_add_cs_server(host, channel, endpoint);
    if (rc == ZLINK_FW_OK) {
        step = "zlink_host_add_handler";
        rc = zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, channel, ZLINK_MESSAGE_REQUEST,
                                    ECHO_PACKET, on_echo, NULL);
    }
    if (rc == ZLINK_FW_OK) {
        step = "zlink_host_start";
        rc = zlink_host_start(host);
    }
    char bound[256];
    if (rc == ZLINK_FW_OK) {
        step = "zlink_host_endpoint";
        rc = zlink_host_endpoint(host, channel, bound, sizeof bound);
    }
    if (rc != ZLINK_FW_OK) {
        fail(step, rc);
        zlink_host_destroy(host);
        close(sigfd);
        return 1;
    }
    printf("LISTENING %s\n", bound);

    const char *why = wait_for_stop(sigfd);

    int status = 0;
    if ((rc = zlink_host_shutdown(host, ZLINK_MS(5000))) != ZLINK_FW_OK)
        status = fail("zlink_host_shutdown", rc);
    zlink_host_destroy(host);
    close(sigfd);
    printf("STOPPED %s served %ld\n", why, atomic_load(&served));
    return status;
}
