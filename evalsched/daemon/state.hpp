// evalschedd's state in its SQLite file: every statement on it lives in evalsched/store (schema
// and migrations, rows and visibility, evaluations as a whole, attempt and metric-job
// transitions, /metrics counters, what the views read); the daemon turns the core's types into
// those rows (evaluations.hpp, metric_jobs.hpp) and assembles the API's JSON views and caches
// from them. Both the API thread and the scheduler thread use it, each with its own connection
// (WAL lets readers run beside the one writer). This header is for code that needs all of it
// (tests, benchmarks).
#pragma once

#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/metric_jobs.hpp"
#include "evalsched/daemon/views.hpp"
#include "evalsched/store/attempts.hpp"
#include "evalsched/store/counters.hpp"
#include "evalsched/store/rows.hpp"
#include "evalsched/store/stamps.hpp"
