// The engine's promises, one scenario each: the root cause wins over the loudest line, the
// GPU and Slurm outrank the log, and the answer carries its evidence.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sys/wait.h>

#include "common/diagnose/engine.hpp"

using namespace acme::diagnose;

namespace {

const Engine& shipped() {
    static const Engine engine = [] {
        const char* srcdir = std::getenv("srcdir");
        return Engine::from_dir(std::string(srcdir && *srcdir ? srcdir : ".") + "/rules");
    }();
    return engine;
}

Diagnosis run(std::string_view log, JobEnd job = {}) {
    job.log = log;
    return shipped().diagnose(job);
}

constexpr std::string_view kWatchdog =
    "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n";

}  // namespace

TEST_CASE("a NCCL watchdog timeout whose first error is a CUDA OOM on another rank is out_of_memory") {
    std::string log = "step 10 loss 2.1\n"
                      "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" +
                      std::string(kWatchdog) + std::string(kWatchdog);
    Diagnosis d = run(log);
    CHECK(d.reason == "out_of_memory");
    CHECK(d.category == Category::framework);
    CHECK(d.action == Action::fix_code);
    REQUIRE_FALSE(d.evidence.empty());
    CHECK(d.evidence.front().line == 2);
    CHECK(d.evidence.front().text.find("CUDA out of memory") != std::string::npos);
}

TEST_CASE("a NCCL watchdog timeout alone is nccl_timeout, an infrastructure failure that is requeued") {
    Diagnosis d = run(kWatchdog);
    CHECK(d.reason == "nccl_timeout");
    CHECK(d.category == Category::infrastructure);
    CHECK(d.action == Action::requeue);
}

