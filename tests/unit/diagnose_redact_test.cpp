// Redaction of the log tail before it leaves the node for the model server.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/redact.hpp"
#include "common/diagnose/corpus.hpp"

using acme::diagnose::redact;

namespace {
bool leaks(const std::string& out, const std::string& secret) { return out.find(secret) != std::string::npos; }
}  // namespace

TEST_CASE("redaction removes passwords, tokens, keys and credentials, line for line") {
    const std::string log =
        "export WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n"
        "password=hunter2secret\n"
        "{\"db_password\": \"s3cr3t!\", \"step\": 4}\n"
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmno\n"
        "curl -H 'authorization: token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'\n"
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
        "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        "python train.py --hf-token hf_abcdefghijklmnopqrstuvwxyz123456 --lr 3e-4\n"
        "OPENAI key sk-proj-abcdefghijklmnopqrstuvwx used\n"
        "cloning https://alice:pa55word@git.example.com/repo.git\n"
        "mail bob.smith@example.org failed\n"
        "-----BEGIN RSA PRIVATE KEY-----\n"
        "MIIEowIBAAKCAQEA7\n"
        "-----END RSA PRIVATE KEY-----\n"
        "FileNotFoundError: /home/alice/data/train.jsonl\n";
    const std::string out = redact(log, {{"alice"}});
    for (const char* secret : {"0123456789abcdef0123456789abcdef01234567", "hunter2secret", "s3cr3t!", "eyJhbGciOiJIUzI1NiJ9",
                               "ghp_ABCDEFGHIJ", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "hf_abcdefghij", "sk-proj-abc",
                               "pa55word", "bob.smith@example.org", "MIIEowIBAAKCAQEA7", "alice"}) {
        CAPTURE(secret);
        CHECK_FALSE(leaks(out, secret));
    }
    // Line for line: the model's evidence line maps back to the job's log.
    CHECK(std::count(out.begin(), out.end(), '\n') == std::count(log.begin(), log.end(), '\n'));
    CHECK(out.find("\"step\": 4") != std::string::npos);
    CHECK(out.find("--lr 3e-4") != std::string::npos);
    CHECK(out.find("FileNotFoundError: /home/[user]/data/train.jsonl") != std::string::npos);
    CHECK(out.find("[REDACTED:private key]") != std::string::npos);
}

TEST_CASE("redaction keeps what diagnoses a failure: counts, tokenizers, errors, PWD") {
    const std::string log =
        "max_tokens=2048 tokens_per_sec: 1234.5 tokenizer: llama\n"
        "PWD=/work/run7\n"
        "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<52110> with error 12, opcode 0, len 0, vendor err 129\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n";
    CHECK(redact(log) == log);
}

TEST_CASE("a private key cut off by the tail's end is removed to the end") {
    const std::string out = redact("ok\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAB\n");
    CHECK(out == "ok\n[REDACTED:private key]\n[REDACTED:private key]\n[REDACTED:private key]\n");
}

TEST_CASE("a bare random-looking string is redacted by its shape; hex ids, addresses, paths and words stay") {
    // Bare secrets: nothing names them.
    const std::string secrets =
        "using Zx8fQ2LmN4pR7sT1vW3yB6dE9gH0jK5cA2 for the bucket\n"
        "echo Q7hPz3kW9mXv2LtR8bNc4YsJ6fDq1GeU5aHw0oKi+Tr/ != ok\n";
    const std::string out = redact(secrets);
    CHECK_FALSE(leaks(out, "Zx8fQ2LmN4pR7sT1vW3yB6dE9gH0jK5cA2"));
    CHECK_FALSE(leaks(out, "Q7hPz3kW9mXv2LtR8bNc4YsJ6fDq1GeU5aHw0oKi"));
    CHECK(out.find("using [REDACTED:random string] for the bucket") != std::string::npos);
    CHECK(std::count(out.begin(), out.end(), '\n') == 2);

    // What a diagnosis reads stays as it was.
    const std::string ordinary =
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x75b35c4f6617 in /opt/conda/lib/libc10.so)\n"
        "[Mon Jan  8 10:00:01 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
        "NVRM: GPU at PCI:0000:01:00: GPU-af4f89ae-d08b-1b53-9938-c9ed209a3513\n"
        "The node with node id: 75b2eec8a61cdafd37cc8072b1caf9abdeef9c4e74a4f24d5dfce28d and ip: 10.4.4.107 has been marked dead\n"
        "OSError: /data/hub/models--meta-llama--Meta-Llama-3.1-8B-Instruct/snapshots/5206a32e0bd3067aef1ce90f5528ade7d866253f/config.json\n"
        "Exception raised from c10_cuda_check_implementation at /opt/conda/conda-bld/pytorch_1702400440653/work/c10/cuda/CUDAException.cpp:44\n"
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_IB_HCA=mlx5_0,mlx5_1 CUDA_VISIBLE_DEVICES=0,1,2,3\n"
        "ImportError: /opt/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE\n"
        "test_rmsnorm_quant_fusion_True_1e_05_257_64_dtype0 FAILED\n"
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000)\n"
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1a\n"
        // A physics sample's name: words with digits, few changes of case (issue 40, batch 19).
        "Error when reading gridpacks/Pseudoscalar2HDM_MonoTop_mScan_5F_mh3-600_mh4-150_gridpack/run_card.dat\n"
        // Public payout addresses miners log as their pool login (Bitcoin, Monero).
        "stratum  Authorized worker 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2.rig1\n"
        "-u 44AFFq5kSiGBoZ4NMDwYtN18obc8AemS33DBLWs3H7otXft3XjrpDtQGv7SqSsaBYBb98uNbr2VBBEt7f2wfn3RVGQBEP3A.gpu\n";
    CHECK(redact(ordinary) == ordinary);
}

TEST_CASE("redacting the labelled corpus changes no diagnosis and hides almost nothing as random") {
    const char* srcdir = std::getenv("srcdir");
    const std::filesystem::path top = srcdir && *srcdir ? srcdir : ".";
    const auto engine = acme::diagnose::Engine::from_dir(top / "rules");
    auto cases = acme::diagnose::corpus::load(top / "tests/data/diagnosis");
    REQUIRE(cases.size() >= 300);
    std::size_t changed = 0, random_strings = 0;
    for (auto& c : cases) {
        acme::diagnose::JobEnd job = c.job;
        job.log = c.text;
        const auto plain = engine.diagnose(job);
        const std::string redacted = redact(c.text);
        for (std::size_t pos = 0; (pos = redacted.find("[REDACTED:random string]", pos)) != std::string::npos; ++pos)
            ++random_strings;
        job.log = redacted;
        const auto after = engine.diagnose(job);
        if (after.reason != plain.reason) {
            ++changed;
            MESSAGE(c.log.string(), ": ", plain.reason, " -> ", after.reason);
        }
    }
    CHECK(changed == 0);
    // Real logs are not random: at most a handful of runs (a base64 blob in a log) in 300+ cases.
    CHECK(random_strings <= 3);
}
