// zlink/zlink.hpp — the C++20 binding of libzlink.so.1 (header-only):
// the Core handles (core.hpp), the framework (framework.hpp), the error
// types and the load check (errors.hpp) over the generated table
// (tables.hpp). Typed JSON payloads are apart, in zlink/json.hpp.
#ifndef ZLINK_HPP
#define ZLINK_HPP

#include <zlink/core.hpp>
#include <zlink/errors.hpp>
#include <zlink/framework.hpp>
#include <zlink/tables.hpp>

#endif // ZLINK_HPP
