#include "evalsched/daemon/sched/pilot_serve.hpp"

#include <fmt/format.h>

#include "evalsched/core/command_template.hpp"
#include "evalsched/daemon/sched/job_script.hpp"

namespace acme::evalsched {

std::string base_url(int port) { return fmt::format("http://127.0.0.1:{}", port); }

std::string port_owner_check(int port) {
    // /proc/net/tcp{,6}: field 2 the local address (hex ip:port), 4 the state (0A: LISTEN), 8
    // the socket's owner uid. Every listener on the port must be the step's own uid: another
    // user cannot share a port with it (SO_REUSEPORT requires the same uid), so a listener of
    // another uid there means the port is not ours, whatever answers on it.
    return fmt::format(
        R"sh(evalsched_port_owner() {{
  awk -v port={port:04X} -v me="$(id -u)" '$4 == "0A" {{ n = split($2, a, ":"); if (a[n] == port) {{ seen = 1; if ($8 != me) other = $8 }} }}
    END {{ if (other != "") {{ print other; exit 1 }} exit seen ? 0 : 2 }}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}}
)sh",
        fmt::arg("port", port));
}

std::string server_command(const Suite& suite, int gpus, int port) {
    const Serving& s = *suite.serving;
    const std::string serve = suite.wrap(render_template(
        s.serve_command, {{"checkpoint", std::string(kStagedVar)}, {"gpus", std::to_string(gpus)}, {"port", std::to_string(port)}}));
    const std::string url = shell_quote(base_url(port) + s.probe);
    return port_owner_check(port) + fmt::format(
        R"sh(
{{ {serve}
}} &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null' TERM INT
deadline=$(( $(date +%s) + {timeout} ))
until owner=$(evalsched_port_owner) && curl -sf -o /dev/null --max-time 5 {url}; do
  if [ -n "$owner" ]; then
    echo "evalsched: port {port} is held by uid $owner, not by this server (another user's program listens there): not used" >&2
    kill "$serve_pid" 2>/dev/null
    exit 1
  fi
  if ! kill -0 "$serve_pid" 2>/dev/null; then
    wait "$serve_pid"
    echo "evalsched: serve_command ended (status $?) before it answered "{url}": see the server's output above" >&2
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "evalsched: serve_command did not answer "{url}" within {timeout} s: raise serve_timeout in the suite, or see the server's output above" >&2
    kill "$serve_pid" 2>/dev/null
    exit 1
  fi
  sleep 0.5
done
printf '{{"ready": true, "port": {port}, "base_url": "%s"}}\n' {base} > "$attempt_dir/server.json.tmp" && mv "$attempt_dir/server.json.tmp" "$attempt_dir/server.json"
echo "evalsched: the server answers "{url} >&2
wait "$serve_pid"
)sh",
        fmt::arg("serve", serve), fmt::arg("timeout", static_cast<long>(s.ready_timeout_s)), fmt::arg("url", url), fmt::arg("port", port),
        fmt::arg("base", shell_quote(base_url(port))));
}

std::string client_command(const std::string& command, const Serving& serving, int port) {
    return port_owner_check(port) + fmt::format(
        R"sh(
if ! owner=$(evalsched_port_owner); then
  echo "evalsched: the pilot's server port {port} is ${{owner:+held by uid $owner}}${{owner:-not listened on}}, not by its server: this trial goes back to pending" >&2
  exit {lost}
fi
( {command}
)
rc=$?
if [ "$rc" -ne 0 ] && ! curl -sf -o /dev/null --max-time 5 "$EVALSCHED_BASE_URL"{probe}; then
  echo "evalsched: the pilot's server at $EVALSCHED_BASE_URL no longer answers "{probe}": this trial goes back to pending" >&2
  exit {lost}
fi
exit "$rc"
)sh",
        fmt::arg("command", command), fmt::arg("probe", shell_quote(serving.probe)), fmt::arg("lost", kServerLostExit), fmt::arg("port", port));
}

int choose_port(int lo, int hi, std::int64_t pilot, const std::set<int>& taken) {
    if (hi < lo) return -1;
    const long span = static_cast<long>(hi) - lo + 1;
    const long offset = pilot < 0 ? 0 : static_cast<long>(pilot % span);
    for (long i = 0; i < span; ++i) {
        const int port = static_cast<int>(lo + (offset + i) % span);
        if (!taken.count(port)) return port;
    }
    return -1;
}

}  // namespace acme::evalsched
