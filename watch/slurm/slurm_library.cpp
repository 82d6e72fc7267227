#include "slurm_library.hpp"

namespace ddp::watch {

SlurmLibrary::SlurmLibrary() {
  // Global: the plugins libslurm loads in turn (auth/munge...) take their symbols from it.
  // Where the build found it first: a Slurm under a prefix of its own is not where the loader looks.
  handle_ = ::dlopen(DDP_SLURM_LIBRARY_PATH, RTLD_NOW | RTLD_GLOBAL);
  if (!handle_) {
    const char* at_path = ::dlerror();
    std::string first = at_path ? at_path : DDP_SLURM_LIBRARY_PATH;
    handle_ = ::dlopen(DDP_SLURM_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    if (!handle_) {
      const char* by_name = ::dlerror();
      error_ = "cannot load " DDP_SLURM_LIBRARY " (the Slurm this was built for): " + first +
               "; " + (by_name ? by_name : "not found by the loader either");
      return;
    }
  }
  using Init = void (*)(const char*);
  auto init = get<Init>("slurm_init");
  if (!init) {
    handle_ = nullptr;
    return;
  }
  init(nullptr);
}

std::string SlurmLibrary::strerror(int code) {
  using Strerror = char* (*)(int);
  if (auto f = handle_ ? reinterpret_cast<Strerror>(::dlsym(handle_, "slurm_strerror")) : nullptr)
    return f(code);
  return "error " + std::to_string(code);
}

}  // namespace ddp::watch
