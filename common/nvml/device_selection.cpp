#include "common/nvml/device_selection.hpp"

namespace acme::nvml {

Selection select_devices(const std::vector<Library::Device>& all, const std::vector<int>& job_gpus) {
    Selection s;
    for (int id : job_gpus) {
        bool found = false;
        for (const auto& d : all) {
            if (d.minor == id) {
                s.devices.push_back(d);
                found = true;
                break;
            }
        }
        if (!found) s.missing.push_back(id);
    }
    return s;
}

}  // namespace acme::nvml
