#pragma once
/// \file llm.hpp
/// Everything of `devplace/llm/` in one include: LLM training on GPU clusters: the model, the
/// hardware, the execution, memory, per-layer costs, the evaluation, the execution search and
/// uneven layer splits.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/llm/balance.hpp"
#include "devplace/llm/evaluate.hpp"
#include "devplace/llm/execution.hpp"
#include "devplace/llm/layer_cost.hpp"
#include "devplace/llm/memory.hpp"
#include "devplace/llm/model.hpp"
#include "devplace/llm/search.hpp"
#include "devplace/llm/system.hpp"
#include "devplace/llm/tiers.hpp"
