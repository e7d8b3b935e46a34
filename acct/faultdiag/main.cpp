// faultdiag: the command. Everything but the compiled-in paths lives in cli.cpp.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "acct/faultdiag/cli.hpp"
#include "common/store/spool.hpp"
#include "common/util/install_paths.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    acme::faultdiag::Defaults defaults{std::string(acme::paths::kRulesDir), std::string(acme::paths::kSpoolDir), std::string(acme::paths::kLabelsDb),
                                       isatty(STDIN_FILENO) == 1};
    // libslurm exits the process when it finds no slurm.conf: ask it only where one exists.
    const char* conf = std::getenv("SLURM_CONF");
    std::error_code ec;
    defaults.ask_slurm = std::filesystem::exists(conf && *conf ? std::string(conf) : std::string(acme::paths::kSlurmConf), ec);
    return acme::faultdiag::run(args, defaults, std::cin, std::cout, std::cerr);
}
