#pragma once
/// \file mcm/policy.hpp
/// Search policies of MCM partitioning (seed-mcm §3.5, §3.6), behind one concept.
///
/// \concept policy
///   `p.batch_size()` -> std::size_t: proposals per update (>= 1);
///   `p.propose(rng)` -> `proposal`: a per-operator chip distribution P (N x C; empty = uniform)
///       and/or a candidate y, with the repair mode (SAMPLE uses P, FIX uses y);
///   `p.update(rollouts, rng)`: the proposals of one batch, in order, with their repaired
///       partitions and rewards (reward = T(y') / T(baseline), 0 when H fails).
///   Models: `uniform_policy` (Random), `annealing_policy` (SA), `softmax_policy` (tabular
///   softmax trained with PPO-clip, "RL-lite"), `cross_entropy_policy`.
///   Archetype: test/archetypes/mcm_archetypes.hpp.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "devplace/mcm/random.hpp"

namespace devplace::mcm {

enum class repair_mode { sample, fix };

struct proposal {
  repair_mode mode = repair_mode::sample;
  Eigen::MatrixXd P;   ///< N x C, rows need not be normalised; empty: uniform
  std::vector<int> y;  ///< FIX: the candidate
};

struct rollout {
  proposal proposed;
  std::vector<int> chip_of;  ///< y' after repair
  double reward = 0;
  bool valid = false;        ///< passed H
};

template <class P>
concept policy = requires(P& p, const P& cp, random_engine& rng, std::span<const rollout> rs) {
  { cp.batch_size() } -> std::convertible_to<std::size_t>;
  { p.propose(rng) } -> std::same_as<proposal>;
  p.update(rs, rng);
};

namespace detail {
/// `x`, through a type that depends on `I`: the policies' member templates reach their matrices
/// through it, so that g++ checks their Eigen expressions where a member is called, not where
/// this header is included.
template <int I, class T>
[[nodiscard]] T& dependent(T& x) noexcept {
  return x;
}
template <int I>
using dependent_matrix = std::conditional_t<I == 0 || I != 0, Eigen::MatrixXd, void>;
}  // namespace detail

/// Random search: P = 1/C everywhere, SAMPLE mode.
struct uniform_policy {
  [[nodiscard]] std::size_t batch_size() const noexcept { return 1; }
  [[nodiscard]] proposal propose(random_engine&) const { return {}; }
  void update(std::span<const rollout>, random_engine&) const noexcept {}
};

struct annealing_options {
  double rho = 0.05;            ///< share of operators whose p_u is redrawn per step
  double alpha = 1.0;           ///< Dirichlet concentration
  double tau0 = 0.1;            ///< initial temperature (rewards are relative to the baseline)
  double tau_end = 1e-3;        ///< temperature at the end of the budget (geometric cooling)
  std::size_t budget = 1000;    ///< samples the schedule spans
};

/// Simulated annealing on P: redraw p_u ~ Dirichlet(alpha) on a random subset, SAMPLE, accept if
/// better or with probability exp((r' - r) / tau).
class annealing_policy {
 public:
  template <int I = 0>
  annealing_policy(std::size_t n, std::size_t chips, annealing_options o = {})
      : P_(detail::dependent_matrix<I>::Constant(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(chips), 1.0 / double(chips))),
        o_(o) {
    if (n == 0 || chips == 0) throw std::invalid_argument("mcm::annealing_policy: n and chips must be >= 1");
    if (!(o.rho > 0 && o.rho <= 1) || !(o.alpha > 0) || !(o.tau0 > 0) || !(o.tau_end > 0) || o.budget == 0)
      throw std::invalid_argument("mcm::annealing_policy: rho in (0, 1], alpha, tau0, tau_end > 0, budget >= 1");
  }
  [[nodiscard]] std::size_t batch_size() const noexcept { return 1; }
  template <int I = 0>
  [[nodiscard]] proposal propose(random_engine& rng) {
    proposal p{repair_mode::sample, P_, {}};
    auto& P = detail::dependent<I>(p.P);
    const auto n = static_cast<std::size_t>(P.rows());
    const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(o_.rho * static_cast<double>(n))));
    for (std::size_t i = 0; i < k; ++i) {
      const auto u = static_cast<Eigen::Index>(uniform_below(rng, n));
      double s = 0;
      for (Eigen::Index c = 0; c < P.cols(); ++c) s += P(u, c) = gamma(rng);
      P.row(u) /= s;
    }
    return p;
  }
  template <int I = 0>
  void update(std::span<const rollout> rs, random_engine& rng) {
    auto& P = detail::dependent<I>(P_);
    for (const auto& r : rs) {
      const double tau = o_.tau0 * std::pow(o_.tau_end / o_.tau0, std::min(1.0, double(step_) / double(o_.budget)));
      ++step_;
      if (r.reward >= reward_ || uniform01(rng) < std::exp((r.reward - reward_) / tau)) {
        P = r.proposed.P;
        reward_ = r.reward;
      }
    }
  }
  [[nodiscard]] const Eigen::MatrixXd& distribution() const noexcept { return P_; }

 private:
  template <int = 0>
  double gamma(random_engine& rng) const {  // Gamma(alpha, 1); alpha = 1 is Exp(1)
    if (o_.alpha == 1.0) return exponential1(rng);
    const double a = o_.alpha < 1 ? o_.alpha + 1 : o_.alpha;  // Marsaglia-Tsang
    const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    double x;
    for (;;) {
      double z;
      do {  // standard normal by Box-Muller
        z = std::sqrt(-2 * std::log1p(-uniform01(rng))) * std::cos(6.283185307179586 * uniform01(rng));
      } while (1 + c * z <= 0);
      const double v = std::pow(1 + c * z, 3), u = uniform01(rng);
      if (std::log1p(-u) < 0.5 * z * z + d - d * v + d * std::log(v)) { x = d * v; break; }
    }
    return o_.alpha < 1 ? x * std::pow(1 - uniform01(rng), 1 / o_.alpha) : x;
  }
  Eigen::MatrixXd P_;
  annealing_options o_;
  double reward_ = -std::numeric_limits<double>::infinity();
  std::size_t step_ = 0;
};

