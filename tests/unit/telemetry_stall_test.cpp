#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/store/spool.hpp"
#include "common/store/spool_stalls.hpp"
#include "spank/gputrace/core/gputrace_config.hpp"
#include "spank/gputrace/core/progress_probe.hpp"
#include "spank/gputrace/core/stall.hpp"
#include "spank/gputrace/core/stall_share.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;
using namespace acme::telemetry;
using acme::test::TempDir;

namespace {

StallConfig small() {
    StallConfig c;
    c.spin_window = 10;
    c.idle_window = 60;
    c.warmup = 5;
    c.probe = 1;
    c.margin = 5;
    return c;
}

// n GPUs at util %, power W, memory util %.
std::vector<Sample> gpus(int n, double util, long long watts, double mem) {
    std::vector<Sample> out;
    for (int g = 0; g < n; ++g) {
        Sample s{g, 0, {}};
        s.reading.util_gpu = util;
        s.reading.util_mem = mem;
        s.reading.power_mw = watts * 1000;
        out.push_back(s);
    }
    return out;
}

Probe log_of(long long size) {
    Probe p;
    p.log_size = size;
    return p;
}

}  // namespace

TEST_CASE("a node's GPUs: busy while training, spin at low power without memory traffic, idle") {
    const auto c = small();
    NodeTracker t(c, "n1", 0);
    t.on_samples(gpus(4, 95, 300, 40), 1);
    CHECK(t.state().pattern == Pattern::busy);
    CHECK(t.state().active_at == 1);
    t.on_samples(gpus(4, 97, 80, 1), 2);  // NCCL spin: SMs busy, a quarter of the power, no traffic
    CHECK(t.state().pattern == Pattern::spin);
    CHECK(t.state().pattern_since == 2);
    CHECK(t.state().active_at == 1);
    t.on_samples(gpus(4, 0, 60, 0), 3);
    CHECK(t.state().pattern == Pattern::idle);
}

TEST_CASE("high utilisation at low power is no spin without a busier phase to compare with") {
    const auto c = small();
    NodeTracker t(c, "n1", 0);
    t.on_samples(gpus(4, 95, 0, 0), 1);  // a scenario or a GPU that reports no power
    CHECK(t.state().pattern == Pattern::busy);
}

TEST_CASE("stalled when every signal is quiet for the window, and the spinning node is named") {
    const auto c = small();
    NodeTracker n1(c, "n1", 0), n2(c, "n2", 0);
    for (double t = 1; t <= 8; ++t) {
        n1.on_samples(gpus(4, 95, 300, 40), t);
        n2.on_samples(gpus(4, 95, 300, 40), t);
        n1.on_probe(log_of(static_cast<long long>(t) * 100), t);
        n2.on_probe(log_of(static_cast<long long>(t) * 100), t);
    }
    // From 9 s: n2 spins, n1 idles, the log stops.
    for (double t = 9; t <= 30; ++t) {
        n1.on_samples(gpus(4, 0, 60, 0), t);
        n2.on_samples(gpus(4, 97, 80, 1), t);
        n1.on_probe(log_of(800), t);
        n2.on_probe(log_of(800), t);
        const auto v = judge({n1.state(), n2.state()}, {"n1", "n2"}, 0, t, c, true);
        if (t < 18) {
            CHECK_MESSAGE(!v.stalled, "t=" << t);
        } else {
            REQUIRE(v.stalled);
            CHECK(v.named == "n2");
            CHECK(v.hardware);
            CHECK(v.evidence.find("n2 named: its GPUs spin while the others idle") != std::string::npos);
            CHECK(actor(v, {"n1", "n2"}, "n1") == "n2");
        }
    }
}

TEST_CASE("a checkpoint save (GPUs idle, log quiet) is no stall: heartbeat touched, or checkpoint growing") {
    const auto c = small();
    NodeTracker hb(c, "n1", 0), ck(c, "n2", 0);
    for (double t = 1; t <= 200; ++t) {
        hb.on_samples(gpus(4, 0, 60, 0), t);
        ck.on_samples(gpus(4, 0, 60, 0), t);
        Probe p = log_of(100);
        p.heartbeat_mtime = t - 0.5;
        hb.on_probe(p, t);
        Probe q = log_of(100);
        q.ckpt_mtime = t;
        q.ckpt_bytes = static_cast<long long>(t) * 1000000;
        ck.on_probe(q, t);
        CHECK_MESSAGE(!judge({hb.state()}, {}, 0, t, c, false).stalled, "heartbeat t=" << t);
        CHECK_MESSAGE(!judge({ck.state()}, {}, 0, t, c, false).stalled, "checkpoint t=" << t);
    }
}

