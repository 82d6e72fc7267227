// spank.h for C++: it declares the slurm_spank_* hooks and spank_options outside its own
// extern "C" block, so without this wrapper they would get C++ linkage and Slurm would not find them.
#pragma once

extern "C" {
#include <slurm/spank.h>
}
