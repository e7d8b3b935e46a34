// "Is my job still on this node?" without asking slurmctld: slurmstepd titles itself
// "slurmstepd: [JOBID.STEP]", and with PrologFlags=Contain the extern step lives as long as
// the job's allocation. The sampler asks slurmctld only when no step is seen here. Only a
// process whose real uid is root counts: a user's process may take the same title.
#pragma once

#include <string>

namespace acme::telemetry {

bool job_has_local_stepd(long long job_id, const std::string& proc_root = "/proc");

// Whether /proc/PID/status (`status_path`) shows a real uid of root: a slurmstepd, not a user's
// process titled like one (job_activity.hpp finds the job's processes under its stepds).
bool real_uid_is_root(const std::string& status_path);

}  // namespace acme::telemetry
