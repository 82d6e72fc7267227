#include "slurm_library.hpp"

namespace ddp::watch {

SlurmLibrary::SlurmLibrary() {
  // Global: the plugins libslurm loads in turn (auth/munge...) take their symbols from it.
  handle_ = ::dlopen(DDP_SLURM_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
  if (!handle_) {
    const char* why = ::dlerror();
    error_ = std::string("cannot load " DDP_SLURM_LIBRARY) + (why ? std::string(": ") + why : "");
    return;
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
