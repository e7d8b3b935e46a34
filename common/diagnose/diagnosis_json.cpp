#include "common/diagnose/diagnosis_json.hpp"

#include <cmath>

namespace acme::diagnose {

nlohmann::json evidence_to_json(const std::vector<Evidence>& evidence) {
    auto array = nlohmann::json::array();
    for (const auto& e : evidence) {
        nlohmann::json item;
        item["line"] = e.line == 0 ? nlohmann::json(nullptr) : nlohmann::json(e.line);
        item["source"] = e.source;
        item["text"] = e.text;
        array.push_back(std::move(item));
    }
    return array;
}

std::string evidence_json(const Diagnosis& diagnosis) {
    return evidence_to_json(diagnosis.evidence).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Evidence> evidence_from_json(std::string_view text) noexcept {
    std::vector<Evidence> out;
    try {
        auto array = nlohmann::json::parse(text, nullptr, false);
        if (!array.is_array()) return out;
        for (const auto& item : array) {
            if (!item.is_object()) continue;
            Evidence e;
            if (auto it = item.find("line"); it != item.end() && it->is_number_unsigned()) e.line = it->get<std::size_t>();
            if (auto it = item.find("source"); it != item.end() && it->is_string()) e.source = it->get<std::string>();
            else e.source = e.line ? "log" : "";
            if (auto it = item.find("text"); it != item.end() && it->is_string()) e.text = it->get<std::string>();
            else continue;
            out.push_back(std::move(e));
        }
    } catch (...) {
        out.clear();
    }
    return out;
}

nlohmann::json to_json(const Diagnosis& diagnosis) {
    nlohmann::json object;
    object["category"] = std::string(to_string(diagnosis.category));
    object["reason"] = diagnosis.reason;
    object["confidence"] = std::round(diagnosis.confidence * 100.0) / 100.0;
    object["action"] = std::string(to_string(diagnosis.action));
    object["rule"] = diagnosis.rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(diagnosis.rule);
    object["evidence"] = evidence_to_json(diagnosis.evidence);
    return object;
}

}  // namespace acme::diagnose
