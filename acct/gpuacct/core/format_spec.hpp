// sacct's --format/-o list: "JobID,JobName%30,State%-8". Field names are matched without regard
// to case against the fields a view offers; a width after '%' overrides the default, negative
// means left-justified (sacct's print_fields rule).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace acme::acct {

struct FieldSpec {
    std::string_view name;  // the known field, spelled as the view spells it
    std::optional<int> width;
};

// Every entry must name a field in `known`. nullopt on bad input; error is one line naming the
// entry ("Invalid field requested: \"Foo\"").
std::optional<std::vector<FieldSpec>> parse_format_spec(std::string_view spec, std::span<const std::string_view> known,
                                                        std::string& error);

}  // namespace acme::acct
