/*
 * core_vs_libzmq.c — ZLink Core against libzmq and nng, same pattern, same
 * process.
 *
 *   core_vs_libzmq --pattern P --transport T --size N [--count M] [--reps R]
 *                  [--rtt-count K] [--rtt-warmup W]
 *   core_vs_libzmq --all [--sizes 64,1k,64k,1m] [--reps R]
 *   either with [--zlink-hwm-msgs H] [--spin-us S | --no-spin] [--io-spin-us S]
 *               [--no-nng]
 *
 * P: pair | dealer_router | router_router | pub_sub; T: inproc | ipc | tcp.
 *
 * Design notes
 * ------------
 * For each case the driver runs R repetitions, interleaved so that drift of
 * the machine hits the libraries alike: zlink, libzmq, nng, zlink, ... (nng
 * only for the patterns it has an equivalent of: pair and dealer_router,
 * bench_nng.c).
 * Each repetition of a library is one throughput run and one latency run,
 * each with fresh contexts and sockets (bench_zlink.c, bench_zmq.c,
 * bench_nng.c). It then
 * prints the medians over the repetitions and zlink's ratios to each. Every
 * output line is one comma-separated record whose first field names its kind:
 *
 *   HEADER    machine and library versions (once)
 *   CASE      the parameters of a case
 *   SETTINGS  socket settings a library actually used (first repetition)
 *   REP       one repetition: lib, case, rep, throughput, rtt p50, rtt p99
 *   RESULT    RESULT,<lib>,<pattern>,<transport>,<size>,<metric>,<median>
 *   RATIO     RATIO,<pattern>,<transport>,<size>,throughput|rtt_p50|rtt_p99,
 *             zlink_vs_libzmq|zlink_vs_nng,<zlink's median / the baseline's>
 *   ERROR     ERROR,<lib>,<pattern>,<transport>,<size>,<message>
 *
 * A library that fails a case is not run again in that case; the others
 * still are. Exit status: 0 all good, 1 some case failed, 2 usage, 3 the
 * watchdog saw no progress for 10 s (see bench_common.h).
 */
#include "bench_common.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 101
#define MAX_SIZES 16
#define NLIBS 3 /* zlink, libzmq, nng (bench_common.h) */

typedef struct options {
    int all;
    bench_pattern_t pattern;
    bench_transport_t transport;
    size_t size;
    int have_pattern, have_transport, have_size;
    uint64_t count;       /* 0: by size */
    int reps;
    long rtt_count;       /* -1: by size */
    long rtt_warmup;      /* -1: by size */
    size_t sizes[MAX_SIZES];
    int nsizes;
    long zlink_hwm_msgs;  /* 0: zlink's default byte HWM */
    int spin_us;          /* zlink's low-latency window (ZLINK_SPIN_US) */
    int io_spin_us;       /* its I/O threads' window (ZLINK_IO_SPIN_US) */
    int no_nng;           /* leave nng out (a profile of the other two) */
} options_t;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: core_vs_libzmq --pattern P --transport T --size N [--count M] [--reps R]\n"
            "                      [--rtt-count K] [--rtt-warmup W]\n"
            "       core_vs_libzmq --all [--sizes 64,1k,64k,1m] [--reps R]\n"
            "  P: pair | dealer_router | router_router | pub_sub\n"
            "  T: inproc | ipc | tcp\n"
            "  N: payload bytes (>= 1)\n"
            "  M: throughput messages (default 1,000,000 up to 256 B, fewer above)\n"
            "  R: repetitions per library, interleaved (default 3)\n"
            "  K, W: recorded / warm-up round trips (default 10,000 / 1,000)\n"
            "  H: zlink's byte HWM sized to H messages of the case, H x (N + 64) bytes\n"
            "     (libzmq's default is 1,000 messages; default: zlink's own 4,096,000 bytes)\n"
            "  S: zlink's low-latency window, ZLINK_SPIN_US (0..10000 us, default %d);\n"
            "     --no-spin is --spin-us 0 (the library's own default); --io-spin-us S\n"
            "     sets ZLINK_IO_SPIN_US (default 0)\n"
            "  --no-nng: zlink and libzmq only (no nng lines or ratios)\n",
            BENCH_SPIN_US_DFLT);
}

