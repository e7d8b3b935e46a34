#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "acct/gpuacct/core/sacct_time.hpp"
#include "acct/gpuacct/table.hpp"

using acme::acct::parse_sacct_time;

namespace {

// Every case runs in UTC so the expectations are plain epoch seconds.
struct Utc {
    Utc() {
        setenv("TZ", "UTC", 1);
        tzset();
    }
};

// 2026-11-29T15:30:00Z, a Sunday
constexpr std::time_t kNow = 1795966200;

std::time_t at(const char* text) {
    std::string error;
    const auto t = parse_sacct_time(text, kNow, error);
    INFO(text, ": ", error);
    REQUIRE(t.has_value());
    return *t;
}

std::string error_of(const char* text) {
    std::string error;
    CHECK_FALSE(parse_sacct_time(text, kNow, error).has_value());
    return error;
}

}  // namespace

TEST_CASE("sacct's relative times count back from now") {
    Utc utc;
    CHECK(at("now") == kNow);
    CHECK(at("now-1days") == kNow - 86400);
    CHECK(at("now-2hours") == kNow - 7200);
    CHECK(at("now+30minutes") == kNow + 1800);
    CHECK(at("now-90") == kNow - 90);
    CHECK(at("now-1week") == kNow - 7 * 86400);
    CHECK(at("NOW-3d") == kNow - 3 * 86400);
}

TEST_CASE("sacct's named times are today's") {
    Utc utc;
    const std::time_t midnight = kNow - (15 * 3600 + 30 * 60);
    CHECK(at("today") == midnight);
    CHECK(at("midnight") == midnight);
    CHECK(at("noon") == midnight + 12 * 3600);
    CHECK(at("teatime") == midnight + 16 * 3600);
    CHECK(at("fika") == midnight + 15 * 3600);
    CHECK(at("tomorrow") == midnight + 86400);
}

TEST_CASE("ISO dates with and without a time of day") {
    Utc utc;
    CHECK(at("2026-11-01") == 1793491200);
    CHECK(at("2026-11-01T06:30") == 1793491200 + 6 * 3600 + 1800);
    CHECK(at("2026-11-01T06:30:15") == 1793491200 + 6 * 3600 + 1800 + 15);
}

TEST_CASE("MMDD, MM/DD and MM.DD take this year, or last year when the date is still ahead") {
    Utc utc;
    CHECK(at("1101") == 1793491200);
    CHECK(at("11/01") == 1793491200);
    CHECK(at("11.01") == 1793491200);
    CHECK(at("110126") == 1793491200);
    CHECK(at("11/01/26-06:30") == 1793491200 + 6 * 3600 + 1800);
    CHECK(at("1231") == at("2025-12-31"));
}

TEST_CASE("a time of day alone means today") {
    Utc utc;
    const std::time_t midnight = kNow - (15 * 3600 + 30 * 60);
    CHECK(at("08:15") == midnight + 8 * 3600 + 15 * 60);
    CHECK(at("08:15:30") == midnight + 8 * 3600 + 15 * 60 + 30);
    CHECK(at("3:00PM") == midnight + 15 * 3600);
    CHECK(at("12:00am") == midnight);
}

TEST_CASE("bad times are refused with the reason") {
    Utc utc;
    CHECK(error_of("yesterday").find("not a time sacct accepts") != std::string::npos);
    CHECK(error_of("now-1fortnights").find("unknown unit") != std::string::npos);
    CHECK(error_of("now*2").find("now-COUNT") != std::string::npos);
    CHECK(error_of("2026-02-30") == "no such date");
    CHECK(error_of("2026-13-01") == "no such date");
    CHECK(error_of("25:00").find("time of day") != std::string::npos);
    CHECK(error_of("2026-11-01 06:30").find("YYYY-MM-DD[THH:MM[:SS]]") != std::string::npos);
    CHECK(error_of("").size() > 0);
}

TEST_CASE("times print as sacct prints Submit, Start, End and Elapsed") {
    Utc utc;
    CHECK(acme::acct::format_sacct_time(1793491200 + 6 * 3600 + 1800 + 15) == "2026-11-01T06:30:15");
    CHECK(acme::acct::format_sacct_time(0).empty());
    CHECK(acme::acct::format_elapsed(59) == "00:00:59");
    CHECK(acme::acct::format_elapsed(3 * 3600 + 61) == "03:01:01");
    CHECK(acme::acct::format_elapsed(2 * 86400 + 5) == "2-00:00:05");
}

TEST_CASE("TotalCPU as sacct prints it: milliseconds below an hour, beside CPUEff's fractions") {
    CHECK(acme::acct::format_cpu_time(0.457) == "00:00.457");
    CHECK(acme::acct::format_cpu_time(83.25) == "01:23.250");
    CHECK(acme::acct::format_cpu_time(83) == "00:01:23");
    CHECK(acme::acct::format_cpu_time(3 * 3600 + 61.5) == "03:01:01");
    CHECK(acme::acct::format_cpu_time(2 * 86400 + 5) == "2-00:00:05");
    CHECK(acme::acct::format_cpu_time(59.9999999) == "00:01:00");  // rounds up to the whole minute
}

TEST_CASE("sacct's memory fields convert only while exact (CONVERT_NUM_UNIT_EXACT); GPU memory stays human") {
    using acme::gpuacct::sacct_bytes_cell;
    const std::int64_t M = 1024 * 1024;
    CHECK(sacct_bytes_cell(8000 * M, 0, 'M').text == "8000M");
    CHECK(sacct_bytes_cell(8192 * M, 0, 'M').text == "8G");
    CHECK(sacct_bytes_cell(2560 * M, 0, 'M').text == "2.50G");
    CHECK(sacct_bytes_cell(2453504, 0, 'K').text == "2396K");
    CHECK(sacct_bytes_cell(0, 0, 'K').text == "0");
    CHECK(sacct_bytes_cell(8000 * M, 'G', 'M').text == "7.81G");  // --units G: always that unit
    CHECK(sacct_bytes_cell(8000 * M, 'n', 'M').text == "8000M");  // --noconvert
    CHECK(sacct_bytes_cell(8000 * M, 0, 'M').value == 8000 * M);
    CHECK(acme::gpuacct::bytes_cell(8000 * M).text == "7.81G");
}
