// libslurm for the failure paths that talk to slurmctld (slurm_end_step, slurm_requeue): opened
// at run time, from where this build found it (by soname if it is not there), so a step that does
// not fail never loads it. Call only in a child process of the watch: slurmctld may be slow.
#pragma once

#include <dlfcn.h>

#include <string>

namespace ddp::watch {

class SlurmLibrary {
 public:
  // Opens it and runs slurm_init(); ok() says whether that worked, error() why not.
  SlurmLibrary();
  bool ok() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  // The function NAME of type F (as declared in slurm.h: decltype(&slurm_...)), or nullptr with
  // error() set.
  template <class F>
  F get(const char* name) {
    F f = handle_ ? reinterpret_cast<F>(::dlsym(handle_, name)) : nullptr;
    if (!f && error_.empty()) error_ = std::string(DDP_SLURM_LIBRARY " lacks ") + name;
    return f;
  }

  // slurm_strerror(code), or the number.
  std::string strerror(int code);

 private:
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace ddp::watch
