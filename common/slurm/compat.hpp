#pragma once
// The one place where libslurm's C API differs between the releases acme-slurm is built and
// tested on: 22.05 (Debian 12), 24.11 (Debian 13) and 26.05 (Debian unstable). Everything else in
// common/slurm calls these and never tests SLURM_VERSION_NUMBER itself. Read against each
// release's own slurm.h; configure refuses anything older than 22.05.
//
// What changed, and where it is met here (checked against each release's own headers):
//   24.11  slurm_get_errno() is gone (errno; 22.05's returned errno too). List, ListIterator and
//          the pointer hostlist_t became list_t, list_itr_t and a hostlist_t that is the struct
//          itself; the structs kept their tags, so the aliases below hold for every release.
//   26.05  job-addressing calls (slurm_kill_job, slurm_requeue, slurm_load_job,
//          slurm_get_job_steps) take a slurm_step_id_t; update_node_msg_t has no reason_uid;
//          job_desc_msg_t and submit_response_msg_t carry the job in step_id;
//          slurm_free_ctl_conf() is slurm_free_conf(); every job has a SLUID.

#include <cerrno>
#include <cstdint>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

namespace acme::slurm::compat {

#define ACME_SLURM_AT_LEAST(a, b) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, 0))

using List = struct xlist*;
using ListIterator = struct listIterator*;
using Hostlist = struct hostlist*;

// The error of the libslurm call that just failed.
inline int last_errno() {
#if ACME_SLURM_AT_LEAST(23, 2)
    return errno;
#else
    return slurm_get_errno();
#endif
}

inline const char* last_error_text() { return slurm_strerror(last_errno()); }

inline void free_conf(slurm_conf_t* conf) {
#if ACME_SLURM_AT_LEAST(26, 5)
    slurm_free_conf(conf);
#else
    slurm_free_ctl_conf(conf);
#endif
}

#if ACME_SLURM_AT_LEAST(26, 5)
inline slurm_step_id_t whole_job(std::uint32_t job_id, std::uint32_t step_id = NO_VAL) {
    slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;
    id.job_id = job_id;
    id.step_id = step_id;
    return id;
}
#endif

inline int kill_job(std::uint32_t job_id, std::uint16_t signal, std::uint16_t flags) {
#if ACME_SLURM_AT_LEAST(26, 5)
    return slurm_kill_job(whole_job(job_id), signal, flags);
#else
    return slurm_kill_job(job_id, signal, flags);
#endif
}

inline int requeue(std::uint32_t job_id, std::uint32_t flags) {
#if ACME_SLURM_AT_LEAST(26, 5)
    return slurm_requeue(whole_job(job_id), flags);
#else
    return slurm_requeue(job_id, flags);
#endif
}

inline int load_job(job_info_msg_t** msg, std::uint32_t job_id, std::uint16_t show_flags) {
#if ACME_SLURM_AT_LEAST(26, 5)
    return slurm_load_job(msg, whole_job(job_id), show_flags);
#else
    return slurm_load_job(msg, job_id, show_flags);
#endif
}

inline int get_job_steps(std::uint32_t job_id, std::uint32_t step_id, job_step_info_response_msg_t** msg,
                         std::uint16_t show_flags) {
#if ACME_SLURM_AT_LEAST(26, 5)
    slurm_step_id_t id = whole_job(job_id, step_id);
    return slurm_get_job_steps(&id, msg, show_flags);
#else
    return slurm_get_job_steps(0, job_id, step_id, msg, show_flags);
#endif
}

// Who asked for the drain: 26.05 takes it from the caller's credential instead.
inline void set_reason_uid([[maybe_unused]] update_node_msg_t& msg, [[maybe_unused]] std::uint32_t uid) {
#if !ACME_SLURM_AT_LEAST(26, 5)
    msg.reason_uid = uid;
#endif
}

inline void set_job_id(job_desc_msg_t& desc, std::uint32_t job_id) {
#if ACME_SLURM_AT_LEAST(26, 5)
    desc.step_id.job_id = job_id;
#else
    desc.job_id = job_id;
#endif
}

inline std::uint32_t job_id_of(const submit_response_msg_t& resp) {
#if ACME_SLURM_AT_LEAST(26, 5)
    return resp.step_id.job_id;
#else
    return resp.job_id;
#endif
}

// A job's SLUID (26.05+: unique for the cluster's life, never handed out again); 0 before.
inline std::uint64_t sluid_of([[maybe_unused]] const slurm_job_info_t& job) {
#if ACME_SLURM_AT_LEAST(26, 5)
    return job.step_id.sluid;
#else
    return 0;
#endif
}

#undef ACME_SLURM_AT_LEAST

}  // namespace acme::slurm::compat
