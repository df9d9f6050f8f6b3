#pragma once
/// \file peers/detail/tarnawski_dp.hpp
/// The max-load DP of Tarnawski et al. 2020 over the ideal lattice (peers/tarnawski.hpp): the
/// upper bound of one topological order's prefixes, the fractional lower bound, the DP states
/// that can lie on a chain within a bound, and the DP itself (`tw_pull` for one ideal, `tw_solve`
/// for all of them, the ideals of one size on the executor).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "devplace/executor.hpp"
#include "devplace/peers/detail/tarnawski_lattice.hpp"
#include "devplace/peers/detail/tarnawski_model.hpp"

namespace devplace::peers::detail {

/// An upper bound: the same DP restricted to the prefixes of one topological order (positions
/// 0..p−1 are a down-set for every p). O(f² · (C+1)(F+1)) block evaluations.
template <int = 0>
double tw_linear_bound(const tw_model& m, std::size_t C, std::size_t F) {
  const std::size_t L = (C + 1) * (F + 1), n = m.f;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> dp((n + 1) * L, inf);
  for (std::size_t x = 0; x < L; ++x) dp[x] = 0;
  for (std::size_t a = 0; a <= n; ++a) {
    double* da = &dp[a * L];
    for (std::size_t c = 0; c <= C; ++c)
      for (std::size_t f = 0; f <= F; ++f) {
        const std::size_t x = c * (F + 1) + f;
        if (c > 0) da[x] = std::min(da[x], da[x - (F + 1)]);
        if (f > 0) da[x] = std::min(da[x], da[x - 1]);
      }
    bitset base(n), cur(n);
    for (std::size_t p = 0; p < a; ++p) base.set(p);
    cur = base;
    tw_acc acc{&m, &base};
    for (std::size_t b = a + 1; b <= n; ++b) {
      acc.add(b - 1, cur);
      cur.set(b - 1);
      const double cpu = acc.cpu, accl = acc.acc_load();
      double* db = &dp[b * L];
      for (std::size_t c = 0; c <= C; ++c)
        for (std::size_t f = 0; f <= F; ++f) {
          const std::size_t x = c * (F + 1) + f;
          if (c > 0) db[x] = std::min(db[x], std::max(da[x - (F + 1)], cpu));
          if (f > 0) db[x] = std::min(db[x], std::max(da[x - 1], accl));
        }
    }
  }
  return dp[n * L + L - 1];
}

/// A lower bound on the max-load: the smallest T at which the work fits fractionally on C CPUs
/// and F accelerators of capacity T each (communication, which only adds, left out), and the
/// largest single supernode on its faster device.
template <int = 0>
double tw_lower_bound(const tw_model& m, std::size_t C, std::size_t F) {
  if (C + F == 0) return 0;
  std::vector<std::pair<double, double>> work;  // (cpu, accelerator) time per supernode
  double single = 0;
  for (std::size_t p = 0; p < m.f; ++p) {
    const double acc = F > 0 && m.supported[p] && m.size[p] <= m.cap ? m.fpga[p] : 1e300;
    const double cpu = C > 0 ? m.cpu[p] : 1e300;
    work.emplace_back(cpu, acc);
    single = std::max(single, std::min(cpu, acc));
  }
  // CPUs take the supernodes with the smallest cpu/acc ratio first (fractional knapsack).
  std::sort(work.begin(), work.end(), [](const auto& a, const auto& b) { return a.first * b.second < b.first * a.second; });
  auto fits = [&](double T) {
    double cpu_left = static_cast<double>(C) * T, acc_work = 0;
    for (const auto& [c, a] : work) {
      if (c <= cpu_left) { cpu_left -= c; continue; }
      const double part = c > 0 ? cpu_left / c : 1.0;
      cpu_left = 0;
      acc_work += (1 - part) * a;
    }
    return acc_work <= static_cast<double>(F) * T;
  };
  double lo = 0, hi = 1;
  while (!fits(hi) && hi < 1e300) hi *= 2;
  if (!(hi < 1e300)) return single;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    (fits(mid) ? hi : lo) = mid;
  }
  return std::max(single, lo);
}

