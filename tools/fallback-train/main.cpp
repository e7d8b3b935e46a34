// acme-fallback-train: the build step that turns the labelled diagnosis corpus into the learned
// fallback's model (rules.d/fallback.model, see common/diagnose/fallback.hpp). It runs at build
// time, from the tree's own corpus; nothing is downloaded. Each case's source repository is its
// calibration group, so the temperature is fitted on repositories the folds did not train on.
//
//   acme-fallback-train CORPUS_DIR > fallback.model
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/diagnose/fallback.hpp"
#include "common/diagnose/corpus.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        fmt::print(stderr, "usage: acme-fallback-train CORPUS_DIR > fallback.model\n");
        return 2;
    }
    try {
        std::vector<acme::diagnose::FallbackExample> examples;
        for (const auto& c : acme::diagnose::corpus::load(argv[1]))
            examples.push_back({c.expected, c.text, acme::diagnose::corpus::source_group(c), {}});
        auto model = acme::diagnose::FallbackModel::train(examples);
        fmt::print("{}", model.to_text());
        fmt::print(stderr, "acme-fallback-train: {} cases, {} reasons, {} features, temperature {}\n", examples.size(),
                   model.reasons().size(), model.features(), model.temperature());
    } catch (const std::exception& error) {
        fmt::print(stderr, "acme-fallback-train: {}\n", error.what());
        return 1;
    }
    return 0;
}
