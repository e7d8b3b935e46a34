// gpuacct: the command line, as sacct users know it. main.cpp supplies the environment so the
// unit tests run the whole command on a temporary spool directory.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace acme::gpuacct {

struct Environment {
    std::string spool_dir;      // --spool-dir default ($ACME_SPOOL_DIR, else /var/spool/acme)
    bool spool_dir_given = false;  // $ACME_SPOOL_DIR set: read spools, as --spool-dir does
    double now = 0;             // epoch seconds
    bool is_root = true;        // sacct shows other users' jobs only to root (or with -a)
    std::string user;           // the caller's name, for the non-root default
    bool ask_slurm = false;     // slurm.conf found: ask slurmctld / slurmdbd
    bool terminal = false;      // stdout is a terminal: --live clears it between refreshes
    std::string prometheus_url; // $ACME_PROMETHEUS_URL: --prometheus's default
    std::string config_path;    // gpuacct.toml: $ACME_GPUACCT_CONF, else the installed one; empty: none
    bool config_given = false;  // from $ACME_GPUACCT_CONF: a missing file is an error
};

// Exit status as sacct: 0 on success, 1 on bad input (one line on err, nothing on out).
int run(const std::vector<std::string>& args, const Environment& env, std::ostream& out, std::ostream& err);

}  // namespace acme::gpuacct
