#include "common/slurm/nodes.hpp"
#include "common/slurm/compat.hpp"

#include <array>
#include <mutex>
#include <utility>

#include <slurm/slurm.h>

namespace acme::slurm {

std::string node_state_text(unsigned node_state) {
    // Slurm's node_state_string() is not in the public headers; these are its words.
    constexpr std::array<const char*, 7> kBase = {"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"};
    const unsigned base = node_state & NODE_STATE_BASE;
    std::string out = base < kBase.size() ? kBase[base] : "UNKNOWN";
    constexpr std::array<std::pair<unsigned, const char*>, 9> kFlags = {{
        {NODE_STATE_DRAIN, "DRAIN"},           {NODE_STATE_COMPLETING, "COMPLETING"},
        {NODE_STATE_NO_RESPOND, "NOT_RESPONDING"}, {NODE_STATE_FAIL, "FAIL"},
        {NODE_STATE_MAINT, "MAINT"},           {NODE_STATE_REBOOT_REQUESTED, "REBOOT_REQUESTED"},
        {NODE_STATE_POWERED_DOWN, "POWERED_DOWN"}, {NODE_STATE_RES, "RESERVED"},
        {NODE_STATE_PLANNED, "PLANNED"},
    }};
    for (const auto& [bit, word] : kFlags)
        if (node_state & bit) out += std::string("+") + word;
    return out;
}

std::optional<std::vector<NodeHealth>> load_node_health(std::string& error) {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        error = std::string("slurm_load_node: ") + compat::last_error_text();
        return std::nullopt;
    }
    std::vector<NodeHealth> out;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const node_info_t& n = msg->node_array[i];
        if (!n.name) continue;
        out.push_back({n.name, node_state_text(n.node_state), n.reason ? n.reason : ""});
    }
    slurm_free_node_info_msg(msg);
    return out;
}

}  // namespace acme::slurm
