#pragma once
/// \file mcm/repair.hpp
/// Turning a proposal into a valid partition with the constraint engine: SAMPLE mode
/// (Algorithm 1: visit operators in a node order, draw each chip from p_u restricted to its live
/// domain) and FIX mode (Algorithm 2: keep y_u while it is in the domain, otherwise leave the
/// operator to a second pass that draws uniformly from its domain). Both restart with a fresh
/// order after `backtrack_limit` backtracks (optionally scaled by the Luby sequence) and, after
/// `max_restarts` restarts, return the
/// caller's valid fallback partition flagged `fallback = true` (seed-mcm §2.6.3).
///
/// Whatever happens, the returned partition passes `mcm::validate` (checked before returning).
#include <Eigen/Core>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "devplace/algorithm/topological_sort.hpp"
#include "devplace/mcm/engine.hpp"
#include "devplace/mcm/random.hpp"
#include "devplace/mcm/validate.hpp"
#include "devplace/status.hpp"

namespace devplace::mcm {

enum class node_order { random, topological, reverse_topological };

struct repair_options {
  /// L: backtracks before a restart (the unit with `luby`). Short descents with many restarts:
  /// the failures that matter (eq. 3 on BERT-Large at C = 36) come from early decisions that
  /// chronological backtracking cannot reach (docs/mcm.md, B4).
  std::size_t backtrack_limit = 4;
  std::size_t max_restarts = 1024;     ///< restarts before the fallback
  bool luby = false;                   ///< restart r (from 0) after L * luby(r + 1) backtracks
  node_order order = node_order::random;
  bool use_fallback = true;            ///< false: give up with status `work_limit` instead
};

struct repair_result {
  devplace::status status = status::feasible;  ///< feasible (chip_of valid) or work_limit
  std::vector<int> chip_of;                    ///< f'(u)
  bool fallback = false;                       ///< chip_of is the fallback partition
  std::size_t decisions = 0, backtracks = 0, restarts = 0;
  std::size_t changed = 0;                     ///< FIX: operators with f'(u) != y_u
};

namespace detail {

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ... (i from 1).
inline std::size_t luby(std::size_t i) {
  for (std::size_t k = 1;; ++k) {
    const std::size_t full = (std::size_t{1} << k) - 1;
    if (i == full) return std::size_t{1} << (k - 1);
    if (i < full) return luby(i - (full >> 1));
  }
}

template <class Engine>
std::vector<std::size_t> make_order(const Engine& e, node_order o, random_engine& rng) {
  if (o == node_order::random) return random_permutation(rng, e.num_vertices());
  auto t = topological_sort(e.graph()).order;
  if (o == node_order::reverse_topological) std::reverse(t.begin(), t.end());
  return t;
}

/// A chip of `dom` drawn from row u of P restricted to dom (uniform when P is empty or has no
/// mass on dom).
template <class Mask>
int draw_chip(const Eigen::MatrixXd& P, std::size_t u, const Mask& dom, random_engine& rng) {
  if (P.size() == 0 || single_chip(dom)) return P.size() == 0 ? uniform_bit(rng, dom) : static_cast<int>(lowest_chip(dom));
  const auto row = static_cast<Eigen::Index>(u);
  double sum = 0;
  for_each_chip(dom, [&](std::size_t c) { sum += P(row, static_cast<Eigen::Index>(c)); });
  if (!(sum > 0)) return uniform_bit(rng, dom);
  double r = uniform01(rng) * sum;
  int last = 0;
  bool done = false;
  for_each_chip(dom, [&](std::size_t c) {
    if (done) return;
    last = static_cast<int>(c);
    r -= P(row, static_cast<Eigen::Index>(c));
    done = r < 0;
  });
  return last;
}

/// Common driver: `step(i, order)` makes the decision at depth i and returns the new depth;
/// `goal` is the depth at which the partition is complete.
template <class Engine, class Step>
repair_result drive(Engine& e, random_engine& rng, const repair_options& o, std::size_t goal,
                    std::span<const int> fallback, Step&& step) {
  repair_result r;
  const std::size_t bt0 = e.backtracks();
  for (std::size_t restart = 0; restart <= o.max_restarts; ++restart) {
    e.reset();
    const auto order = make_order(e, o.order, rng);
    const std::size_t limit = e.backtracks() + o.backtrack_limit * (o.luby ? luby(restart + 1) : 1);
    std::size_t i = 0;
    while (i < goal && e.backtracks() <= limit && !e.root_failed()) {
      i = step(i, order);
      ++r.decisions;
    }
    if (i >= goal && e.all_fixed()) {
      r.chip_of = e.assignment();
      r.backtracks = e.backtracks() - bt0;
      r.restarts = restart;
      if (validate(e.graph(), r.chip_of, e.chips())) return r;
      break;  // cannot happen (engine soundness); never hand out an invalid partition
    }
  }
  r.backtracks = e.backtracks() - bt0;
  r.restarts = o.max_restarts;
  r.chip_of.clear();
  if (!o.use_fallback) {
    r.status = status::work_limit;
    return r;
  }
  r.fallback = true;
  if (fallback.empty())
    r.chip_of.assign(e.num_vertices(), 0);  // f = 0 is always valid
  else
    r.chip_of.assign(fallback.begin(), fallback.end());
  if (!validate(e.graph(), r.chip_of, e.chips()))
    throw std::invalid_argument("mcm::repair: the fallback partition is not valid: " +
                                validate(e.graph(), r.chip_of, e.chips()).message);
  return r;
}

template <class Engine>
void check_fallback(const Engine& e, std::span<const int> fallback) {
  if (!fallback.empty() && fallback.size() != e.num_vertices())
    throw std::invalid_argument("mcm::repair: the fallback has " + std::to_string(fallback.size()) +
                                " entries, the graph " + std::to_string(e.num_vertices()));
}

}  // namespace detail

/// Algorithm 1 (SAMPLE) on a `constraint_engine` or `wide_constraint_engine`. `P` is N x C (rows
/// need not be normalised; an empty matrix is the uniform distribution). Throws
/// std::invalid_argument on a P of the wrong shape.
template <class Mask>
repair_result repair_sample(basic_constraint_engine<Mask>& e, const Eigen::MatrixXd& P, random_engine& rng,
                                   const repair_options& o = {}, std::span<const int> fallback = {}) {
  const std::size_t N = e.num_vertices();
  if (P.size() != 0 && (static_cast<std::size_t>(P.rows()) != N || static_cast<std::size_t>(P.cols()) != e.chips()))
    throw std::invalid_argument("mcm::repair_sample: P must be N x C");
  detail::check_fallback(e, fallback);
  return detail::drive(e, rng, o, N, fallback, [&](std::size_t i, const std::vector<std::size_t>& order) {
    const std::size_t u = order[i];
    const int c = detail::draw_chip(P, u, e.get_domain(u), rng);
    return e.set_domain(u, mask_traits<Mask>::bit(static_cast<std::size_t>(c)));
  });
}

/// Algorithm 2 (FIX). `y` has one chip per operator, each in 0 .. C-1.
template <class Mask>
repair_result repair_fix(basic_constraint_engine<Mask>& e, std::span<const int> y, random_engine& rng,
                                const repair_options& o = {}, std::span<const int> fallback = {}) {
  const std::size_t N = e.num_vertices();
  if (y.size() != N) throw std::invalid_argument("mcm::repair_fix: y must have one chip per operator");
  for (int c : y)
    if (c < 0 || static_cast<std::size_t>(c) >= e.chips())
      throw std::invalid_argument("mcm::repair_fix: chip " + std::to_string(c) + " out of range");
  detail::check_fallback(e, fallback);
  auto r = detail::drive(e, rng, o, 2 * N, fallback, [&](std::size_t i, const std::vector<std::size_t>& order) {
    const std::size_t u = order[i % N];
    const Mask D = e.get_domain(u);
    if (i < N) {
      const auto c = static_cast<std::size_t>(y[u]);
      return e.set_domain(u, has_chip(D, c) ? mask_traits<Mask>::bit(c) : D);
    }
    return e.set_domain(u, mask_traits<Mask>::bit(static_cast<std::size_t>(uniform_bit(rng, D))));
  });
  for (std::size_t u = 0; u < N; ++u) r.changed += r.chip_of[u] != y[u];
  return r;
}

}  // namespace devplace::mcm
