// libFuzzer: gputrace's parsers of admin and user input: plugstack arguments (words split on
// blanks, as Slurm splits them, stall_* and idle_* keys included), --gpu-telemetry values, Slurm GPU id
// lists, the stall share's node-state lines (stall.hpp), and /proc's stat and io files as the
// stall watch reads the job's processes (job_activity.hpp: a command name is the user's to choose),
// and a sysfs counter as it reads the node's network ports (nic_traffic.hpp) and the devices it
// leaves out (stall_cadence_nic_ignore). The start time in a
// /proc/PID/stat as the sampler's pid file is checked (sampler_wait_c.h).
// The shim's C reading of the same arguments (spank/shim_text.c, compiled in here as C++)
// must give the values the C++ parser gives. acme-gpu-sampler-start's command line (words split
// at NUL, sampler_start.hpp): one that parses gives a sampler command line that names its job.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/gputrace/core/idle.hpp"
#include "spank/gputrace/core/job_activity.hpp"
#include "spank/gputrace/core/nic_traffic.hpp"
#include "spank/gputrace/core/sampler_start.hpp"
#include "spank/gputrace/core/sampler_wait_c.h"
#include "spank/gputrace/core/stall.hpp"
#include "common/util/parse.hpp"
#include "spank/shim_text.c"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string_view> words;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
            if (i > start) words.emplace_back(text.data() + start, i - start);
            start = i + 1;
        }
    }
    const auto result = acme::telemetry::parse_plugstack_args(words, "/libexec/acme-gpu-sampler");
    // Whatever the input, the configuration stays usable.
    if (result.config.min_interval > result.config.max_interval) __builtin_trap();
    if (result.config.interval < result.config.min_interval || result.config.interval > result.config.max_interval)
        __builtin_trap();
    // The idle limits stay in range, and the words handed to the sampler parse back to the same policy.
    const auto& idle = result.config.idle;
    if (idle.alert < 0 || idle.alert > 7 * 86400.0 || idle.cancel < 0 || idle.cancel > 7 * 86400.0) __builtin_trap();
    acme::telemetry::IdleConfig back;
    std::vector<std::string> back_errors;
    for (const auto& w : acme::telemetry::idle_words(idle)) {
        const auto kv = acme::util::split_key_value(w);
        if (!kv || !acme::telemetry::set_idle_key(kv->first, kv->second, back, back_errors)) __builtin_trap();
    }
    if (!back_errors.empty() || back.exempt_qos != idle.exempt_qos || back.exempt_partitions != idle.exempt_partitions)
        __builtin_trap();
    // The shims read stall=, heartbeat_dir= and default= themselves (C strings: no NUL inside).
    if (text.find('\0') == std::string::npos) {
        std::vector<std::string> owned(words.begin(), words.end());
        std::vector<char*> argv;
        for (auto& w : owned) argv.push_back(w.data());
        const int ac = static_cast<int>(argv.size());
        if (acme_arg_bool(ac, argv.data(), "stall", 1) != (result.config.stall.enabled ? 1 : 0)) __builtin_trap();
        if (result.config.stall.heartbeat_dir != acme_arg_path(ac, argv.data(), "heartbeat_dir", ACME_HEARTBEAT_DIR))
            __builtin_trap();
        if (acme_arg_on_off(ac, argv.data(), "default", 0) != (result.config.default_on ? 1 : 0)) __builtin_trap();
        // And, for the job prolog's start of the sampler, spool=, sampler= and start_wait=.
        if (result.config.spool != acme_arg_path(ac, argv.data(), "spool", ACME_SPOOL_DIR)) __builtin_trap();
        if (result.config.sampler != acme_arg_path(ac, argv.data(), "sampler", "/libexec/acme-gpu-sampler")) __builtin_trap();
        if (acme_arg_seconds(ac, argv.data(), "start_wait", 0, 600, 1.0) != result.config.start_wait) __builtin_trap();
    }
    {
        std::vector<std::string_view> start_words;
        std::size_t from = 0;
        for (std::size_t i = 0; i <= text.size(); ++i)
            if (i == text.size() || text[i] == '\0') {
                start_words.emplace_back(text.data() + from, i - from);
                from = i + 1;
            }
        std::string start_error;
        if (const auto args = acme::telemetry::parse_sampler_start_args(start_words, start_error)) {
            std::vector<std::string_view> plugstack(args->plugstack.begin(), args->plugstack.end());
            const auto config = acme::telemetry::parse_plugstack_args(plugstack, "/libexec/acme-gpu-sampler").config;
            std::vector<std::string> notes;
            const auto launch = acme::telemetry::sampler_launch(*args, config, notes);
            if (launch && (launch->argv.size() < 3 || launch->argv[1] != "--job" || launch->argv[2] != std::to_string(args->job)))
                __builtin_trap();
            if (args->node.empty() || args->node.find('/') != std::string::npos) __builtin_trap();
        } else if (start_error.empty() || start_error.find('\n') != std::string::npos) {
            __builtin_trap();
        }
    }
    // A stat's start time: the digits after the 20th blank-separated field past the last ')'.
    unsigned long long start_ticks = 0;
    if (acme_stat_start_time(text.c_str(), &start_ticks) == 0 && text.find(std::to_string(start_ticks)) == std::string::npos)
        __builtin_trap();
    std::string error;
    const auto request = acme::telemetry::parse_telemetry_value(text, result.config, "--gpu-telemetry", error);
    if (!request && (error.empty() || error.find('\n') != std::string::npos)) __builtin_trap();
    if (request && request->interval &&
        (*request->interval < result.config.min_interval || *request->interval > result.config.max_interval))
        __builtin_trap();
    (void)acme::util::parse_id_list(text, 4096);
    // A state line that parses formats back to a line that parses to the same node.
    if (const auto state = acme::telemetry::parse_state(text)) {
        const auto again = acme::telemetry::parse_state(acme::telemetry::format_state(*state));
        if (!again || again->node != state->node || again->pattern != state->pattern || again->steps != state->steps ||
            again->activity_seen != state->activity_seen || again->nic_seen != state->nic_seen)
            __builtin_trap();
    }
    if (const auto stat = acme::telemetry::parse_proc_stat(text); stat && stat->comm.size() > text.size()) __builtin_trap();
    (void)acme::telemetry::parse_proc_io(text);
    // A sysfs counter (nic_traffic.hpp): digits (and one newline) only, and the value they spell.
    if (const auto v = acme::telemetry::parse_counter(text)) {
        std::string_view digits = text;
        if (!digits.empty() && digits.back() == '\n') digits.remove_suffix(1);
        if (digits.find_first_not_of("0123456789") != std::string_view::npos ||
            std::to_string(*v) != digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1)))
            __builtin_trap();
    }
    // stall_cadence_nic_ignore: a list that parses formats back to itself, and every entry is a
    // name fnmatch takes (no '/', no blank: one plugstack word).
    if (const auto list = acme::telemetry::parse_nic_ignore(text)) {
        if (acme::telemetry::format_nic_ignore(*list) != text || list->size() > 16) __builtin_trap();
        for (const auto& e : *list)
            if (e.empty() || e.size() > 64 || e.find_first_of("/ \t\n,") != std::string::npos) __builtin_trap();
        (void)acme::telemetry::nic_ignored(*list, "eno1");
    }
    return 0;
}