TEST_CASE("all GPUs idle and every signal quiet: a stall only after the long idle window, none named") {
    const auto c = small();
    NodeTracker n1(c, "n1", 0), n2(c, "n2", 0);
    for (double t = 1; t <= 70; ++t) {
        n1.on_samples(gpus(2, 0, 60, 0), t);
        n2.on_samples(gpus(2, 0, 60, 0), t);
        n1.on_probe(log_of(5), t);
        n2.on_probe(log_of(5), t);
    }
    CHECK(!judge({n1.state(), n2.state()}, {"n1", "n2"}, 0, 59, c, true).stalled);
    const auto v = judge({n1.state(), n2.state()}, {"n1", "n2"}, 0, 70, c, true);
    CHECK(v.stalled);
    CHECK(v.named.empty());
    CHECK(actor(v, {"n1", "n2"}, "n2") == "n1");
}

TEST_CASE("no verdict: in the warm-up, with a busy node, a node not heard from, or no log to see") {
    auto c = small();
    NodeTracker n1(c, "n1", 0), n2(c, "n2", 0);
    for (double t = 1; t <= 40; ++t) {
        n1.on_samples(gpus(4, 95, 300, 40), 1);  // busy once, then spin
        n1.on_samples(gpus(4, 97, 80, 1), t);
        n2.on_samples(gpus(4, 95, 300, 40), t);  // still computing
        n1.on_probe(log_of(1), t);
    }
    CHECK(!judge({n1.state(), n2.state()}, {"n1", "n2"}, 0, 40, c, true).stalled);
    CHECK(!judge({n1.state()}, {"n1", "n2"}, 0, 40, c, true).stalled);
    CHECK(judge({n1.state()}, {}, 0, 40, c, false).stalled);
    c.warmup = 100;
    CHECK(!judge({n1.state()}, {}, 0, 40, c, false).stalled);
    c.warmup = 5;
    NodeTracker blind(c, "n3", 0);
    for (double t = 1; t <= 40; ++t) blind.on_samples(gpus(4, 97, 80, 1), t);
    CHECK(!judge({blind.state()}, {}, 0, 40, c, false).stalled);
}

TEST_CASE("fatal XIDs name their node; a node that stopped clearly first is named without hardware") {
    const auto c = small();
    NodeTracker n1(c, "n1", 0), n2(c, "n2", 0), n3(c, "n3", 0);
    for (double t = 1; t <= 40; ++t) {
        n1.on_samples(gpus(1, t < 20 ? 95 : 0, 300, 40), t);
        n2.on_samples(gpus(1, t < 10 ? 95 : 0, 300, 40), t);
        n3.on_samples(gpus(1, t < 20 ? 95 : 0, 300, 40), t);
        for (auto* n : {&n1, &n2, &n3}) n->on_probe(log_of(1), t);
    }
    auto c2 = c;
    c2.idle_window = 15;
    auto v = judge({n1.state(), n2.state(), n3.state()}, {"n1", "n2", "n3"}, 0, 40, c2, true);
    REQUIRE(v.stalled);
    CHECK(v.named == "n2");
    CHECK_FALSE(v.hardware);
    n3.on_xid(79);
    v = judge({n1.state(), n2.state(), n3.state()}, {"n1", "n2", "n3"}, 0, 40, c2, true);
    CHECK(v.named == "n3");
    CHECK(v.hardware);
}

