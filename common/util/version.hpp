// What this build is and what it was built against, in the words every command's --version and
// every plugin's first log line use: a bug report, or a slurmd log after an upgrade, then says
// which acme-slurm met which Slurm. Header-only, so a SPANK plugin takes the text as constants
// (no allocation in slurmd) and the commands need nothing linked.
#pragma once

#include <slurm/slurm_version.h>

#include <cstddef>
#include <string>
#include <string_view>

// configure passes PACKAGE_VERSION on every compile through DEFS (there is no config.h). A
// fallback here would let a build print a version that is not its own.
#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION is not defined: build through the Makefile (./configure && make), which passes it in DEFS"
#endif

namespace acme {

namespace detail {

// Room for "255.255.255" and its NUL: each part of SLURM_VERSION_NUMBER is one byte.
struct VersionText {
    char chars[12]{};
};

// Slurm's own spelling, "22.05.8": the minor part two digits, the others as they are. The
// installed slurm_version.h (22.05) has only SLURM_VERSION_NUMBER; SLURM_VERSION_STRING lives
// in Slurm's private config.h.
constexpr VersionText slurm_version_text(unsigned long number) {
    VersionText out;
    std::size_t n = 0;
    auto put = [&](unsigned long part, bool two_digits) {
        if (part >= 100) out.chars[n++] = static_cast<char>('0' + part / 100);
        if (part >= 10 || two_digits) out.chars[n++] = static_cast<char>('0' + part / 10 % 10);
        out.chars[n++] = static_cast<char>('0' + part % 10);
    };
    put(SLURM_VERSION_MAJOR(number), false);
    out.chars[n++] = '.';
    put(SLURM_VERSION_MINOR(number), true);
    out.chars[n++] = '.';
    put(SLURM_VERSION_MICRO(number), false);
    return out;
}

inline constexpr VersionText kSlurmVersionText = slurm_version_text(SLURM_VERSION_NUMBER);

}  // namespace detail

inline constexpr const char* kPackageVersion = PACKAGE_VERSION;
// A Slurm that installs SLURM_VERSION_STRING says more than its number can (a release
// candidate's suffix): take it where there is one.
#ifdef SLURM_VERSION_STRING
inline constexpr const char* kSlurmVersion = SLURM_VERSION_STRING;
#else
inline constexpr const char* kSlurmVersion = detail::kSlurmVersionText.chars;
#endif

// "<program> 0.1.0 (acme-slurm; built against Slurm 22.05.8)": every command's --version.
inline std::string version_line(std::string_view program) {
    std::string line(program);
    line += ' ';
    line += kPackageVersion;
    line += " (acme-slurm; built against Slurm ";
    line += kSlurmVersion;
    line += ')';
    return line;
}

}  // namespace acme
