#include "evalsched/cli/follow_cmd.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <fmt/format.h>

#include "evalsched/core/suite.hpp"
#include "evalsched/core/user_environment.hpp"

extern char** environ;

namespace acme::evalsched {

using nlohmann::json;
namespace fs = std::filesystem;

json follow_body(const FollowArgs& a) {
    std::error_code ec;
    const fs::path path = fs::absolute(a.dir, ec);
    if (ec || !fs::exists(path, ec))
        throw std::runtime_error(fmt::format("checkpoint directory {} does not exist: give the training run's --ckpt-dir", a.dir));
    if (!fs::is_directory(path, ec)) throw std::runtime_error(fmt::format("{} is not a directory: give the training run's --ckpt-dir", a.dir));
    if (access(path.c_str(), R_OK | X_OK) != 0)
        throw std::runtime_error(fmt::format("checkpoint directory {} is not readable by you: fix its permissions", a.dir));
    std::ifstream in(a.suite_path);
    if (!in) throw std::runtime_error(fmt::format("suite {} cannot be read: give a readable suite file", a.suite_path));
    std::stringstream ss;
    ss << in.rdbuf();
    parse_suite(ss.str(), a.suite_path);
    std::vector<std::string> withheld;
    const std::vector<std::string> env = capture_environment(environ, &withheld);
    if (!withheld.empty()) fmt::print(stderr, "evalsched: {}\n", withheld_note(withheld));
    if (const std::string why = environment_problem(env); !why.empty()) throw std::runtime_error(why);
    json body{{"dir", fs::weakly_canonical(path).string()}, {"suite", ss.str()}, {"suite_file", a.suite_path}, {"priority", a.priority},
              {"every", a.every}, {"keep_up", a.keep_up}, {"environment", env}};
    if (!a.name.empty()) body["name"] = a.name;
    if (a.params_b > 0) body["params_b"] = a.params_b;
    return body;
}

std::string follow_started(const json& r) {
    std::string how;
    if (r.value("every", 0LL) > 0) how += fmt::format(", at least {} steps apart", r.value("every", 0LL));
    if (r.value("keep_up", false)) how += ", only the newest when behind";
    return fmt::format("follow {} started: {} (run {}), each complete checkpoint evaluated{}; looks every {:g} s; stop it with "
                       "evalsched cancel f{}\n",
                       r.value("id", 0LL), r.value("dir", ""), r.value("name", ""), how, r.value("interval_s", 0.0), r.value("id", 0LL));
}

std::string render_follows(const json& follows) {
    if (follows.empty()) return "no follows: start one with evalsched follow DIR --suite S\n";
    std::string out;
    for (const auto& f : follows) {
        int evaluated = 0, skipped = 0;
        for (const auto& c : f["checkpoints"]) (c["evaluation"].is_null() ? skipped : evaluated)++;
        out += fmt::format("f{} {} {} run {} {} evaluated, {} skipped{}{}\n", f.value("id", 0LL), f.value("state", ""), f.value("dir", ""),
                           f.value("name", ""), evaluated, skipped, f.value("every", 0LL) ? fmt::format(", every {}", f.value("every", 0LL)) : "",
                           f.value("keep_up", false) ? ", keep-up" : "");
        if (const std::string p = f.value("problem", ""); !p.empty()) out += fmt::format("  trouble: {}\n", p);
        for (const auto& c : f["checkpoints"]) {
            if (c["evaluation"].is_null()) out += fmt::format("  step {} skipped: {}\n", c.value("step", 0LL), c.value("reason", ""));
            else out += fmt::format("  step {} evaluation {}\n", c.value("step", 0LL), c["evaluation"].get<long long>());
        }
    }
    return out;
}

}  // namespace acme::evalsched
