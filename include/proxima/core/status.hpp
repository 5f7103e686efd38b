// Outcome of a geometric query (one error policy: invalid input is a status plus a message).
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace proxima {

enum class Status {
  Separated,      ///< bodies apart: distance > 0 with witness points
  Overlapping,    ///< bodies touch or overlap (distance <= 0)
  MaxIterations,  ///< the iteration cap was hit; the best estimate so far is returned
  Degenerate,     ///< a numerical degeneracy stopped the algorithm; the best estimate is returned
  InvalidInput,   ///< NaN/Inf, negative radius, empty shape... see the message
};

/// Lower-case name used in JSON output ("separated", "overlapping", ...).
std::string_view toString(Status s);

/// Value-or-error, used at API boundaries (shape construction, file import).
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)), ok_(true) {}  // NOLINT(google-explicit-constructor)
  static Result failure(std::string message) {
    Result r;
    r.message_ = std::move(message);
    return r;
  }
  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  [[nodiscard]] const T& value() const& { return value_; }
  [[nodiscard]] T& value() & { return value_; }
  [[nodiscard]] T&& value() && { return std::move(value_); }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  Result() = default;
  T value_{};
  std::string message_;
  bool ok_ = false;
};

}  // namespace proxima
