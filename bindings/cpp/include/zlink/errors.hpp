// zlink/errors.hpp — the C++ binding's error types and the load check.
//
// Design notes
//  - Every name comes from the generated table (tables.hpp): a Core result
//    maps to core_exception_t (a std::system_error in zlink::result_category,
//    whose value is the C result and whose message is its generated name);
//    a framework result maps to framework_exception_t (an error kind),
//    cancelled_exception_t (ZLINK_FW_CANCELLED) or argument_exception_t
//    (INVALID_ARGUMENT / INVALID_HANDLE, the two results that are no kind).
//    No number is written here by hand.
//  - check_library() is the load check: the running libzlink's major
//    version must be the table's, and every export of the table must
//    resolve with its version node (dlvsym on the library that defines
//    zlink_version). It runs once per process, from the first context or
//    host constructor; plugins that dlopen the library may call it first.
#ifndef ZLINK_ERRORS_HPP
#define ZLINK_ERRORS_HPP

#include <zlink.h>
#include <zlink/tables.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace zlink {

// The generated name of a result value ("ZLINK_SUBMIT_BACKPRESSURED"); "OK"
// for 0; "unknown result" for a value the table does not have.
inline std::string_view result_name(int value) noexcept
{
    if (value == 0)
        return "OK";
    for (const auto &row : tables::results) {
        if (row.value == value && row.family != "send_complete")
            return row.name;
    }
    return "unknown result";
}

// The generated name of an errno ("EAGAIN"), or "unknown errno".
inline std::string_view errno_name(int value) noexcept
{
    for (const auto &row : tables::errnos) {
        if (row.value == value)
            return row.name;
    }
    return "unknown errno";
}

inline std::string_view error_kind_name(error_kind k) noexcept
{
    auto i = static_cast<std::size_t>(k);
    return i < tables::error_kind_names.size() ? tables::error_kind_names[i] : "unknown";
}

// The result value of a framework constant by its generated short name.
namespace fw = tables::fw;

namespace detail {
class result_category_t final : public std::error_category {
public:
    const char *name() const noexcept override { return "zlink"; }
    std::string message(int value) const override { return std::string(result_name(value)); }
};
} // namespace detail

// The error category of every Core result: the code's value is the C result.
inline const std::error_category &result_category() noexcept
{
    static const detail::result_category_t category;
    return category;
}

inline std::error_code make_result_code(int result) noexcept
{
    return std::error_code(result, result_category());
}

// A Core call failed: code() holds the result, errno_value() the errno the
// library set with it.
class core_exception_t : public std::system_error {
public:
    core_exception_t(int result, int err, std::string_view what)
        : std::system_error(make_result_code(result),
                            std::string(what) + ": " + std::string(zlink::errno_name(err))),
          errno_(err)
    {
    }
    int result() const noexcept { return code().value(); }
    std::string_view result_name() const noexcept { return zlink::result_name(result()); }
    int errno_value() const noexcept { return errno_; }
    std::string_view errno_name() const noexcept { return zlink::errno_name(errno_); }

private:
    int errno_;
};

// A framework call failed with an error kind (framework-contract.md §3).
class framework_exception_t : public std::exception {
public:
    framework_exception_t(int result, std::string message, std::uint32_t remote_code = 0)
        : result_(result), remote_(remote_code), message_(std::move(message))
    {
        what_ = std::string(error_kind_name(kind())) + ": " + message_;
    }
    error_kind kind() const noexcept { return static_cast<error_kind>(result_ - tables::kind_base); }
    int result() const noexcept { return result_; }
    std::string_view result_name() const noexcept { return zlink::result_name(result_); }
    // A remote error's wire terminalResult, else 0.
    std::uint32_t remote_code() const noexcept { return remote_; }
    const std::string &message() const noexcept { return message_; }
    const char *what() const noexcept override { return what_.c_str(); }

private:
    int result_;
    std::uint32_t remote_;
    std::string message_;
    std::string what_;
};

