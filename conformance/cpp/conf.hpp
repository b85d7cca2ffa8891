// conf.hpp — what a case of the C++ conformance runner sees: its
// parameters (the "params" object of its manifest entry, nlohmann::json),
// the checks, and the registry that maps ids to case bodies.
//
// A case body uses the C++ binding's public API only (zlink/zlink.hpp);
// the first failed check prints "file:line: what" and ends the case's
// process with status 1, which the runner reports as the case's detail.
#ifndef CONF_CPP_HPP
#define CONF_CPP_HPP

#include <zlink/zlink.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace conf {

using params_t = nlohmann::json;
using case_fn = void (*)(const params_t &);

struct impl_t {
    const char *id;
    case_fn run;
};

// Every case this runner implements (registry.cc), and the ones whose
// surface this language lacks by the seed ("absent" in the manifest).
const std::vector<impl_t> &impls();

double timeout_mult();
// ms scaled by ZT_TIMEOUT_MULT (a failure bound).
int ms(int v);
std::int64_t now_ms();

[[noreturn]] void fail(const char *file, int line, const std::string &what);

// The integer / string-array parameter key; missing or ill-typed fails.
long long param_int(const params_t &p, const char *key);
std::vector<std::string> param_strings(const params_t &p, const char *key);

// Waits until cond holds, reading it every millisecond; false after ms
// (scaled).
bool eventually(const std::function<bool()> &cond, int ms);

} // namespace conf

#define CF_CHECK(c)                                                                              \
    do {                                                                                         \
        if (!(c))                                                                                \
            conf::fail(__FILE__, __LINE__, "check failed: " #c);                                 \
    } while (0)

#define CF_FAIL(what) conf::fail(__FILE__, __LINE__, (what))

#define CF_EQ(a, b)                                                                              \
    do {                                                                                         \
        auto cf_a_ = (a);                                                                        \
        auto cf_b_ = (b);                                                                        \
        if (!(cf_a_ == cf_b_)) {                                                                 \
            std::ostringstream cf_o_;                                                            \
            cf_o_ << #a " == " #b ": " << cf_a_ << " vs " << cf_b_;                              \
            conf::fail(__FILE__, __LINE__, cf_o_.str());                                         \
        }                                                                                        \
    } while (0)

// A framework result, compared by generated name.
#define CF_RESULT(r, want)                                                                       \
    do {                                                                                         \
        int cf_r_ = (r), cf_w_ = (want);                                                         \
        if (cf_r_ != cf_w_)                                                                      \
            conf::fail(__FILE__, __LINE__,                                                       \
                       std::string(#r " = ") + std::string(zlink::result_name(cf_r_)) +          \
                           ", expected " + std::string(zlink::result_name(cf_w_)));              \
    } while (0)

#define CF_EVENTUALLY(c, ms)                                                                     \
    do {                                                                                         \
        if (!conf::eventually([&] { return static_cast<bool>(c); }, (ms)))                       \
            conf::fail(__FILE__, __LINE__, "not within " #ms " ms: " #c);                        \
    } while (0)

// expr throws E and check holds for it (e).
#define CF_THROWS(E, expr, check)                                                                \
    do {                                                                                         \
        bool cf_thrown_ = false;                                                                 \
        try {                                                                                    \
            (void)(expr);                                                                        \
        } catch (const E &e) {                                                                   \
            cf_thrown_ = true;                                                                   \
            if (!(check))                                                                        \
                conf::fail(__FILE__, __LINE__,                                                   \
                           std::string(#expr " threw " #E " but not " #check ": ") + e.what());  \
        }                                                                                        \
        if (!cf_thrown_)                                                                         \
            conf::fail(__FILE__, __LINE__, #expr " did not throw " #E);                          \
    } while (0)

#endif