/// dp[I][c][f] with the choice that reached it.
struct tw_dp {
  std::size_t C = 0, F = 0, L = 1;
  std::vector<double> dp;
  std::vector<std::int32_t> from;  ///< J of the last block, or -1
  std::vector<std::uint8_t> how;   ///< 0 none, 1 CPU block, 2 ACC block, 3 one CPU less, 4 one ACC less
  [[nodiscard]] std::size_t at(std::size_t id, std::size_t c, std::size_t f) const { return id * L + c * (F + 1) + f; }
  [[nodiscard]] double value(std::size_t id) const { return dp[at(id, C, F)]; }
};

/// Which DP states (c, f) of each ideal can be on a chain of max-load ≤ T: the ideal's work fits
/// on c CPUs and f accelerators of capacity T, and the rest's on the other C − c and F − f, both
/// fractionally (each supernode split at will, CPUs taking the supernodes that save the most
/// accelerator time per CPU time; communication, which only adds, left out). A necessary
/// condition, tested with a relative slack of 1e-9: dropping the other states keeps every chain
/// of value ≤ T. Returns N·(C+1)(F+1) flags, or nothing (all allowed) when T is not finite.
template <int = 0>
std::vector<std::uint8_t> tw_allowed_states(const tw_model& m, const std::vector<bitset>& ideals, std::size_t C,
                                                   std::size_t F, double T) {
  if (!(T < 1e29)) return {};
  const std::size_t L = (C + 1) * (F + 1), n = m.f;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(n);
  for (std::size_t p = 0; p < n; ++p) acc[p] = m.supported[p] && m.size[p] <= m.cap ? m.fpga[p] : inf;
  std::vector<std::size_t> order(n);
  for (std::size_t p = 0; p < n; ++p) order[p] = p;
  auto ratio = [&](std::size_t p) { return acc[p] > 0 ? m.cpu[p] / acc[p] : inf; };  // CPU time per accelerator time saved
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ratio(a) < ratio(b); });
  const double cap = T * (1 + 1e-9) + 1e-300;
  // rest[c]: the least accelerator work of a set when c CPUs of capacity T take what they can.
  std::vector<double> cpu_m, acc_m, suffix, rest_in(C + 1), rest_out(C + 1);
  auto rests = [&](const bitset& s, bool inside, std::vector<double>& rest) {
    cpu_m.clear();
    acc_m.clear();
    for (auto p : order)
      if (s.test(p) == inside) { cpu_m.push_back(m.cpu[p]); acc_m.push_back(acc[p]); }
    const std::size_t k = cpu_m.size();
    suffix.assign(k + 1, 0.0);
    for (std::size_t q = k; q-- > 0;) suffix[q] = suffix[q + 1] + acc_m[q];
    rest[0] = suffix[0];
    std::size_t q = 0;
    double used = 0;
    for (std::size_t c = 1; c <= C; ++c) {
      const double room = static_cast<double>(c) * cap;
      while (q < k && used + cpu_m[q] <= room) used += cpu_m[q++];
      if (q == k) { rest[c] = 0; continue; }
      if (acc_m[q] == inf) { rest[c] = inf; continue; }  // a supernode only a CPU can take, split
      const double taken = cpu_m[q] > 0 ? (room - used) / cpu_m[q] : 1.0;
      rest[c] = suffix[q + 1] + (1 - taken) * acc_m[q];
    }
  };
  std::vector<std::uint8_t> ok(ideals.size() * L, 0);
  for (std::size_t i = 0; i < ideals.size(); ++i) {
    rests(ideals[i], true, rest_in);
    rests(ideals[i], false, rest_out);
    for (std::size_t c = 0; c <= C; ++c)
      for (std::size_t f = 0; f <= F; ++f)
        ok[i * L + c * (F + 1) + f] = rest_in[c] <= static_cast<double>(f) * cap &&
                                      rest_out[C - c] <= static_cast<double>(F - f) * cap;
  }
  return ok;
}

