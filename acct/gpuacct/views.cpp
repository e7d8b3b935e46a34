#include "acct/gpuacct/views.hpp"

namespace acme::gpuacct {

Table build_view(ViewKind kind, const Context& context) {
    switch (kind) {
        case ViewKind::jobs: return jobs_view(context);
        case ViewKind::failures: return failures_view(context);
        case ViewKind::nodes: return nodes_view(context);
        case ViewKind::summary: return summary_view(context);
    }
    return jobs_view(context);
}

Table view_shape(ViewKind kind) { return build_view(kind, Context{}); }

}  // namespace acme::gpuacct
