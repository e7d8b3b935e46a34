// A checkpoint's model size from its weight files, not its whole directory (optimizer state,
// global_step*/ and *.pt optimizer files are often larger than the weights): what
// `evalsched submit` sends as the model's size.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace acme::evalsched {

// Weight files: *.safetensors, pytorch_model*.bin, model*.bin, consolidated*.pth, *.gguf; never
// optimizer*, scheduler*, rng_state*, training_args*, nor anything under global_step*/.
bool weight_file(std::string_view relative_path);

struct ModelFiles {
    double weight_bytes = 0;               // the weight files' sizes
    std::optional<double> parameters;      // from the safetensors headers, when every weight file is one
};
// Reads the top level and subdirectories of `dir` (no symlinks followed); safetensors headers
// are bounded (100 MiB) and a malformed one only drops `parameters`.
ModelFiles model_files(const std::string& dir);

// The parameter count a safetensors header describes (8-byte little-endian length, then JSON
// {name: {"dtype", "shape", "data_offsets"}}); nullopt when it is malformed.
std::optional<double> safetensors_parameters(std::string_view header_json);

}  // namespace acme::evalsched
