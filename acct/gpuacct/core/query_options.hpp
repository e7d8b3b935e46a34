// What a gpuacct command asked for, as its options give it: acct/gpuacct/cli.cpp parses the
// command line into it, and load.hpp and sacct_selection.hpp read by it. Plain data: no option
// parser here.
#pragma once

#include <optional>
#include <string>

#include "common/util/http_get.hpp"

namespace acme::acct {

// Bad input, or a source that cannot be read: one line naming the thing and what to do. The
// command exits 1 with nothing on stdout.
struct Failure {
    std::string message;
};

struct QueryOptions {
    std::string jobs, users, accounts, partitions, states, types, start, end, format, spool_dir;
    std::string html, evalsched_db, source;
    bool spool_dir_given = false;  // --spool-dir on the command line or $ACME_SPOOL_DIR
    bool allocations = false, parsable2 = false, parsable = false, noheader = false, json = false;
    bool helpformat = false, allusers = false, failures = false, nodes = false, summary = false;
    double live = 0;  // --live: seconds between refreshes, 0: print once
    // sacct's options (issue 17): filters, output shapes and conventions.
    std::string nodelist, names, qos, gids, timelimit_min, timelimit_max, clusters, associations, units;
    std::string delimiter = "|";
    bool long_format = false, brief = false, duplicates = false, allclusters = false, truncate = false;
    bool noconvert = false, yaml = false, detail = false;
    std::string prometheus;                       // --prometheus as given
    std::optional<util::HttpUrl> prometheus_url;  // --prometheus, else $ACME_PROMETHEUS_URL; none: ask no Prometheus
};

// sacct's period (-S/-E): unbounded where unset.
struct Period {
    std::optional<double> start, end;
};

}  // namespace acme::acct
