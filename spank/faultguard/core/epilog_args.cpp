#include "spank/faultguard/core/epilog_args.hpp"

#include <limits>
#include <variant>

#include <fmt/format.h>

#include "common/util/parse.hpp"

namespace acme::faultguard {
namespace {

using Member = std::variant<std::string EpilogArgs::*, long long EpilogArgs::*, int EpilogArgs::*,
                            double EpilogArgs::*, bool EpilogArgs::*>;

struct Field {
    std::string_view flag;
    Member member;
    double min, max;  // numbers only
    std::string_view help;
};

constexpr double kAny = std::numeric_limits<double>::max();

const Field kFields[] = {
    {"--job", &EpilogArgs::job, 1, kAny, "the job id"},
    {"--node", &EpilogArgs::node, 0, 0, "this node's name"},
    {"--spool", &EpilogArgs::spool, 0, 0, "the spool directory"},
    {"--rules", &EpilogArgs::rules, 0, 0, "the diagnosis rules directory"},
    {"--labels", &EpilogArgs::labels, 0, 0, "labels store for history matching (faultdiag --label)"},
    {"--job-type", &EpilogArgs::job_type, 0, 0, "the job's --llm-job-type"},
    {"--auto-recover", &EpilogArgs::auto_recover, -1, 1000000, "the job's --auto-recover restart cap (-1: not asked)"},
    {"--gpucheck", &EpilogArgs::gpucheck, 0, 0, "gpucheck program for localising faults"},
    {"--drain-per-user", &EpilogArgs::drain_per_user, 0, 100000, "nodes one uid's jobs may hold drained at once (0: no limit)"},
    {"--admin-comment", &EpilogArgs::admin_comment, 0, 0, "put this node's part of the job record into its AdminComment"},
    {"--record-retry", &EpilogArgs::record_retry, 0, 86400, "seconds after the job's end the node's retrier tries a part slurmdbd did not take (0: none)"},
    {"--record-retry-pause", &EpilogArgs::record_retry_pause, 10, 3600, "the retrier's longest pause between tries"},
    {"--uid", &EpilogArgs::uid, -1, kAny, "the job's uid"},
    {"--gid", &EpilogArgs::gid, -1, kAny, "the job's gid"},
    {"--restart", &EpilogArgs::restart, 0, kAny, "the job's restart count"},
    {"--exit-code2", &EpilogArgs::exit_code2, 0, 0, "SLURM_JOB_EXIT_CODE2"},
    {"--gpus", &EpilogArgs::gpus, 0, 0, "SLURM_JOB_GPUS"},
    {"--nodelist", &EpilogArgs::nodelist, 0, 0, "SLURM_NODELIST"},
    {"--work-dir", &EpilogArgs::work_dir, 0, 0, "SLURM_JOB_WORK_DIR"},
    {"--stdout-pattern", &EpilogArgs::stdout_pattern, 0, 0, "SLURM_JOB_STDOUT"},
    {"--stderr-pattern", &EpilogArgs::stderr_pattern, 0, 0, "SLURM_JOB_STDERR"},
    {"--user", &EpilogArgs::user, 0, 0, "SLURM_JOB_USER"},
    {"--sluid", &EpilogArgs::sluid, 0, 0, "SLURM_JOB_SLUID (Slurm 26.05+)"},
    {"--log-bytes", &EpilogArgs::log_bytes, 1024, 64.0 * 1024 * 1024, "bytes read from the end of stdout/stderr"},
    {"--read-timeout", &EpilogArgs::read_timeout, 0.1, 600, "seconds the log reader may take"},
    {"--llm-endpoint", &EpilogArgs::llm_endpoint, 0, 0, "OpenAI-compatible server asked when the rules do not decide"},
    {"--llm-model", &EpilogArgs::llm_model, 0, 0, "the server's model name"},
    {"--llm-token-file", &EpilogArgs::llm_token_file, 0, 0, "root-only file with the bearer token"},
    {"--llm-timeout", &EpilogArgs::llm_timeout, 0.1, 120, "seconds for the whole request to the model"},
    {"--llm-below", &EpilogArgs::llm_below, 0, 1, "also ask when the rules' confidence is below this"},
    {"--release", &EpilogArgs::release, 0, kAny, "internal: wait for this job's requeue, then make it eligible now"},
    {"--exclude-node", &EpilogArgs::exclude_node, 0, 0, "internal (with --release): keep the requeued job off this node"},
    {"--publish", &EpilogArgs::publish, 0, 0, "internal: put a node's part (a hand-off file the epilog wrote) into AdminComment"},
    {"--retry-try", &EpilogArgs::retry_try, 0, 0, "internal (with --publish): one try of the node's record retrier"},
    {"--retry-outbox", &EpilogArgs::retry_outbox, 0, 0, "internal (with --spool, --node): the node's record retrier"},
    {"--detached", &EpilogArgs::detached, 0, 3600, "internal: run detached; end after this many seconds, the line to the log"},
    {"--go-on", &EpilogArgs::go_on, 0, 3600, "internal: at the plugin's timeout, go on detached this many seconds more, no recovery"},
};

template <class... F>
struct Overload : F... {
    using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// Sets one field from its text; false (with error) when the text is not a value it accepts.
bool assign(EpilogArgs& a, const Field& f, std::string_view text, std::string& error) {
    const auto bad = [&](std::string_view want) {
        error = fmt::format("{} {}: {}", f.flag, util::printable(text, 40), want);
        return false;
    };
    const auto in_range = [&](double v) { return v >= f.min && v <= f.max; };
    const auto range = [&] { return f.max == kAny ? fmt::format("want a number >= {}", f.min)
                                                  : fmt::format("want a number in [{}, {}]", f.min, f.max); };
    return std::visit(
        Overload{
            [&](std::string EpilogArgs::*m) {
                a.*m = std::string(text);
                return true;
            },
            [&](long long EpilogArgs::*m) {
                const auto v = util::parse_int(text);
                if (!v || !in_range(static_cast<double>(*v))) return bad(range());
                a.*m = *v;
                return true;
            },
            [&](int EpilogArgs::*m) {
                const auto v = util::parse_int(text);
                if (!v || !in_range(static_cast<double>(*v))) return bad(range());
                a.*m = static_cast<int>(*v);
                return true;
            },
            [&](double EpilogArgs::*m) {
                const auto v = util::parse_double(text);
                if (!v || !in_range(*v)) return bad(range());
                a.*m = *v;
                return true;
            },
            [&](bool EpilogArgs::*m) {
                const auto v = util::parse_bool(text);
                if (!v) return bad("want true or false");
                a.*m = *v;
                return true;
            },
        },
        f.member);
}

}  // namespace

std::vector<std::string> epilog_argv(const std::string& helper, const EpilogArgs& a) {
    static const EpilogArgs defaults;
    std::vector<std::string> argv = {helper};
    for (const auto& f : kFields) {
        std::visit(Overload{
                       [&](bool EpilogArgs::*m) {
                           if (a.*m) argv.emplace_back(f.flag);
                       },
                       [&](auto m) {
                           if (a.*m == defaults.*m) return;
                           argv.emplace_back(f.flag);
                           argv.push_back(fmt::format("{}", a.*m));
                       },
                   },
                   f.member);
    }
    return argv;
}

std::optional<EpilogArgs> parse_epilog_args(const std::vector<std::string_view>& args, std::string& error) {
    EpilogArgs a;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view flag = args[i];
        std::optional<std::string_view> value;
        if (const auto eq = flag.find('='); eq != std::string_view::npos) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        }
        const Field* field = nullptr;
        for (const auto& f : kFields)
            if (f.flag == flag) field = &f;
        if (!field) {
            error = fmt::format("{}: unknown option", util::printable(flag, 40));
            return std::nullopt;
        }
        if (std::holds_alternative<bool EpilogArgs::*>(field->member) && !value) value = "true";
        if (!value) {
            if (i + 1 == args.size()) {
                error = fmt::format("{}: needs a value", field->flag);
                return std::nullopt;
            }
            value = args[++i];
        }
        if (!assign(a, *field, *value, error)) return std::nullopt;
    }
    return a;
}

std::string epilog_usage() {
    std::string out;
    for (const auto& f : kFields) out += fmt::format("  {:<18} {}\n", f.flag, f.help);
    return out;
}

}  // namespace acme::faultguard