TEST_CASE("a bare 'CUDA error: an illegal memory access' is the program's and never recovers the node") {
    Diagnosis d = run("Traceback (most recent call last):\n"
                      "  File \"train.py\", line 3, in <module>\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
    CHECK(d.reason == "runtime_error");
    CHECK(d.category == Category::framework);
    CHECK(d.action == Action::none);
    CHECK(d.evidence.front().line == 3);
}

TEST_CASE("an illegal memory access with the node's XID 79 beside it is the node's") {
    Diagnosis d = run("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n");
    CHECK(d.reason == "gpu_lost");
    CHECK(d.category == Category::infrastructure);
}

TEST_CASE("an XID 79 on one of the job's GPUs outranks whatever the log says") {
    JobEnd job;
    job.job_gpus = {0, 1};
    job.gpu_events = {{1, "xid", 79, 0, "GPU has fallen off the bus."}};
    Diagnosis d = run("ValueError: bad config\n", job);
    CHECK(d.reason == "gpu_lost");
    CHECK(d.action == Action::drain);
    CHECK(d.evidence.front().source == "gpu_event");
    CHECK(d.evidence.front().text == "GPU 1: XID 79 (GPU has fallen off the bus.)");
    CHECK(d.confidence >= 0.95);
}

TEST_CASE("an XID 79 on a GPU that is not the job's is ignored") {
    JobEnd job;
    job.job_gpus = {0, 1};
    job.gpu_events = {{3, "xid", 79, 0, ""}};
    CHECK(run("ValueError: bad config\n", job).reason == "value_error");
}

TEST_CASE("an application XID (13) decides nothing: the log's IndexError does") {
    JobEnd job;
    job.gpu_events = {{0, "xid", 13, 0, "Graphics SM Warp Exception"}};
    CHECK(run("IndexError: list index out of range\n", job).reason == "index_error");
}

TEST_CASE("a SIGKILL with an OOM-kill record is out_of_memory") {
    JobEnd job;
    job.job_exit = ExitStatus{0, 9};
    job.oom_kill = true;
    Diagnosis d = run("epoch 1 step 100\n", job);
    CHECK(d.reason == "out_of_memory");
    CHECK(d.evidence.front().text == "signal 9 (SIGKILL), cgroup recorded an OOM kill");

    JobEnd killed_only;
    killed_only.job_exit = ExitStatus{0, 9};
    CHECK(run("epoch 1 step 100\n", killed_only).reason == "unknown");
}

TEST_CASE("exit 127 with 'command not found' is command_not_found, and the exit code raises confidence") {
    std::string_view log = "/var/spool/slurmd/job1/slurm_script: line 3: torchrun: command not found\n";
    JobEnd with_exit;
    with_exit.job_exit = ExitStatus{127, 0};
    Diagnosis d = run(log, with_exit);
    CHECK(d.reason == "command_not_found");
    CHECK(d.category == Category::script);
    CHECK(d.confidence > run(log).confidence);
    CHECK(d.evidence.back().text == "exit code 127");
}

TEST_CASE("Slurm's 'DUE TO TIME LIMIT' is time_limit, even with NCCL errors after it") {
    Diagnosis d = run("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\n" +
                      std::string(kWatchdog));
    CHECK(d.reason == "time_limit");
    CHECK(d.action == Action::none);
}

TEST_CASE("a STEP cancelled by srun after a task failed is not a cancellation") {
    Diagnosis d = run("ValueError: x\nslurmstepd: error: *** STEP 7.0 ON n1 CANCELLED AT 2024-01-01T00:00:00 ***\n");
    CHECK(d.reason == "value_error");
}

TEST_CASE("chained Python exceptions: the first one raised is the cause") {
    Diagnosis d = run("KeyError: 'a'\n\nDuring handling of the above exception, another exception occurred:\n\n"
                      "AttributeError: 'NoneType' object has no attribute 'x'\n");
    CHECK(d.reason == "key_error");
}

TEST_CASE("interleaved multi-rank output with srun --label prefixes is still read") {
    Diagnosis d = run("0: step 1\n1: Traceback (most recent call last):\n0: step 2\n1: NameError: name 'np' is not defined\n");
    CHECK(d.reason == "name_error");
    CHECK(d.evidence.front().line == 4);
}

TEST_CASE("a job that exited 0 has nothing to diagnose, even with an error word in its log") {
    JobEnd job;
    job.job_exit = ExitStatus{0, 0};
    Diagnosis d = run("ValueError: handled and retried\n", job);
    CHECK(d.reason == "unknown");
    CHECK(d.evidence.front().text == "the job exited 0: nothing to diagnose");
}

TEST_CASE("when no rule decides, the answer is unknown with the last error lines as evidence") {
    JobEnd job;
    job.task_wait_statuses = {11};  // killed by SIGSEGV
    Diagnosis d = run("starting\nFatal Python error: Segmentation fault\nbye\n", job);
    CHECK(d.reason == "unknown");
    CHECK(d.category == Category::unknown);
    CHECK(d.confidence == 0.0);
    REQUIRE(d.evidence.size() == 2);
    CHECK(d.evidence[0].line == 2);
    CHECK(d.evidence[1].text == "signal 11 (SIGSEGV)");
}

TEST_CASE("history names an unmatched failure after its nearest labelled one, and says so") {
    std::string past = "gpu-a01: fabric manager: NVSwitch 3 fatal, resetting partition 7\nfatal: training aborted\n";
    History history({{4242, "nvlink_error", log_signature(past)}});
    std::string now = "gpu-b09: fabric manager: NVSwitch 5 fatal, resetting partition 2\nfatal: training aborted\n";
    JobEnd job;
    job.log = now;
    Diagnosis d = shipped().diagnose(job, &history);
    CHECK(d.reason == "nvlink_error");
    CHECK(d.rule == "history:4242");
    CHECK(d.evidence.front().source == "history");
    CHECK(d.evidence.front().text.find("job 4242") != std::string::npos);

    JobEnd unrelated;
    unrelated.log = "error: the tokenizer vocabulary file is empty\n";
    CHECK(shipped().diagnose(unrelated, &history).reason == "unknown");
}

TEST_CASE("evidence text is cleaned for storage: no terminal escapes, valid UTF-8, bounded") {
    std::string log = "\x1b[31mValueError: bad \xff byte\x1b[0m\n";
    Diagnosis d = run(log);
    CHECK(d.evidence.front().text == "ValueError: bad ? byte");
    // 0xf5..0xff never start a UTF-8 character (the fuzzer found this one).
    CHECK(run("ValueError: \xf5\xa3\xa3 x\n").evidence.front().text == "ValueError: ??? x");
    std::string long_line = "ValueError: " + std::string(5000, 'x') + "\n";
    CHECK(run(long_line).evidence.front().text.size() <= kEvidenceChars);
}

TEST_CASE("a progress bar's carriage returns: the evidence is the segment that holds the error") {
    JobEnd job;
    job.task_wait_statuses = {1 << 8};
    // A long line that starts with '\r' and matches no rule (the fuzzer found it read past the line).
    std::string bar = "\r" + std::string(600, '=') + " fatal: stalled\n";
    Diagnosis d = run(bar, job);
    REQUIRE(!d.evidence.empty());
    CHECK(d.evidence.front().text.size() <= kEvidenceChars);
    CHECK(d.evidence.front().text.find("fatal: stalled") != std::string::npos);
    // The segment after the last '\r' before the error is what a terminal showed.
    d = run(" 10%|#     |\r 50%|#####  |\rValueError: bad shard\n");
    CHECK(d.evidence.front().text == "ValueError: bad shard");
}

TEST_CASE("exit statuses decode as Slurm gives them") {
    CHECK(parse_exit_code2("0:9") == ExitStatus{0, 9});
    CHECK(parse_exit_code2("127:0") == ExitStatus{127, 0});
    CHECK_FALSE(parse_exit_code2("127"));
    CHECK_FALSE(parse_exit_code2("a:b"));
    CHECK_FALSE(parse_exit_code2("300:0"));
    CHECK(from_wait_status(1 << 8) == ExitStatus{1, 0});
    CHECK(from_wait_status(SIGKILL) == ExitStatus{0, 9});
}

TEST_CASE("diagnose_noexcept answers unknown instead of throwing") {
    JobEnd job;
    job.log = "NameError: name 'x' is not defined\n";
    CHECK(diagnose_noexcept(shipped(), job).reason == "name_error");
    std::string error;
    CHECK_FALSE(load_engine_noexcept("/nonexistent/rules.d", error));
    CHECK(error.find("/nonexistent/rules.d: rules directory not found") == 0);
}

TEST_CASE("families in their documented words, not a case's: launchers, busy or absent devices, error counters") {
    JobEnd failed;
    failed.job_exit = ExitStatus{1, 0};
    auto reason = [&](std::string_view log) { return run(log, failed).reason; };
    // Open MPI's and PRRTE's help texts for a program they could not start, in all three forms.
    CHECK(reason("prterun was unable to launch the specified application as it could not find an executable:\n") ==
          "command_not_found");
    CHECK(reason("mpirun was unable to find the specified executable file, and therefore\n") == "command_not_found");
    // MPI's invalid-handle strings, after MPICH's prefix or Open MPI's error class, any case.
    CHECK(reason("Fatal error in PMPI_Allreduce: Invalid datatype, error stack:\n") == "runtime_error");
    CHECK(reason("*** MPI_ERR_RANK: invalid rank\n") == "runtime_error");
    // The launch layer losing a peer, and torch's store timing out; never the NCCL watchdog's timeout.
    CHECK(reason("PRTE has lost communication with a remote daemon.\n") == "connection_error");
    CHECK(reason("[n1:42] PMIX ERROR: UNREACHABLE in file server/pmix_server.c at line 2788\n") == "connection_error");
    CHECK(reason("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.\n") ==
          "connection_error");
    CHECK(reason("RuntimeError: TCPStore( rank: 1) timed out waiting for key\n") == "connection_error");
    CHECK(reason(kWatchdog) == "nccl_timeout");
    // A device another process holds or a runtime that would not start: the node's, requeued.
    Diagnosis d = run("RuntimeError: Unable to initialize backend 'tpu': The TPU is already in use by process 4242\n", failed);
    CHECK(d.reason == "cuda_error");
    CHECK(d.action == Action::requeue);
    CHECK(reason("ERROR  NRT:nrt_allocate_neuron_cores  NeuronCore(s) are busy\n") == "cuda_error");
    CHECK(reason("RuntimeError: Failed to initialize Habana device: driver not found\n") == "cuda_error");
    // ... but an allocator failing while it starts is the memory's.
    CHECK(reason("RuntimeError: NPU runtime initialization failed: out of memory\n") == "out_of_memory");
    // Error counters in any tool's form; zero is no error.
    CHECK(reason("{\"mem_ecc_uncorrected\": 3, \"sram_ecc_uncorrected\": 0}\n") == "ecc_error");
    CHECK(reason("    Uncorrectable ECC errors : 2\n") == "ecc_error");
    CHECK(reason("    mem_ecc_uncorrected: 0\nValueError: bad config\n") == "value_error");
    // The kernel's uncorrected host memory and PCIe errors; corrected ones are not failures.
    CHECK(reason("[ 812.1] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0\n") == "node_failure");
    CHECK(reason("[ 90.2] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n") == "node_failure");
    CHECK(reason("[ 812.1] EDAC MC0: 1 CE memory read error\nValueError: bad config\n") == "value_error");
}

TEST_CASE("families in their documented words, not a case's: lost nodes, storage services and clients, the node's paths") {
    JobEnd failed;
    failed.job_exit = ExitStatus{1, 0};
    auto reason = [&](std::string_view log) { return run(log, failed).reason; };
    // A node its manager lost, whichever manager: requeued, never drained.
    Diagnosis d = run("Status Reason: Host EC2 (instance i-0abc123) terminated.\n", failed);
    CHECK(d.reason == "node_failure");
    CHECK(d.action == Action::requeue);
    CHECK(reason("Error: instance was preempted by the cloud provider\n") == "node_failure");
    CHECK(reason("flux-job: job exception: type=exec node failure on host17 (rank 16)\n") == "node_failure");
    CHECK(reason("Warning  NodeNotReady  pod/train-0  Node is not ready\n") == "node_failure");
    CHECK(reason("The node with node id: 75b2 and address: 10.0.0.4 has been marked dead because the detector has missed "
                 "too many heartbeats from it.\n") == "node_failure");
    // A hedge is not a loss.
    CHECK(reason("INFO: if the instance is preempted, the job restarts from its checkpoint\nValueError: bad config\n") ==
          "value_error");
    // ssh's status 255 in any launcher's words.
    CHECK(reason("pdsh@head: node07: ssh exited with exit code 255\n") == "connection_error");
    // Object stores refusing under load; the job's own 403 is not the service's.
    CHECK(reason("ERROR: GET gs://ckpts/run7/step-100/shard-0 failed: HTTP 429 rateLimitExceeded\n") == "storage_error");
    CHECK(reason("azure.core.exceptions.HttpResponseError: ServerBusy https://acct.blob.core.windows.net/data/x.bin\n") ==
          "storage_error");
    CHECK(reason("ERROR: GET gs://ckpts/run7/shard-0 failed: HTTP 403 SlowDown\nValueError: bad config\n") == "value_error");
    // A network file system's client losing its servers.
    CHECK(reason("[ 77.1] Lustre: scratch-MDT0000-mdc: This client was evicted by scratch-MDT0000\n") == "storage_error");
    CHECK(reason("mmfsd: GPFS: node 10.1.1.4 lost connection to the cluster manager\n") == "storage_error");
    // A disk's errno on a kernel interface or a daemon's socket is the node's, not a disk.
    CHECK(reason("slurmstepd: error: write to '/sys/fs/cgroup/cpuset/slurm/job_7/cgroup.procs' failed: No space left on device\n") ==
          "node_failure");
    CHECK(reason("OSError: [Errno 28] No space left on device: '/scratch/u/ckpt.pt'\n") == "storage_error");
    // CUDA statuses in memory's words are the memory's; an empty data set is the data set's.
    CHECK(reason("nccl.cc:12 NCCL WARN Cuda failure 'out of memory'\nRuntimeError: CUDA error: out of memory\n") == "out_of_memory");
    CHECK(reason("RuntimeError: CUDA error: CUSOLVER_STATUS_ALLOC_FAILED when calling `cusolverDnCreate(handle)`\n") ==
          "out_of_memory");
    CHECK(reason("ValueError: num_samples should be a positive integer value, but got num_samples=0\n") ==
          "dataset_loading_error");
}
