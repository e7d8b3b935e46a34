// faultdiag: the command. Everything but the compiled-in paths lives in cli.cpp.
#include <iostream>
#include <unistd.h>

#include "acct/faultdiag/cli.hpp"
#include "common/store/spool.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    acme::faultdiag::Defaults defaults{ACME_RULES_DIR, std::string(acme::store::kDefaultSpoolDir), ACME_LABELS_PATH,
                                       isatty(STDIN_FILENO) == 1};
    return acme::faultdiag::run(args, defaults, std::cin, std::cout, std::cerr);
}
