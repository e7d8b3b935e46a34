#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spank/gputrace/core/textfile.hpp"
#include "spank/gputrace/core/textfile_writer.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace acme;
using namespace acme::telemetry;

namespace {

// The exposition text read back the way a scraper does: HELP/TYPE per metric name, and each
// series line split into name, labels and value.
struct Series {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};
struct Parsed {
    std::map<std::string, std::string> help, type;
    std::map<std::string, int> help_count, type_count;
    std::vector<Series> series;
    std::vector<std::string> bad_lines;
};

Parsed parse(const std::string& text) {
    Parsed p;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
            const bool help = line[2] == 'H';
            const auto rest = line.substr(7);
            const auto sp = rest.find(' ');
            const auto name = rest.substr(0, sp);
            (help ? p.help : p.type)[name] = rest.substr(sp + 1);
            ++(help ? p.help_count : p.type_count)[name];
            continue;
        }
        const auto brace = line.find('{');
        const auto close = line.rfind('}');
        if (brace == std::string::npos || close == std::string::npos || close + 2 > line.size()) {
            p.bad_lines.push_back(line);
            continue;
        }
        Series s;
        s.name = line.substr(0, brace);
        std::size_t i = brace + 1;
        while (i < close) {
            const auto eq = line.find('=', i);
            const auto key = line.substr(i, eq - i);
            std::string value;
            std::size_t j = eq + 2;  // past ="
            for (; line[j] != '"'; ++j) {
                if (line[j] == '\\') {
                    ++j;
                    value += line[j] == 'n' ? '\n' : line[j];
                } else {
                    value += line[j];
                }
            }
            s.labels[key] = value;
            i = j + 1;
            if (i < close && line[i] == ',') ++i;
        }
        s.value = std::stod(line.substr(close + 2));
        p.series.push_back(std::move(s));
    }
    return p;
}

const Series* find(const Parsed& p, const std::string& name, const std::string& gpu) {
    for (const auto& s : p.series)
        if (s.name == name && s.labels.at("gpu") == gpu) return &s;
    return nullptr;
}

Sample full_sample(int minor) {
    nvml::Reading r;
    r.util_gpu = 87;
    r.util_mem = 40;
    r.mem_used = 30000LL << 20;  // bytes, as NVML gives them and the spool keeps them
    r.mem_total = 81920LL << 20;
    r.power_mw = 312500;
    r.energy_mj = 123456789;
    r.temp_c = 61;
    r.sm_clock_mhz = 1410;
    r.ecc_corrected = 3;
    r.ecc_uncorrected = 0;
    r.gpm_sm_util = 75;
    r.gpm_tensor_util = 50;
    r.gpm_dram_bw_util = 25;
    return Sample{minor, 1764648000.5, r};
}

}  // namespace

