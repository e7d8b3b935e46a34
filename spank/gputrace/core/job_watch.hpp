// "Is my job still on this node?" without asking slurmctld: slurmstepd titles itself
// "slurmstepd: [JOBID.STEP]", and with PrologFlags=Contain the extern step lives as long as
// the job's allocation. The sampler asks slurmctld only when no step is seen here. Only a
// process whose real uid is root counts: a user's process may take the same title.
#pragma once

#include <string>

namespace acme::telemetry {

bool job_has_local_stepd(long long job_id, const std::string& proc_root = "/proc");

// Whether one of the job's steps that run its work (the batch script, an srun step: any but
// the extern step PrologFlags=Contain starts before the job is ready) has its slurmstepd here:
// the job has started. The sampler waits for it before its own start (gputrace(8) start_wait).
bool job_has_local_work_stepd(long long job_id, const std::string& proc_root = "/proc");

// Whether /proc/PID/status (`status_path`) shows a real uid of root: a slurmstepd, not a user's
// process titled like one (job_activity.hpp finds the job's processes under its stepds).
bool real_uid_is_root(const std::string& status_path);

}  // namespace acme::telemetry
