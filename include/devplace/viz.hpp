#pragma once
/// \file viz.hpp
/// Everything of `devplace/viz/` in one include: SVG pictures of plans (Gantt chart, heat map,
/// stage graph), stacked bar charts, LLM charts, and Chrome traces of simulated iterations.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/viz/chart.hpp"
#include "devplace/viz/gantt.hpp"
#include "devplace/viz/heatmap.hpp"
#include "devplace/viz/labels.hpp"
#include "devplace/viz/llm_charts.hpp"
#include "devplace/viz/sim_trace.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/viz/sim_trace.ipp"  // simulation_trace's definition (compiled mode: devplace::core)
#endif
#include "devplace/viz/stacked_bar.hpp"
#include "devplace/viz/stage_graph.hpp"
#include "devplace/viz/svg.hpp"
#include "devplace/viz/trace.hpp"
