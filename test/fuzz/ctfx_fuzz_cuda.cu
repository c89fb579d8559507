// ctfx_fuzz built by nvcc: the same fuzzer, with `--backend cuda` running the plans on the GPU.
#include "ctfx_fuzz.cpp"
