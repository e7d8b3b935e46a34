// The sampler's mail about a job (gputrace(8) stall_mail) through the site's MailProg as
// slurmctld mails: root, a fixed argv (MailProg -s SUBJECT RECIPIENT), no shell, no body,
// bounded in time. The stall verdict and the held-but-idle alert both mail through here.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace acme::telemetry {

struct JobMailTo {
    long long job = 0;
    std::string setting;    // stall_mail: "user" or an address
    std::string mail_user;  // the job's --mail-user (from slurmctld); empty: none
    std::string user;       // the job's user name
};

// MailProg's argv for a recipient (stall_mail_argv, idle_mail_argv).
using MailArgv = std::function<std::vector<std::string>(const std::string& mail_prog, const std::string& recipient)>;

// Mails and returns the line to log: "job 12: stall_mail: mailed a@b", or why it did not.
// `what` names the mail in that line.
std::string send_job_mail(const JobMailTo& to, const std::string& what, const MailArgv& argv);

}  // namespace acme::telemetry
