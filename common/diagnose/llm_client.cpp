#include "common/diagnose/llm_client.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/diagnose/llm_answer.hpp"
#include "common/util/http_get.hpp"
#include "common/util/https_post.hpp"

namespace acme::diagnose {

std::string check_llm_config(const LlmConfig& c) {
    if (!c.enabled()) return {};
    std::string error;
    // https:// (the token then travels encrypted) has the same grammar as http://.
    const bool tls = c.endpoint.rfind("https://", 0) == 0;
    if (!util::parse_http_url(tls ? "http://" + c.endpoint.substr(8) : c.endpoint, error))
        return fmt::format("llm_endpoint={}: {}", c.endpoint, error);
    if (c.model.empty() || c.model.size() > 200) return "llm_model=: name the server's model (llm_endpoint= is set)";
    for (char ch : c.model)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return "llm_model=: a control character in the name";
    if (!c.token_file.empty() && c.token_file.front() != '/') return "llm_token_file=: want an absolute path";
    if (!(c.timeout > 0 && c.timeout <= 120)) return "llm_timeout=: want seconds in (0, 120]";
    return {};
}

std::optional<std::string> read_token_file(const std::string& path, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        error = fmt::format("llm_token_file {}: {}", path, std::strerror(errno));
        return std::nullopt;
    }
    struct stat st {};
    std::optional<std::string> out;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        error = fmt::format("llm_token_file {}: not a regular file", path);
    } else if (st.st_uid != 0 && st.st_uid != geteuid()) {
        error = fmt::format("llm_token_file {}: not owned by root: chown root and chmod 600 it", path);
    } else if (st.st_mode & 077) {
        error = fmt::format("llm_token_file {}: readable by group or others: chmod 600 it", path);
    } else if (st.st_size > 4096) {
        error = fmt::format("llm_token_file {}: larger than 4 KiB: it should hold one token", path);
    } else {
        std::string text(static_cast<std::size_t>(st.st_size), '\0');
        const ssize_t n = st.st_size > 0 ? ::read(fd, text.data(), text.size()) : 0;
        if (n < 0) {
            error = fmt::format("llm_token_file {}: {}", path, std::strerror(errno));
        } else {
            text.resize(static_cast<std::size_t>(n));
            text = text.substr(0, text.find('\n'));
            while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) text.pop_back();
            while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.erase(0, 1);
            if (text.empty()) error = fmt::format("llm_token_file {}: empty", path);
            else out = std::move(text);
        }
    }
    ::close(fd);
    return out;
}

bool wants_model(const Diagnosis& d, double below) noexcept {
    return d.reason == "unknown" || d.category == Category::unknown || d.confidence < below;
}

bool from_fallback(const Diagnosis& d) noexcept {
    if (d.rule == "fallback") return true;
    for (const auto& e : d.evidence)
        if (e.source == "fallback") return true;
    return false;
}

bool from_model(const Diagnosis& d) noexcept {
    if (d.rule.starts_with("llm:") || from_fallback(d)) return true;
    for (const auto& e : d.evidence)
        if (e.source == "llm_model") return true;
    return false;
}

std::string model_name(const Diagnosis& d) {
    if (from_fallback(d)) return std::string(kFallbackModelFile) + " (the learned fallback)";
    for (const auto& e : d.evidence)
        if (e.source == "llm_model") return e.text;
    if (d.rule.starts_with("llm:")) return d.rule.substr(4);
    return {};
}

std::string_view log_tail_part(std::string_view log, std::size_t bytes, std::size_t& first_line) noexcept {
    first_line = 1;
    if (log.size() <= bytes) return log;
    std::size_t start = log.size() - bytes;
    // From the first whole line.
    const std::size_t nl = log.find('\n', start == 0 ? 0 : start - 1);
    start = nl == std::string_view::npos ? log.size() : nl + 1;
    for (std::size_t i = 0; i < start; ++i)
        if (log[i] == '\n') ++first_line;
    return log.substr(start);
}

