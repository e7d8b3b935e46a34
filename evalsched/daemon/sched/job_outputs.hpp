// What a job evalschedd submitted left behind in its attempt directory, read as the job's user
// and checked field by field: stage.json (the staging copy), run.json (the command's exit and
// times), step.json (a pilot step's id), server.json (a pilot's model server), result.json (a
// dataset's scores). The user can write anything there, so no shape of these files may throw
// or stop a scheduling round: each reader answers the record, nothing (the job never wrote
// it), or one line "<file>: <what is wrong>" that the attempt fails with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "evalsched/daemon/user_files.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

template <class T>
struct UserRecord {
    std::optional<T> value;  // there and well-formed
    std::string problem;     // there and not well-formed: "<file>: <what is wrong>"
    bool bad() const { return !problem.empty(); }
};

// The largest record read (a result.json of many subsets stays well under it).
inline constexpr std::size_t kMaxRecordBytes = 1 << 20;

// A JSON object the job's user wrote at `path`, whatever it holds.
UserRecord<nlohmann::json> read_user_object(const std::string& path, const EvalInfo& e);

struct StageRecord {
    bool copied = false;
    double bytes = 0, seconds = 0;
};
UserRecord<StageRecord> read_stage_record(const std::string& dir, const EvalInfo& e);

// The run's exit status and seconds from the wrapper's run.json (a purged job leaves only it).
struct RunRecord {
    std::optional<int> exit_code;
    std::optional<double> seconds;
    std::optional<double> end;  // Unix seconds, when the command ended
};
// Missing or malformed both give an empty record; `problem` says which.
RunRecord read_run(const std::string& dir, const EvalInfo& e, std::string* problem = nullptr);

UserRecord<std::int64_t> read_step_record(const std::string& dir, const EvalInfo& e);

struct ServerRecord {
    bool ready = false;
    std::optional<int> port;
};
UserRecord<ServerRecord> read_server_record(const std::string& dir, const EvalInfo& e);

// A dataset's result.json: an object whose inference_s, when present, is a non-negative number.
UserRecord<nlohmann::json> read_result_record(const std::string& path, const EvalInfo& e);

// The pure halves of the readers above (read_whole_as_user does the reading): what a text read
// (or not) from `file` says, and each record's fields checked. The fuzz target drives these.
UserRecord<nlohmann::json> parse_user_object(const UserText& text, std::string_view file, uid_t uid);
UserRecord<StageRecord> stage_record_of(UserRecord<nlohmann::json> object);
RunRecord run_record_of(UserRecord<nlohmann::json> object, std::string* problem);
UserRecord<std::int64_t> step_record_of(UserRecord<nlohmann::json> object);
UserRecord<ServerRecord> server_record_of(UserRecord<nlohmann::json> object);
UserRecord<nlohmann::json> result_record_of(UserRecord<nlohmann::json> object, std::string_view file);

}  // namespace acme::evalsched
