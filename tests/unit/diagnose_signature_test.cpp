// Log signatures: the same failure on another run looks alike, a different one does not.
#include <doctest/doctest.h>

#include "common/diagnose/engine.hpp"
#include "common/diagnose/signature.hpp"

using namespace acme::diagnose;

TEST_CASE("normalising drops what differs between runs of the same failure") {
    CHECK(normalise_line("[rank3]: Error at /home/alice/run7/train.py:120 pid 0x7f3a2b") ==
          "[rank#]: error at train.py:# pid #");
    CHECK(normalise_line("[rank12]: Error at /scratch/bob/train.py:98 pid 0x11ff") == "[rank#]: error at train.py:# pid #");
}

TEST_CASE("two runs of one failure are similar, different failures are not") {
    auto a = log_signature("step 1\n[rank3]: fatal: NVSwitch 3 link 12 down on gpu-a01\n");
    auto b = log_signature("step 9\n[rank5]: fatal: NVSwitch 7 link 2 down on gpu-b11\n");
    auto c = log_signature("error: tokenizer vocabulary file is empty\n");
    CHECK(similarity(a, b) > 0.6);
    CHECK(similarity(a, c) < 0.2);
    CHECK(similarity(a, Signature{}) == 0.0);
}

TEST_CASE("a signature survives its stored text form; malformed text is refused") {
    auto s = log_signature("error: something broke in module foo\n");
    REQUIRE_FALSE(s.empty());
    CHECK(signature_from_text(to_text(s)) == s);
    CHECK(signature_from_text("") == Signature{});
    CHECK_FALSE(signature_from_text("xyz"));
    CHECK_FALSE(signature_from_text("12 "));
    CHECK_FALSE(signature_from_text("12  34"));
    CHECK_FALSE(signature_from_text("11112222333344445"));
}

TEST_CASE("history prefers the most similar label above the threshold") {
    auto oom = log_signature("error: worker 3 ran out of pinned memory\n");
    auto nvl = log_signature("fatal: NVSwitch 3 link 12 down\n");
    History history({{1, "out_of_memory", oom}, {2, "nvlink_error", nvl}});
    auto match = history.nearest(log_signature("error: worker 7 ran out of pinned memory\n"));
    REQUIRE(match);
    CHECK(match->failure->job_id == 1);
    CHECK_FALSE(history.nearest(log_signature("error: checksum mismatch in shard\n")));
}
