// "Is my job still on this node?" without asking slurmctld: slurmstepd titles itself
// "slurmstepd: [JOBID.STEP]", and with PrologFlags=Contain the extern step lives as long as
// the job's allocation. The sampler asks slurmctld only when no step is seen here. Only a
// process whose real uid is root counts: a user's process may take the same title.
#pragma once

#include <string>

namespace acme::telemetry {

bool job_has_local_stepd(long long job_id, const std::string& proc_root = "/proc");

}  // namespace acme::telemetry