LlmOutcome ask_model(const LlmConfig& c, std::string_view log, const Diagnosis& rules_answer,
                     const RedactOptions& redaction) noexcept {
    LlmOutcome out;
    try {
        if (!c.enabled()) return out;
        if (!wants_model(rules_answer, c.below)) {
            out.note = "model not asked: the rules decided";
            return out;
        }
        if (const auto problem = check_llm_config(c); !problem.empty()) {
            out.note = "model not asked: " + problem;
            return out;
        }
        std::size_t first_line = 1;
        const std::string_view part = log_tail_part(log, c.tail_bytes, first_line);
        if (part.find_first_not_of(" \t\r\n") == std::string_view::npos) {
            out.note = "model not asked: no log to show it";
            return out;
        }
        std::vector<std::pair<std::string, std::string>> headers;
        if (!c.token_file.empty()) {
            std::string error;
            const auto token = read_token_file(c.token_file, error);
            if (!token) {
                out.note = "model not asked: " + error;
                return out;
            }
            headers.emplace_back("Authorization", "Bearer " + *token);
        }
        const std::string tail = redact(part, redaction);
        std::string error;
        util::HttpResponse r;
        if (c.endpoint.rfind("https://", 0) == 0) {
            std::string base = c.endpoint;
            while (!base.empty() && base.back() == '/') base.pop_back();
            r = util::https_post(base + "/v1/chat/completions", chat_request(c.model, tail), "application/json", headers, {c.timeout, c.max_answer});
        } else {
            auto url = util::parse_http_url(c.endpoint, error);
            util::HttpClient client(*url, {c.timeout, c.max_answer});
            r = client.post("/v1/chat/completions", chat_request(c.model, tail), "application/json", headers);
        }
        if (!r.error.empty()) {
            out.note = fmt::format("model {} at {}: {}", c.model, c.endpoint, r.error);
            return out;
        }
        if (r.status != 200) {
            out.note = fmt::format("model {} at {}: HTTP status {}", c.model, c.endpoint, r.status);
            return out;
        }
        const auto answer = parse_chat_answer(r.body, tail, error);
        if (!answer) {
            out.note = fmt::format("model {}: answer rejected: {}", c.model, error);
            return out;
        }
        // The evidence is the job's own line (as the rules' evidence is), where the model found it.
        const std::size_t line = first_line + answer->line - 1;
        std::string text;
        {
            std::size_t start = 0, n = 1;
            while (n < line && start < log.size()) {
                const std::size_t nl = log.find('\n', start);
                if (nl == std::string_view::npos) break;
                start = nl + 1;
                ++n;
            }
            const std::size_t end = std::min(log.find('\n', start), log.size());
            text = std::string(log.substr(start, end - start));
            while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
            if (text.size() > kEvidenceChars) text.resize(kEvidenceChars);
        }
        Diagnosis d;
        d.category = answer->reason->category;
        d.reason = std::string(answer->reason->name);
        d.confidence = answer->confidence;
        d.action = answer->reason->action;
        d.rule = "llm:" + c.model;
        d.evidence.push_back({line, "llm", text});
        d.evidence.push_back({0, "llm_model", c.model});
        d.evidence.push_back({0, "rules",
                              fmt::format("the rules said {}/{} ({:.2f}){}", to_string(rules_answer.category),
                                          rules_answer.reason, rules_answer.confidence,
                                          rules_answer.rule.empty() ? "" : " by " + rules_answer.rule)});
        out.note = fmt::format("model {}: {}/{} ({:.2f}), line {}", c.model, to_string(d.category), d.reason,
                               d.confidence, line);
        out.diagnosis = std::move(d);
    } catch (const std::exception& e) {
        out.diagnosis.reset();
        out.note = fmt::format("model not used: {}", e.what());
    } catch (...) {
        out.diagnosis.reset();
        out.note = "model not used: an unexpected failure";
    }
    return out;
}

}  // namespace acme::diagnose
