// goss-gpu Metal kernels: one library, built from this file (xcrun metal on macOS; MetalNative inlines its
// #include lines for newLibraryWithSource; g++ for the emulated device). One file per op, each with the reference
// formula before its kernels; common.h holds the macro convention that makes every file valid Metal and C++.

#include "embed.metal"
#include "rmsnorm.metal"
#include "dense.metal"
#include "rope.metal"
#include "attention.metal"
#include "router.metal"
#include "moe.metal"
#include "add.metal"
#include "argmax.metal"
