// evalsched-ckpt-scan: the complete checkpoints of a training run's directory, for evalschedd's
// `follow`. evalschedd runs it already as the follow's user (run_helper_as_user), so the
// user's directory is read with the user's rights and root never resolves a path in it. The
// rules are recovery's own (checkpoints.toml, faultguard(8)): a checkpoint follow evaluates is
// one a requeued job would resume from.
//
// Output, one line per complete checkpoint newer than --after, oldest first:
//   STEP <TAB> RULE <TAB> WEIGHT_BYTES <TAB> PARAMETERS (- when unknown) <TAB> PATH
// Exit 1 with one line on stdout when the directory or the rules cannot be read.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/util/version.hpp"
#include "evalsched/core/checkpoint_files.hpp"
#include "common/recovery/checkpoints.hpp"

int main(int argc, char** argv) {
    std::string dir, rules;
    long long after = -1;
    CLI::App app{"evalsched-ckpt-scan: the complete checkpoints under a directory (run by evalschedd as the user)"};
    app.set_version_flag("--version", acme::version_line("evalsched-ckpt-scan"), "print the version and exit");
    app.add_option("--dir", dir, "the training run's checkpoint directory")->required();
    app.add_option("--rules", rules, "checkpoint rules (checkpoints.toml)")->required();
    app.add_option("--after", after, "only checkpoints with a larger step");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        const auto parsed = acme::recovery::load_checkpoint_rules(rules);
        for (const auto& c : acme::recovery::all_complete(dir, parsed)) {
            if (c.step <= after) continue;
            const std::string path = c.path.string();
            // One field per tab, one checkpoint per line: a name that would break either is skipped.
            if (path.find_first_of("\t\n\r") != std::string::npos) continue;
            const auto m = acme::evalsched::model_files(path);
            fmt::print("{}\t{}\t{:.0f}\t{}\t{}\n", c.step, c.rule, m.weight_bytes, m.parameters ? fmt::format("{:.0f}", *m.parameters) : "-", path);
        }
        return 0;
    } catch (const std::exception& e) {
        fmt::print("{}\n", e.what());
        return 1;
    }
}
