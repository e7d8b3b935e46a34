// gpuacct's names for what it reads from a directory of node spools. The reader and its row
// types belong to the spool's schema module (common/store/spool_set.hpp); gpuacct's core,
// views and the slurmdbd reader (which fills the same rows from job records) use them as their own.
#pragma once

#include "common/store/spool_set.hpp"

namespace acme::acct {

using store::Diagnosis;
using store::Drain;
using store::GpuEvent;
using store::GpuSummary;
using store::HealthCheck;
using store::Job;
using store::JobText;
using store::JobVisitor;
using store::NodeGpus;
using store::read_spools;
using store::ReadOptions;
using store::scan_spools;
using store::SpoolScan;
using store::SpoolSet;
using store::Stall;
using store::TaskExit;

}  // namespace acme::acct
