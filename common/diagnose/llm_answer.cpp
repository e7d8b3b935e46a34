#include "common/diagnose/llm_answer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace acme::diagnose {
namespace {

using nlohmann::json;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

// A model's words in an error message: printable ASCII, and short.
std::string shown(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    if (s.size() > 80) out += "...";
    return out;
}

std::string system_prompt() {
    std::string reasons;
    for (const auto& r : diagnose::reasons())
        reasons += fmt::format("- {} ({}): {}\n", r.name, to_string(r.category), r.summary);
    return fmt::format(
        "You diagnose why a batch job on a GPU cluster failed, from the end of its log. Some values were "
        "replaced by [REDACTED:...] markers. Choose the one reason below that caused the failure (the first "
        "error, not its consequences), its category as listed, your confidence from 0 to 1, and the one log "
        "line that shows it, copied exactly as it appears in the log. Infrastructure means the hardware, the "
        "network, storage or a service failed, not the program; when the log shows a bug in the program or its "
        "configuration, that is framework or script. When the log does not show the cause, answer unknown.\n"
        "Reasons:\n{}",
        reasons);
}

}  // namespace

json answer_schema() {
    json categories = json::array(), names = json::array();
    for (auto c : {Category::infrastructure, Category::framework, Category::script, Category::unknown})
        categories.push_back(std::string(to_string(c)));
    for (const auto& r : reasons()) names.push_back(std::string(r.name));
    return {{"type", "object"},
            {"properties",
             {{"category", {{"type", "string"}, {"enum", categories}}},
              {"reason", {{"type", "string"}, {"enum", names}}},
              {"confidence", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}}},
              {"evidence", {{"type", "string"}, {"maxLength", 400}}}}},
            {"required", {"category", "reason", "confidence", "evidence"}},
            {"additionalProperties", false}};
}

std::string chat_request(std::string_view model, std::string_view tail, int max_tokens) {
    json body = {
        {"model", std::string(model)},
        {"temperature", 0},
        {"max_tokens", max_tokens},
        {"stream", false},
        {"messages",
         json::array({{{"role", "system"}, {"content", system_prompt()}},
                      {{"role", "user"}, {"content", fmt::format("The end of the job's log:\n\n{}", tail)}}})},
        {"response_format",
         {{"type", "json_schema"},
          {"json_schema", {{"name", "failure_diagnosis"}, {"strict", true}, {"schema", answer_schema()}}}}},
    };
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ModelAnswer> parse_chat_answer(std::string_view body, std::string_view tail, std::string& error) noexcept {
    try {
        const json reply = json::parse(body, nullptr, false);
        if (reply.is_discarded() || !reply.is_object()) {
            error = "the server's answer is not JSON";
            return std::nullopt;
        }
        const auto choices = reply.find("choices");
        if (choices == reply.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object()) {
            error = "the server's answer has no choices";
            return std::nullopt;
        }
        const auto& choice = (*choices)[0];
        const auto message = choice.find("message");
        if (message == choice.end() || !message->is_object()) {
            error = "the server's answer has no message";
            return std::nullopt;
        }
        const auto content = message->find("content");
        if (content == message->end() || !content->is_string()) {
            error = "the model's message has no text content";
            return std::nullopt;
        }
        std::string_view text = trim(content->get_ref<const std::string&>());
        // A server that ignores response_format may still fence the JSON in markdown.
        if (text.starts_with("```")) {
            text.remove_prefix(3);
            if (text.starts_with("json")) text.remove_prefix(4);
            if (text.ends_with("```")) text.remove_suffix(3);
            text = trim(text);
        }
        const json a = json::parse(text, nullptr, false);
        if (a.is_discarded() || !a.is_object()) {
            error = fmt::format("the model's answer is not a JSON object: \"{}\"", shown(text));
            return std::nullopt;
        }
        auto string_of = [&](const char* key) -> std::optional<std::string> {
            const auto it = a.find(key);
            if (it == a.end() || !it->is_string()) return std::nullopt;
            return it->get<std::string>();
        };
        const auto category = string_of("category");
        const auto reason = string_of("reason");
        const auto evidence = string_of("evidence");
        if (!category || !reason || !evidence) {
            error = "the model's answer lacks a category, reason or evidence string";
            return std::nullopt;
        }
        const ReasonInfo* info = find_reason(*reason);
        if (!info) {
            error = fmt::format("the model named reason \"{}\", which is not in the taxonomy", shown(*reason));
            return std::nullopt;
        }
        if (to_string(info->category) != *category) {
            error = fmt::format("the model's category \"{}\" is not reason {}'s ({})", shown(*category), info->name,
                                to_string(info->category));
            return std::nullopt;
        }
        if (info->category == Category::unknown) {
            error = "the model did not know either (unknown)";
            return std::nullopt;
        }
        ModelAnswer out;
        out.reason = info;
        out.confidence = 0.5;
        if (const auto c = a.find("confidence"); c != a.end() && c->is_number()) {
            const double v = c->get<double>();
            if (std::isfinite(v)) out.confidence = std::clamp(v, 0.0, 1.0);
        }
        const std::string_view quote = trim(*evidence);
        if (quote.size() < kMinEvidenceChars || quote.find('\n') != std::string_view::npos) {
            error = fmt::format("the model's evidence \"{}\" is not one log line", shown(quote));
            return std::nullopt;
        }
        // The last line of the tail that holds the quote: where the model looked, and what a
        // person checks. A quote the tail does not hold is made up.
        std::size_t line = 0, number = 1, start = 0;
        while (start <= tail.size()) {
            std::size_t end = tail.find('\n', start);
            if (end == std::string_view::npos) end = tail.size();
            if (tail.substr(start, end - start).find(quote) != std::string_view::npos) line = number;
            if (end == tail.size()) break;
            start = end + 1;
            ++number;
        }
        if (line == 0) {
            error = fmt::format("the model's evidence \"{}\" is not in the log", shown(quote));
            return std::nullopt;
        }
        out.line = line;
        out.evidence = std::string(quote);
        return out;
    } catch (...) {
        error = "the model's answer could not be read";
        return std::nullopt;
    }
}

}  // namespace acme::diagnose
