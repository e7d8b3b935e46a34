#include "evalsched/core/checkpoint_files.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <fnmatch.h>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

namespace fs = std::filesystem;

bool weight_file(std::string_view path) {
    const std::string p(path);
    if (p.starts_with("global_step") || p.find("/global_step") != std::string::npos) return false;
    const std::string name = p.substr(p.find_last_of('/') + 1);
    for (const char* no : {"optimizer*", "*optim*", "scheduler*", "rng_state*", "training_args*"})
        if (fnmatch(no, name.c_str(), 0) == 0) return false;
    for (const char* yes : {"*.safetensors", "pytorch_model*.bin", "model*.bin", "consolidated*.pth", "*.gguf"})
        if (fnmatch(yes, name.c_str(), 0) == 0) return true;
    return false;
}

std::optional<double> safetensors_parameters(std::string_view header) {
    const nlohmann::json j = nlohmann::json::parse(header, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    double total = 0;
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        if (!it->is_object() || !it->contains("shape") || !(*it)["shape"].is_array()) return std::nullopt;
        double n = 1;
        for (const auto& d : (*it)["shape"]) {
            if (!d.is_number_unsigned() && !d.is_number_integer()) return std::nullopt;
            n *= d.get<double>();
        }
        total += n;
    }
    return total;
}

ModelFiles model_files(const std::string& dir) {
    ModelFiles m;
    bool all_safetensors = true;
    double params = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
        const std::string rel = fs::relative(it->path(), dir, ec).string();
        if (!weight_file(rel)) continue;
        m.weight_bytes += static_cast<double>(it->file_size(ec));
        if (!rel.ends_with(".safetensors")) {
            all_safetensors = false;
            continue;
        }
        std::ifstream in(it->path(), std::ios::binary);
        unsigned char len[8] = {};
        std::uint64_t n = 0;
        if (in.read(reinterpret_cast<char*>(len), 8))
            for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
        std::string header(n <= (100u << 20) ? n : 0, '\0');
        std::optional<double> p;
        if (!header.empty() && in.read(header.data(), static_cast<std::streamsize>(header.size()))) p = safetensors_parameters(header);
        if (p) params += *p;
        else all_safetensors = false;
    }
    if (m.weight_bytes > 0 && all_safetensors) m.parameters = params;
    return m;
}

}  // namespace acme::evalsched
