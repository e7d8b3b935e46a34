// Puts the sampler's textfile (textfile.hpp) where node_exporter's textfile collector reads it:
// written to a dot-named temporary in the same directory, then rename(2)d over the target, so
// a scrape sees the old file or the new one, never half of one. Everything goes through a
// descriptor of the directory with O_NOFOLLOW|O_EXCL: a link planted at either name is
// replaced, never written through (the sampler runs as root).
#pragma once

#include <string>
#include <string_view>

namespace acme::telemetry {

// textfile_dir with every "%n" replaced by the Slurm node name (several fake nodes share a host
// in the minicluster; each gets its own directory).
std::string expand_textfile_dir(std::string_view dir, std::string_view node);

class TextfileWriter {
public:
    TextfileWriter(std::string dir, long long job_id);
    ~TextfileWriter();
    TextfileWriter(const TextfileWriter&) = delete;
    TextfileWriter& operator=(const TextfileWriter&) = delete;

    // Replaces the job's file with `text` (mode 0644). False with `error` (one line naming the
    // path) on failure; the directory is opened again on the next call, so one created later
    // is picked up.
    bool write(const std::string& text, std::string& error);
    // Removes the job's file (and a leftover temporary). Missing files are fine.
    void remove();

    const std::string& path() const { return path_; }

private:
    bool open_dir(std::string& error);

    std::string dir_, name_, tmp_name_, path_;
    int dirfd_ = -1;
};

// For the epilog: removes `<dir>/acme-gputrace-<job>.prom` (and its temporary) if a sampler
// that crashed left them. True if a file was removed.
bool remove_textfile(const std::string& dir, long long job_id);

}  // namespace acme::telemetry