struct ppo_options {
  std::size_t rollouts = 20, minibatches = 4, epochs = 10;
  double clip = 0.2;
  double learning_rate = 0.05;  ///< Adam on the logits
  double entropy = 0.01;        ///< entropy bonus
  bool credit_repaired = true;  ///< log-probability of y' (true) or of the raw y (false)
  repair_mode mode = repair_mode::fix;
};

/// Tabular softmax policy: logits theta (N x C), P = softmax per row, y ~ P iid; PPO-clip update
/// with advantages (r - mean) / std over the batch (no critic). The probability ratio is taken per
/// operator (the action factorises over operators; a product over thousands of operators would
/// overflow), so the surrogate is sum_u min(rho_u A, clip(rho_u) A).
class softmax_policy {
 public:
  template <int I = 0>
  softmax_policy(std::size_t n, std::size_t chips, ppo_options o = {})
      : theta_(detail::dependent_matrix<I>::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(chips))),
        m_(theta_), v_(theta_), o_(o) {
    if (n == 0 || chips == 0) throw std::invalid_argument("mcm::softmax_policy: n and chips must be >= 1");
    if (o.rollouts == 0 || o.minibatches == 0 || o.minibatches > o.rollouts || o.epochs == 0 || !(o.clip > 0) ||
        !(o.learning_rate > 0) || !(o.entropy >= 0))
      throw std::invalid_argument("mcm::softmax_policy: bad PPO options");
  }
  [[nodiscard]] std::size_t batch_size() const noexcept { return o_.rollouts; }
  template <int I = 0>
  [[nodiscard]] proposal propose(random_engine& rng) const {
    proposal p{o_.mode, probabilities<I>(), {}};
    const auto& P = detail::dependent<I>(p.P);
    p.y.resize(static_cast<std::size_t>(theta_.rows()));
    for (Eigen::Index u = 0; u < theta_.rows(); ++u) {
      double r = uniform01(rng);
      int c = 0;
      for (; c + 1 < theta_.cols(); ++c)
        if ((r -= P(u, c)) < 0) break;
      p.y[static_cast<std::size_t>(u)] = c;
    }
    return p;
  }
  template <int I = 0>
  [[nodiscard]] Eigen::MatrixXd probabilities() const {
    detail::dependent_matrix<I> P = theta_;
    for (Eigen::Index u = 0; u < P.rows(); ++u) {
      P.row(u).array() = (P.row(u).array() - P.row(u).maxCoeff()).exp();
      P.row(u) /= P.row(u).sum();
    }
    return P;
  }
  template <int I = 0>
  void update(std::span<const rollout> rs, random_engine& rng);
  [[nodiscard]] const Eigen::MatrixXd& logits() const noexcept { return theta_; }

 private:
  const std::vector<int>& action(const rollout& r) const { return o_.credit_repaired ? r.chip_of : r.proposed.y; }
  Eigen::MatrixXd theta_, m_, v_;
  ppo_options o_;
  std::size_t t_ = 0;
};

