// For the helper programs local task 0 starts (the sampler, the failure watch): everything they
// did not open themselves is the launcher's, and slurmstepd's descriptors must not live on in them.
#pragma once

namespace ddp::monitor {

// Closes every descriptor above 2 but `keep`.
void close_inherited_fds(int keep);

}  // namespace ddp::monitor