/// Per-thread scratch of `tw_solve`: visit stamps per ideal, per-tail counters of the block.
struct tw_scratch {
  std::vector<std::uint32_t> stamp;
  std::vector<std::uint8_t> own;    ///< per tail: its own position is in the block
  std::vector<std::uint32_t> in;    ///< per tail: head positions in the block
  struct frame {
    std::uint32_t j, cursor, added;
    std::uint32_t unsupported;
    double cpu, fpga, size, comm;
  };
  std::vector<frame> stack;
  std::vector<std::uint32_t> cpu_states, acc_states;
};

/// dp[I] from every J ⊊ I (pull): a depth-first walk down the lattice from I (each J once, by
/// stamps) grows the block X = I ∖ J one supernode at a time, keeping its sums and, per tail,
/// whether its own position and how many of its heads are in X (so a supernode costs O(tails it
/// touches)). Only the allowed states of I are computed. The walk stops below J when X's CPU
/// load and accelerator compute (both only grow) are each above `ub` or no better than every
/// state of I they could improve. The result for I depends on I alone, not on the thread.
template <int = 0>
void tw_pull(const tw_model& m, const tw_lattice& lat, const std::uint8_t* allowed, std::size_t C, std::size_t F,
                    double ub, std::size_t i, tw_dp& r, tw_scratch& s) {
  const std::size_t L = r.L;
  double* di = &r.dp[i * L];
  s.cpu_states.clear();
  s.acc_states.clear();
  for (std::size_t c = 0; c <= C; ++c)
    for (std::size_t f = 0; f <= F; ++f) {
      const std::size_t x = c * (F + 1) + f;
      if (allowed && !allowed[x]) continue;
      if (c > 0) s.cpu_states.push_back(static_cast<std::uint32_t>(x));
      if (f > 0) s.acc_states.push_back(static_cast<std::uint32_t>(x));
    }
  constexpr double inf = std::numeric_limits<double>::infinity();
  double cpu_limit = s.cpu_states.empty() ? -inf : inf, acc_limit = s.acc_states.empty() ? -inf : inf;
  auto limits = [&] {  // a candidate must be below the worst state it could improve
    if (!s.cpu_states.empty()) { cpu_limit = 0; for (auto x : s.cpu_states) cpu_limit = std::max(cpu_limit, di[x]); }
    if (!s.acc_states.empty()) { acc_limit = 0; for (auto x : s.acc_states) acc_limit = std::max(acc_limit, di[x]); }
  };
  auto toggle = [&](std::uint32_t p, bool add, double& comm) {
    for (auto ref : m.touch[p]) {
      const std::uint32_t t = ref >> 1;
      const bool b0 = s.own[t] ? s.in[t] < m.heads[t] : s.in[t] > 0;
      if (ref & 1) s.own[t] = add;
      else s.in[t] += add ? 1u : ~0u;
      const bool b1 = s.own[t] ? s.in[t] < m.heads[t] : s.in[t] > 0;
      if (b0 != b1) comm += b1 ? m.tails[t].cost : -m.tails[t].cost;
    }
  };
  if (!s.cpu_states.empty() || !s.acc_states.empty()) {
    const auto tag = static_cast<std::uint32_t>(i + 1);
    s.stamp[i] = tag;
    s.stack.clear();
    s.stack.push_back({static_cast<std::uint32_t>(i), lat.off[i], ~0u, 0, 0, 0, 0, 0});
    while (!s.stack.empty()) {
      auto& top = s.stack.back();
      if (top.cursor == lat.off[top.j + 1]) {
        if (top.added != ~0u) { double dummy = 0; toggle(top.added, false, dummy); }
        s.stack.pop_back();
        continue;
      }
      const std::uint32_t k = top.cursor++;
      const std::uint32_t j = lat.id[k], p = lat.pos[k];
      if (s.stamp[j] == tag) continue;
      s.stamp[j] = tag;
      tw_scratch::frame fr{j, lat.off[j], p, top.unsupported + (m.supported[p] ? 0u : 1u),
                           top.cpu + m.cpu[p], top.fpga + m.fpga[p], top.size + m.size[p], top.comm};
      const double fpga_part = fr.unsupported || fr.size > m.cap ? 1e30 : fr.fpga;
      const bool cpu_ok = fr.cpu <= ub && fr.cpu < cpu_limit, fpga_ok = fpga_part <= ub && fpga_part < acc_limit;
      if (!cpu_ok && !fpga_ok) continue;  // nor anything below J
      toggle(p, true, fr.comm);
      const double acc = fpga_part + fr.comm;
      const double* dj = &r.dp[static_cast<std::size_t>(j) * L];
      bool improved = false;
      if (cpu_ok)
        for (auto x : s.cpu_states) {
          const double v = std::max(dj[x - (F + 1)], fr.cpu);
          if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 1; improved = true; }
        }
      if (acc <= ub && acc < acc_limit)
        for (auto x : s.acc_states) {
          const double v = std::max(dj[x - 1], acc);
          if (v < di[x]) { di[x] = v; r.from[i * L + x] = static_cast<std::int32_t>(j); r.how[i * L + x] = 2; improved = true; }
        }
      if (improved) limits();
      s.stack.push_back(fr);
    }
  }
  for (std::size_t c = 0; c <= C; ++c)  // fewer devices
    for (std::size_t f = 0; f <= F; ++f) {
      const std::size_t x = c * (F + 1) + f;
      if (allowed && !allowed[x]) continue;
      if (c > 0 && di[x - (F + 1)] < di[x]) { di[x] = di[x - (F + 1)]; r.how[i * L + x] = 3; r.from[i * L + x] = -1; }
      if (f > 0 && di[x - 1] < di[x]) { di[x] = di[x - 1]; r.how[i * L + x] = 4; r.from[i * L + x] = -1; }
    }
}

