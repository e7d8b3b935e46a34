#include <doctest/doctest.h>

#include "evalsched/daemon/config.hpp"

using namespace acme::evalsched;

TEST_CASE("evalsched.conf: key=value lines, comments, sizes and durations") {
    const auto c = parse_config("# site\nsocket=/run/e.sock\nadmin_group = evaladmin\nstage_cache_bytes=2G\npoll_interval=2s\nmax_attempts=4\n",
                                "e.conf");
    CHECK(c.socket == "/run/e.sock");
    CHECK(c.admin_group == "evaladmin");
    CHECK(c.stage_cache_bytes == 2e9);
    CHECK(c.poll_interval_s == 2);
    CHECK(c.max_attempts == 4);
}

TEST_CASE("evalsched.conf: a typo is refused with file:line and the keys to use") {
    CHECK_THROWS_WITH_AS(parse_config("socket=/a\nadmin_grup=x\n", "e.conf"),
                         doctest::Contains("e.conf:2: unknown key 'admin_grup'"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config("database=relative.db\n", "e.conf"), doctest::Contains("e.conf:1: database=relative.db is not an absolute path"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_config("max_attempts=0\n", "e.conf"), doctest::Contains("a whole number 1-20"), ConfigError);
    CHECK_THROWS_AS(parse_config("stage_cache_bytes=lots\n", "e.conf"), ConfigError);
}

TEST_CASE("evalsched.conf: change_poll_interval takes fractions of a second, 0 turns it off") {
    CHECK(parse_config("", "e.conf").change_poll_interval_s == 0.25);
    CHECK(parse_config("change_poll_interval=0.1\n", "e.conf").change_poll_interval_s == doctest::Approx(0.1));
    CHECK(parse_config("change_poll_interval=0.5s\n", "e.conf").change_poll_interval_s == doctest::Approx(0.5));
    CHECK(parse_config("change_poll_interval=0\n", "e.conf").change_poll_interval_s == 0);
    for (const char* bad : {"change_poll_interval=0.01\n", "change_poll_interval=fast\n", "change_poll_interval=61\n", "change_poll_interval=\n",
                            "change_poll_interval=-1\n"})
        CHECK_THROWS_WITH_AS(parse_config(bad, "e.conf"), doctest::Contains("e.conf:1: change_poll_interval="), ConfigError);
}

TEST_CASE("evalsched.conf: launch_cost is what pilots' limits carry, 15 s unless set, 0 to 10 minutes") {
    CHECK(parse_config("", "e.conf").launch_cost_s == 15);
    CHECK(parse_config("launch_cost=3s\n", "e.conf").launch_cost_s == 3);
    CHECK(parse_config("launch_cost=0\n", "e.conf").launch_cost_s == 0);
    CHECK_THROWS_WITH_AS(parse_config("launch_cost=11m\n", "e.conf"), doctest::Contains("e.conf:1: launch_cost=11m is out of range"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config("launch_cost=soon\n", "e.conf"), doctest::Contains("launch_cost=soon is not a duration"), ConfigError);
}

TEST_CASE("evalsched.conf: serve_ports is a port range, tail_min_piece a duration") {
    const auto d = parse_config("", "e.conf");
    CHECK(d.serve_port_min == 20000);
    CHECK(d.serve_port_max == 20999);
    CHECK(d.tail_min_piece_s == 60);
    const auto c = parse_config("serve_ports=30000-30010\ntail_min_piece=2m\n", "e.conf");
    CHECK(c.serve_port_min == 30000);
    CHECK(c.serve_port_max == 30010);
    CHECK(c.tail_min_piece_s == 120);
    for (const char* bad : {"serve_ports=30000\n", "serve_ports=80-90\n", "serve_ports=30010-30000\n", "serve_ports=30000-70000\n", "serve_ports=1-2x\n"})
        CHECK_THROWS_WITH_AS(parse_config(bad, "e.conf"), doctest::Contains("e.conf:1: serve_ports="), ConfigError);
}
