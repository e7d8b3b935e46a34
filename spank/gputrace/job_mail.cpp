#include "spank/gputrace/job_mail.hpp"

#include <sys/wait.h>

#include <fmt/format.h>

#include "common/slurm/actions.hpp"
#include "common/util/parse.hpp"
#include "common/util/spawn.hpp"
#include "spank/gputrace/core/stall.hpp"

namespace acme::telemetry {

std::string send_job_mail(const JobMailTo& to, const std::string& what, const MailArgv& argv) {
    std::string recipient = to.setting;
    if (recipient == "user") recipient = mail_address_ok(to.mail_user) ? to.mail_user : to.user;
    if (!mail_address_ok(recipient))
        return fmt::format("job {}: {}: no address to mail (user \"{}\")", to.job, what, util::printable(to.user));
    std::string error;
    const std::string prog = slurm::mail_prog(error);
    if (prog.empty()) return fmt::format("job {}: {}: {}; not mailed", to.job, what, error);
    const auto r = util::run_bounded(argv(prog, recipient),
                                     {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", fmt::format("SLURM_JOB_ID={}", to.job)}, "", 10);
    const bool ok = r.started && !r.timed_out && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0;
    return fmt::format("job {}: {}: {} {}{}", to.job, what, ok ? "mailed" : "mail failed for", recipient,
                       ok ? "" : r.timed_out ? " (MailProg timed out)" : " (MailProg failed)");
}

}  // namespace acme::telemetry
