#pragma once
/// \file peers.hpp
/// Everything of `devplace/peers/` in one include: peers' own models: Tarnawski et al.'s DP, Piper,
/// PipeDream's optimizer.
/// Each header below can also be included alone, at a fraction of the compile time
/// (docs/compile-time.md).
#include "devplace/peers/pipedream.hpp"
#include "devplace/peers/piper.hpp"
#include "devplace/peers/piper_cost.hpp"
#include "devplace/peers/tarnawski.hpp"
#if DEVPLACE_HEADER_ONLY
#include "devplace/io/piper.ipp"  // io::read_piper, io::read_tarnawski_instance (compiled mode: devplace::core)
#include "devplace/io/tarnawski_instance.ipp"
#endif