template <int I>
void softmax_policy::update(std::span<const rollout> rs, random_engine& rng) {
  using matrix = detail::dependent_matrix<I>;
  auto& theta = detail::dependent<I>(theta_);
  auto& m = detail::dependent<I>(m_);
  auto& v = detail::dependent<I>(v_);
  const std::size_t B = rs.size();
  if (B < 2) return;
  std::vector<double> A(B);
  double mean = 0, var = 0;
  for (const auto& r : rs) mean += r.reward;
  mean /= double(B);
  for (const auto& r : rs) var += (r.reward - mean) * (r.reward - mean);
  const double sd = std::sqrt(var / double(B));
  if (!(sd > 1e-12)) return;
  for (std::size_t j = 0; j < B; ++j) A[j] = (rs[j].reward - mean) / sd;
  const matrix P_old = probabilities<I>();
  const auto N = theta.rows(), C = theta.cols();
  const std::size_t mb = std::max<std::size_t>(1, B / o_.minibatches);
  for (std::size_t epoch = 0; epoch < o_.epochs; ++epoch) {
    const auto perm = random_permutation(rng, B);
    for (std::size_t start = 0; start < B; start += mb) {
      const matrix P = probabilities<I>();
      matrix grad = matrix::Zero(N, C);
      const std::size_t end = std::min(B, start + mb);
      for (std::size_t k = start; k < end; ++k) {
        const auto& r = rs[perm[k]];
        const auto& a = action(r);
        for (Eigen::Index u = 0; u < N; ++u) {
          const int c = a[static_cast<std::size_t>(u)];
          const double ratio = P(u, c) / P_old(u, c), adv = A[perm[k]];
          if ((adv > 0 && ratio > 1 + o_.clip) || (adv < 0 && ratio < 1 - o_.clip)) continue;  // clipped: no gradient
          grad.row(u) -= ratio * adv * P.row(u);  // d log p_c / d theta = onehot(c) - p
          grad(u, c) += ratio * adv;
        }
      }
      grad /= double(end - start);
      if (o_.entropy > 0)
        for (Eigen::Index u = 0; u < N; ++u) {  // dH/dtheta_c = -p_c (log p_c + H)
          const auto p = P.row(u).array();
          const double H = -(p * (p + 1e-300).log()).sum();
          grad.row(u).array() -= o_.entropy * p * ((p + 1e-300).log() + H);
        }
      ++t_;  // Adam ascent step
      const double b1 = 0.9, b2 = 0.999;
      m = b1 * m + (1 - b1) * grad;
      v.array() = b2 * v.array() + (1 - b2) * grad.array().square();
      const double c1 = 1 - std::pow(b1, double(t_)), c2 = 1 - std::pow(b2, double(t_));
      theta.array() += o_.learning_rate * (m.array() / c1) / ((v.array() / c2).sqrt() + 1e-8);
    }
  }
}

struct cross_entropy_options {
  std::size_t batch = 20;
  double elite = 0.2;      ///< share of the batch kept
  double smoothing = 0.3;  ///< P <- (1 - s) P + s * empirical(elite)
  double floor = 1e-3;     ///< minimum probability kept on every chip
};

/// Cross-entropy method: SAMPLE from P; move P toward the chips of the best repaired samples.
class cross_entropy_policy {
 public:
  template <int I = 0>
  cross_entropy_policy(std::size_t n, std::size_t chips, cross_entropy_options o = {})
      : P_(detail::dependent_matrix<I>::Constant(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(chips), 1.0 / double(chips))),
        o_(o) {
    if (n == 0 || chips == 0 || o.batch == 0 || !(o.elite > 0 && o.elite <= 1) || !(o.smoothing > 0 && o.smoothing <= 1))
      throw std::invalid_argument("mcm::cross_entropy_policy: bad options");
  }
  [[nodiscard]] std::size_t batch_size() const noexcept { return o_.batch; }
  [[nodiscard]] proposal propose(random_engine&) const { return {repair_mode::sample, P_, {}}; }
  template <int I = 0>
  void update(std::span<const rollout> rs, random_engine&) {
    using matrix = detail::dependent_matrix<I>;
    auto& P = detail::dependent<I>(P_);
    std::vector<std::size_t> idx(rs.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return rs[a].reward > rs[b].reward; });
    const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(o_.elite * double(rs.size())));
    matrix E = matrix::Zero(P.rows(), P.cols());
    for (std::size_t j = 0; j < k; ++j)
      for (Eigen::Index u = 0; u < P.rows(); ++u) E(u, rs[idx[j]].chip_of[static_cast<std::size_t>(u)]) += 1.0 / double(k);
    P = (1 - o_.smoothing) * P + o_.smoothing * E;
    P = P.array().max(o_.floor);
    for (Eigen::Index u = 0; u < P.rows(); ++u) P.row(u) /= P.row(u).sum();
  }

 private:
  Eigen::MatrixXd P_;
  cross_entropy_options o_;
};

}  // namespace devplace::mcm
