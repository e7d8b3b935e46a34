// evalschedd's evalsched_gpu_refill_seconds (sched_status.hpp): how long a GPU freed by a
// trial's end stayed idle until the next trial was submitted, as a Prometheus histogram.
#include <doctest/doctest.h>

#include <string>

#include "evalsched/daemon/sched_status.hpp"

using namespace acme::evalsched;

TEST_CASE("the refill histogram: cumulative buckets, sum and count of how long freed GPUs stayed idle") {
    SchedulerStatus status;
    const std::string empty = status.refill_metrics();
    CHECK(empty.find("# TYPE evalsched_gpu_refill_seconds histogram") != std::string::npos);
    CHECK(empty.find("evalsched_gpu_refill_seconds_count 0\n") != std::string::npos);
    status.observe_refill(0.2);
    status.observe_refill(0.3);
    status.observe_refill(90);
    const std::string text = status.refill_metrics();
    CHECK(text.find("evalsched_gpu_refill_seconds_bucket{le=\"0.1\"} 0\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_bucket{le=\"0.25\"} 1\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_bucket{le=\"0.5\"} 2\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_bucket{le=\"60\"} 2\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_bucket{le=\"+Inf\"} 3\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_count 3\n") != std::string::npos);
    CHECK(text.find("evalsched_gpu_refill_seconds_sum 90.5\n") != std::string::npos);
}
