// gpuacct: the command. Everything but the process environment lives in cli.cpp.
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "acct/gpuacct/cli.hpp"
#include "common/store/spool.hpp"

int main(int argc, char** argv) {
    acme::gpuacct::Environment env;
    const char* dir = std::getenv("ACME_SPOOL_DIR");
    env.spool_dir = dir && *dir ? dir : std::string(acme::store::kDefaultSpoolDir);
    env.spool_dir_given = dir && *dir;
    env.now = static_cast<double>(std::time(nullptr));
    if (const char* url = std::getenv("ACME_PROMETHEUS_URL")) env.prometheus_url = url;
    const char* conf_file = std::getenv("ACME_GPUACCT_CONF");
    env.config_given = conf_file && *conf_file;
    env.config_path = env.config_given ? std::string(conf_file) : std::string(acme::paths::kConfDir) + "/gpuacct.toml";
    env.is_root = geteuid() == 0;
    env.terminal = isatty(STDOUT_FILENO) == 1;
    if (const passwd* pw = getpwuid(getuid())) env.user = pw->pw_name;
    // libslurm exits the process when it finds no slurm.conf: ask it only where one exists.
    const char* conf = std::getenv("SLURM_CONF");
    std::error_code ec;
    env.ask_slurm = std::filesystem::exists(conf && *conf ? std::string(conf) : std::string(acme::paths::kSlurmConf), ec);
    std::vector<std::string> args(argv + 1, argv + argc);
    return acme::gpuacct::run(args, env, std::cout, std::cerr);
}
