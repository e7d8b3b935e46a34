// faultguard's plugstack.conf arguments. Pure, unit-tested and fuzzed; errors are one line that
// names the key, and a bad key leaves the plugin harmless with its defaults.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace acme::faultguard {

struct Config {
    std::string spool = "/var/spool/acme";
    std::string rules;          // rules.d directory of the diagnosis engine
    std::string labels;         // labels store (faultdiag --label) for history matching; empty: none
    std::string helper;         // path of acme-faultguard-epilog
    double timeout = 20.0;      // seconds the epilog waits for the helper
    long long log_bytes = 256 * 1024;  // how much of the end of stdout/stderr is read
    bool admin_comment = false; // also put the job's GPU summary into its AdminComment
};

struct ConfigResult {
    Config config;
    std::vector<std::string> errors;
};

ConfigResult parse_plugstack_args(const std::vector<std::string_view>& args, std::string_view default_rules,
                                  std::string_view default_helper, std::string_view default_labels = {});

}  // namespace acme::faultguard
