// check.hpp — the C++ binding tests' checks: the first failed check prints
// file:line and what, and ends the test process with status 1.
#ifndef ZLINKPP_TEST_CHECK_HPP
#define ZLINKPP_TEST_CHECK_HPP

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace zt {

inline double timeout_mult()
{
    const char *e = std::getenv("ZT_TIMEOUT_MULT");
    double v = e != nullptr ? std::atof(e) : 0;
    return v > 0 ? v : 1.0;
}

// A failure bound, scaled for the sanitizers.
inline std::chrono::milliseconds bound(int ms)
{
    return std::chrono::milliseconds(static_cast<long>(ms * timeout_mult()));
}

[[noreturn]] inline void fail(const char *file, int line, const std::string &what)
{
    std::fprintf(stdout, "%s:%d: %s\n", file, line, what.c_str());
    std::fflush(stdout);
    std::exit(1);
}

// Waits for cond to hold, reading it every millisecond; false after the bound.
inline bool eventually(const std::function<bool()> &cond, int ms)
{
    auto until = std::chrono::steady_clock::now() + bound(ms);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > until)
            return cond();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace zt

#define ZT_CHECK(c)                                                                              \
    do {                                                                                         \
        if (!(c))                                                                                \
            zt::fail(__FILE__, __LINE__, "check failed: " #c);                                   \
    } while (0)

#define ZT_EQ(a, b)                                                                              \
    do {                                                                                         \
        auto zt_a_ = (a);                                                                        \
        auto zt_b_ = (b);                                                                        \
        if (!(zt_a_ == zt_b_)) {                                                                 \
            std::ostringstream zt_o_;                                                            \
            zt_o_ << #a " == " #b ": " << zt_a_ << " vs " << zt_b_;                              \
            zt::fail(__FILE__, __LINE__, zt_o_.str());                                           \
        }                                                                                        \
    } while (0)

// expr must throw exception type E; then check(e) must hold.
#define ZT_THROWS(E, expr, check)                                                                \
    do {                                                                                         \
        bool zt_thrown_ = false;                                                                 \
        try {                                                                                    \
            (void)(expr);                                                                        \
        } catch (const E &e) {                                                                   \
            zt_thrown_ = true;                                                                   \
            if (!(check))                                                                        \
                zt::fail(__FILE__, __LINE__,                                                     \
                         std::string(#expr " threw " #E " but not " #check ": ") + e.what());    \
        }                                                                                        \
        if (!zt_thrown_)                                                                         \
            zt::fail(__FILE__, __LINE__, #expr " did not throw " #E);                            \
    } while (0)

#define ZT_EVENTUALLY(c, ms)                                                                     \
    do {                                                                                         \
        if (!zt::eventually([&] { return static_cast<bool>(c); }, (ms)))                         \
            zt::fail(__FILE__, __LINE__, "not within " #ms " ms: " #c);                          \
    } while (0)

#endif
