#pragma once
/// \file io.hpp
/// Everything of `devplace/io/` in one include: the readers and writers: graph, topology, plan and
/// cluster JSON, nvidia-smi, PipeDream, Piper and Tarnawski inputs.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/io/atomic_write.hpp"
#include "devplace/io/cluster_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/cluster_json.ipp"  // the cluster reader's definitions (compiled mode: devplace::core)
#endif
#include "devplace/io/error.hpp"
#include "devplace/io/graph_json.hpp"
#include "devplace/io/llm_json.hpp"
#include "devplace/io/llm_result_json.hpp"
#include "devplace/io/nvidia_smi.hpp"
#include "devplace/io/pipedream.hpp"
#include "devplace/io/piper.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // the Piper reader's definitions (compiled mode: devplace::core)
#endif
#include "devplace/io/plan_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/plan_json.ipp"  // the plan reader's and writer's definitions (compiled mode: devplace::core)
#endif
#include "devplace/io/read_graph.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/read_graph.ipp"  // io::read_graph's definition (compiled mode: devplace::core)
#endif
#include "devplace/io/tarnawski.hpp"
#include "devplace/io/tarnawski_instance.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/tarnawski_instance.ipp"  // the Tarnawski instance reader's definitions (compiled mode: devplace::core)
#endif
#include "devplace/io/topology_json.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/topology_json.ipp"  // the topology reader's and writer's definitions (compiled mode: devplace::core)
#endif
