// runner.cc — the C++ conformance runner (doc/conformance.md).
//
//   runner [-v] MANIFEST [CASE-ID ...]   runs every case, or the ones named,
//                                        in manifest order
//   runner --check MANIFEST              checks the manifest and that this
//                                        runner's registry agrees with it
//   runner --list MANIFEST               prints the manifest's case ids
//
// stdout: "CASE <id> pass|fail|missing <detail>" per case in manifest order,
// and "ERROR <text>" for a manifest or registry problem; everything else
// goes to stderr. Exit 0 when every case run passed, 1 when one failed or
// is missing, 2 for usage, manifest or registry errors.
//
// Each case runs in a process of its own: this binary again
// (/proc/self/exe --run-case ID MANIFEST), its output in a pipe. The case
// passes when that process prints its completion line and exits 0 within
// 60 s x ZT_TIMEOUT_MULT; a failed check, a crash, a sanitizer report or a
// hang fails it. The parent starts no thread and no ZLink object. The
// manifest is read with nlohmann::json.
#include "conf.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr int case_seconds = 60;
constexpr const char *done_mark = "conformance: case completed: ";
enum { exit_ok = 0, exit_cases = 1, exit_usage = 2 };

struct entry_t {
    std::string id;
    const nlohmann::json *params;
};

struct manifest_t {
    nlohmann::json root;
    std::vector<entry_t> cases;
};

void error_line(const std::string &text) { std::cout << "ERROR " << text << "\n" << std::flush; }

// An id is capital letters, '-', digits (SC-01, X-1).
bool id_well_formed(const std::string &id)
{
    std::size_t i = 0;
    while (i < id.size() && id[i] >= 'A' && id[i] <= 'Z')
        i++;
    if (i == 0 || i >= id.size() || id[i] != '-')
        return false;
    std::size_t d = ++i;
    while (i < id.size() && id[i] >= '0' && id[i] <= '9')
        i++;
    return i > d && i == id.size();
}

bool nonempty_string(const nlohmann::json &o, const char *key)
{
    auto it = o.find(key);
    return it != o.end() && it->is_string() && !it->get<std::string>().empty();
}

// Loads and checks the manifest; every problem is an ERROR line.
int manifest_load(const std::string &path, manifest_t &m)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error_line(path + ": cannot read: " + std::strerror(errno));
        return 1;
    }
    try {
        m.root = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        error_line(path + ": " + e.what());
        return 1;
    }
    const auto &root = m.root;
    if (!root.is_object() || !root.contains("cases") || !root["cases"].is_array()) {
        error_line(path + ": the top level must be an object with a \"cases\" array");
        return 1;
    }
    int problems = 0;
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() != "cases" && it.key() != "about") {
            error_line(path + ": unknown top-level member \"" + it.key() + "\"");
            problems++;
        }
    }
    std::set<std::string> seen;
    std::size_t index = 0;
    for (const auto &c : root["cases"]) {
        index++;
        if (!c.is_object()) {
            error_line(path + ": case " + std::to_string(index) + " is not an object");
            problems++;
            continue;
        }
        if (!nonempty_string(c, "id") || !id_well_formed(c["id"].get<std::string>())) {
            error_line(path + ": case " + std::to_string(index) + " has no id of the form XX-00");
            problems++;
            continue;
        }
        std::string id = c["id"];
        if (!nonempty_string(c, "title") || !nonempty_string(c, "seed")) {
            error_line(path + ": case " + id + " needs a non-empty \"title\" and \"seed\"");
            problems++;
        }
        if (!c.contains("params") || !c["params"].is_object()) {
            error_line(path + ": case " + id + " needs a \"params\" object");
            problems++;
        }
        if (c.contains("later")) {
            const auto &later = c["later"];
            if (!later.is_array() || later.empty()) {
                error_line(path + ": case " + id + ": \"later\" must be a non-empty array");
                problems++;
            } else {
                for (const auto &e : later) {
                    if (!e.is_object() || e.size() != 2 || !nonempty_string(e, "part") ||
                        !nonempty_string(e, "needs")) {
                        error_line(path + ": case " + id +
                                   ": a \"later\" entry needs exactly a non-empty \"part\" and "
                                   "\"needs\"");
                        problems++;
                    }
                }
            }
        }
        if (c.contains("absent")) {
            const auto &ab = c["absent"];
            bool ok = ab.is_object() && !ab.empty();
            for (auto it = ab.begin(); ok && it != ab.end(); ++it)
                ok = it->is_string() && !it->get<std::string>().empty();
            if (!ok) {
                error_line(path + ": case " + id +
                           ": \"absent\" must map languages to non-empty reasons");
                problems++;
            }
        }
        for (auto it = c.begin(); it != c.end(); ++it) {
            static const std::set<std::string> known = {"id",     "title", "seed",
                                                        "params", "later", "absent"};
            if (known.count(it.key()) == 0) {
                error_line(path + ": case " + id + " has an unknown member \"" + it.key() + "\"");
                problems++;
            }
        }
        if (!seen.insert(id).second) {
            error_line(path + ": duplicate case id " + id);
            problems++;
        }
        m.cases.push_back({id, c.contains("params") ? &c["params"] : nullptr});
    }
    if (m.cases.empty() && problems == 0) {
        error_line(path + ": the manifest lists no case");
        problems++;
    }
    return problems;
}

