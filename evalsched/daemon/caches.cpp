#include "evalsched/daemon/caches.hpp"

#include <map>

#include "evalsched/daemon/views.hpp"
#include "evalsched/store/stamps.hpp"

namespace acme::evalsched {

using nlohmann::json;
using store::Database;

std::string SummaryCache::list_text(Database& db, const Caller& caller) {
    // Versions first, summaries second: a summary read after its version is never older than
    // the version it is stored under (at worst newer, and rebuilt once more next time).
    const std::vector<std::pair<std::int64_t, std::int64_t>> visible = visible_versions(db, caller);  // id, version
    std::vector<std::int64_t> stale;
    for (const auto& [id, version] : visible) {
        auto it = entries_.find(id);
        if (it == entries_.end() || it->second.version != version) stale.push_back(id);
    }
    if (entries_.size() + stale.size() > kMaxEntries) entries_.clear();
    if (!stale.empty()) {
        std::map<std::int64_t, std::int64_t> version_of(visible.begin(), visible.end());
        for (auto& e : summaries_of(db, stale, caller)) {
            const std::int64_t id = e["id"].get<std::int64_t>();
            entries_[id] = Entry{version_of[id], e.dump(-1, ' ', false, json::error_handler_t::replace)};
            ++rebuilt_;
        }
    }
    std::string out = "[";
    for (const auto& [id, version] : visible) {
        auto it = entries_.find(id);
        if (it == entries_.end()) continue;  // created after the version read: next time
        if (out.size() > 1) out += ',';
        out += it->second.text;
    }
    return out + "]";
}

json PriorsCache::get(Database& db, const std::string& dataset) {
    // prior_runs and prior_startups only grow (finish_attempt) and lose their oldest rows
    // (prune_prior_runs): their newest ids and row counts change whenever what priors_json reads does.
    const std::array<std::int64_t, 4> key = priors_stamp(db);
    if (!valid_ || key != key_) {
        all_ = priors_json(db, "");
        key_ = key;
        valid_ = true;
        ++rebuilds_;
    }
    if (dataset.empty()) return all_;
    json out = json::array();
    for (const auto& p : all_)
        if (p["dataset"] == dataset) out.push_back(p);
    return out;
}

const std::string* ReplyCache::find(const std::string& key, const std::string& stamp) const {
    auto it = replies_.find(key);
    if (it == replies_.end() || it->second.first != stamp) return nullptr;
    return &it->second.second;
}

void ReplyCache::keep(const std::string& key, const std::string& stamp, std::string text) {
    // A bound, not an LRU: clearing all is rare (4096 distinct reads) and costs one rebuild each.
    if (replies_.size() > kMaxReplies) replies_.clear();
    replies_[key] = {stamp, std::move(text)};
}

}  // namespace acme::evalsched
