// goss-gpu OpenCL kernels: one program, built from this file (KernelSource inlines its #include lines for
// clCreateProgramWithSource). One file per op, each with the reference formula before its kernels; common.cl holds
// the helpers every other file uses, so it comes first.

#include "common.cl"
#include "embed.cl"
#include "rmsnorm.cl"
#include "dense.cl"
#include "rope.cl"
#include "attention.cl"
#include "router.cl"
#include "moe.cl"
#include "add.cl"
#include "argmax.cl"
#include "sample.cl"
