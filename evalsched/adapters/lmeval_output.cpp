#include "evalsched/adapters/lmeval_output.hpp"

#include <fmt/format.h>

namespace acme::adapters::lmeval {

using nlohmann::json;

std::string metric_name(std::string_view metric, std::string_view filter) {
    if (filter.empty() || filter == "none") return std::string(metric);
    return fmt::format("{}.{}", metric, filter);
}

json parse_results(std::string_view text, const std::string& file) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw AdapterError(fmt::format("{} is not JSON: lm_eval did not finish writing it; rerun the trial", file));
    if (!j.contains("results") || !j["results"].is_object())
        throw AdapterError(fmt::format("{} has no \"results\" object: is it an lm-evaluation-harness results file?", file));
    return j;
}

std::map<std::string, double> task_scores(const json& results, const std::string& task, const std::string& file) {
    const auto r = results.find("results");
    if (r == results.end() || !r->is_object())
        throw AdapterError(fmt::format("{} has no \"results\" object: is it an lm-evaluation-harness results file?", file));
    auto it = r->find(task);
    if (it == r->end() || !it->is_object())
        throw AdapterError(fmt::format("{} has no results for task {}: check the task name (lm_eval ls tasks)", file, task));
    std::map<std::string, double> out;
    for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_number()) continue;  // "alias", and "N/A" stderrs
        const std::string& key = m.key();
        const auto comma = key.find(',');
        const std::string metric = key.substr(0, comma);
        if (metric.ends_with("_stderr") || metric == "sample_len" || metric == "samples") continue;
        out[metric_name(metric, comma == std::string::npos ? "none" : std::string_view(key).substr(comma + 1))] = m->get<double>();
    }
    if (out.empty()) throw AdapterError(fmt::format("{}: task {} has no numeric metric (run without --predict_only to score it)", file, task));
    return out;
}

namespace {
// lm-eval writes a task's version as a number (3.0) or a string ("Yaml"); its table prints "3".
std::string version_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<long long>(d)) ? std::to_string(static_cast<long long>(d)) : fmt::format("{}", d);
}
}  // namespace

json task_details(const json& results, const std::string& task) {
    // The fields lm-eval's own table prints per task and metric (lm_eval/utils.py make_table,
    // EleutherAI/lm-evaluation-harness 4e7e0d47): "versions" and "n-shot" per task, the filter
    // after the comma of a metric's key ("exact_match,strict-match"), its stderr under
    // "<metric>_stderr,<filter>" ("N/A" when the harness did not compute one).
    json out = json::object();
    const auto r = results["results"].find(task);
    if (r == results["results"].end() || !r->is_object()) return out;
    const auto per_task = [&](const char* key) {
        const auto m = results.find(key);
        if (m == results.end() || !m->is_object()) return json();
        const auto v = m->find(task);
        return v != m->end() && (v->is_number() || v->is_string()) ? *v : json();
    };
    const json version = per_task("versions"), n_shot = per_task("n-shot");
    for (auto m = r->begin(); m != r->end(); ++m) {
        if (!m->is_number()) continue;
        const std::string& key = m.key();
        const auto comma = key.find(',');
        const std::string metric = key.substr(0, comma), filter = comma == std::string::npos ? "none" : key.substr(comma + 1);
        if (metric.ends_with("_stderr") || metric == "sample_len" || metric == "samples") continue;
        json d{{"measure", metric}, {"filter", filter}};
        if (!version.is_null()) d["version"] = version_text(version);
        if (!n_shot.is_null()) d["n_shot"] = n_shot;
        const auto se = r->find(metric + "_stderr" + (comma == std::string::npos ? "" : key.substr(comma)));
        if (se != r->end() && se->is_number()) d["stderr"] = *se;
        out[metric_name(metric, filter)] = std::move(d);
    }
    return out;
}

namespace {
void collect_leaves(const json& groups, const std::string& task, std::vector<std::string>& out, int depth) {
    auto it = groups.find(task);
    if (depth > 16 || it == groups.end() || !it->is_array() || it->empty()) {
        out.push_back(task);
        return;
    }
    for (const auto& sub : *it)
        if (sub.is_string()) collect_leaves(groups, sub.get<std::string>(), out, depth + 1);
}
}  // namespace

