// The logs faultdiag reads: files named on the command line and standard input. All are read
// before anything is printed, so a missing file stops the run cleanly (one line, exit 1).
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace acme::faultdiag {

struct Input {
    std::string name;  // the file as given, or "(stdin)"
    std::string text;
};

// A log that cannot be read; its what() is the line to print (it names the file and what to do).
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One Input per name ("-": standard input). Throws InputError.
std::vector<Input> read_inputs(const std::vector<std::string>& files, std::istream& in);

// The inputs' texts one after another, each ending in a newline.
std::string concatenated(const std::vector<Input>& inputs);

}  // namespace acme::faultdiag
