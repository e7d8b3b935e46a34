#include "evalsched/daemon/accounts.hpp"

#include <cerrno>
#include <grp.h>
#include <pwd.h>

namespace acme::evalsched {

namespace {
// NSS answers ERANGE when the buffer is too small: grow it, within reason (a group with
// thousands of members has a large entry).
template <class Lookup>
bool with_buffer(Lookup&& lookup) {
    for (std::size_t size = 16384; size <= (std::size_t{1} << 24); size *= 4) {
        std::vector<char> buf(size);
        const int rc = lookup(buf);
        if (rc != ERANGE) return rc == 0;
    }
    return false;
}
}  // namespace

std::optional<Account> account_of(uid_t uid) {
    std::optional<Account> out;
    with_buffer([&](std::vector<char>& buf) {
        passwd pw{};
        passwd* found = nullptr;
        const int rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
        if (rc == 0 && found) out = Account{found->pw_name ? found->pw_name : "", found->pw_dir ? found->pw_dir : "", found->pw_gid};
        return rc;
    });
    return out;
}

std::vector<gid_t> groups_of(const std::string& user, gid_t primary) {
    int n = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    if (getgrouplist(user.c_str(), primary, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        if (getgrouplist(user.c_str(), primary, groups.data(), &n) < 0) return {primary};
    }
    groups.resize(static_cast<std::size_t>(n));
    return groups;
}

std::optional<gid_t> group_id(const std::string& group) {
    std::optional<gid_t> out;
    with_buffer([&](std::vector<char>& buf) {
        struct group g {};
        struct group* found = nullptr;
        const int rc = getgrnam_r(group.c_str(), &g, buf.data(), buf.size(), &found);
        if (rc == 0 && found) out = found->gr_gid;
        return rc;
    });
    return out;
}

}  // namespace acme::evalsched
