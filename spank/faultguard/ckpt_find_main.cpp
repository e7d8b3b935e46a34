// acme-ckpt-find: prints the newest complete checkpoint under a job's --ckpt-dir ("PATH\tRULE\tMTIME";
// nothing for a fresh start), or exits 1 with the reason on stdout when the directory cannot be read. faultguard runs it from slurmstepd for every step of a job that asked for
// recovery, bounded in time; it first becomes the job's user, so a checkpoint directory is
// never read with root's rights.
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/recovery/checkpoints.hpp"
#include "common/util/version.hpp"

int main(int argc, char** argv) {
    std::string dir, rules;
    long long uid = -1, gid = -1;
    CLI::App app{"acme-ckpt-find: the newest complete checkpoint under a directory (run by faultguard.so)"};
    app.set_version_flag("--version", acme::version_line("acme-ckpt-find"), "print the version and exit");
    app.add_option("--dir", dir, "the job's --ckpt-dir")->required();
    app.add_option("--rules", rules, "checkpoint rules (checkpoints.toml)")->required();
    app.add_option("--uid", uid, "become this user before reading")->required();
    app.add_option("--gid", gid, "and this group")->required();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        // Rules are the admin's (read while still privileged); the checkpoint directory is the user's.
        const auto parsed = acme::recovery::load_checkpoint_rules(rules);
        if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(gid)) != 0 || setuid(static_cast<uid_t>(uid)) != 0) {
            fmt::print("cannot become uid {} gid {} to read the checkpoint directory\n", uid, gid);
            return 1;
        }
        if (uid != 0 && setuid(0) == 0) return 1;
        const auto found = acme::recovery::newest_complete(dir, parsed);
        // The third field, when the checkpoint was complete (its directory's mtime: the marker or
        // the last file of the save was its last entry), tells gpuacct --goodput how much work
        // the run resuming from it redoes.
        if (found) {
            struct stat st {};
            if (::stat(found->path.c_str(), &st) == 0)
                fmt::print("{}\t{}\t{}\n", found->path.string(), found->rule, static_cast<long long>(st.st_mtime));
            else
                fmt::print("{}\t{}\n", found->path.string(), found->rule);
        }
        return 0;
    } catch (const std::exception& e) {
        // On stdout, the one channel faultguard reads: the reason goes into the job's
        // ACME_RESUME_ERROR and its record.
        fmt::print("{}\n", e.what());
        return 1;
    }
}
