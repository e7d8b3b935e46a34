#include <doctest/doctest.h>

#include <cstdlib>

#include "spank/faultguard_options.hpp"
#include "spank/option_env.hpp"

TEST_CASE("SPANK option environment names are Slurm's") {
    using namespace acme::spank;
    CHECK(submit_option_env("gputrace", "gpu-telemetry") == "SLURM_SPANK__SLURM_SPANK_OPTION_gputrace_gpu_telemetry");
    CHECK(submit_option_env("faultguard", "ckpt-dir") == "SLURM_SPANK__SLURM_SPANK_OPTION_faultguard_ckpt_dir");
    CHECK(job_script_option_env("faultguard", "auto-recover") == "SPANK__SLURM_SPANK_OPTION_faultguard_auto_recover");
}

TEST_CASE("another plugin sees faultguard's --auto-recover in the prolog environment") {
    const char* name = "SPANK__SLURM_SPANK_OPTION_faultguard_auto_recover";
    unsetenv(name);
    CHECK(!acme::faultguard::job_asked_auto_recover());
    setenv(name, "2", 1);
    CHECK(acme::faultguard::job_asked_auto_recover());
    unsetenv(name);
}
