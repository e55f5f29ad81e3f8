#include "ir/whole_window_pools.h"

#include <algorithm>

#include "ir/op_params.h"

namespace latte {

int WholeWindowAvgPoolsToGlobal(Graph& graph) {
  int turned = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& pool = graph.node(id);
    if (pool.kind != OpKind::kAvgPool2D) continue;
    if (auto d = pool.attrs.GetInts("dilations"); d && std::any_of(d->begin(), d->end(), [](std::int64_t v) { return v != 1; }))
      continue;
    Expected<PoolParams> p = GetPoolParams(graph, pool);
    if (!p.ok()) continue;  // the backends say what is wrong with it
    const bool padded = p->pads.top || p->pads.left || p->pads.bottom || p->pads.right;
    if (padded || p->kernel_h != p->in_h || p->kernel_w != p->in_w || p->out_h != 1 || p->out_w != 1) continue;
    Node& global = graph.mutable_node(id);
    global.kind = OpKind::kGlobalAvgPool;
    for (const char* attr : {"kernel", "strides", "padding", "pads", "ceil_mode", "count_include_pad", "dilations"})
      global.attrs.Erase(attr);
    ++turned;
  }
  return turned;
}

}  // namespace latte
