#pragma once
/// \file sweep/mpi.hpp
/// The sweep driver's MPI channel (docs/sweep.md), in target `devplace::mpi` (present when CMake
/// found MPI; `find_package(devplace COMPONENTS mpi)`).
///
///   sweep::mpi_environment mpi;                // MPI_Init_thread / MPI_Finalize
///   sweep::mpi_channel ch;                     // MPI_COMM_WORLD
///   sweep::run(space, options, ch);            // every rank
///
/// Rank 0's main thread answers requests (a probe every millisecond or less, so that waiting does
/// not take a core from the evaluations) while its worker threads evaluate; a rank asks for one
/// point at a time and reports the points it completed with the next request. Waits (requests,
/// the final barrier) poll with short sleeps instead of MPI's busy waiting.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only: no deprecated C++ bindings
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "devplace/sweep/driver.hpp"

namespace devplace::sweep {

/// MPI for the lifetime of the object: MPI_Init_thread asking for MPI_THREAD_SERIALIZED.
class mpi_environment {
 public:
  mpi_environment() {
    int done = 0;
    MPI_Initialized(&done);
    if (done) throw std::logic_error("sweep: MPI is already initialised");
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided_) != MPI_SUCCESS)
      throw std::runtime_error("sweep: MPI_Init_thread failed");
  }
  mpi_environment(const mpi_environment&) = delete;
  mpi_environment& operator=(const mpi_environment&) = delete;
  ~mpi_environment() { MPI_Finalize(); }
  /// True when several threads of a rank may call MPI one at a time.
  [[nodiscard]] bool serialized() const noexcept { return provided_ >= MPI_THREAD_SERIALIZED; }
  /// Ends every rank (after an error on one of them, so that the others do not wait for it).
  [[noreturn]] static void abort(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::terminate();
  }

 private:
  int provided_ = MPI_THREAD_SINGLE;
};

class mpi_channel final : public channel {
 public:
  explicit mpi_channel(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }

  void serve(const std::function<std::optional<std::size_t>(int)>& next,
             const std::function<void(std::size_t)>& finished) override {
    int active = size_ - 1;
    while (active > 0) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, request_tag, comm_, &flag, &st);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        continue;
      }
      std::uint64_t k = 0;
      MPI_Recv(&k, 1, MPI_UINT64_T, st.MPI_SOURCE, request_tag, comm_, MPI_STATUS_IGNORE);
      if (k) finished(static_cast<std::size_t>(k));
      const auto i = next(st.MPI_SOURCE);
      std::uint64_t reply = i ? static_cast<std::uint64_t>(*i) : none;
      MPI_Send(&reply, 1, MPI_UINT64_T, st.MPI_SOURCE, reply_tag, comm_);
      if (!i) --active;
    }
  }

  std::optional<std::size_t> request(std::size_t finished) override {
    if (done_) return std::nullopt;  // rank 0 sends one "nothing left" per rank
    std::uint64_t k = finished, reply = none;
    MPI_Send(&k, 1, MPI_UINT64_T, 0, request_tag, comm_);
    MPI_Request r;
    MPI_Irecv(&reply, 1, MPI_UINT64_T, 0, reply_tag, comm_, &r);
    wait(r);
    if (reply == none) {
      done_ = true;
      return std::nullopt;
    }
    return static_cast<std::size_t>(reply);
  }

  std::size_t broadcast(std::size_t value) override {
    std::uint64_t v = value;
    MPI_Bcast(&v, 1, MPI_UINT64_T, 0, comm_);
    return static_cast<std::size_t>(v);
  }

  void barrier() override {
    MPI_Request r;
    MPI_Ibarrier(comm_, &r);
    wait(r);
  }

 private:
  static constexpr int request_tag = 1, reply_tag = 2;
  static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();

  /// Waits for `r`, sleeping between tests (MPI_Wait spins on a core).
  static void wait(MPI_Request& r) {
    int flag = 0;
    for (auto nap = std::chrono::microseconds(20);; nap = std::min(nap * 2, std::chrono::microseconds(2000))) {
      MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
      if (flag) return;
      std::this_thread::sleep_for(nap);
    }
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  bool done_ = false;
};

}  // namespace devplace::sweep