/// The DP with every block above `bound` left out, the ideals of one size at a time (they only
/// read smaller ones), on `threads` workers. Equal for every number of threads. The bound gets a
/// relative slack of 1e-9: a block's sums depend on the order they are added in (by ulps), and a
/// chain whose value is the bound (the linear bound's own chain) must survive.
template <int = 0>
tw_dp tw_solve(const tw_model& m, const tw_lattice& lat, const std::vector<std::uint8_t>& allowed,
                      std::size_t C, std::size_t F, double bound, unsigned threads) {
  const double ub = bound + 1e-9 * std::abs(bound);
  const std::size_t n = lat.off.size() - 1;
  tw_dp r{C, F, (C + 1) * (F + 1), {}, {}, {}};
  const std::size_t L = r.L;
  r.dp.assign(n * L, std::numeric_limits<double>::infinity());
  r.from.assign(n * L, -1);
  r.how.assign(n * L, 0);
  std::fill(r.dp.begin(), r.dp.begin() + static_cast<std::ptrdiff_t>(L), 0.0);  // id 0 = ∅
  const unsigned workers = resolve_threads(threads);
  std::vector<tw_scratch> scratch(workers);
  for (auto& s : scratch) {
    s.stamp.assign(n, 0);
    s.own.assign(m.tails.size(), 0);
    s.in.assign(m.tails.size(), 0);
  }
  auto one = [&](std::size_t i, tw_scratch& s) {
    tw_pull(m, lat, allowed.empty() ? nullptr : &allowed[i * L], C, F, ub, i, r, s);
  };
  std::optional<executor> pool;  // one pool for all layers (a layer is often a few ideals)
  if (workers > 1) pool.emplace(workers);
  for (std::size_t size = 1; size + 1 < lat.layer.size(); ++size) {
    const std::size_t lo = lat.layer[size], hi = lat.layer[size + 1];
    if (!pool || hi - lo < 2) {
      for (std::size_t i = lo; i < hi; ++i) one(i, scratch[0]);
      continue;
    }
    std::atomic<std::size_t> next{lo};
    for (std::size_t w = 0; w < std::min<std::size_t>(workers, hi - lo); ++w)
      pool->submit([&, w] {
        for (std::size_t i; !pool->stop_requested() && (i = next++) < hi;) one(i, scratch[w]);
      });
    pool->wait();
  }
  return r;
}

}  // namespace devplace::peers::detail
