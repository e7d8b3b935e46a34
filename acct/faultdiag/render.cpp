#include "acct/faultdiag/render.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "common/diagnose/diagnosis_json.hpp"
#include "common/diagnose/llm_client.hpp"

namespace acme::faultdiag {

void render_plain(std::ostream& out, const std::string& title, const std::string& origin,
                  const diagnose::Diagnosis& d) {
    fmt::print(out, "{}\n", title);
    fmt::print(out, "  cause:      {} ({})\n", d.reason, diagnose::to_string(d.category));
    fmt::print(out, "  confidence: {:.2f}\n", d.confidence);
    fmt::print(out, "  action:     {}\n", diagnose::to_string(d.action));
    if (!origin.empty()) fmt::print(out, "  source:     {}\n", origin);
    if (diagnose::from_fallback(d) && d.rule != "fallback")
        fmt::print(out, "  answer of:  rule {}, chosen by the learned fallback between tied rules (recovery does not act on it)\n",
                   d.rule);
    else if (diagnose::from_fallback(d))
        fmt::print(out, "  answer of:  the learned fallback (not a rule; recovery does not act on it)\n");
    else if (diagnose::from_model(d))
        fmt::print(out, "  answer of:  model {} (LLM, not a rule; recovery does not act on it)\n", diagnose::model_name(d));
    if (!d.evidence.empty()) fmt::print(out, "  evidence:\n");
    for (const auto& e : d.evidence) {
        if (e.line) fmt::print(out, "    line {}: {}\n", e.line, e.text);
        else fmt::print(out, "    {}: {}\n", e.source, e.text);
    }
}

nlohmann::json render_json(const std::string& title, const std::string& origin, const diagnose::Diagnosis& d) {
    nlohmann::json object;
    object["input"] = title;
    if (!origin.empty()) object["source"] = origin;
    object.update(diagnose::to_json(d));
    object["diagnosed_by"] = diagnose::from_fallback(d) ? "fallback" : diagnose::from_model(d) ? "llm" : "rules";
    if (diagnose::from_model(d)) object["model"] = diagnose::model_name(d);
    return object;
}

}  // namespace acme::faultdiag
