#include "acct/gpuacct/core/yaml.hpp"

namespace acme::acct {
namespace {

using nlohmann::json;

bool scalar(const json& v) { return !(v.is_object() || v.is_array()) || v.empty(); }

std::string scalar_text(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_object()) return "{}";
    if (v.is_array()) return "[]";
    // JSON's string escapes are YAML's double-quoted ones; numbers and booleans read the same.
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void emit(const json& v, int indent, std::string& out);

void emit_entry_value(const json& v, int indent, std::string& out) {
    if (scalar(v)) {
        out += ' ' + scalar_text(v) + '\n';
    } else {
        out += '\n';
        emit(v, indent + 2, out);
    }
}

void emit(const json& v, int indent, std::string& out) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    if (v.is_object()) {
        for (const auto& [key, value] : v.items()) {
            out += pad + json(key).dump(-1, ' ', false, json::error_handler_t::replace) + ':';
            emit_entry_value(value, indent, out);
        }
    } else if (v.is_array()) {
        for (const auto& item : v) {
            out += pad + '-';
            emit_entry_value(item, indent, out);
        }
    } else {
        out += pad + scalar_text(v) + '\n';
    }
}

}  // namespace

std::string to_yaml(const nlohmann::json& document) {
    std::string out = "---\n";
    if (scalar(document)) out += scalar_text(document) + '\n';
    else emit(document, 0, out);
    return out;
}

}  // namespace acme::acct
