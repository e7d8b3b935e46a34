// libFuzzer target: the model server's chat-completion answer, as parse_chat_answer reads it.
// The input's first line is the log tail the answer must quote; the rest is the HTTP body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnose/llm_answer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    const auto nl = all.find('\n');
    const std::string_view tail = nl == std::string_view::npos ? std::string_view() : all.substr(0, nl);
    const std::string_view body = nl == std::string_view::npos ? all : all.substr(nl + 1);
    std::string error;
    const auto answer = acme::diagnose::parse_chat_answer(body, tail, error);
    if (answer && (!answer->reason || answer->line == 0 || answer->evidence.empty())) __builtin_trap();
    if (!answer && error.empty()) __builtin_trap();
    return 0;
}
