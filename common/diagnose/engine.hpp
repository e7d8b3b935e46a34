// The diagnosis engine: from how a job ended (exit statuses, Slurm's verdict, GPU events, the
// log tail) to one cause. Every rule, status or log, turns into findings with a priority; the
// highest priority wins and, among equals, the earliest line (the first error, not the
// loudest). An XID on one of the job's GPUs is a finding like any other, only ranked above
// everything the log can say. When nothing decides, labelled history may.
//
// A SPANK epilog calls it like this (the rules are loaded once, at plugin init):
//
//   auto engine = acme::diagnose::load_engine_noexcept("/etc/slurm/acme/rules.d", error);
//   acme::diagnose::JobEnd job;
//   job.log = tail;                                   // last 256 KiB of stdout+stderr
//   job.job_exit = acme::diagnose::parse_exit_code2(getenv("SLURM_JOB_EXIT_CODE2"));
//   job.task_wait_statuses = {...};                   // from task_exit, via the spool
//   job.gpu_events = {...}; job.job_gpus = {0, 1};    // from the spool, SLURM_JOB_GPUS
//   auto d = acme::diagnose::diagnose_noexcept(*engine, job);
//   store d.reason, d.confidence, acme::diagnose::evidence_json(d), d.action ...
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnose/fallback.hpp"
#include "common/diagnose/history.hpp"
#include "common/diagnose/job_end.hpp"
#include "common/diagnose/rules.hpp"
#include "common/diagnose/taxonomy.hpp"

namespace acme::diagnose {

struct Evidence {
    std::size_t line = 0;  // 1-based line in JobEnd::log; 0 when not from the log
    std::string source;    // "log", "gpu_event", "exit_status", "slurm", "history"
    std::string text;      // the line (trimmed, at most kEvidenceChars) or what was seen
    bool operator==(const Evidence&) const = default;
};

inline constexpr std::size_t kEvidenceChars = 400;

struct Diagnosis {
    Category category = Category::unknown;
    std::string reason = "unknown";
    double confidence = 0;  // 0..1
    std::vector<Evidence> evidence;  // the deciding line first
    Action action = Action::none;
    std::string rule;  // id of the deciding rule, "history:<job>", "fallback" or empty
};

class LogScanner;

class Engine {
public:
    // Compiles the rules; throws RuleError when they cannot be compiled. With a fallback model,
    // a failed job no rule and no history decides gets the model's answer when its probability
    // clears `threshold`, always with action none (see fallback.hpp).
    explicit Engine(RuleSet rules, std::shared_ptr<const FallbackModel> fallback = nullptr,
                    double threshold = FallbackModel::kDefaultThreshold);
    // The *.toml rules of dir, and dir/fallback.model when there is one.
    static Engine from_dir(const std::filesystem::path& dir);

    Diagnosis diagnose(const JobEnd& job, const History* history = nullptr) const;

    // The same compiled rules with another fallback model (none: nullptr).
    Engine with_fallback(std::shared_ptr<const FallbackModel> fallback,
                         double threshold = FallbackModel::kDefaultThreshold) const;

    const RuleSet& rules() const noexcept { return *rules_; }
    const FallbackModel* fallback() const noexcept { return fallback_.get(); }
    double fallback_threshold() const noexcept { return threshold_; }

private:
    std::shared_ptr<const RuleSet> rules_;
    std::shared_ptr<const LogScanner> scanner_;
    std::shared_ptr<const FallbackModel> fallback_;
    double threshold_ = FallbackModel::kDefaultThreshold;
};

// The model file a rules directory may hold beside its *.toml files.
inline constexpr std::string_view kFallbackModelFile = "fallback.model";

// For glue that must never throw (SPANK callbacks). On any failure inside the engine the
// answer is "unknown" with the failure named in the evidence.
Diagnosis diagnose_noexcept(const Engine& engine, const JobEnd& job, const History* history = nullptr) noexcept;

// The signature history compares: that of the log's last error lines, the same lines an
// unknown diagnosis shows as evidence. Needs no rules.
Signature log_signature(std::string_view log);
// The same, from stored evidence (diagnoses.evidence): its log lines only.
Signature evidence_signature(const std::vector<Evidence>& evidence);

// Loads a rules directory; on failure returns nullopt and sets error to the one-line reason.
std::optional<Engine> load_engine_noexcept(const std::filesystem::path& dir, std::string& error) noexcept;

}  // namespace acme::diagnose
