// cases.hpp — the case bodies of the C++ runner, one function per id.
#ifndef CONF_CPP_CASES_HPP
#define CONF_CPP_CASES_HPP

#include "conf.hpp"

namespace cases {
void pl01(const conf::params_t &);
void pl02(const conf::params_t &);
void pl03(const conf::params_t &);
void pl04(const conf::params_t &);
void pl05(const conf::params_t &);
void pl06(const conf::params_t &);
void pl07(const conf::params_t &);
void pl08(const conf::params_t &);
void pl09(const conf::params_t &);
void pl10(const conf::params_t &);
void pl11(const conf::params_t &);
void pl12(const conf::params_t &);
void pl13(const conf::params_t &);
void pl14(const conf::params_t &);
void pl15(const conf::params_t &);
void pl16(const conf::params_t &);
void pl17(const conf::params_t &);
void pl18(const conf::params_t &);
void pl19(const conf::params_t &);
void pl20(const conf::params_t &);
void pl21(const conf::params_t &);
void pl22(const conf::params_t &);
void pl23(const conf::params_t &);
void pl24(const conf::params_t &);
void pl25(const conf::params_t &);
void pl26(const conf::params_t &);
void pl27(const conf::params_t &);
void sc01(const conf::params_t &);
void sc02(const conf::params_t &);
void sc03(const conf::params_t &);
void sc06(const conf::params_t &);
void sc09(const conf::params_t &);
void sc11(const conf::params_t &);
void sc12(const conf::params_t &);
void sc13(const conf::params_t &);
void sc14(const conf::params_t &);
void sc15(const conf::params_t &);
void sc16(const conf::params_t &);
void sc17(const conf::params_t &);
void sc18(const conf::params_t &);
void sc19(const conf::params_t &);
void sc20(const conf::params_t &);
void jq01(const conf::params_t &);
void jq08(const conf::params_t &);
void jq09(const conf::params_t &);
void jq12(const conf::params_t &);
void jq22(const conf::params_t &);
void jq10(const conf::params_t &);
void jq11(const conf::params_t &);
void jq13(const conf::params_t &);
void jq06(const conf::params_t &);
void jq07(const conf::params_t &);
void jq16(const conf::params_t &);
void jq17(const conf::params_t &);
void jq18(const conf::params_t &);
void jq02(const conf::params_t &);
void jq03(const conf::params_t &);
void jq05(const conf::params_t &);
void jq14(const conf::params_t &);
void jq15(const conf::params_t &);
void jq19(const conf::params_t &);
void jq20(const conf::params_t &);
void jq04(const conf::params_t &);
void x1(const conf::params_t &);
void x2(const conf::params_t &);
} // namespace cases

#endif
