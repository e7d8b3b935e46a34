// A command's output as its lines, for tests that assert on what a user sees line by line.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace acme::test {

inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace acme::test