TEST_CASE("textfile: a sampled GPU gets every DCGM metric, labelled by node and GPU, and the job on one info series") {
    const Sample s = full_sample(2);
    const std::vector<TextfileGpu> gpus = {
        {{2, nullptr, "NVIDIA H100 80GB HBM3", "GPU-aaaa"}, &s, 2, 79, std::nullopt, false},
    };
    const auto p = parse(format_textfile({"node-a1", 4242, "alice"}, gpus));
    CHECK(p.bad_lines.empty());

    const auto* util = find(p, "DCGM_FI_DEV_GPU_UTIL", "2");
    REQUIRE(util);
    CHECK(util->value == 87);
    CHECK(util->labels == std::map<std::string, std::string>{{"gpu", "2"},
                                                             {"UUID", "GPU-aaaa"},
                                                             {"device", "nvidia2"},
                                                             {"modelName", "NVIDIA H100 80GB HBM3"},
                                                             {"Hostname", "node-a1"}});
    // The job is on its info series only, so a GPU's series outlive the jobs that use it.
    const auto* info = find(p, "acme_job_gpu_info", "2");
    REQUIRE(info);
    CHECK(info->value == 1);
    CHECK(info->labels == std::map<std::string, std::string>{{"hpc_job", "4242"}, {"user", "alice"}, {"Hostname", "node-a1"}, {"gpu", "2"}});
    // The spool's bytes become DCGM's MiB; free is total - used.
    CHECK(find(p, "DCGM_FI_DEV_FB_USED", "2")->value == 30000);
    CHECK(find(p, "DCGM_FI_DEV_FB_TOTAL", "2")->value == 81920);
    CHECK(find(p, "DCGM_FI_DEV_FB_FREE", "2")->value == 81920 - 30000);
    CHECK(find(p, "DCGM_FI_DEV_MEM_COPY_UTIL", "2")->value == 40);
    // W, not mW.
    CHECK(find(p, "DCGM_FI_DEV_POWER_USAGE", "2")->value == doctest::Approx(312.5));
    CHECK(find(p, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "2")->value == 123456789);
    CHECK(find(p, "DCGM_FI_DEV_GPU_TEMP", "2")->value == 61);
    CHECK(find(p, "DCGM_FI_DEV_SM_CLOCK", "2")->value == 1410);
    // GPM percentages become DCGM's 0-1 ratios.
    CHECK(find(p, "DCGM_FI_PROF_SM_ACTIVE", "2")->value == doctest::Approx(0.75));
    CHECK(find(p, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "2")->value == doctest::Approx(0.5));
    CHECK(find(p, "DCGM_FI_PROF_DRAM_ACTIVE", "2")->value == doctest::Approx(0.25));
    CHECK(find(p, "DCGM_FI_DEV_XID_ERRORS", "2")->value == 79);
    CHECK(find(p, "acme_gpu_xid_events_total", "2")->value == 2);
    CHECK(find(p, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "2")->value == 3);
    CHECK(find(p, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "2")->value == 0);
    CHECK(find(p, "acme_gpu_sample_timestamp_seconds", "2")->value == doctest::Approx(1764648000.5));

    const std::map<std::string, std::string> types = {
        {"DCGM_FI_DEV_GPU_UTIL", "gauge"},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge"},
        {"DCGM_FI_DEV_FB_USED", "gauge"},
        {"DCGM_FI_DEV_FB_FREE", "gauge"},
        {"DCGM_FI_DEV_FB_TOTAL", "gauge"},
        {"DCGM_FI_DEV_POWER_USAGE", "gauge"},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter"},
        {"DCGM_FI_DEV_GPU_TEMP", "gauge"},
        {"DCGM_FI_DEV_SM_CLOCK", "gauge"},
        {"DCGM_FI_PROF_SM_ACTIVE", "gauge"},
        {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge"},
        {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge"},
        {"DCGM_FI_DEV_XID_ERRORS", "gauge"},
        {"acme_gpu_xid_events_total", "counter"},
        {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter"},
        {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter"},
        {"acme_gpu_sample_timestamp_seconds", "gauge"},
        {"acme_job_gpu_info", "gauge"},
    };
    CHECK(p.type == types);
    for (const auto& [name, type] : types) {
        CHECK(p.help_count.at(name) == 1);
        CHECK(p.type_count.at(name) == 1);
    }
    CHECK(p.series.size() == types.size());
}

TEST_CASE("textfile: absent readings are left out, never written as 0, and HELP is the same in every job's file") {
    nvml::Reading r;  // a GPU without GPM, power or ECC: only utilisation and memory
    r.util_gpu = 0;
    r.mem_used = 5LL << 20;
    r.mem_total = 16384LL << 20;
    const Sample a{0, 100.0, r};
    const Sample b = full_sample(1);
    const std::vector<TextfileGpu> gpus = {
        {{0, nullptr, "Tesla T4", "GPU-0000"}, &a, 0, 0, std::nullopt, false},
        {{1, nullptr, "Tesla T4", "GPU-1111"}, &b, 0, 0, std::nullopt, false},
    };
    const auto text = format_textfile({"n1", 7, "bob"}, gpus);
    const auto p = parse(text);
    for (const char* absent : {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                               "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEM_COPY_UTIL"}) {
        CAPTURE(absent);
        CHECK(find(p, absent, "0") == nullptr);
        CHECK(find(p, absent, "1") != nullptr);
    }
    // A real 0 is still written.
    REQUIRE(find(p, "DCGM_FI_DEV_GPU_UTIL", "0"));
    CHECK(find(p, "DCGM_FI_DEV_GPU_UTIL", "0")->value == 0);
    CHECK(find(p, "DCGM_FI_DEV_XID_ERRORS", "0")->value == 0);

    // Another job, another node and user: node_exporter refuses a metric whose HELP differs
    // across files.
    const auto other = parse(format_textfile({"n2", 99999, "carol"}, {gpus[1]}));
    CHECK(other.help == p.help);
}

TEST_CASE("textfile: a GPU not sampled yet shows only its XID series; label values are escaped") {
    const std::vector<TextfileGpu> gpus = {{{3, nullptr, "Odd \"model\"\\x\nline", "GPU-3"}, nullptr, 1, 48, std::nullopt, false}};
    const auto text = format_textfile({"n1", 5, "us\"er"}, gpus);
    CHECK(text.find("modelName=\"Odd \\\"model\\\"\\\\x\\nline\"") != std::string::npos);
    const auto p = parse(text);
    CHECK(p.bad_lines.empty());
    REQUIRE(p.series.size() == 3);
    CHECK(find(p, "DCGM_FI_DEV_XID_ERRORS", "3")->value == 48);
    CHECK(find(p, "DCGM_FI_DEV_XID_ERRORS", "3")->labels.at("modelName") == "Odd \"model\"\\x\nline");
    CHECK(find(p, "acme_job_gpu_info", "3")->labels.at("user") == "us\"er");
    CHECK(find(p, "acme_gpu_sample_timestamp_seconds", "3") == nullptr);
}

TEST_CASE("textfile: the exact bytes of a small job's file") {
    // Pinned byte for byte: dashboards and node_exporter read these names, labels and numbers.
    nvml::Reading r;
    r.util_gpu = 12.5;
    r.mem_used = 3LL << 20;
    r.mem_total = 16LL << 30;
    r.power_mw = 70125;
    r.energy_mj = 9876543210LL;
    const Sample a{0, 1764648000.25, r};
    const std::vector<TextfileGpu> gpus = {{{0, nullptr, "Tesla \"T4\"", "GPU-0"}, &a, 1, 13, std::nullopt, false},
                                           {{5, nullptr, "Tesla T4", "GPU-5"}, nullptr, 0, 0, std::nullopt, false}};
    const std::string l0 = R"({gpu="0",UUID="GPU-0",device="nvidia0",modelName="Tesla \"T4\"",Hostname="n1"})";
    const std::string l5 = R"({gpu="5",UUID="GPU-5",device="nvidia5",modelName="Tesla T4",Hostname="n1"})";
    const std::string expected =
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        "DCGM_FI_DEV_GPU_UTIL" + l0 + " 12.5\n"
        "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n"
        "DCGM_FI_DEV_FB_USED" + l0 + " 3\n"
        "# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).\n# TYPE DCGM_FI_DEV_FB_FREE gauge\n"
        "DCGM_FI_DEV_FB_FREE" + l0 + " 16381\n"
        "# HELP DCGM_FI_DEV_FB_TOTAL Framebuffer memory total (in MiB).\n# TYPE DCGM_FI_DEV_FB_TOTAL gauge\n"
        "DCGM_FI_DEV_FB_TOTAL" + l0 + " 16384\n"
        "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
        "DCGM_FI_DEV_POWER_USAGE" + l0 + " 70.125\n"
        "# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + l0 + " 9876543210\n"
        "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error seen during the job (0: none).\n"
        "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
        "DCGM_FI_DEV_XID_ERRORS" + l0 + " 13\n"
        "DCGM_FI_DEV_XID_ERRORS" + l5 + " 0\n"
        "# HELP acme_gpu_xid_events_total XID events seen on the GPU during the job.\n"
        "# TYPE acme_gpu_xid_events_total counter\n"
        "acme_gpu_xid_events_total" + l0 + " 1\n"
        "acme_gpu_xid_events_total" + l5 + " 0\n"
        "# HELP acme_gpu_sample_timestamp_seconds Unix time of the GPU sample these values come from.\n"
        "# TYPE acme_gpu_sample_timestamp_seconds gauge\n"
        "acme_gpu_sample_timestamp_seconds" + l0 + " 1764648000.25\n"
        "# HELP acme_job_gpu_info The job and user holding the GPU (always 1); join on Hostname and gpu.\n"
        "# TYPE acme_job_gpu_info gauge\n"
        R"(acme_job_gpu_info{hpc_job="77",user="bob",Hostname="n1",gpu="0"} 1)" "\n"
        R"(acme_job_gpu_info{hpc_job="77",user="bob",Hostname="n1",gpu="5"} 1)" "\n";
    CHECK(format_textfile({"n1", 77, "bob"}, gpus) == expected);
    std::string out = "left over from an earlier tick";
    TextfileFormat({"n1", 77, "bob"}, gpus).format(gpus, out);
    CHECK(out == expected);

    // textfile_job_labels=yes: the job's labels on every GPU series too (DCGM-exporter's job
    // mapping), the info series as well.
    std::string labelled = expected;
    for (const auto& l : {l0, l5}) {
        const std::string with = l.substr(0, l.size() - 1) + R"(,hpc_job="77",user="bob"})";
        for (std::size_t at = labelled.find(l); at != std::string::npos; at = labelled.find(l, at + with.size()))
            labelled.replace(at, l.size(), with);
    }
    CHECK(labelled != expected);
    CHECK(format_textfile({"n1", 77, "bob", true}, gpus) == labelled);
}

TEST_CASE("textfile: one format reused across ticks writes what a fresh one would, tick by tick") {
    const TextfileJob job{"node-b2", 31337, "dave"};
    std::vector<TextfileGpu> gpus = {{{1, nullptr, "NVIDIA A100", "GPU-1"}, nullptr, 0, 0, std::nullopt, false},
                                     {{4, nullptr, "NVIDIA A100", "GPU-4"}, nullptr, 0, 0, std::nullopt, false}};
    const TextfileFormat format(job, gpus);
    std::string text;
    format.format(gpus, text);  // not sampled yet: the XID series and the job info only
    CHECK(text == format_textfile(job, gpus));
    CHECK(parse(text).series.size() == 6);

    Sample first = full_sample(1), second = full_sample(4);
    gpus[0].sample = &first;
    gpus[1].sample = &second;
    format.format(gpus, text);
    const std::string tick1 = text;
    CHECK(tick1 == format_textfile(job, gpus));

    // Other values, another reading missing, an XID: a shorter text into the same buffer.
    first.reading.util_gpu = 3.25;
    first.reading.power_mw.reset();
    first.ts += 0.05;
    second.reading.gpm_sm_util.reset();
    gpus[1].xid_count = 1;
    gpus[1].last_xid = 94;
    format.format(gpus, text);
    CHECK(text != tick1);
    CHECK(text == format_textfile(job, gpus));
    const auto p = parse(text);
    CHECK(p.bad_lines.empty());
    CHECK(find(p, "DCGM_FI_DEV_GPU_UTIL", "1")->value == 3.25);
    CHECK(find(p, "DCGM_FI_DEV_POWER_USAGE", "1") == nullptr);
    CHECK(find(p, "DCGM_FI_DEV_POWER_USAGE", "4")->value == doctest::Approx(312.5));
    CHECK(find(p, "DCGM_FI_PROF_SM_ACTIVE", "4") == nullptr);
    CHECK(find(p, "DCGM_FI_DEV_XID_ERRORS", "4")->value == 94);
    CHECK(find(p, "acme_gpu_sample_timestamp_seconds", "1")->value == doctest::Approx(1764648000.55));
}

namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

TEST_CASE("textfile writer: replaces the job's file atomically, mode 0644, only one .prom file") {
    test::TempDir dir;
    TextfileWriter w(dir.path().string(), 42);
    std::string error;
    REQUIRE(w.write("first\n", error));
    REQUIRE(w.write("second, longer\n", error));
    REQUIRE(w.write("third\n", error));  // shorter than the file it overwrites
    CHECK(w.path() == dir.file("acme-gputrace-42.prom"));
    CHECK(slurp(dir.file("acme-gputrace-42.prom")) == "third\n");
    struct stat st {};
    REQUIRE(stat(dir.file("acme-gputrace-42.prom").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    // The other file kept for the next tick is dot-named, not *.prom: node_exporter skips it.
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{".acme-gputrace-42.prom.tmp", "acme-gputrace-42.prom"});
    w.remove();
    CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("textfile writer: a scrape that opened the file before a write still reads the whole old file") {
    test::TempDir dir;
    TextfileWriter w(dir.path().string(), 43);
    std::string error;
    REQUIRE(w.write("old 1\nold 2\n", error));
    REQUIRE(w.write("older\n", error));
    std::ifstream scrape(dir.file("acme-gputrace-43.prom"));  // opened, not read yet
    REQUIRE(w.write("new, of another length\n", error));
    std::stringstream got;
    got << scrape.rdbuf();
    CHECK(got.str() == "older\n");
    CHECK(slurp(dir.file("acme-gputrace-43.prom")) == "new, of another length\n");
}

TEST_CASE("textfile writer: a link planted at the temporary name between ticks is not written through") {
    test::TempDir dir;
    const auto victim = dir.file("victim");
    { std::ofstream(victim) << "precious\n"; }
    TextfileWriter w(dir.path().string(), 8);
    std::string error;
    REQUIRE(w.write("one\n", error));
    REQUIRE(w.write("two\n", error));  // now both names are the writer's files
    const auto tmp = dir.file(".acme-gputrace-8.prom.tmp");
    REQUIRE(std::filesystem::exists(tmp));
    std::filesystem::remove(tmp);
    REQUIRE(symlink(victim.c_str(), tmp.c_str()) == 0);
    REQUIRE(w.write("three\n", error));
    CHECK(slurp(victim) == "precious\n");
    CHECK(slurp(dir.file("acme-gputrace-8.prom")) == "three\n");
    std::filesystem::remove(tmp);
    REQUIRE(link(victim.c_str(), tmp.c_str()) == 0);  // a hard link: same inode as the victim
    REQUIRE(w.write("four\n", error));
    CHECK(slurp(victim) == "precious\n");
    CHECK(slurp(dir.file("acme-gputrace-8.prom")) == "four\n");
    // And the job's file removed by someone between ticks comes back at the next one.
    std::filesystem::remove(dir.file("acme-gputrace-8.prom"));
    REQUIRE(w.write("five\n", error));
    CHECK(slurp(dir.file("acme-gputrace-8.prom")) == "five\n");
    REQUIRE(w.write("six\n", error));
    CHECK(slurp(dir.file("acme-gputrace-8.prom")) == "six\n");
    CHECK(slurp(victim) == "precious\n");
}

TEST_CASE("textfile writer: a symlink planted at the file or temporary name is replaced, not written through") {
    test::TempDir dir;
    const auto victim = dir.file("victim");
    { std::ofstream(victim) << "precious\n"; }
    REQUIRE(symlink(victim.c_str(), dir.file("acme-gputrace-7.prom").c_str()) == 0);
    REQUIRE(symlink(victim.c_str(), dir.file(".acme-gputrace-7.prom.tmp").c_str()) == 0);
    TextfileWriter w(dir.path().string(), 7);
    std::string error;
    REQUIRE(w.write("metrics\n", error));
    CHECK(slurp(victim) == "precious\n");
    CHECK(!std::filesystem::is_symlink(dir.file("acme-gputrace-7.prom")));
    CHECK(slurp(dir.file("acme-gputrace-7.prom")) == "metrics\n");
    CHECK(!std::filesystem::exists(std::filesystem::symlink_status(dir.file(".acme-gputrace-7.prom.tmp"))));
}

TEST_CASE("textfile writer: a missing directory is an error naming it, and is used once it appears") {
    test::TempDir dir;
    const auto sub = dir.file("node-exporter");
    TextfileWriter w(sub, 9);
    std::string error;
    CHECK(!w.write("x\n", error));
    CHECK(error.find(sub) != std::string::npos);
    CHECK(error.find("No such file") != std::string::npos);
    std::filesystem::create_directory(sub);
    error.clear();
    CHECK(w.write("y\n", error));
    CHECK(slurp(sub + "/acme-gputrace-9.prom") == "y\n");
}

TEST_CASE("textfile: the epilog's cleanup removes a crashed sampler's file, and %n names the node's directory") {
    test::TempDir dir;
    { std::ofstream(dir.file("acme-gputrace-11.prom")) << "stale\n"; }
    { std::ofstream(dir.file("acme-gputrace-12.prom")) << "another job\n"; }
    CHECK(remove_textfile(dir.path().string(), 11));
    CHECK(!std::filesystem::exists(dir.file("acme-gputrace-11.prom")));
    CHECK(std::filesystem::exists(dir.file("acme-gputrace-12.prom")));
    CHECK(!remove_textfile(dir.path().string(), 11));
    CHECK(!remove_textfile(dir.file("absent"), 11));

    CHECK(expand_textfile_dir("/tmp/mc/%n/textfile", "node3") == "/tmp/mc/node3/textfile");
    CHECK(expand_textfile_dir("/var/lib/prometheus/node-exporter", "node3") == "/var/lib/prometheus/node-exporter");
    CHECK(expand_textfile_dir("/a/%n%n/%x", "b") == "/a/bb/%x");
}

TEST_CASE("textfile: the node's live straggler score is one series with the node's and job's labels, only when known") {
    const TextfileJob job{"n2", 4711, "erin"};
    Sample s = full_sample(0);
    std::vector<TextfileGpu> gpus = {{{0, nullptr, "NVIDIA H100", "GPU-0"}, &s, 0, 0, std::nullopt, false}};
    const TextfileFormat format(job, gpus);
    std::string text;
    format.format(gpus, text);
    CHECK(text.find("acme_job_node_slowness") == std::string::npos);
    format.format(gpus, text, 2.5);
    CHECK(text == format_textfile(job, gpus, 2.5));
    const auto p = parse(text);
    CHECK(p.bad_lines.empty());
    CHECK(p.type.at("acme_job_node_slowness") == "gauge");
    CHECK(p.help_count.at("acme_job_node_slowness") == 1);
    int found = 0;
    for (const auto& series : p.series) {
        if (series.name != "acme_job_node_slowness") continue;
        ++found;
        CHECK(series.value == 2.5);
        CHECK(series.labels == std::map<std::string, std::string>{{"Hostname", "n2"}, {"hpc_job", "4711"}, {"user", "erin"}});
    }
    CHECK(found == 1);
    // HELP never names the job or the node (node_exporter needs it identical across files).
    CHECK(format_textfile({"n9", 1, "x"}, gpus, 1.0).find(p.help.at("acme_job_node_slowness")) != std::string::npos);
}

TEST_CASE("textfile: the held-but-idle series, per GPU, only where the idle policy follows the job") {
    const Sample s = full_sample(0);
    std::vector<TextfileGpu> gpus = {{{0, nullptr, "NVIDIA H100", "GPU-0"}, &s, 0, 0, std::nullopt, false},
                                     {{1, nullptr, "NVIDIA H100", "GPU-1"}, &s, 0, 0, std::nullopt, false}};
    const TextfileJob job{"n1", 42, "alice", false};
    CHECK(format_textfile(job, gpus).find("acme_gpu_idle") == std::string::npos);
    gpus[0].idle_seconds = 0;
    gpus[1].idle_seconds = 1900;
    gpus[1].idle_alert = true;
    const auto text = format_textfile(job, gpus);
    CHECK(text.find("# TYPE acme_gpu_idle_seconds gauge\n") != std::string::npos);
    CHECK(text.find(R"(acme_gpu_idle_seconds{gpu="0",UUID="GPU-0",device="nvidia0",modelName="NVIDIA H100",Hostname="n1"} 0)" "\n") != std::string::npos);
    CHECK(text.find(R"(acme_gpu_idle_seconds{gpu="1",UUID="GPU-1",device="nvidia1",modelName="NVIDIA H100",Hostname="n1"} 1900)" "\n") != std::string::npos);
    CHECK(text.find(R"(acme_gpu_idle_alert{gpu="0",UUID="GPU-0",device="nvidia0",modelName="NVIDIA H100",Hostname="n1"} 0)" "\n") != std::string::npos);
    CHECK(text.find(R"(acme_gpu_idle_alert{gpu="1",UUID="GPU-1",device="nvidia1",modelName="NVIDIA H100",Hostname="n1"} 1)" "\n") != std::string::npos);
    CHECK(text.find("acme_gpu_idle_seconds{gpu=\"1\",UUID=\"GPU-1\",device=\"nvidia1\",modelName=\"NVIDIA H100\",Hostname=\"n1\",hpc_job") == std::string::npos);
}
