#pragma once
/// \file sweep/registry.ipp
/// The definitions of every generator in the table of sweep/registry.hpp (sweep/phaze_space.ipp,
/// sweep/dfmodel_space.ipp, sweep/llm_space.ipp), in one include: header-only, a file that calls
/// `sweep::prepare` includes this too (devplace/sweep.hpp does); compiled mode (`devplace::core`,
/// see config.hpp) needs nothing more.
#include "devplace/sweep/dfmodel_space.ipp"
#include "devplace/sweep/llm_space.ipp"
#include "devplace/sweep/phaze_space.ipp"
#include "devplace/sweep/registry.hpp"
