// The user and group database, as the daemon's threads read it. The API thread names callers
// (and decides who is an admin) while the scheduler thread looks up the users whose jobs it
// submits: getpwuid/getgrnam return static buffers that one thread's call overwrites under the
// other's, so a caller could be named (and judged an admin) as another user. Only the _r forms
// here, each call with its own buffer.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace acme::evalsched {

struct Account {
    std::string name, home;
    gid_t gid = 0;  // the primary group, as the password database has it now
};
std::optional<Account> account_of(uid_t uid);

// The user's groups now: the primary group and every group the group database lists the user
// in (getgrouplist). Empty when the user is unknown.
std::vector<gid_t> groups_of(const std::string& user, gid_t primary);

// The gid of a group name; nullopt when there is no such group.
std::optional<gid_t> group_id(const std::string& group);

}  // namespace acme::evalsched