const entry_t *manifest_find(const manifest_t &m, const std::string &id)
{
    for (const auto &e : m.cases)
        if (e.id == id)
            return &e;
    return nullptr;
}

const conf::impl_t *impl_find(const std::string &id)
{
    for (const auto &i : conf::impls())
        if (id == i.id)
            return &i;
    return nullptr;
}

int registry_check(const manifest_t &m)
{
    int problems = 0;
    std::set<std::string> seen;
    for (const auto &i : conf::impls()) {
        if (manifest_find(m, i.id) == nullptr) {
            error_line(std::string("case ") + i.id +
                       " is implemented by the C++ runner but not in the manifest");
            problems++;
        }
        if (!seen.insert(i.id).second) {
            error_line(std::string("case ") + i.id + " is registered twice in the C++ runner");
            problems++;
        }
    }
    return problems;
}

int run_case_here(const std::string &id, const std::string &path)
{
    manifest_t m;
    std::streambuf *keep = std::cout.rdbuf();
    std::ostringstream sink; // the parent reported manifest problems already
    std::cout.rdbuf(sink.rdbuf());
    int problems = manifest_load(path, m);
    std::cout.rdbuf(keep);
    if (problems != 0)
        return exit_usage;
    const entry_t *e = manifest_find(m, id);
    const conf::impl_t *impl = impl_find(id);
    if (e == nullptr || impl == nullptr) {
        std::cerr << id << ": not in the manifest or not implemented\n";
        return exit_usage;
    }
    signal(SIGPIPE, SIG_IGN);
    impl->run(*e->params);
    std::cout << done_mark << id << "\n" << std::flush;
    return exit_ok;
}

struct outcome_t {
    bool pass = false;
    std::string detail;
    std::string output;
};

