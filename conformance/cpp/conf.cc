// conf.cc — parameters, checks and waits of the C++ runner's cases.
#include "conf.hpp"

#include <time.h>

#include <iostream>

namespace conf {

double timeout_mult()
{
    const char *e = std::getenv("ZT_TIMEOUT_MULT");
    double v = e != nullptr ? std::atof(e) : 0;
    return v > 0 ? v : 1.0;
}

int ms(int v) { return static_cast<int>(v * timeout_mult()); }

std::int64_t now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void fail(const char *file, int line, const std::string &what)
{
    std::cout << file << ":" << line << ": " << what << "\n" << std::flush;
    std::_Exit(1);
}

long long param_int(const params_t &p, const char *key)
{
    if (!p.contains(key))
        fail(__FILE__, __LINE__, std::string("parameter \"") + key + "\" is missing from the manifest");
    if (!p[key].is_number_integer())
        fail(__FILE__, __LINE__, std::string("parameter \"") + key + "\" is not an integer");
    return p[key].get<long long>();
}

std::vector<std::string> param_strings(const params_t &p, const char *key)
{
    if (!p.contains(key))
        fail(__FILE__, __LINE__, std::string("parameter \"") + key + "\" is missing from the manifest");
    const auto &v = p[key];
    if (!v.is_array() || v.empty())
        fail(__FILE__, __LINE__, std::string("parameter \"") + key + "\" must be a non-empty array of strings");
    std::vector<std::string> out;
    for (const auto &s : v) {
        if (!s.is_string())
            fail(__FILE__, __LINE__, std::string("parameter \"") + key + "\" holds a non-string");
        out.push_back(s.get<std::string>());
    }
    return out;
}

bool eventually(const std::function<bool()> &cond, int v)
{
    std::int64_t until = now_ms() + ms(v);
    while (!cond()) {
        if (now_ms() > until)
            return cond();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace conf