std::vector<std::string> leaves(const json& results, const std::string& task) {
    static const json empty = json::object();
    const json& groups = results.contains("group_subtasks") && results["group_subtasks"].is_object() ? results["group_subtasks"] : empty;
    std::vector<std::string> out;
    collect_leaves(groups, task, out, 0);
    return out;
}

std::map<std::string, std::string> aggregations(const json& results, const std::string& leaf) {
    std::map<std::string, std::string> out;
    const auto configs = results.find("configs");
    if (configs == results.end() || !configs->is_object()) return out;
    const auto cfg = configs->find(leaf);
    if (cfg == configs->end() || !cfg->is_object()) return out;
    const auto list = cfg->find("metric_list");
    if (list == cfg->end() || !list->is_array()) return out;
    for (const auto& m : *list) {
        if (!m.is_object() || !m.contains("metric") || !m["metric"].is_string()) continue;
        const auto agg = m.find("aggregation");
        std::string how = agg != m.end() && agg->is_string() ? agg->get<std::string>() : "mean";
        // A function of the task's own (cb's f1, ifeval's inst_level_*) is dumped as its source
        // (TaskConfig.to_dict in lm_eval/config/task.py): name it, not quote it.
        if (how.find_first_of("\n( ") != std::string::npos) how = "custom";
        out[m["metric"].get<std::string>()] = how;
    }
    return out;
}

std::string date_id_of(std::string_view path) {
    const auto slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    if (!name.starts_with("results_") || !name.ends_with(".json")) return {};
    name.remove_prefix(8);
    name.remove_suffix(5);
    return std::string(name);
}

long Aggregate::samples() const {
    long n = 0;
    std::string last_leaf;
    for (const auto& [key, ids] : docs) {
        const std::string leaf = key.substr(0, key.find('\t'));
        if (leaf == last_leaf) continue;  // one filter per leaf: the others see the same documents
        last_leaf = leaf;
        n += static_cast<long>(ids.size());
    }
    return n;
}

void add_samples(Aggregate& into, std::string_view jsonl, const std::string& leaf, const std::map<std::string, std::string>& aggregation,
                 const std::string& file) {
    std::size_t at = 0;
    int line_no = 0;
    while (at < jsonl.size()) {
        std::size_t end = jsonl.find('\n', at);
        if (end == std::string_view::npos) end = jsonl.size();
        const std::string_view line = jsonl.substr(at, end - at);
        at = end + 1;
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        const json s = json::parse(line, nullptr, false);
        if (s.is_discarded() || !s.is_object() || !s.contains("doc_id") || !s["doc_id"].is_number_integer())
            throw AdapterError(fmt::format("{}:{}: not a samples line of lm_eval (a JSON object with doc_id)", file, line_no));
        const std::string filter = s.contains("filter") && s["filter"].is_string() ? s["filter"].get<std::string>() : "none";
        const long doc = s["doc_id"].get<long>();
        if (!into.docs[leaf + "\t" + filter].insert(doc).second)
            throw AdapterError(fmt::format("{}:{}: document {} of {} was scored twice: the shards overlap; rerun the evaluation", file,
                                           line_no, doc, leaf));
        if (!s.contains("metrics") || !s["metrics"].is_array()) continue;
        for (const auto& m : s["metrics"]) {
            if (!m.is_string()) continue;
            const std::string metric = m.get<std::string>();
            const auto agg = aggregation.find(metric);
            const std::string how = agg == aggregation.end() ? "mean" : agg->second;
            const std::string name = metric_name(metric, filter);
            const auto v = s.find(metric);
            if (how != "mean" || v == s.end() || !(v->is_number() || v->is_boolean())) {
                into.unsupported.insert(fmt::format("{} ({} aggregation)", name, how == "mean" ? "non-numeric per-sample" : how));
                continue;
            }
            into.metrics[name].add(v->is_boolean() ? (v->get<bool>() ? 1.0 : 0.0) : v->get<double>());
        }
    }
}

