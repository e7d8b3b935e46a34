// Redaction of the log tail before it leaves the node for the model server.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "common/diagnose/redact.hpp"

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