std::string first_line(const std::string &s)
{
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

// "file:123: " at the start of a line.
bool check_line(const std::string &l)
{
    auto colon = l.find(':');
    if (colon == std::string::npos || colon == 0)
        return false;
    std::size_t d = colon + 1;
    while (d < l.size() && l[d] >= '0' && l[d] <= '9')
        d++;
    return d > colon + 1 && d + 1 < l.size() && l[d] == ':' && l[d + 1] == ' ';
}

// A failed check, else a sanitizer's report, else the last line.
std::string failure_line(const std::string &out)
{
    std::string last, sanitizer;
    std::istringstream in(out);
    std::string l;
    while (std::getline(in, l)) {
        bool report = l.find("Sanitizer") != std::string::npos ||
                      l.find("runtime error") != std::string::npos;
        if (!report && check_line(l))
            return l;
        if (report && sanitizer.empty())
            sanitizer = l;
        if (!l.empty())
            last = l;
    }
    return sanitizer.empty() ? last : sanitizer;
}

void set_detail(outcome_t &o, const std::string &prefix, const std::string &line)
{
    std::string l = first_line(line);
    o.detail = l.empty() ? prefix : prefix + ": " + l;
    if (o.detail.size() > 240)
        o.detail.resize(240);
}

outcome_t run_case_child(const std::string &id, const std::string &path)
{
    outcome_t o;
    int fds[2];
    if (pipe(fds) != 0) {
        set_detail(o, "runner: pipe failed", std::strerror(errno));
        return o;
    }
    std::cout.flush();
    std::cerr.flush();
    pid_t pid = fork();
    if (pid < 0) {
        set_detail(o, "runner: fork failed", std::strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return o;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        std::string a0 = "conformance-cpp-case", a1 = "--run-case";
        char *argv[] = {a0.data(), a1.data(), const_cast<char *>(id.c_str()),
                        const_cast<char *>(path.c_str()), nullptr};
        execv("/proc/self/exe", argv);
        std::fprintf(stderr, "execv(/proc/self/exe): %s\n", std::strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    std::int64_t start = conf::now_ms();
    std::int64_t deadline = start + static_cast<std::int64_t>(case_seconds * 1000 * conf::timeout_mult());
    bool timed_out = false;
    for (;;) {
        std::int64_t left = deadline - conf::now_ms();
        if (left <= 0 && !timed_out) {
            timed_out = true;
            kill(pid, SIGKILL);
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int rc = ::poll(&pfd, 1, timed_out ? -1 : static_cast<int>(left > 1000 ? 1000 : left));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            continue;
        char buf[4096];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (o.output.size() < (1u << 20))
            o.output.append(buf, static_cast<std::size_t>(got));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::int64_t elapsed = conf::now_ms() - start;
    bool completed = o.output.find(std::string(done_mark) + id + "\n") != std::string::npos;
    std::string why = failure_line(o.output);
    if (timed_out)
        set_detail(o, "timed out after " + std::to_string(elapsed) + " ms", why);
    else if (WIFSIGNALED(status))
        set_detail(o, "killed by signal " + std::to_string(WTERMSIG(status)), why);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        set_detail(o, "exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1), why);
    else if (!completed)
        set_detail(o, "ended without completing the case", why);
    else {
        o.pass = true;
        o.detail = std::to_string(elapsed) + " ms";
    }
    return o;
}

void echo_output(const std::string &id, const outcome_t &o)
{
    if (o.output.empty())
        return;
    std::cerr << "---- output of " << id << "\n";
    std::istringstream in(o.output);
    std::string l;
    while (std::getline(in, l))
        std::cerr << "  | " << l << "\n";
}

int usage()
{
    std::cerr << "usage: runner [-v] MANIFEST [CASE-ID ...]\n"
                 "       runner --check MANIFEST\n"
                 "       runner --list MANIFEST\n";
    return exit_usage;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 4 && std::strcmp(argv[1], "--run-case") == 0)
        return run_case_here(argv[2], argv[3]);
    bool verbose = false, check = false, list = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (std::strcmp(argv[i], "-v") == 0)
            verbose = true;
        else if (std::strcmp(argv[i], "--check") == 0)
            check = true;
        else if (std::strcmp(argv[i], "--list") == 0)
            list = true;
        else
            return usage();
    }
    if (i >= argc || (check && list) || ((check || list) && argc - i != 1))
        return usage();
    std::string path = argv[i++];
    manifest_t m;
    if (manifest_load(path, m) != 0)
        return exit_usage;
    if (list) {
        for (const auto &e : m.cases)
            std::cout << e.id << "\n";
        return exit_ok;
    }
    int problems = registry_check(m);
    for (int k = i; k < argc; k++) {
        if (manifest_find(m, argv[k]) == nullptr) {
            error_line(std::string("case ") + argv[k] + " is not in the manifest");
            problems++;
        }
    }
    unsigned pass = 0, fail = 0, missing = 0;
    for (const auto &e : m.cases) {
        bool wanted = i == argc;
        for (int a = i; a < argc && !wanted; a++)
            wanted = e.id == argv[a];
        if (!wanted)
            continue;
        if (impl_find(e.id) == nullptr) {
            std::cout << "CASE " << e.id << " missing not implemented by the C++ runner\n"
                      << std::flush;
            missing++;
            continue;
        }
        if (check)
            continue;
        outcome_t o = run_case_child(e.id, path);
        std::cout << "CASE " << e.id << " " << (o.pass ? "pass" : "fail") << " " << o.detail
                  << "\n"
                  << std::flush;
        if (!o.pass || verbose)
            echo_output(e.id, o);
        if (o.pass)
            pass++;
        else
            fail++;
    }
    if (check)
        std::cerr << "conformance (cpp): " << m.cases.size() << " cases in " << path << ", "
                  << m.cases.size() - missing << " implemented, " << missing << " missing, "
                  << problems << " error(s)\n";
    else
        std::cerr << "conformance (cpp): " << pass << " pass, " << fail << " fail, " << missing
                  << " missing, " << problems << " error(s)\n";
    if (problems > 0)
        return exit_usage;
    return fail + missing > 0 ? exit_cases : exit_ok;
}