/* Throughput message count: 1,000,000 up to 256 B; above, about 512 MiB of
 * payload per run (at least 2,000 messages), so a run lasts about 0.5-2 s;
 * 200,000 for the zero-copy sizes over inproc. */
static uint64_t default_count(size_t size, bench_transport_t transport)
{
    if (size <= 256)
        return 1000000;
    /* Zero-copy inproc moves pointers only: count as for small messages
     * (0.2 M; nng, which copies, takes 6-25 s for them), or a run would
     * last a millisecond. */
    if (transport == BENCH_INPROC && size >= BENCH_ZERO_COPY_MIN)
        return 200000;
    uint64_t m = (512ull << 20) / size;
    if (m > 1000000)
        m = 1000000;
    if (m < 2000)
        m = 2000;
    return m;
}

/* Round trips: 10,000 (+1,000 warm-up) up to 64 KiB; above, fewer. */
static uint32_t default_rtt_count(size_t size)
{
    if (size <= 65536)
        return 10000;
    uint64_t k = (10000ull * 65536) / size;
    return k < 1000 ? 1000 : (uint32_t)k;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    if (*end == 'k' || *end == 'K') {
        v <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v <<= 20;
        end++;
    }
    if (*end != '\0' || v < 1 || v > (1ull << 30))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_args(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 3;
    o->rtt_count = -1;
    o->rtt_warmup = -1;
    o->spin_us = BENCH_SPIN_US_DFLT;
    /* --all's sizes: small, medium, and the two of the zero-copy path. */
    o->sizes[0] = 64;
    o->sizes[1] = 1024;
    o->sizes[2] = 65536;
    o->sizes[3] = 1048576;
    o->nsizes = 4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--all") == 0) {
            o->all = 1;
            continue;
        } else if (strcmp(a, "--no-spin") == 0) {
            o->spin_us = 0;
            continue;
        } else if (strcmp(a, "--no-nng") == 0) {
            o->no_nng = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "core_vs_libzmq: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--pattern") == 0) {
            if (bench_pattern_parse(v, &o->pattern) != 0) {
                fprintf(stderr, "core_vs_libzmq: unknown pattern '%s'\n", v);
                return -1;
            }
            o->have_pattern = 1;
        } else if (strcmp(a, "--transport") == 0) {
            if (bench_transport_parse(v, &o->transport) != 0) {
                fprintf(stderr, "core_vs_libzmq: unknown transport '%s'\n", v);
                return -1;
            }
            o->have_transport = 1;
        } else if (strcmp(a, "--size") == 0) {
            if (parse_size(v, &o->size) != 0) {
                fprintf(stderr, "core_vs_libzmq: bad size '%s' (1 B .. 1 GiB)\n", v);
                return -1;
            }
            o->have_size = 1;
        } else if (strcmp(a, "--sizes") == 0) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            o->nsizes = 0;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                if (o->nsizes == MAX_SIZES || parse_size(t, &o->sizes[o->nsizes]) != 0) {
                    fprintf(stderr, "core_vs_libzmq: bad --sizes '%s'\n", v);
                    return -1;
                }
                o->nsizes++;
            }
            if (o->nsizes == 0) {
                fprintf(stderr, "core_vs_libzmq: empty --sizes\n");
                return -1;
            }
        } else if (strcmp(a, "--count") == 0) {
            char *end;
            o->count = strtoull(v, &end, 10);
            if (*end != '\0' || o->count < 2) {
                fprintf(stderr, "core_vs_libzmq: --count needs a number >= 2\n");
                return -1;
            }
        } else if (strcmp(a, "--reps") == 0) {
            o->reps = atoi(v);
            if (o->reps < 1 || o->reps > MAX_REPS) {
                fprintf(stderr, "core_vs_libzmq: --reps must be 1..%d\n", MAX_REPS);
                return -1;
            }
        } else if (strcmp(a, "--rtt-count") == 0) {
            o->rtt_count = atol(v);
            if (o->rtt_count < 1 || o->rtt_count > 10000000) {
                fprintf(stderr, "core_vs_libzmq: --rtt-count must be 1..10000000\n");
                return -1;
            }
        } else if (strcmp(a, "--zlink-hwm-msgs") == 0) {
            o->zlink_hwm_msgs = atol(v);
            if (o->zlink_hwm_msgs < 1 || o->zlink_hwm_msgs > 1000000) {
                fprintf(stderr, "core_vs_libzmq: --zlink-hwm-msgs must be 1..1000000\n");
                return -1;
            }
        } else if (strcmp(a, "--spin-us") == 0 || strcmp(a, "--io-spin-us") == 0) {
            char *end;
            long us = strtol(v, &end, 10);
            if (*end != '\0' || us < 0 || us > 10000) {
                fprintf(stderr, "core_vs_libzmq: %s must be 0..10000\n", a);
                return -1;
            }
            *(a[2] == 's' ? &o->spin_us : &o->io_spin_us) = (int)us;
        } else if (strcmp(a, "--rtt-warmup") == 0) {
            o->rtt_warmup = atol(v);
            if (o->rtt_warmup < 0 || o->rtt_warmup > 10000000) {
                fprintf(stderr, "core_vs_libzmq: --rtt-warmup must be 0..10000000\n");
                return -1;
            }
        } else {
            fprintf(stderr, "core_vs_libzmq: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (!o->all && !(o->have_pattern && o->have_transport && o->have_size)) {
        fprintf(stderr, "core_vs_libzmq: give --pattern, --transport and --size, or --all\n");
        return -1;
    }
    return 0;
}

