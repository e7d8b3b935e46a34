// Puts the sampler's textfile (textfile.hpp) where node_exporter's textfile collector reads it:
// written to a dot-named temporary in the same directory, then swapped with the target by
// renameat2(RENAME_EXCHANGE), so a scrape sees the old file or the new one, never half of one.
// The two files are kept and written in turn: creating and deleting an inode at every tick was
// most of the textfile's cost (on ext4 a rename over an existing file also forces the new
// file's writeback, and a freed inode may be discarded). The file written at a tick is the one
// a scrape could have opened before the previous tick, so a reader has at least one sampling
// interval to finish. Where the filesystem cannot exchange, or the target is gone, a fresh
// temporary is rename(2)d over the target as before.
// Only files this writer created (O_EXCL|O_NOFOLLOW through a descriptor of the directory) are
// ever written, through descriptors it keeps: a link planted at either name is replaced, never
// written through (the sampler runs as root).
#pragma once

#include <sys/types.h>

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
    // One of the two files: a descriptor this writer created, and what it has written to it.
    struct File {
        int fd = -1;
        std::size_t size = 0;
        dev_t dev = 0;  // which file it is, to know it at the temporary name
        ino_t ino = 0;
    };
    bool open_dir(std::string& error);
    bool create_tmp(std::string& error);
    bool tmp_is(const File& f) const;
    void close_all();

    std::string dir_, name_, tmp_name_, path_;
    int dirfd_ = -1;
    File front_, back_;  // front: at the target name; back: at the temporary name
    bool can_exchange_ = true;  // false once the filesystem said it cannot
};

// For the epilog: removes `<dir>/acme-gputrace-<job>.prom` (and its temporary) if a sampler
// that crashed left them. True if a file was removed.
bool remove_textfile(const std::string& dir, long long job_id);

}  // namespace acme::telemetry
