// evalsched: the command users type (man evalsched(1)). Each subcommand is one API call to
// evalschedd over its Unix socket; the daemon decides what the caller may see. Errors are one
// line on stderr, naming the thing and what to do; nothing is submitted after one.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/util/install_paths.hpp"
#include "common/util/version.hpp"
#include "evalsched/cli/client.hpp"
#include "evalsched/cli/follow_cmd.hpp"
#include "evalsched/cli/report.hpp"
#include "evalsched/cli/report_html.hpp"
#include "evalsched/cli/render.hpp"
#include "evalsched/cli/watch.hpp"
#include "common/util/table.hpp"
#include "evalsched/core/checkpoint_files.hpp"
#include "evalsched/core/suite.hpp"
#include "evalsched/core/user_environment.hpp"
#include "common/util/cli_checks.hpp"

namespace {

using namespace acme::evalsched;
using nlohmann::json;
namespace fs = std::filesystem;

int fail(const std::string& message) {
    std::fprintf(stderr, "evalsched: %s\n", message.c_str());
    return 1;
}

// 1 on an API error (the daemon's line printed), 0 otherwise.
int check(const Response& r) {
    if (r.status >= 400) return fail(r.error());
    return 0;
}

double tree_bytes(const fs::path& dir) {
    double total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec)) total += static_cast<double>(it->file_size(ec));
    return total;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"evalsched: evaluate checkpoints on the cluster's idle GPUs, per dataset, as soon as they are saved"};
    app.require_subcommand(1);
    app.set_version_flag("-V,--version", acme::version_line("evalsched"), "print the version and exit");
    app.formatter(std::make_shared<acme::util::HelpFormatter>());
    std::string socket = std::getenv("EVALSCHED_SOCKET") ? std::getenv("EVALSCHED_SOCKET") : std::string(acme::paths::kEvalschedSocket);
    app.add_option("--socket", socket, "evalschedd's socket (default: $EVALSCHED_SOCKET or " + std::string(acme::paths::kEvalschedSocket) + ")");

    auto* submit = app.add_subcommand("submit", "evaluate a checkpoint on a suite");
    std::string ckpt, suite_path, name, label;
    int priority = 0;
    double params_b = 0;
    submit->add_option("CHECKPOINT", ckpt, "checkpoint directory on shared storage")->required();
    submit->add_option("--suite", suite_path, "suite file (evalsched-suite(5))")->required();
    submit->add_option("--name", name, "training run the checkpoint belongs to (default: its parent directory's name)");
    submit->add_option("--label", label, "checkpoint label (default: its directory name)");
    submit->add_option("--priority", priority, "0-1000; higher goes first")->check(acme::util::number_between(0, 1000, true));
    submit->add_option("--params-b", params_b, "model size in billions of parameters (default: from the safetensors headers, else the weight files' size as bf16)")
        ->check(acme::util::number_between(0.001, 1000000));

    auto* status = app.add_subcommand("status", "evaluations (yours; all for admins), or one in detail");
    long status_id = 0;
    bool status_json = false;
    status->add_option("ID", status_id, "evaluation id");
    status->add_flag("--json", status_json, "print the daemon's JSON");
    // Tables fit the terminal (COLUMNS, else its width, else 80), cut cells ending in '+'.
    bool long_text = false, parsable2 = false;
    auto table_flags = [&](CLI::App* cmd) {
        cmd->add_flag("-l,--long", long_text, "every cell in full, however wide the lines get");
        cmd->add_flag("-P,--parsable2", parsable2, "cells separated by '|', nothing cut or padded (sacct -P)");
    };
    table_flags(status);

    auto* watch = app.add_subcommand("watch", "a live progress bar until the evaluation ends");
    long watch_id = 0;
    double interval = 2;
    watch->add_option("ID", watch_id, "evaluation id")->required();
    watch->add_option("--interval", interval, "seconds between updates")->check(acme::util::number_between(0.1, 3600.0));
    bool watch_json = false;
    watch->add_flag("--json", watch_json, "one JSON object per change (progress, dataset, trouble, resolved, end)");

    auto* cancel = app.add_subcommand("cancel", "cancel an evaluation (its queued and running trials are killed), or stop a follow (fID)");
    std::string cancel_id;
    cancel->add_option("ID", cancel_id, "evaluation id, or f and a follow's id")->required();

    auto* follow = app.add_subcommand("follow", "evaluate every complete checkpoint a training run saves under DIR, as it lands");
    FollowArgs follow_args;
    follow->add_option("DIR", follow_args.dir, "the training run's checkpoint directory (its --ckpt-dir)")->required();
    follow->add_option("--suite", follow_args.suite_path, "suite file (evalsched-suite(5))")->required();
    follow->add_option("--every", follow_args.every, "evaluate a checkpoint only N or more steps after the last one evaluated")
        ->check(acme::util::number_between(1, 1e12, true));
    follow->add_flag("--keep-up", follow_args.keep_up, "when behind, evaluate only the newest complete checkpoint");
    follow->add_option("--name", follow_args.name, "training run the checkpoints belong to (default: DIR's name)");
    follow->add_option("--priority", follow_args.priority, "0-1000; higher goes first")->check(acme::util::number_between(0, 1000, true));
    follow->add_option("--params-b", follow_args.params_b, "model size in billions of parameters (default: from each checkpoint's weight files)")
        ->check(acme::util::number_between(0.001, 1000000));
    auto* follows = app.add_subcommand("follows", "your follows (all for admins) and what each did with every checkpoint");

    auto* report = app.add_subcommand("report", "scores per dataset and checkpoint of a run (or one evaluation)");
    std::string report_arg, format = "table";
    report->add_option("NAME|ID", report_arg, "training run name or evaluation id")->required();
    report->add_option("--format", format, "table, csv, json, md, or html (a chart per dataset over steps)")
        ->check(CLI::IsMember({"table", "csv", "json", "md", "html"}));
    bool matrix = false;
    report->add_flag("--matrix", matrix, "datasets x checkpoints only, without the harness's version, filter, n-shot, mode and stderr");

    auto* priors = app.add_subcommand("priors", "measured run times per dataset");
    std::string prior_dataset;
    priors->add_option("DATASET", prior_dataset, "one dataset");
    table_flags(priors);
    report->add_flag("-l,--long", long_text, "every cell in full (--format table)");

    // One line for a bad argument and exit 1, like every other error of this command (CLI11's
    // own exit codes, 104-109, are not evalsched(1)'s). Bounded and without control characters:
    // CLI11 echoes the argument it refused.
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string problem = acme::util::usage_problem(e);
        if (app.get_subcommands().empty()) {
            const std::string word = acme::util::first_command_word(argc, argv, {"--socket"});
            if (word.empty()) problem = "a command is required (submit, status, watch, cancel, follow, follows, report, priors)";
            else if (app.get_subcommands([&](CLI::App* c) { return c->check_name(word); }).empty())
                problem = fmt::format("unknown command '{}'", word);
        }
        return fail(one_line(problem) + ": see evalsched --help");
    }
    acme::util::TableStyle style;
    style.width = long_text || parsable2 ? 0 : acme::util::terminal_width(STDOUT_FILENO);
    style.parsable2 = parsable2;
    const auto now = [] { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); };

    try {
        if (*submit) {
            std::error_code ec;
            const fs::path path = fs::absolute(ckpt, ec);
            if (ec || !fs::exists(path, ec)) return fail(fmt::format("checkpoint {} does not exist: give the checkpoint directory", ckpt));
            if (!fs::is_directory(path, ec)) return fail(fmt::format("checkpoint {} is not a directory: give the checkpoint directory", ckpt));
            if (access(path.c_str(), R_OK | X_OK) != 0) return fail(fmt::format("checkpoint {} is not readable by you: fix its permissions", ckpt));
            std::ifstream in(suite_path);
            if (!in) return fail(fmt::format("suite {} cannot be read: give a readable suite file", suite_path));
            std::stringstream ss;
            ss << in.rdbuf();
            // Checked here too, so a bad suite fails before the daemon is even asked.
            parse_suite(ss.str(), suite_path);
            // The trials run in the environment submitted from, as sbatch's --export=ALL would.
            std::vector<std::string> withheld;
            const std::vector<std::string> env = capture_environment(environ, &withheld);
            if (!withheld.empty()) fmt::print(stderr, "evalsched: {}\n", withheld_note(withheld));
            if (const std::string why = environment_problem(env); !why.empty()) return fail(why);
            json body{{"checkpoint", fs::weakly_canonical(path).string()}, {"suite", ss.str()}, {"suite_file", suite_path},
                      {"priority", priority}, {"checkpoint_bytes", tree_bytes(path)}, {"environment", env}};
            // The model's size from its weight files, not optimizer state (checkpoint_files.hpp).
            if (const ModelFiles m = model_files(path.string()); m.weight_bytes > 0) {
                body["checkpoint_bytes"] = m.weight_bytes;
                if (m.parameters && params_b <= 0) body["params_b"] = std::max(*m.parameters / 1e9, 0.001);
            }
            if (!name.empty()) body["name"] = name;
            if (!label.empty()) body["label"] = label;
            if (params_b > 0) body["params_b"] = params_b;
            const Response r = call(socket, "POST", "/v1/evaluations", body.dump());
            if (check(r)) return 1;
            fmt::print("evaluation {} submitted: {}/{}, {} trials\n", r.body["id"].get<long>(), r.body["name"].get<std::string>(),
                       r.body["checkpoint"].get<std::string>(), r.body["trial_list"].size());
            if (r.body.contains("notes"))
                for (const auto& n : r.body["notes"]) fmt::print("note: {}\n", n.get<std::string>());
            return 0;
        }
        if (*status) {
            const Response r = status_id ? call(socket, "GET", fmt::format("/v1/evaluations/{}", status_id)) : call(socket, "GET", "/v1/evaluations");
            if (check(r)) return 1;
            if (status_json) fmt::print("{}\n", r.body.dump(2));
            else fmt::print("{}", status_id ? render_evaluation(r.body, style, now()) : render_status(r.body, style));
            return 0;
        }
        if (*watch) {
            const bool tty = isatty(STDOUT_FILENO);
            Watcher watcher(watch_json ? Watcher::Mode::json : tty ? Watcher::Mode::terminal : Watcher::Mode::lines,
                            acme::util::terminal_width(STDOUT_FILENO));
            for (;;) {
                const Response r = call(socket, "GET", fmt::format("/v1/evaluations/{}", watch_id));
                if (check(r)) return 1;
                const bool over = r.body.value("state", "") != "active";
                fmt::print("{}", watcher.update(r.body, now()));
                if (over) fmt::print("{}", watcher.finish());
                std::fflush(stdout);
                if (over) return r.body["state"] == "done" ? 0 : 1;
                std::this_thread::sleep_for(std::chrono::duration<double>(interval));
            }
        }
        if (*cancel) {
            const bool of_follow = !cancel_id.empty() && cancel_id[0] == 'f';
            const std::string digits = of_follow ? cancel_id.substr(1) : cancel_id;
            if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
                return fail(fmt::format("'{}' is not an evaluation id (a number) or a follow (f and a number): see evalsched status and evalsched follows",
                                        one_line(cancel_id, 40)));
            const Response r = call(socket, "POST", fmt::format("/v1/{}/{}/cancel", of_follow ? "follows" : "evaluations", digits));
            if (check(r)) return 1;
            if (of_follow) fmt::print("follow {} stopped: its evaluations already submitted go on (evalsched cancel ID stops one)\n", digits);
            else fmt::print("evaluation {} cancelled\n", digits);
            return 0;
        }
        if (*follow) {
            const Response r = call(socket, "POST", "/v1/follows", follow_body(follow_args).dump());
            if (check(r)) return 1;
            fmt::print("{}", follow_started(r.body));
            return 0;
        }
        if (*follows) {
            const Response r = call(socket, "GET", "/v1/follows");
            if (check(r)) return 1;
            fmt::print("{}", render_follows(r.body));
            return 0;
        }
        if (*report) {
            const Response r = call(socket, "GET", "/v1/report/" + report_arg);
            if (check(r)) return 1;
            fmt::print("{}", format == "html" ? render_report_html(with_averages(r.body)) : render_report(r.body, format, style, matrix));
            return 0;
        }
        if (*priors) {
            const Response r = call(socket, "GET", "/v1/priors" + (prior_dataset.empty() ? "" : "/" + prior_dataset));
            if (check(r)) return 1;
            fmt::print("{}", render_priors(r.body, style));
            return 0;
        }
    } catch (const SuiteError& e) {
        return fail(e.what());
    } catch (const DaemonUnreachable& e) {
        return fail(e.what());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    return 0;
}
