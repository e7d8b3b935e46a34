#include "evalsched/daemon/sched/job_outputs.hpp"

#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "evalsched/daemon/user_files.hpp"

namespace acme::evalsched {

using nlohmann::json;

namespace {
std::string_view base_name(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string_view(path) : std::string_view(path).substr(slash + 1);
}

const char* type_name(const json& v) {
    return v.is_null() ? "null" : v.is_boolean() ? "a boolean" : v.is_number() ? "a number" : v.is_string() ? "a string" : v.is_array() ? "an array" : "an object";
}

// The fields of one record, each checked for its type; the first wrong one is the problem.
class Fields {
public:
    Fields(const json& object, std::string_view file) : object_(object), file_(file) {}

    std::optional<double> number(const char* key, bool required = false) {
        const json* v = find(key, required);
        if (!v) return std::nullopt;
        if (!v->is_number() || !std::isfinite(v->get<double>())) return wrong(key, *v, "a number");
        return v->get<double>();
    }
    std::optional<std::int64_t> integer(const char* key, bool required = false) {
        const json* v = find(key, required);
        if (!v) return std::nullopt;
        if (!v->is_number_integer()) return wrong(key, *v, "an integer");
        return v->get<std::int64_t>();
    }
    std::optional<bool> flag(const char* key) {
        const json* v = find(key, false);
        if (!v) return std::nullopt;
        // The stage wrapper writes 0/1; a boolean says the same.
        if (v->is_boolean()) return v->get<bool>();
        if (v->is_number_integer()) return v->get<std::int64_t>() != 0;
        return wrong(key, *v, "0, 1 or a boolean");
    }
    const std::string& problem() const { return problem_; }

private:
    const json* find(const char* key, bool required) {
        if (!problem_.empty()) return nullptr;
        auto it = object_.find(key);
        if (it == object_.end()) {
            if (required) problem_ = fmt::format("{}: field '{}' is missing", file_, key);
            return nullptr;
        }
        return &*it;
    }
    std::nullopt_t wrong(const char* key, const json& v, const char* wanted) {
        problem_ = fmt::format("{}: field '{}' is {}, not {}", file_, key, type_name(v), wanted);
        return std::nullopt;
    }
    const json& object_;
    std::string_view file_;
    std::string problem_;
};

template <class T>
UserRecord<T> bad(std::string problem) {
    return UserRecord<T>{std::nullopt, std::move(problem)};
}
}  // namespace

UserRecord<json> read_user_object(const std::string& path, const EvalInfo& e) {
    return parse_user_object(read_whole_as_user(path, e.uid, e.gid, kMaxRecordBytes), base_name(path), e.uid);
}

UserRecord<json> parse_user_object(const UserText& t, std::string_view file, uid_t uid) {
    switch (t.status) {
        case UserText::ok: break;
        case UserText::missing: return {};
        case UserText::not_regular: return bad<json>(fmt::format("{}: not a regular file (a symlink, a FIFO or a directory)", file));
        case UserText::too_large: return bad<json>(fmt::format("{}: larger than {} bytes", file, kMaxRecordBytes));
        case UserText::no_answer: return bad<json>(fmt::format("{}: no answer reading it in time (a hung file system?)", file));
        case UserText::unreadable: return bad<json>(fmt::format("{}: cannot be read as uid {}", file, uid));
    }
    json j = json::parse(t.text, nullptr, false);
    if (j.is_discarded()) return bad<json>(fmt::format("{}: not JSON{}", file, t.text.empty() ? " (empty)" : " (truncated?)"));
    if (!j.is_object()) return bad<json>(fmt::format("{}: {}, not a JSON object", file, type_name(j)));
    return UserRecord<json>{std::move(j), {}};
}

UserRecord<StageRecord> read_stage_record(const std::string& dir, const EvalInfo& e) { return stage_record_of(read_user_object(dir + "/stage.json", e)); }

UserRecord<StageRecord> stage_record_of(UserRecord<json> j) {
    if (!j.value) return bad<StageRecord>(std::move(j.problem));
    Fields f(*j.value, "stage.json");
    StageRecord r;
    r.copied = f.flag("copied").value_or(false);
    r.bytes = f.number("bytes").value_or(0);
    r.seconds = f.number("seconds").value_or(0);
    if (!f.problem().empty()) return bad<StageRecord>(f.problem());
    return UserRecord<StageRecord>{r, {}};
}

RunRecord read_run(const std::string& dir, const EvalInfo& e, std::string* problem) { return run_record_of(read_user_object(dir + "/run.json", e), problem); }

RunRecord run_record_of(UserRecord<json> j, std::string* problem) {
    RunRecord r;
    if (!j.value) {
        if (problem) *problem = std::move(j.problem);
        return r;
    }
    Fields f(*j.value, "run.json");
    const auto code = f.integer("exit_code", true);
    const auto start = f.number("start"), end = f.number("end");
    if (!f.problem().empty() || (code && (*code < 0 || *code > 255))) {
        if (problem) *problem = f.problem().empty() ? fmt::format("run.json: exit_code {} is not an exit status (0-255)", *code) : f.problem();
        return r;
    }
    r.exit_code = static_cast<int>(*code);
    if (end && *end > 0) {
        r.end = *end;
        if (start && *start > 0 && *end >= *start) r.seconds = *end - *start;
    }
    return r;
}

UserRecord<std::int64_t> read_step_record(const std::string& dir, const EvalInfo& e) { return step_record_of(read_user_object(dir + "/step.json", e)); }

UserRecord<std::int64_t> step_record_of(UserRecord<json> j) {
    if (!j.value) return bad<std::int64_t>(std::move(j.problem));
    // The wrapper writes "step": null outside a step (SLURM_STEP_ID unset): no id, no fault.
    if (auto it = j.value->find("step"); it != j.value->end() && it->is_null()) return {};
    Fields f(*j.value, "step.json");
    const auto step = f.integer("step", true);
    if (!f.problem().empty()) return bad<std::int64_t>(f.problem());
    if (*step < 0) return bad<std::int64_t>(fmt::format("step.json: step {} is not a step id", *step));
    return UserRecord<std::int64_t>{*step, {}};
}

UserRecord<ServerRecord> read_server_record(const std::string& dir, const EvalInfo& e) { return server_record_of(read_user_object(dir + "/server.json", e)); }

UserRecord<ServerRecord> server_record_of(UserRecord<json> j) {
    if (!j.value) return bad<ServerRecord>(std::move(j.problem));
    Fields f(*j.value, "server.json");
    ServerRecord r;
    r.ready = f.flag("ready").value_or(false);
    if (const auto port = f.integer("port")) {
        if (*port < 1 || *port > 65535) return bad<ServerRecord>(fmt::format("server.json: port {} is not a TCP port", *port));
        r.port = static_cast<int>(*port);
    }
    if (!f.problem().empty()) return bad<ServerRecord>(f.problem());
    return UserRecord<ServerRecord>{r, {}};
}

UserRecord<json> read_result_record(const std::string& path, const EvalInfo& e) { return result_record_of(read_user_object(path, e), base_name(path)); }

UserRecord<json> result_record_of(UserRecord<json> j, std::string_view file) {
    if (!j.value) return j;
    Fields f(*j.value, file);
    if (const auto s = f.number("inference_s"); s && *s < 0) return bad<json>(fmt::format("{}: inference_s is negative", file));
    if (!f.problem().empty()) return bad<json>(f.problem());
    return j;
}

}  // namespace acme::evalsched
