// faultguard_impl.so's side of the options (pyxis's args.c): the shim (shim.c) registers them in
// every context and forwards their callbacks here, which validate a value on the submit side
// (sbatch/srun/salloc, as the user: a bad value refuses the submission) and remember it in
// slurmstepd; the job_script side's getopt; and the plugstack arguments.
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/slurm/job_type.hpp"
#include "common/util/parse.hpp"
#include "spank/faultguard_options.hpp"
#include "spank/faultguard/core/recovery_options.hpp"
#include "spank/faultguard/plugin.hpp"
#include "spank/impl_abi.h"

namespace acme::faultguard::plugin {
namespace {

using acme::spank::guarded;
using acme::spank::plugstack_args;

int on_job_type(int, const char* optarg, int remote);
int on_auto_recover(int, const char* optarg, int remote);
int on_ckpt_dir(int, const char* optarg, int remote);

// The options as spank_option_getopt finds them in job_script context (by name, from the job's
// environment); the shim registers the same names with their usage and callbacks.
char opt_name[] = "llm-job-type";
struct spank_option g_job_type = {opt_name, nullptr, nullptr, 1, 0, nullptr};
char ar_name[] = "auto-recover";
struct spank_option g_auto_recover = {ar_name, nullptr, nullptr, 2, 0, nullptr};

JobOptions g_job_options;

int on_job_type(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--llm-job-type", remote ? 0 : -1, [&] {
        if (remote || acme::acct::parse_job_type(optarg ? optarg : "")) return 0;
        slurm_error("faultguard: --llm-job-type=%s: want one of pretrain, sft, eval, debug, mllm, other",
                    acme::util::printable(optarg ? optarg : "", 40).c_str());
        return -1;
    });
}

int on_auto_recover(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--auto-recover", remote ? 0 : -1, [&] {
        std::string error;
        const auto n = parse_auto_recover(optarg ? optarg : "", error);
        if (remote) {
            g_job_options.auto_recover = n.has_value();
            return 0;
        }
        if (!n) slurm_error("%s", error.c_str());
        return n ? 0 : -1;
    });
}

int on_ckpt_dir(int, const char* optarg, int remote) {
    return guarded(kPlugin, "--ckpt-dir", remote ? 0 : -1, [&] {
        const std::string value = optarg ? optarg : "";
        if (remote) {
            g_job_options.ckpt_dir = value;
            return 0;
        }
        // sbatch runs as the user: checking the directory here uses the user's own rights.
        std::string error;
        if (!check_ckpt_dir(value, error)) {
            slurm_error("%s", error.c_str());
            return -1;
        }
        return 0;
    });
}

}  // namespace

const JobOptions& job_options() { return g_job_options; }

// Every caller runs as root (slurmstepd, job_script), where an admin reads the log: a bad
// plugstack argument is said wherever it is parsed, never dropped.
Config load_config(int ac, char** av) {
    auto [config, errors] =
        parse_plugstack_args(plugstack_args(ac, av),
                             {ACME_CONF_DIR "/rules.d", ACME_HELPER_DIR "/acme-faultguard-epilog", ACME_STATE_DIR "/labels.db",
                              ACME_HELPER_DIR "/acme-ckpt-find", ACME_CONF_DIR "/checkpoints.toml",
                              ACME_HELPER_DIR "/acme-health-gate"});
    for (const auto& e : errors) slurm_error("%s", e.c_str());
    return config;
}

int on_option(int which, const char* optarg, int remote) {
    switch (which) {
        case ACME_FG_JOB_TYPE: return on_job_type(0, optarg, remote);
        case ACME_FG_AUTO_RECOVER: return on_auto_recover(0, optarg, remote);
        case ACME_FG_CKPT_DIR: return on_ckpt_dir(0, optarg, remote);
        default: return 0;
    }
}

// --auto-recover's restart cap in job_script context; -1 when the job did not ask.
int auto_recover_option(spank_t sp) {
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_auto_recover, &optarg) != ESPANK_SUCCESS) return -1;
    std::string error;
    return parse_auto_recover(optarg ? optarg : "", error).value_or(-1);
}

// The --llm-job-type value in job_script context (only spank_option_getopt sees it there).
std::string job_type_option(spank_t sp) {
    char* optarg = nullptr;
    if (spank_option_getopt(sp, &g_job_type, &optarg) != ESPANK_SUCCESS || !optarg) return {};
    return acme::acct::parse_job_type(optarg) ? std::string(optarg) : std::string();
}

}  // namespace acme::faultguard::plugin
