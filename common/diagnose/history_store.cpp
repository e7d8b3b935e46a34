#include "common/diagnose/history_store.hpp"

#include <filesystem>

#include "common/store/labels_store.hpp"

namespace acme::diagnose {

std::optional<History> load_history_noexcept(const std::string& labels_path, std::string& error) noexcept {
    try {
        std::error_code ec;
        if (labels_path.empty() || !std::filesystem::exists(labels_path, ec)) return std::nullopt;
        store::OpenOptions options;
        options.read_only = true;
        options.create = false;
        store::Database db(labels_path, options);
        std::vector<LabelledFailure> failures;
        for (auto& label : store::all_labels(db)) {
            if (auto signature = signature_from_text(label.signature))
                failures.push_back({label.job_id, std::move(label.reason), std::move(*signature)});
        }
        return History(std::move(failures));
    } catch (const std::exception& e) {
        try {
            error = labels_path + ": " + e.what();
        } catch (...) {
        }
    } catch (...) {
    }
    return std::nullopt;
}

}  // namespace acme::diagnose