static void print_header(const options_t *o)
{
    char zl[64], zm[64], nn[64], cpu[128] = "unknown", host[128] = "unknown", date[64];
    bench_lib_zlink.version(zl, sizeof zl);
    bench_lib_zmq.version(zm, sizeof zm);
    bench_lib_nng.version(nn, sizeof nn);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(cpu, sizeof cpu, "%s", colon);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        }
        fclose(f);
    }
    for (char *p = cpu; *p; p++) {
        if (*p == ',')
            *p = ';';
    }
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    printf("HEADER,nproc=%ld,cpu=%s,host=%s,date=%s,zlink=%s,libzmq=%s,nng=%s,reps=%d,mode=%s,"
           "zlink_spin_us=%d,zlink_io_spin_us=%d%s\n",
           sysconf(_SC_NPROCESSORS_ONLN), cpu, host, date, zl, zm, nn, o->reps,
           o->all ? "all" : "single", o->spin_us, o->io_spin_us, o->no_nng ? ",no_nng=1" : "");
}

/* The per-library results of one case. */
typedef struct lib_results {
    const bench_lib_t *lib;
    int failed;
    int done;              /* repetitions completed */
    double thr[MAX_REPS];
    double p50[MAX_REPS];
    double p99[MAX_REPS];
} lib_results_t;