namespace {
// "0.4.13.dev0" -> {0, 4, 13}: the leading numbers; nothing when it does not start with one.
std::optional<std::vector<long>> version_numbers(std::string_view v) {
    std::vector<long> out;
    std::size_t at = 0;
    while (out.size() < 3 && at < v.size() && v[at] >= '0' && v[at] <= '9') {
        long n = 0;
        while (at < v.size() && v[at] >= '0' && v[at] <= '9' && n < 1000000) n = n * 10 + (v[at++] - '0');
        out.push_back(n);
        if (at < v.size() && v[at] == '.') ++at;
        else break;
    }
    if (out.empty()) return std::nullopt;
    out.resize(3, 0);
    return out;
}

const json* member(const json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}
}  // namespace

void check_version(std::string_view version, const std::string& where) {
    const auto have = version_numbers(version), need = version_numbers(kMinVersion);
    if (!have)
        throw AdapterError(fmt::format("cannot tell which lm-evaluation-harness {} is (its Python finds no lm_eval distribution): install lm-eval "
                                       "{} or later with pip, or name its environment in the suite's setup",
                                       where, kMinVersion));
    if (*have < *need)
        throw AdapterError(fmt::format("lm-evaluation-harness {} ({}) is too old: acme-eval-lmeval needs {} or later, whose --samples selects a "
                                       "shard's documents; upgrade it (pip install -U 'lm_eval>={}')",
                                       version, where, kMinVersion, kMinVersion));
}

std::string completions_url(std::string_view base_url) {
    std::string url(base_url);
    const auto scheme = url.find("://");
    const auto path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    std::string p = path == std::string::npos ? "" : url.substr(path);
    while (!p.empty() && p.back() == '/') p.pop_back(), url.pop_back();
    if (p.empty()) return url + "/v1/completions";
    if (p.ends_with("/v1")) return url + "/completions";
    return url;
}

std::string fewshot_dependence(const json& results, const std::string& leaf) {
    long shots = 0;
    const json* cfg = nullptr;
    if (const json* configs = member(results, "configs")) cfg = member(*configs, leaf.c_str());
    const json* n = nullptr;
    if (const json* nshot = member(results, "n-shot")) n = member(*nshot, leaf.c_str());
    if (!n && cfg) n = member(*cfg, "num_fewshot");
    if (n && n->is_number_integer()) shots = n->get<long>();
    if (shots <= 0) return {};
    std::string sampler = "default";
    if (const json* fc = cfg ? member(*cfg, "fewshot_config") : nullptr)
        if (const json* s = member(*fc, "sampler"); s && s->is_string()) sampler = s->get<std::string>();
    if (sampler == "first_n") return {};
    return fmt::format("{}: {}-shot with the {} sampler, a shard draws other exemplars than the whole run for every document after its start", leaf,
                       shots, sampler);
}

std::optional<long> effective_samples(const json& results, const std::string& leaf) {
    const json* ns = member(results, "n-samples");
    const json* l = ns ? member(*ns, leaf.c_str()) : nullptr;
    const json* e = l ? member(*l, "effective") : nullptr;
    if (!e || !e->is_number_integer()) return std::nullopt;
    return e->get<long>();
}

ShardRecord parse_shard_record(std::string_view text, const std::string& file) {
    const json s = json::parse(text, nullptr, false);
    ShardRecord r;
    long* fields[] = {&r.begin, &r.end, &r.samples};
    const char* names[] = {"begin", "end", "samples"};
    for (int i = 0; i < 3; ++i) {
        const json* v = s.is_discarded() ? nullptr : member(s, names[i]);
        if (!v || !v->is_number_integer())
            throw AdapterError(fmt::format("{} is not the adapter's shard record (no integer \"{}\"): rerun the trial", file, names[i]));
        *fields[i] = v->get<long>();
    }
    if (r.begin < 0 || r.end < r.begin || r.samples < r.end)
        throw AdapterError(fmt::format("{} is not the adapter's shard record (documents {} to {} of {}): rerun the trial", file, r.begin, r.end, r.samples));
    return r;
}

}  // namespace acme::adapters::lmeval
