#include "spank/gputrace/core/textfile_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "spank/gputrace/core/textfile.hpp"

namespace acme::telemetry {
namespace {

int open_directory(const std::string& dir) {
    return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

}  // namespace

std::string expand_textfile_dir(std::string_view dir, std::string_view node) {
    std::string out;
    for (std::size_t i = 0; i < dir.size(); ++i) {
        if (dir[i] == '%' && i + 1 < dir.size() && dir[i + 1] == 'n') {
            out += node;
            ++i;
        } else {
            out += dir[i];
        }
    }
    return out;
}

TextfileWriter::TextfileWriter(std::string dir, long long job_id)
    : dir_(std::move(dir)),
      name_(textfile_name(job_id)),
      tmp_name_(textfile_tmp_name(job_id)),
      path_(fmt::format("{}/{}", dir_, name_)) {}

TextfileWriter::~TextfileWriter() { close_all(); }

void TextfileWriter::close_all() {
    for (int* fd : {&front_.fd, &back_.fd, &dirfd_})
        if (*fd >= 0) ::close(*fd);
    front_ = {};
    back_ = {};
    dirfd_ = -1;
}

bool TextfileWriter::open_dir(std::string& error) {
    if (dirfd_ >= 0) return true;
    dirfd_ = open_directory(dir_);
    if (dirfd_ < 0) {
        error = fmt::format("textfile_dir {}: {}; not writing Prometheus metrics there", dir_, std::strerror(errno));
        return false;
    }
    return true;
}

bool TextfileWriter::tmp_is(const File& f) const {
    struct stat st {};
    return ::fstatat(dirfd_, tmp_name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == f.dev &&
           st.st_ino == f.ino;
}

bool TextfileWriter::create_tmp(std::string& error) {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(dirfd_, tmp_name_.c_str(), flags, 0644);
    if (fd < 0 && errno == EEXIST) {
        // A temporary left by a killed sampler (or anything planted there): remove the name,
        // whatever it points to, and create our own.
        ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
        fd = ::openat(dirfd_, tmp_name_.c_str(), flags, 0644);
    }
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        error = fmt::format("{}/{}: {}", dir_, tmp_name_, std::strerror(errno));
        if (fd >= 0) ::close(fd);
        // The directory may have been replaced (or removed): open it afresh next time.
        close_all();
        return false;
    }
    ::fchmod(fd, 0644);  // the umask must not hide it from node_exporter's user
    back_ = {fd, 0, st.st_dev, st.st_ino};
    return true;
}

bool TextfileWriter::write(const std::string& text, std::string& error) {
    if (!open_dir(error)) return false;
    // The back file is reused only while the temporary name still is it; anything else there
    // (nothing, another file, a link) gets a fresh file of our own.
    if (back_.fd < 0 || !tmp_is(back_)) {
        if (back_.fd >= 0) ::close(back_.fd);
        back_ = {};
        if (!create_tmp(error)) return false;
    }
    const auto fail = [&](const char* why) {
        error = fmt::format("{}/{}: {}", dir_, tmp_name_, why);
        ::close(back_.fd);
        back_ = {};
        ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
        return false;
    };
    // Overwritten from the start and cut to length, never truncated to 0 first (ext4 forces the
    // writeback of a file truncated to 0 once it is closed). No fsync either: node_exporter reads
    // the page cache, and a file that a crash left stale is removed by the epilog.
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::pwrite(back_.fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail(n < 0 ? std::strerror(errno) : "short write");
        done += static_cast<std::size_t>(n);
    }
    if (text.size() < back_.size && ::ftruncate(back_.fd, static_cast<off_t>(text.size())) != 0)
        return fail(std::strerror(errno));
    back_.size = text.size();

    if (front_.fd >= 0 && can_exchange_) {
        if (::renameat2(dirfd_, tmp_name_.c_str(), dirfd_, name_.c_str(), RENAME_EXCHANGE) == 0) {
            std::swap(front_, back_);
            return true;
        }
        // ENOENT: the target was removed (a plain rename puts it back).
        if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) can_exchange_ = false;
    }
    // rename replaces whatever is at the target name (a symlink included) without following it.
    if (::renameat(dirfd_, tmp_name_.c_str(), dirfd_, name_.c_str()) != 0) {
        error = fmt::format("{}: {}", path_, std::strerror(errno));
        ::close(back_.fd);
        back_ = {};
        ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
        return false;
    }
    if (front_.fd >= 0) ::close(front_.fd);
    front_ = back_;
    back_ = {};
    return true;
}

void TextfileWriter::remove() {
    const int fd = dirfd_ >= 0 ? dirfd_ : open_directory(dir_);
    if (fd >= 0) {
        ::unlinkat(fd, name_.c_str(), 0);
        ::unlinkat(fd, tmp_name_.c_str(), 0);
        if (fd != dirfd_) ::close(fd);
    }
    close_all();
}

bool remove_textfile(const std::string& dir, long long job_id) {
    const int fd = open_directory(dir);
    if (fd < 0) return false;
    const bool removed = ::unlinkat(fd, textfile_name(job_id).c_str(), 0) == 0;
    ::unlinkat(fd, textfile_tmp_name(job_id).c_str(), 0);
    ::close(fd);
    return removed;
}

}  // namespace acme::telemetry