static int run_case(const options_t *o, bench_pattern_t pattern, bench_transport_t transport,
                    size_t size)
{
    uint64_t count = o->count ? o->count : default_count(size, transport);
    uint32_t rtt_count = o->rtt_count > 0 ? (uint32_t)o->rtt_count : default_rtt_count(size);
    uint32_t rtt_warmup = o->rtt_warmup >= 0 ? (uint32_t)o->rtt_warmup : rtt_count / 10;

    unsigned char *payload = malloc(size);
    double *samples = malloc(sizeof(double) * rtt_count);
    if (!payload || !samples) {
        fprintf(stderr, "core_vs_libzmq: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < size; i++)
        payload[i] = (unsigned char)('a' + i % 26);

    printf("CASE,%s,%s,%zu,count=%llu,rtt_warmup=%u,rtt_count=%u,reps=%d\n",
           bench_pattern_name(pattern), bench_transport_name(transport), size,
           (unsigned long long)count, rtt_warmup, rtt_count, o->reps);

    lib_results_t res[NLIBS];
    memset(res, 0, sizeof res);
    res[0].lib = &bench_lib_zlink;
    res[1].lib = &bench_lib_zmq;
    res[2].lib = &bench_lib_nng;
    int nlibs = NLIBS;
    if (o->no_nng || (res[2].lib->supports != NULL && !res[2].lib->supports(pattern)))
        nlibs = 2; /* left out, or no nng equivalent: no nng line, no nng ratio */

    for (int rep = 0; rep < o->reps; rep++) {
        for (int l = 0; l < nlibs; l++) {
            lib_results_t *lr = &res[l];
            if (lr->failed)
                continue;
            bench_case_t c = {
                .lib = lr->lib->name,
                .pattern = pattern,
                .transport = transport,
                .size = size,
                .count = count,
                .rtt_warmup = rtt_warmup,
                .rtt_count = rtt_count,
                .print_settings = rep == 0,
                .payload = payload,
                .zlink_hwm = (uint64_t)o->zlink_hwm_msgs * (size + 64),
                .zlink_spin_us = o->spin_us,
                .zlink_io_spin_us = o->io_spin_us,
            };
            bench_watch_case(&c);
            double thr = 0;
            if (lr->lib->throughput(&c, &thr) != 0 || lr->lib->latency(&c, samples) != 0) {
                lr->failed = 1;
                bench_watch_case(NULL);
                continue;
            }
            bench_watch_case(NULL);
            bench_sort(samples, rtt_count);
            lr->thr[rep] = thr;
            lr->p50[rep] = bench_percentile(samples, rtt_count, 50);
            lr->p99[rep] = bench_percentile(samples, rtt_count, 99);
            lr->done++;
            printf("REP,%s,%s,%s,%zu,%d,%.0f,%.2f,%.2f\n", lr->lib->name,
                   bench_pattern_name(pattern), bench_transport_name(transport), size, rep + 1,
                   thr, lr->p50[rep], lr->p99[rep]);
            fflush(stdout);
        }
    }

    double med[NLIBS][3];
    for (int l = 0; l < nlibs; l++) {
        lib_results_t *lr = &res[l];
        if (lr->failed)
            continue;
        med[l][0] = bench_median(lr->thr, (size_t)lr->done);
        med[l][1] = bench_median(lr->p50, (size_t)lr->done);
        med[l][2] = bench_median(lr->p99, (size_t)lr->done);
        const char *pn = bench_pattern_name(pattern), *tn = bench_transport_name(transport);
        printf("RESULT,%s,%s,%s,%zu,throughput_msgs_per_s,%.0f\n", lr->lib->name, pn, tn, size,
               med[l][0]);
        printf("RESULT,%s,%s,%s,%zu,rtt_us_p50,%.2f\n", lr->lib->name, pn, tn, size, med[l][1]);
        printf("RESULT,%s,%s,%s,%zu,rtt_us_p99,%.2f\n", lr->lib->name, pn, tn, size, med[l][2]);
    }
    static const char *const metric[3] = {"throughput", "rtt_p50", "rtt_p99"};
    int failed = 0;
    for (int l = 0; l < nlibs; l++)
        failed |= res[l].failed;
    for (int l = 1; l < nlibs && !res[0].failed; l++) {
        if (res[l].failed)
            continue;
        const char *pn = bench_pattern_name(pattern), *tn = bench_transport_name(transport);
        for (int m = 0; m < 3; m++)
            printf("RATIO,%s,%s,%zu,%s,zlink_vs_%s,%.3f\n", pn, tn, size, metric[m],
                   res[l].lib->name, med[0][m] / med[l][m]);
    }
    fflush(stdout);
    free(payload);
    free(samples);
    return failed;
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    bench_watchdog_start();
    print_header(&o);

    int failed = 0;
    if (o.all) {
        for (int s = 0; s < o.nsizes; s++) {
            for (int p = 0; p < BENCH_PATTERN_COUNT; p++) {
                for (int t = 0; t < BENCH_TRANSPORT_COUNT; t++)
                    failed |= run_case(&o, (bench_pattern_t)p, (bench_transport_t)t, o.sizes[s]);
            }
        }
    } else {
        failed = run_case(&o, o.pattern, o.transport, o.size);
    }
    return failed ? 1 : 0;
}
