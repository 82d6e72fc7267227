# Torch's umbrella header is most of what a LibTorch source costs to compile: parsed, about 12 of
# the 22 s of each of the trainer's sources (LibTorch 1.13; more on 2.x), on every platform CI
# builds. A target whose sources nearly all include it parses it once instead. Not for the others:
# loading the precompiled header (700 MB with -g) costs a source that does not include Torch 5 to
# 9 s, which is why libddp (a third of its sources include Torch) has none. Only the C++ sources
# get it (the trainer's .cu kernels never include Torch); CMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns
# it off (a compiler cache or a code analyser that wants each source whole).
function(ddp_precompile_torch target)
  target_precompile_headers(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:<torch/torch.h$<ANGLE-R>>")
endfunction()
