// acme-fallback-train: the build step that turns the labelled diagnosis corpus into the learned
// fallback's model (rules.d/fallback.model, see common/diagnose/fallback.hpp). It runs at build
// time, from the tree's own corpus; nothing is downloaded. Each case's source repository is its
// calibration group, so the temperature is fitted on repositories the folds did not train on.
// The threshold it writes into the model is calibrated as tests/bench/diagnose's time-split does
// (common/diagnose/time_split.hpp): on the first-sight records' no-rule cases, each met by a
// model trained only on the cases before its batch, the lowest threshold at which 4 answers in 5
// were right.
//
//   acme-fallback-train CORPUS_DIR FIRST_SIGHT_DIR > fallback.model
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/diagnose/fallback.hpp"
#include "common/diagnose/corpus.hpp"
#include "common/diagnose/time_split.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        fmt::print(stderr, "usage: acme-fallback-train CORPUS_DIR FIRST_SIGHT_DIR > fallback.model\n");
        return 2;
    }
    try {
        namespace corpus = acme::diagnose::corpus;
        auto cases = corpus::load(argv[1]);
        auto records = corpus::read_first_sights(argv[2]);
        if (records.empty())
            throw std::runtime_error(fmt::format("{}: no first-sight records (*.tsv) to calibrate the threshold on", argv[2]));
        std::vector<acme::diagnose::FallbackExample> examples;
        for (const auto& c : cases) examples.push_back({c.expected, c.text, corpus::source_group(c), {}});
        auto model = acme::diagnose::FallbackModel::train(examples);
        model.set_threshold(corpus::trained_threshold(cases, records));
        fmt::print("{}", model.to_text());
        fmt::print(stderr, "acme-fallback-train: {} cases, {} reasons, {} features, temperature {}, threshold {:.2f} "
                   "(from {} first-sight records)\n",
                   examples.size(), model.reasons().size(), model.features(), model.temperature(), model.threshold(),
                   records.size());
    } catch (const std::exception& error) {
        fmt::print(stderr, "acme-fallback-train: {}\n", error.what());
        return 1;
    }
    return 0;
}
