// A stand-in for the CUDA driver (libcuda.so.1) on a machine without GPUs: the four driver API
// calls ddp-preflight makes, answering from FAKE_CUDA_BUS_IDS ("0000:3B:00.0,0000:86:00.0", the
// node's GPUs in PCI order) filtered by CUDA_VISIBLE_DEVICES (indices), as the real driver
// filters. FAKE_CUDA_INIT_ERROR=N makes cuInit return N.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

char ids[16][32];
int count = -1;

void load() {
  char all[16][32];
  int n = 0, i;
  const char* list = getenv("FAKE_CUDA_BUS_IDS");
  const char* visible = getenv("CUDA_VISIBLE_DEVICES");
  char buffer[512];
  char* save = nullptr;
  char* item;
  count = 0;
  if (!list) return;
  snprintf(buffer, sizeof buffer, "%s", list);
  for (item = strtok_r(buffer, ",", &save); item && n < 16; item = strtok_r(nullptr, ",", &save))
    snprintf(all[n++], 32, "%s", item);
  if (!visible) {
    for (i = 0; i < n; ++i) memcpy(ids[count++], all[i], 32);
    return;
  }
  snprintf(buffer, sizeof buffer, "%s", visible);
  for (item = strtok_r(buffer, ",", &save); item && count < 16; item = strtok_r(nullptr, ",", &save)) {
    const int k = atoi(item);
    if (k < 0 || k >= n) break;  // the real driver stops at the first invalid entry
    memcpy(ids[count++], all[k], 32);
  }
}

}  // namespace

extern "C" {

int cuInit(unsigned flags) {
  const char* error = getenv("FAKE_CUDA_INIT_ERROR");
  static_cast<void>(flags);
  load();
  if (error) return atoi(error);
  return count == 0 ? 100 : 0;  // CUDA_ERROR_NO_DEVICE
}

int cuDeviceGetCount(int* n) {
  *n = count < 0 ? 0 : count;
  return 0;
}

int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= count) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *device = ordinal;
  return 0;
}

int cuDeviceGetPCIBusId(char* id, int len, int device) {
  if (device < 0 || device >= count) return 101;
  snprintf(id, static_cast<std::size_t>(len), "%s", ids[device]);
  return 0;
}

}  // extern "C"
