// evalschedd's state in its SQLite file (schema and migrations: evalsched/store/schema), one header
// per job: rows and visibility (rows.hpp), evaluations as a whole, the API's JSON views and
// its caches, attempt transitions, metric-job transitions, /metrics counters. Both the API
// thread and the scheduler thread use it, each with its own connection (WAL lets readers run
// beside the one writer). This header is for code that needs all of it (tests, benchmarks).
#pragma once

#include "evalsched/daemon/attempts.hpp"
#include "evalsched/daemon/caches.hpp"
#include "evalsched/daemon/counters.hpp"
#include "evalsched/daemon/evaluations.hpp"
#include "evalsched/daemon/metric_jobs.hpp"
#include "evalsched/daemon/rows.hpp"
#include "evalsched/daemon/views.hpp"