using framework_error_kind_t = error_kind;

// The call ended with ZLINK_FW_CANCELLED.
class cancelled_exception_t : public std::exception {
public:
    explicit cancelled_exception_t(std::string message) : message_("cancelled: " + message) {}
    const char *what() const noexcept override { return message_.c_str(); }

private:
    std::string message_;
};

// ZLINK_FW_INVALID_ARGUMENT or ZLINK_FW_INVALID_HANDLE.
class argument_exception_t : public std::invalid_argument {
public:
    argument_exception_t(int result, std::string_view what)
        : std::invalid_argument(std::string(zlink::result_name(result)) + ": " + std::string(what)),
          result_(result)
    {
    }
    int result() const noexcept { return result_; }
    std::string_view result_name() const noexcept { return zlink::result_name(result_); }

private:
    int result_;
};

// The library is not the one the table was made from.
class library_error_t : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws the exception of a framework result (never for 0).
[[noreturn]] inline void throw_framework(int result, std::string_view message,
                                         std::uint32_t remote_code = 0)
{
    if (result == fw::cancelled)
        throw cancelled_exception_t(std::string(message));
    if (result >= tables::kind_base && result < tables::kind_base + 13)
        throw framework_exception_t(result, std::string(message), remote_code);
    throw argument_exception_t(result, message);
}

inline std::exception_ptr framework_exception_ptr(int result, std::string_view message,
                                                  std::uint32_t remote_code = 0)
{
    try {
        throw_framework(result, message, remote_code);
    } catch (...) {
        return std::current_exception();
    }
}

namespace detail {

inline void fw_check(int result, std::string_view what)
{
    if (result != 0)
        throw_framework(result, what);
}

// A std::string as a C string for the framework. One with a NUL inside
// would reach C cut short, so it is refused as INVALID_ARGUMENT
// (argument_exception_t), as every binding refuses a string C cannot take.
inline const char *fw_text(const std::string &s)
{
    if (s.find('\0') != std::string::npos)
        throw_framework(fw::invalid_argument, "a string passed to C contains a NUL byte");
    return s.c_str();
}

// The same for the Core: a string with a NUL inside goes as NULL, which C
// refuses with its INVALID_ARGUMENT result and EINVAL (core_exception_t).
inline const char *core_text(const std::string &s) noexcept
{
    return s.find('\0') != std::string::npos ? nullptr : s.c_str();
}

inline void core_check(int result, std::string_view what)
{
    if (result != 0)
        throw core_exception_t(result, zlink_errno(), what);
}

// A Core function that reports failure through errno only (NULL / -1).
[[noreturn]] inline void core_throw_errno(int fallback_result, std::string_view what)
{
    throw core_exception_t(fallback_result, zlink_errno(), what);
}

inline void check_library_once()
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    if (major != tables::version_major)
        throw library_error_t("libzlink major version " + std::to_string(major) +
                              ", the C++ binding needs " +
                              std::to_string(tables::version_major));
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(&zlink_version), &info) == 0 || info.dli_fname == nullptr)
        throw library_error_t("libzlink: cannot find the library that defines zlink_version");
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr)
        throw library_error_t(std::string("libzlink: dlopen(RTLD_NOLOAD) failed: ") +
                              info.dli_fname);
    for (const auto &e : tables::exports) {
        std::string name(e.name), node(e.node);
        if (dlvsym(lib, name.c_str(), node.c_str()) == nullptr) {
            dlclose(lib);
            throw library_error_t("libzlink: missing export " + name + "@" + node);
        }
    }
    dlclose(lib);
}

} // namespace detail

// The load check (see the design notes); throws library_error_t naming the
// first missing export. Runs once; later calls repeat the first answer.
inline void check_library()
{
    static std::once_flag once;
    static std::exception_ptr failure;
    std::call_once(once, [] {
        try {
            detail::check_library_once();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace zlink

#endif // ZLINK_ERRORS_HPP
