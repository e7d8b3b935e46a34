// faultguard.so's options (pyxis's args.c): the table every context registers, the callbacks
// that validate a value on the submit side (sbatch/srun/salloc, as the user: a bad value
// refuses the submission) and remember it in slurmstepd, the job_script side's getopt, and the
// plugstack arguments.
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/slurm/job_type.hpp"
#include "common/util/parse.hpp"
#include "spank/faultguard_options.hpp"
#include "spank/faultguard/core/recovery_options.hpp"
#include "spank/faultguard/plugin.hpp"
#include "spank/option_env.hpp"

namespace acme::faultguard::plugin {
namespace {

using acme::spank::guarded;
using acme::spank::plugstack_args;

int on_job_type(int, const char* optarg, int remote);
int on_auto_recover(int, const char* optarg, int remote);
int on_ckpt_dir(int, const char* optarg, int remote);

// spank_option's members are char*: storage that outlives the registration.
char opt_name[] = "llm-job-type";
char opt_arginfo[] = "TYPE";
char opt_usage[] =
    "[faultguard] what this job is, for reports: pretrain, sft, eval, debug, mllm or other (default: from the "
    "job comment's llm-job-type=TYPE, else guessed from the job name)";
struct spank_option g_job_type = {opt_name, opt_arginfo, opt_usage, 1, 0, on_job_type};
char ar_name[] = "auto-recover";
char ar_arginfo[] = "MAX_RESTARTS";
char ar_usage[] =
    "[faultguard] on an infrastructure failure drain the faulty node and requeue this job, at most MAX_RESTARTS "
    "times (default 3). Env: ACME_AUTO_RECOVER";
struct spank_option g_auto_recover = {ar_name, ar_arginfo, ar_usage, 2, 0, on_auto_recover};
char ck_name[] = "ckpt-dir";
char ck_arginfo[] = "PATH";
char ck_usage[] =
    "[faultguard] the job's checkpoint directory: every start gets ACME_RESUME_CKPT (the newest complete checkpoint, "
    "empty on a fresh start) and ACME_RESTART_COUNT. Env: ACME_CKPT_DIR";
struct spank_option g_ckpt_dir = {ck_name, ck_arginfo, ck_usage, 1, 0, on_ckpt_dir};

// Environment forms: made aliases of Slurm's own, so Slurm validates them through the option
// callbacks (a bad value refuses the submission) and carries them like the flags.
struct EnvAlias {
    const char* ours;
    std::string_view option;
};
constexpr EnvAlias kEnvAliases[] = {
    {"ACME_AUTO_RECOVER", kAutoRecoverOption},
    {"ACME_CKPT_DIR", kCkptDirOption},
};

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

int register_options(spank_t sp) {
    const spank_context_t ctx = spank_context();
    for (auto* opt : {&g_job_type, &g_auto_recover, &g_ckpt_dir})
        if (spank_option_register(sp, opt) != ESPANK_SUCCESS)
            slurm_error("%s: cannot register --%s in %s context", kPlugin, opt->name, acme::spank::context_name(ctx));
    return 0;
}

int submit_init(spank_t sp) {
    register_options(sp);
    for (const auto& alias : kEnvAliases)
        if (const char* v = getenv(alias.ours); v && *v)
            setenv(acme::spank::submit_option_env(kPlugin, alias.option).c_str(), v, 0);
    return 0;
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
