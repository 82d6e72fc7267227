# Sourced by the GPU benchmarks: peak_of NAME PRECISION.
# Dense tensor-core peak of one GPU, TFLOP/s: fp16/bf16, and TF32 for fp32 (PyTorch lets cuDNN's
# fp32 convolutions use TF32 by default). Empty when unknown: then only TFLOP/s is printed.
peak_of() {
  local half tf32
  case "$1" in
    *H100*PCIe*) half=756 tf32=378 ;;
    *H100*NVL*) half=835 tf32=418 ;;
    *H100* | *H200* | *GH200*) half=989 tf32=495 ;;
    *A100*) half=312 tf32=156 ;;
    *L40S*) half=362 tf32=183 ;;
    *) return 0 ;;
  esac
  [ "$2" = fp32 ] && echo "$tf32" || echo "$half"
}
