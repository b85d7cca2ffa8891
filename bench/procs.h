/*
 * procs.h — child processes for the multi-process benchmarks
 * (bench/overload.c, bench/scale.c, bench/soak.c): a driver re-executes its own binary
 * (/proc/self/exe) for each role and talks to the children through their
 * standard streams only, one line per message.
 *
 * Design notes
 * ------------
 * Every child gets PR_SET_PDEATHSIG SIGKILL (no orphan if the driver
 * dies); the driver's table holds every child it started and has not
 * reaped, and bp_reap_all kills and reaps all of them on an exit path.
 * Every wait on a child is bounded by a deadline; a bound is a failure,
 * never a pacing delay.
 *
 * Threads: one. The driver's functions (bp_spawn .. bp_field) are for the
 * driver's thread; bp_stdin_line and bp_proc_status for a role's main
 * thread; bp_parse_long for any thread. Messages go to stderr, prefixed
 * with bp_name.
 */
#ifndef BENCH_PROCS_H
#define BENCH_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BP_LINE 1024
#define BP_MAX_CHILDREN 80

/* The program's name: argv[0] of the children and the prefix of messages. */
extern const char *bp_name;

typedef struct bp_child {
    pid_t pid;          /* 0: slot free */
    int in_fd, out_fd;
    char buf[BP_LINE * 4];
    size_t len;
} bp_child_t;

/* Starts this binary as role with args (NULL-terminated, after the role);
 * stdin and stdout are pipes to the driver. Returns the slot, or NULL after
 * a message on stderr. */
bp_child_t *bp_spawn(const char *role, char *const args[]);
/* Kills (when kill_it) and reaps c, closing its pipes. Returns its exit
 * status, 128 + signal, or -1 when it was not running. */
int bp_reap(bp_child_t *c, int kill_it);
/* Kills and reaps every child still in the table. */
void bp_reap_all(void);
/* Closes c's stdin, reads its stdout to end of file (the child's exit) for
 * up to bound_ns and reaps it; kills it past the bound. 0 when it exited 0.
 * Blocks. */
int bp_finish(bp_child_t *c, const char *who, uint64_t bound_ns);
/* Reads c's stdout until a line starting with prefix, copied into line
 * (lines starting with relay, unless NULL, met on the way are printed).
 * 0, or -1 on an ERROR line, end of file or the deadline (CLOCK_MONOTONIC
 * ns; a message on stderr). */
int bp_expect_line(bp_child_t *c, const char *who, const char *prefix, char *line, size_t cap,
                   uint64_t deadline, const char *relay);
/* Writes text to c's stdin. 0 or -1. */
int bp_say(bp_child_t *c, const char *text);
/* The value of ",key=<v>" in line, or 0. */
double bp_field(const char *line, const char *key);

/* A whole decimal number within [lo, hi] (the command lines of the
 * drivers and their roles): 0 with *out set, or -1 (*out untouched) for
 * anything else, an empty string, trailing characters or overflow. */
int bp_parse_long(const char *s, long lo, long hi, long *out);

/* A role's side: reads one line of stdin into buf (without '\n'),
 * blocking up to timeout_ms (-1: no bound). 1 with a line, 0 on timeout,
 * -1 at end of file or error. Keeps its partial line in a static buffer. */
int bp_stdin_line(char *buf, size_t cap, int timeout_ms);
/* "VmRSS" or "VmHWM" of /proc/self/status in bytes; 0 if unreadable. */
uint64_t bp_proc_status(const char *key);

#endif /* BENCH_PROCS_H */
