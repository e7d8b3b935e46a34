// libFuzzer: what the evalsched CLI does with an answer from evalschedd's socket (libcurl
// carries the bytes; this is the parsing and printing that remains ours). Input: a selector
// byte (which command reads the answer), then the body. Properties: no crash, no UB; an
// exception is only nlohmann's (main turns it into one line); what status, watch and report
// print holds no control character but the newline (a dataset name or a reason from a job's
// log must not move the cursor), and every line watch --json prints is one JSON object.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "evalsched/cli/client.hpp"
#include "evalsched/cli/render.hpp"
#include "evalsched/cli/report.hpp"
#include "evalsched/cli/watch.hpp"

using namespace acme::evalsched;

namespace {

void printable(const std::string& out) {
    for (unsigned char c : out)
        if ((c < 0x20 && c != '\n') || c == 0x7f) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const int which = data[0] % 4;
    const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
    const Response r = parse_answer(200, body);
    if (!r.body.is_null() && r.body.is_discarded()) __builtin_trap();
    (void)parse_answer(404, body).error();
    try {
        acme::util::TableStyle style;
        style.width = 80;
        switch (which) {
        case 0: {
            printable(render_evaluation(r.body, style, 1000));
            Watcher lines(Watcher::Mode::lines, 80);
            printable(lines.update(r.body, 1000));
            printable(lines.update(r.body, 1002));
            Watcher events(Watcher::Mode::json, 80);
            const std::string out = events.update(r.body, 1000);
            for (std::size_t at = 0, end; at < out.size(); at = end + 1) {
                end = out.find('\n', at);
                if (end == std::string::npos) __builtin_trap();  // every event ends its line
                if (!nlohmann::json::accept(out.substr(at, end - at))) __builtin_trap();
            }
            break;
        }
        case 1: printable(render_status(r.body, style)); break;
        case 2: printable(render_report(r.body, "table", style)); break;
        default: printable(render_priors(r.body, style)); break;
        }
    } catch (const nlohmann::json::exception&) {
        // a type the CLI did not expect: main prints e.what() as one line and exits 1
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
