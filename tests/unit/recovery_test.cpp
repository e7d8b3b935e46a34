#include <doctest/doctest.h>

#include <fstream>

#include "spank/faultguard/core/recovery_options.hpp"
#include "common/recovery/checkpoints.hpp"
#include "common/recovery/recovery_policy.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;
namespace fs = std::filesystem;

namespace {

recovery::CheckpointRules shipped() { return recovery::load_checkpoint_rules(ACME_SRCDIR "/etc/checkpoints.toml"); }

void touch(const fs::path& p, const std::string& text = "x") {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

std::string newest(const fs::path& dir) {
    const auto found = recovery::newest_complete(dir, shipped());
    return found ? found->path.filename().string() + " by " + found->rule : "none";
}

}  // namespace

TEST_CASE("a .complete marker: the newest complete checkpoint, a half-written newer one skipped") {
    test::TempDir d;
    touch(d.path() / "step-1" / ".complete");
    touch(d.path() / "step-2" / ".complete");
    touch(d.path() / "step-3" / "model.bin");  // half-written: no marker
    CHECK(newest(d.path()) == "step-2 by complete-marker");
    const auto found = recovery::newest_complete(d.path(), shipped());
    REQUIRE(found);
    CHECK(found->skipped == std::vector<std::string>{"step-3"});
}

TEST_CASE("steps order by number, not by name: step-10 is newer than step-9") {
    test::TempDir d;
    touch(d.path() / "step-9" / ".complete");
    touch(d.path() / "step-10" / ".complete");
    CHECK(newest(d.path()) == "step-10 by complete-marker");
}

TEST_CASE("PyTorch DCP: .metadata is written last") {
    test::TempDir d;
    touch(d.path() / "step-100" / ".metadata");
    touch(d.path() / "step-100" / "__0_0.distcp");
    touch(d.path() / "step-200" / "__0_0.distcp");
    CHECK(newest(d.path()) == "step-100 by pytorch-dcp");
}

TEST_CASE("Hugging Face: the weights index or model.safetensors makes checkpoint-N complete") {
    test::TempDir d;
    touch(d.path() / "checkpoint-500" / "model.safetensors.index.json");
    touch(d.path() / "checkpoint-1000" / "model.safetensors");
    touch(d.path() / "checkpoint-1500" / "optimizer.pt");
    CHECK(newest(d.path()) == "checkpoint-1000 by huggingface");
}

TEST_CASE("Megatron: latest_checkpointed_iteration.txt names the newest complete iteration") {
    test::TempDir d;
    touch(d.path() / "iter_0001000" / "mp_rank_00" / "model_optim_rng.pt");
    touch(d.path() / "iter_0002000" / "mp_rank_00" / "model_optim_rng.pt");
    touch(d.path() / "latest_checkpointed_iteration.txt", "1000\n");
    CHECK(newest(d.path()) == "iter_0001000 by megatron");
}

TEST_CASE("DeepSpeed: the latest file names the tag") {
    test::TempDir d;
    touch(d.path() / "global_step300" / "mp_rank_00_model_states.pt");
    touch(d.path() / "global_step400" / "mp_rank_00_model_states.pt");
    touch(d.path() / "latest", "global_step300");
    CHECK(newest(d.path()) == "global_step300 by deepspeed");
}

TEST_CASE("nothing complete is a fresh start") {
    test::TempDir d;
    touch(d.path() / "step-1" / "model.bin");
    CHECK(newest(d.path()) == "none");
}

TEST_CASE("a pointer file cannot point outside the checkpoint directory") {
    test::TempDir d;
    touch(d.path() / "latest", "../../etc");
    touch(d.path() / "step-1" / ".complete");
    CHECK(newest(d.path()) == "step-1 by complete-marker");
}

TEST_CASE("bad checkpoint rules are refused with file:line") {
    CHECK_THROWS_WITH_AS(recovery::parse_checkpoint_rules("[[marker]]\nname = \"x\"\n", "c.toml"),
                         doctest::Contains("c.toml:1"), std::runtime_error);
    CHECK_THROWS_WITH_AS(recovery::parse_checkpoint_rules("[[marker]]\nname = \"x\"\nfiles = [\"a/b\"]\n", "c.toml"),
                         doctest::Contains("without '/'"), std::runtime_error);
    CHECK_THROWS_WITH_AS(recovery::parse_checkpoint_rules("[[ruler]]\nname = \"x\"\n", "c.toml"),
                         doctest::Contains("unknown section"), std::runtime_error);
    CHECK_THROWS_WITH_AS(
        recovery::parse_checkpoint_rules("[[pointer]]\nname = \"x\"\nfile = \"l\"\nformat = \"{:q}\"\n", "c.toml"),
        doctest::Contains("c.toml:1"), std::runtime_error);
}

namespace {
recovery::Inputs infra_with(std::vector<diagnose::GpuEvent> events) {
    recovery::Inputs in;
    in.diagnosis.category = diagnose::Category::infrastructure;
    in.diagnosis.reason = "gpu_lost";
    in.gpu_events = std::move(events);
    in.job_gpus = {0, 1};
    in.max_restarts = 3;
    return in;
}
}  // namespace

TEST_CASE("recovery drains on hardware evidence on this node and requeues under the cap") {
    auto p = recovery::plan(infra_with({{1, "xid", 79, 10.0, "Xid 79"}}));
    CHECK(p.drain);
    CHECK(p.drain_reason == "acme: gpu_lost XID 79 on GPU 1");
    CHECK(p.requeue);
    CHECK(p.why.find("requeued (restart 1 of 3)") != std::string::npos);
}

TEST_CASE("recovery never drains on a guess: no evidence here, or an application XID, or another job's GPU") {
    CHECK_FALSE(recovery::plan(infra_with({})).drain);
    CHECK_FALSE(recovery::plan(infra_with({{0, "xid", 13, 1.0, ""}})).drain);   // app fault
    CHECK_FALSE(recovery::plan(infra_with({{3, "xid", 79, 1.0, ""}})).drain);   // not the job's GPU
    CHECK(recovery::plan(infra_with({})).requeue);
    auto in = infra_with({});
    in.gpucheck_healthy = false;
    in.gpucheck_detail = "GPU 1 HBM bandwidth 40% of expected";
    const auto p = recovery::plan(in);
    CHECK(p.drain);
    CHECK(p.drain_reason.find("gpucheck failed") != std::string::npos);
}

TEST_CASE("a stall verdict's localisation never drains on its own: gpucheck decides, the requeued job avoids the node") {
    // A job that busy-waits on one node and sleeps on the others looks like a hung collective.
    auto in = infra_with({});
    in.diagnosis.reason = "stalled_node";
    in.stall_named_here = "its GPUs spin while the others idle";
    auto p = recovery::plan(in);
    CHECK_FALSE(p.drain);
    CHECK(p.avoid_node);
    CHECK(p.requeue);
    CHECK(p.why.find("which the job itself can cause") != std::string::npos);
    CHECK(p.why.find("the requeued job avoids it") != std::string::npos);
    in.gpucheck_healthy = true;
    CHECK_FALSE(recovery::plan(in).drain);
    // gpucheck, run on the node after the job, is evidence the job cannot make.
    in.gpucheck_healthy = false;
    in.gpucheck_detail = "GPU 0 NCCL all-reduce hung";
    p = recovery::plan(in);
    CHECK(p.drain);
    CHECK_FALSE(p.avoid_node);
    CHECK(p.drain_reason == "acme: stalled_node: its GPUs spin while the others idle; gpucheck failed: GPU 0 NCCL all-reduce hung");
    // A fatal XID on the named node still drains it.
    in = infra_with({{0, "xid", 79, 1.0, ""}});
    in.stall_named_here = "fatal XIDs on its GPUs";
    CHECK(recovery::plan(in).drain);
}

TEST_CASE("one user's jobs hold at most drain_per_user nodes drained; past it the node stays and the job avoids it") {
    auto in = infra_with({{1, "xid", 79, 10.0, "Xid 79"}});
    in.uid = 1001;
    in.drain_per_user = 2;
    in.drained_by_uid = 1;
    CHECK(recovery::plan(in).drain);
    in.drained_by_uid = 2;
    const auto p = recovery::plan(in);
    CHECK_FALSE(p.drain);
    CHECK(p.avoid_node);
    CHECK(p.requeue);
    CHECK(p.why.find("uid 1001's jobs already hold 2 nodes drained (drain_per_user=2): not drained (acme: gpu_lost XID 79 on GPU 1), an admin decides") !=
          std::string::npos);
    in.drain_per_user = 0;  // no limit
    CHECK(recovery::plan(in).drain);
    // The count comes from slurmctld's reasons, by the tag each acme drain ends with.
    const std::string mine = "acme: gpu_lost XID 79 on GPU 1" + recovery::drain_owner_tag(7, 1001);
    CHECK(mine == "acme: gpu_lost XID 79 on GPU 1 (job 7 uid 1001)");
    CHECK(recovery::drains_by_uid({mine, "acme: ecc (job 9 uid 10010)", "maintenance (job 1 uid 1001)", "acme: x (job 8 uid 1001)"}, 1001) == 2);
}

TEST_CASE("framework and script failures are never requeued; the restart cap holds") {
    auto in = infra_with({{0, "xid", 79, 1.0, ""}});
    in.diagnosis.category = diagnose::Category::framework;
    in.diagnosis.reason = "value_error";
    auto p = recovery::plan(in);
    CHECK_FALSE(p.requeue);
    CHECK_FALSE(p.drain);
    CHECK(p.why == "framework failure (value_error): not requeued, it would fail again");
    in = infra_with({{0, "xid", 79, 1.0, ""}});
    in.restarts = 3;
    p = recovery::plan(in);
    CHECK(p.drain);
    CHECK_FALSE(p.requeue);
    CHECK(p.why.find("restart cap reached (3 of 3)") != std::string::npos);
}

TEST_CASE("--auto-recover and --ckpt-dir are validated with one-line errors") {
    std::string error;
    CHECK(faultguard::parse_auto_recover("", error) == 3);
    CHECK(faultguard::parse_auto_recover("0", error) == 0);
    CHECK_FALSE(faultguard::parse_auto_recover("-1", error));
    CHECK(error.find("--auto-recover=-1") != std::string::npos);
    CHECK_FALSE(faultguard::parse_auto_recover("many", error));
    test::TempDir d;
    CHECK(faultguard::check_ckpt_dir(d.path().string(), error));
    CHECK_FALSE(faultguard::check_ckpt_dir("relative/ckpt", error));
    CHECK(error.find("absolute path") != std::string::npos);
    CHECK_FALSE(faultguard::check_ckpt_dir((d.path() / "missing").string(), error));
    CHECK(error.find("create it first") != std::string::npos);
    touch(d.path() / "file");
    CHECK_FALSE(faultguard::check_ckpt_dir((d.path() / "file").string(), error));
}

TEST_CASE("a checkpoint directory that is gone or not a directory is an error naming it, not a fresh start") {
    test::TempDir d;
    // Before, both read as "nothing complete": the job started over from step 0.
    const auto gone = d.path() / "unmounted";
    CHECK_THROWS_WITH(recovery::newest_complete(gone, shipped()),
                      doctest::Contains((gone.string() + ": No such file or directory (not mounted on this node?)").c_str()));
    touch(d.path() / "file");
    CHECK_THROWS_WITH(recovery::newest_complete(d.path() / "file", shipped()), doctest::Contains("Not a directory"));
    // An empty directory is a fresh start.
    fs::create_directories(d.path() / "empty");
    CHECK(newest(d.path() / "empty") == "none");
}
