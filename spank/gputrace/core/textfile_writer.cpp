#include "spank/gputrace/core/textfile_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

TextfileWriter::~TextfileWriter() {
    if (dirfd_ >= 0) ::close(dirfd_);
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

bool TextfileWriter::write(const std::string& text, std::string& error) {
    if (!open_dir(error)) return false;
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(dirfd_, tmp_name_.c_str(), flags, 0644);
    if (fd < 0 && errno == EEXIST) {
        // A temporary left by a killed sampler (or anything planted there): remove the name,
        // whatever it points to, and create our own.
        ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
        fd = ::openat(dirfd_, tmp_name_.c_str(), flags, 0644);
    }
    if (fd < 0) {
        error = fmt::format("{}/{}: {}", dir_, tmp_name_, std::strerror(errno));
        // The directory may have been replaced (or removed): open it afresh next time.
        ::close(dirfd_);
        dirfd_ = -1;
        return false;
    }
    ::fchmod(fd, 0644);  // the umask must not hide it from node_exporter's user
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error = fmt::format("{}/{}: {}", dir_, tmp_name_, n < 0 ? std::strerror(errno) : "short write");
            ::close(fd);
            ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    // rename replaces whatever is at the target name (a symlink included) without following it.
    if (::renameat(dirfd_, tmp_name_.c_str(), dirfd_, name_.c_str()) != 0) {
        error = fmt::format("{}: {}", path_, std::strerror(errno));
        ::unlinkat(dirfd_, tmp_name_.c_str(), 0);
        return false;
    }
    return true;
}

void TextfileWriter::remove() {
    const int fd = dirfd_ >= 0 ? dirfd_ : open_directory(dir_);
    if (fd < 0) return;
    ::unlinkat(fd, name_.c_str(), 0);
    ::unlinkat(fd, tmp_name_.c_str(), 0);
    if (fd != dirfd_) ::close(fd);
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
