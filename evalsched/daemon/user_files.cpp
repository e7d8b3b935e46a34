#include "evalsched/daemon/user_files.hpp"

#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

namespace acme::evalsched {

std::optional<std::string> read_as_user(const std::string& path, uid_t uid, gid_t gid, std::size_t max_bytes) {
    const bool root = geteuid() == 0;
    uid_t old_uid = 0;
    gid_t old_gid = 0;
    if (root) {
        old_gid = static_cast<gid_t>(setfsgid(gid));
        old_uid = static_cast<uid_t>(setfsuid(uid));
    }
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (root) {
        setfsuid(old_uid);
        setfsgid(old_gid);
    }
    if (fd < 0) return std::nullopt;
    std::optional<std::string> out;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        const off_t size = st.st_size;
        const off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
        std::string buf(static_cast<std::size_t>(size - from), '\0');
        const ssize_t n = pread(fd, buf.data(), buf.size(), from);
        if (n >= 0) {
            buf.resize(static_cast<std::size_t>(n));
            out = std::move(buf);
        }
    }
    close(fd);
    return out;
}

}  // namespace acme::evalsched