TEST_CASE("node states round-trip through the share's line format; anything else is refused") {
    NodeState s;
    s.node = "gpu-07";
    s.ts = 1700000000.5;
    s.pattern = Pattern::spin;
    s.pattern_since = 1699999990;
    s.active_at = 1699999980;
    s.log_seen = true;
    s.fatal_xids = 2;
    s.util = 97;
    s.power_w = 81.5;
    const auto back = parse_state(format_state(s));
    REQUIRE(back);
    CHECK(back->node == "gpu-07");
    CHECK(back->pattern == Pattern::spin);
    CHECK(back->fatal_xids == 2);
    CHECK(back->log_seen);
    CHECK_FALSE(back->heartbeat_seen);
    CHECK(back->active_at == doctest::Approx(1699999980));
    CHECK_FALSE(parse_state(""));
    CHECK_FALSE(parse_state("acme-stall-v1 ../x 1 spin 1 1 1 1 0 0 0 1 1 1"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 1 spinning 1 1 1 1 0 0 0 1 1 1"));
    CHECK_FALSE(parse_state("acme-stall-v1 n1 nan spin 1 1 1 1 0 0 0 1 1 1"));
}

TEST_CASE("stall keys in plugstack.conf: documented names, bad values named, sampler words round-trip") {
    const auto r = parse_plugstack_args({"stall_spin_window=5", "stall_signal=TERM", "stall_share=/shared/acme",
                                         "stall_spin_power=2", "stall=maybe", "heartbeat_dir=tmp", "stall_cadence_k=4",
                                         "stall_cadence_floor=60", "stall_cadence_steps=0", "stall_cadence_k=fast"},
                                        "/x");
    CHECK(r.config.stall.spin_window == 5);
    CHECK(r.config.stall.signal == 15);
    CHECK(r.config.stall.share == "/shared/acme");
    CHECK(r.config.stall.spin_power == 0.5);
    CHECK(r.config.stall.cadence.k == 4);
    CHECK(r.config.stall.cadence.floor == 60);
    CHECK(r.config.stall.cadence.steps == 20);
    REQUIRE(r.errors.size() == 5);
    CHECK(r.errors[0] == "gputrace: plugstack argument stall_spin_power=2: want a number in [0.01, 1]");
    CHECK(r.errors[1] == "gputrace: plugstack argument stall=maybe: want on or off");
    CHECK(r.errors[3] == "gputrace: plugstack argument stall_cadence_steps=0: want a whole number in [1, 100000]");
    CHECK(r.errors[4] == "gputrace: plugstack argument stall_cadence_k=fast: want a number in [0, 100]");
    StallConfig back;
    std::vector<std::string> errors;
    for (const auto& w : stall_words(r.config.stall)) {
        const auto eq = w.find('=');
        CHECK(set_stall_key(w.substr(0, eq), w.substr(eq + 1), back, errors));
    }
    CHECK(errors.empty());
    CHECK(back.spin_window == 5);
    CHECK(back.signal == 15);
    CHECK(back.share == "/shared/acme");
    CHECK(back.cadence.k == 4);
    CHECK(back.cadence.floor == 60);
    CHECK(heartbeat_path(back, 42, "n2") == std::string(acme::paths::kHeartbeatDir) + "/42/heartbeat.n2");
}

TEST_CASE("the share: a state written is read back by node; a directory others may write is refused") {
    TempDir dir;
    StallShare share(dir.file("share"));
    REQUIRE(share.ok());
    NodeState s;
    s.node = "n2";
    s.ts = 10;
    s.pattern = Pattern::idle;
    CHECK(share.write(7, s));
    const auto got = share.read(7, {"n1", "n2"});
    REQUIRE(got.size() == 1);
    CHECK(got[0].node == "n2");
    share.remove(7, "n2");
    CHECK(share.read(7, {"n2"}).empty());
    mkdir((dir.file("open")).c_str(), 0777);
    chmod((dir.file("open")).c_str(), 0777);
    StallShare open(dir.file("open"));
    CHECK_FALSE(open.ok());
}

TEST_CASE("a look at the job's files: log sizes, heartbeat mtime, checkpoint growth") {
    TempDir dir;
    const std::string out = dir.file("job.out"), hb = dir.file("hb"), ck = dir.file("ckpt");
    std::ofstream(out) << "step 1\n";
    mkdir(ck.c_str(), 0755);
    mkdir((ck + "/step-1").c_str(), 0755);
    std::ofstream(ck + "/step-1/model.bin") << "weights";
    ProbePaths paths{{out, dir.file("missing.err")}, hb, ck};
    auto p = probe_as_user(paths, getuid(), getgid(), 5);
    CHECK(p.log_size == 7);
    CHECK_FALSE(p.heartbeat_mtime);
    CHECK(p.ckpt_bytes == 7);
    std::ofstream(hb) << "";
    std::ofstream(ck + "/step-1/model.bin", std::ios::app) << "more";
    p = probe_as_user(paths, getuid(), getgid(), 5);
    CHECK(p.heartbeat_mtime);
    CHECK(p.ckpt_bytes == 11);
}

TEST_CASE("the spool keeps one stall verdict per run") {
    TempDir dir;
    auto db = store::open_spool(dir.file("n1.db"));
    store::StallRow r;
    r.restart = 0;
    r.node = "n1";
    r.ts = 100;
    r.since = 80;
    r.named_node = "n2";
    r.hardware = true;
    r.evidence = "no progress for 20 s";
    r.action = "signalled SIGUSR1";
    store::upsert_stall(db, 5, r);
    r.action += ", cancelled after 2 s";
    store::upsert_stall(db, 5, r);
    const auto back = store::job_stall(db, 5, 0);
    REQUIRE(back);
    CHECK(back->named_node == "n2");
    CHECK(back->action == "signalled SIGUSR1, cancelled after 2 s");
    CHECK_FALSE(store::job_stall(db, 5, 1));
}

TEST_CASE("the grace period re-checks: progress after the verdict withdraws it, stale or quiet nodes do not") {
    NodeState n1, n2;
    n1.node = "n1";
    n2.node = "n2";
    n1.pattern = n2.pattern = Pattern::spin;
    n1.ts = n2.ts = 100;
    n1.active_at = n2.active_at = 40;
    // Nothing moved since the verdict at 90.
    CHECK_FALSE(progress_since({n1, n2}, 90, true));
    // The trainer touched its heartbeat on n2 after the verdict.
    n2.active_at = 95;
    CHECK(progress_since({n1, n2}, 90, true) == "n2's heartbeat was touched");
    n2.active_at = 40;
    // The log grew: progress, unless the verdict is a second one of an --auto-recover job (the
    // log may be the trainer answering the signal by saving).
    n1.log_changed_at = 97;
    CHECK(progress_since({n1, n2}, 90, true) == "the job's log grew (seen on n1)");
    CHECK_FALSE(progress_since({n1, n2}, 90, false));
    // Busy GPUs always count; a node not heard from since the verdict never does.
    n2.pattern = Pattern::busy;
    CHECK(progress_since({n1, n2}, 90, false) == "n2's GPUs are busy again");
    n2.ts = 85;
    CHECK_FALSE(progress_since({n2}, 90, true));
}

TEST_CASE("a withdrawn verdict is kept in the spool, marked") {
    TempDir dir;
    auto db = store::open_spool(dir.file("n1.db"));
    store::StallRow r;
    r.node = "n1";
    r.ts = 100;
    r.evidence = "no progress for 20 s";
    r.action = "signalled SIGUSR1, withdrawn after 3 s: n1's heartbeat was touched";
    r.withdrawn = true;
    store::upsert_stall(db, 6, r);
    const auto back = store::job_stall(db, 6, 0);
    REQUIRE(back);
    CHECK(back->withdrawn);
    CHECK(back->action == r.action);
}

TEST_CASE("stall_mail: off, user or an address; MailProg's argv as slurmctld's, one word each") {
    StallConfig c;
    std::vector<std::string> errors;
    CHECK(set_stall_key("stall_mail", "user", c, errors));
    CHECK(c.mail == "user");
    CHECK(set_stall_key("stall_mail", "hpc-admins@example.org", c, errors));
    CHECK(c.mail == "hpc-admins@example.org");
    CHECK(set_stall_key("stall_mail", "-oProxyCommand=x", c, errors));
    CHECK(set_stall_key("stall_mail", "a b", c, errors));
    REQUIRE(errors.size() == 2);
    CHECK(errors[0] == "gputrace: plugstack argument stall_mail=-oProxyCommand=x: want off, user or a mail address");
    CHECK(c.mail == "hpc-admins@example.org");
    CHECK(set_stall_key("stall_mail", "off", c, errors));
    CHECK(c.mail.empty());
    CHECK_FALSE(mail_address_ok(""));
    CHECK_FALSE(mail_address_ok("x;rm"));
    CHECK(mail_address_ok("alice"));
    CHECK(mail_address_ok("alice.smith+gpu@hpc-lab.example.org"));
    // mailx reads "+name" as a folder (root would append to /+name), "-x" as an option.
    CHECK_FALSE(mail_address_ok("+name"));
    CHECK_FALSE(mail_address_ok("+name@example.org"));
    CHECK_FALSE(mail_address_ok("-oX@example.org"));
    CHECK_FALSE(mail_address_ok(".alice@example.org"));
    CHECK_FALSE(mail_address_ok("a..b@example.org"));
    CHECK_FALSE(mail_address_ok("alice@"));
    CHECK_FALSE(mail_address_ok("alice@-example.org"));
    CHECK_FALSE(mail_address_ok("alice@example..org"));
    CHECK_FALSE(mail_address_ok("alice@b@c"));
    CHECK_FALSE(mail_address_ok("a|b"));

    Verdict v;
    v.stalled = true;
    v.since = 1000;
    v.named = "n2";
    const auto argv = stall_mail_argv("/usr/bin/mail", "alice", 12, "train\nme", v, 1300);
    REQUIRE(argv.size() == 4);
    CHECK(argv[0] == "/usr/bin/mail");
    CHECK(argv[1] == "-s");
    CHECK(argv[2] == "Slurm Job_id=12 Name=train?me Stalled, no progress for 300 s, node n2 named");
    CHECK(argv[3] == "alice");
    v.named.clear();
    CHECK(stall_mail_argv("m", "a", 1, "", v, 1000)[2] == "Slurm Job_id=1 Name=- Stalled, no progress for 0 s, no node named");
}
