// faultdiag's command line, as a function the unit tests call with their own streams.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace acme::faultdiag {

struct Defaults {
    std::string rules_dir;   // compiled in: $(slurmsysconfdir)/acme/rules.d
    std::string spool_dir;   // /var/spool/acme
    std::string labels_path; // $(localstatedir)/lib/acme/labels.db
    bool stdin_is_terminal = false;  // then "no input" is a usage error, not a wait on stdin
    bool ask_slurm = false;  // slurm.conf found: --job reads slurmdbd unless --spool-dir is given
};

// args excludes the program name. Returns the exit status: 0 done, 1 an input or store could
// not be used, 2 a usage error.
int run(const std::vector<std::string>& args, const Defaults& defaults, std::istream& in, std::ostream& out,
        std::ostream& err);

}  // namespace acme::faultdiag
