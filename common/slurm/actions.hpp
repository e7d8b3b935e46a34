// libslurm wrapper: the node and job actions recovery takes, and what it asks first. Each
// action returns an empty string on success, else Slurm's error text. Needs SlurmUser/root,
// like scontrol.
#pragma once

#include <optional>
#include <string>

namespace acme::slurm {

std::string drain_node(const std::string& node, const std::string& reason);
// Asks slurmctld to requeue a batch job. From an epilog the requeue itself happens once every
// node's epilog has finished, and the job then waits AuthInfo's cred_expire (120 s by default)
// before it may start: see release_job.
std::string requeue_job(unsigned job_id);
// Sends `signal` to every process of the job (its batch script and every step), as
// `scancel --full --signal`: the stall watcher's cue to the trainer to checkpoint.
std::string signal_job(unsigned job_id, int signal);
// Cancels the job, as `scancel`.
std::string cancel_job(unsigned job_id);
// Makes a requeued pending job eligible in a second (StartTime=now+1). Not now: each node of
// the ended run revoked the job's credential at its end, and slurmd refuses a credential created
// in the same second as the revocation ("Job credential revoked", seconds compared with <=);
// the next second is the earliest start that cannot collide. `exclude_node`, when given, joins
// the nodes the job already excludes (ExcNodeList).
std::string release_job(unsigned job_id, const std::string& exclude_node = {});
// slurm.conf's MailProg (what slurmctld runs for --mail-type mail); empty with `error` when
// slurmctld cannot be asked.
std::string mail_prog(std::string& error);
// How many GPUs slurmctld says the node has (its gres gpu count); nullopt when it cannot be asked.
std::optional<int> node_gpu_count(const std::string& node);

}  // namespace acme::slurm
