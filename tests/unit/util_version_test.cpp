// The one --version line and plugin build line every part of acme-slurm prints.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <string_view>

#include "common/util/version.hpp"

using namespace acme;

TEST_CASE("version_line: program, package version, and the Slurm it was built against") {
    const std::string line = version_line("gpuacct");
    INFO(line);
    CHECK(line == std::string("gpuacct ") + PACKAGE_VERSION + " (acme-slurm; built against Slurm " + kSlurmVersion + ")");
    // One line, in the shape scripts parse: no newline (the caller ends it), no empty part.
    CHECK(std::regex_match(line, std::regex(R"(gpuacct [0-9]+\.[0-9]+\.[0-9]+ \(acme-slurm; built against Slurm [0-9]+\.[0-9]{2}\.[0-9]+\S*\))")));
    CHECK(version_line("acme-gpu-sampler").starts_with("acme-gpu-sampler " + std::string(PACKAGE_VERSION) + " ("));
}

TEST_CASE("the Slurm version is the headers' own: the parts of SLURM_VERSION_NUMBER") {
    const std::string expected = std::to_string(SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER)) + "." +
                                 (SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER) < 10 ? "0" : "") +
                                 std::to_string(SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER)) + "." +
                                 std::to_string(SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
    CHECK(std::string_view(kSlurmVersion).starts_with(expected));
}

TEST_CASE("Slurm's spelling of a version number: the minor part two digits, the others as they are") {
    CHECK(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(22, 5, 8)).chars) == "22.05.8");
    CHECK(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(23, 11, 10)).chars) == "23.11.10");
    CHECK(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(24, 5, 0)).chars) == "24.05.0");
    CHECK(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(255, 255, 255)).chars) == "255.255.255");
    CHECK(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(9, 0, 1)).chars) == "9.00.1");
    // At compile time: what the plugins log is a constant, built before slurmd loads them.
    static_assert(std::string_view(detail::slurm_version_text(SLURM_VERSION_NUM(22, 5, 8)).chars) == "22.05.8");
}
