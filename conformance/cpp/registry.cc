// registry.cc — every case the C++ runner implements. A manifest case not
// listed here is reported "missing".
#include "cases.hpp"

namespace conf {

const std::vector<impl_t> &impls()
{
    static const std::vector<impl_t> all = {
        {"PL-01", cases::pl01},
        {"PL-02", cases::pl02},
        {"PL-03", cases::pl03},
        {"PL-04", cases::pl04},
        {"PL-05", cases::pl05},
        {"PL-06", cases::pl06},
        {"PL-07", cases::pl07},
        {"PL-08", cases::pl08},
        {"PL-09", cases::pl09},
        {"PL-10", cases::pl10},
        {"PL-11", cases::pl11},
        {"PL-12", cases::pl12},
        {"PL-13", cases::pl13},
        {"PL-14", cases::pl14},
        {"PL-15", cases::pl15},
        {"PL-16", cases::pl16},
        {"PL-17", cases::pl17},
        {"PL-18", cases::pl18},
        {"PL-19", cases::pl19},
        {"PL-20", cases::pl20},
        {"PL-21", cases::pl21},
        {"PL-22", cases::pl22},
        {"PL-23", cases::pl23},
        {"PL-24", cases::pl24},
        {"PL-25", cases::pl25},
        {"PL-26", cases::pl26},
        {"PL-27", cases::pl27},
        {"SC-01", cases::sc01},
        {"SC-02", cases::sc02},
        {"SC-03", cases::sc03},
        {"SC-06", cases::sc06},
        {"SC-09", cases::sc09},
        {"SC-11", cases::sc11},
        {"SC-12", cases::sc12},
        {"SC-13", cases::sc13},
        {"SC-14", cases::sc14},
        {"SC-15", cases::sc15},
        {"SC-16", cases::sc16},
        {"SC-17", cases::sc17},
        {"SC-18", cases::sc18},
        {"SC-19", cases::sc19},
        {"SC-20", cases::sc20},
        {"JQ-01", cases::jq01},
        {"JQ-02", cases::jq02},
        {"JQ-03", cases::jq03},
        {"JQ-04", cases::jq04},
        {"JQ-05", cases::jq05},
        {"JQ-06", cases::jq06},
        {"JQ-07", cases::jq07},
        {"JQ-09", cases::jq09},
        {"JQ-10", cases::jq10},
        {"JQ-11", cases::jq11},
        {"JQ-13", cases::jq13},
        {"JQ-14", cases::jq14},
        {"JQ-15", cases::jq15},
        {"JQ-16", cases::jq16},
        {"JQ-17", cases::jq17},
        {"JQ-18", cases::jq18},
        {"JQ-19", cases::jq19},
        {"JQ-20", cases::jq20},
        {"JQ-21", cases::sc12}, // SC-12 run in the 001 suite
        {"JQ-22", cases::jq22},
        {"X-1", cases::x1},
        {"X-2", cases::x2},
    };
    return all;
}

} // namespace conf
