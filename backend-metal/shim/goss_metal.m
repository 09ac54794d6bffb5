// goss_metal.m — goss_metal.h on Apple's Metal (macOS, Objective-C with ARC).
//
// Built by the metal-shim module's macOS profile:
//   clang -fobjc-arc -O2 -dynamiclib -framework Metal -framework Foundation -o libgoss_metal.dylib goss_metal.m
// Handles are Objective-C objects handed to C as retained pointers (CFBridgingRetain) and released by
// the matching *_release (CFBridgingRelease). Every entry point runs in its own @autoreleasepool because
// the callers are Java threads without a run loop. It cannot be built on Linux (no Metal there): the emulated device
// in backend-metal/emu implements the same header for CI, and CI compiles this file with clang against GNUstep's
// Foundation and a stand-in Metal header checked against Apple's API (backend-metal/check/check.sh).
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <string.h>
#include <unistd.h>
#include "goss_metal.h"

static __thread char g_error[2048];

static void set_error(NSString *what, NSError *err) {
    NSString *s = err ? [NSString stringWithFormat:@"%@: %@", what, err.localizedDescription] : what;
    strlcpy(g_error, s.UTF8String ? s.UTF8String : "error", sizeof g_error);
}

@interface GossDevice : NSObject {
@public
    id<MTLDevice> device;
    char name[256];
}
@end
@implementation GossDevice
@end

@interface GossPipeline : NSObject {
@public
    id<MTLComputePipelineState> pso;
}
@end
@implementation GossPipeline
@end

@interface GossCmd : NSObject {
@public
    id<MTLCommandBuffer> cb;
    id<MTLComputeCommandEncoder> enc;
    id<MTLComputePipelineState> pso;
    NSString *recordError;
    double seconds;
}
@end
@implementation GossCmd
@end

#define H(type, x) ((__bridge type)(void *)(x))

int32_t goss_mtl_abi_version(void) { return GOSS_MTL_ABI_VERSION; }
const char *goss_mtl_last_error(void) { return g_error; }

// ---- device and queue ------------------------------------------------------------------------------
goss_mtl_device *goss_mtl_device_create(void) {
    @autoreleasepool {
        id<MTLDevice> d = MTLCreateSystemDefaultDevice();
        if (!d) { set_error(@"MTLCreateSystemDefaultDevice returned nil (no Metal device)", nil); return NULL; }
        GossDevice *g = [GossDevice new];
        g->device = d;
        strlcpy(g->name, d.name.UTF8String ? d.name.UTF8String : "Metal device", sizeof g->name);
        return (goss_mtl_device *) CFBridgingRetain(g);
    }
}
const char *goss_mtl_device_name(goss_mtl_device *dev) { return H(GossDevice *, dev)->name; }
uint64_t goss_mtl_device_memory(goss_mtl_device *dev) { return H(GossDevice *, dev)->device.recommendedMaxWorkingSetSize; }
int32_t goss_mtl_device_is_emulated(goss_mtl_device *dev) { (void) dev; return 0; }
void goss_mtl_device_release(goss_mtl_device *dev) { if (dev) CFBridgingRelease(dev); }

goss_mtl_queue *goss_mtl_queue_create(goss_mtl_device *dev) {
    @autoreleasepool {
        id<MTLCommandQueue> q = [H(GossDevice *, dev)->device newCommandQueue];
        if (!q) { set_error(@"newCommandQueue returned nil", nil); return NULL; }
        return (goss_mtl_queue *) CFBridgingRetain(q);
    }
}
void goss_mtl_queue_release(goss_mtl_queue *q) { if (q) CFBridgingRelease(q); }

// ---- libraries and pipelines ---------------------------------------------------------------------------
goss_mtl_library *goss_mtl_library_from_source(goss_mtl_device *dev, const char *source) {
    @autoreleasepool {
        NSError *err = nil;
        MTLCompileOptions *opts = [MTLCompileOptions new];
        id<MTLLibrary> lib = [H(GossDevice *, dev)->device newLibraryWithSource:[NSString stringWithUTF8String:source]
                                                                        options:opts
                                                                          error:&err];
        if (!lib) { set_error(@"compiling the Metal source failed", err); return NULL; }
        return (goss_mtl_library *) CFBridgingRetain(lib);
    }
}
goss_mtl_library *goss_mtl_library_from_file(goss_mtl_device *dev, const char *path) {
    @autoreleasepool {
        NSError *err = nil;
        NSURL *url = [NSURL fileURLWithPath:[NSString stringWithUTF8String:path]];
        id<MTLLibrary> lib = [H(GossDevice *, dev)->device newLibraryWithURL:url error:&err];
        if (!lib) { set_error([NSString stringWithFormat:@"loading %s failed", path], err); return NULL; }
        return (goss_mtl_library *) CFBridgingRetain(lib);
    }
}
void goss_mtl_library_release(goss_mtl_library *lib) { if (lib) CFBridgingRelease(lib); }

goss_mtl_pipeline *goss_mtl_pipeline_create(goss_mtl_library *lib, const char *name) {
    @autoreleasepool {
        id<MTLLibrary> l = H(id<MTLLibrary>, lib);
        id<MTLFunction> fn = [l newFunctionWithName:[NSString stringWithUTF8String:name]];
        if (!fn) { set_error([NSString stringWithFormat:@"no kernel function '%s' in the library", name], nil); return NULL; }
        NSError *err = nil;
        id<MTLComputePipelineState> pso = [l.device newComputePipelineStateWithFunction:fn error:&err];
        if (!pso) { set_error([NSString stringWithFormat:@"pipeline for '%s'", name], err); return NULL; }
        GossPipeline *p = [GossPipeline new];
        p->pso = pso;
        return (goss_mtl_pipeline *) CFBridgingRetain(p);
    }
}
uint32_t goss_mtl_pipeline_max_threads(goss_mtl_pipeline *p) { return (uint32_t) H(GossPipeline *, p)->pso.maxTotalThreadsPerThreadgroup; }
uint32_t goss_mtl_pipeline_simd_width(goss_mtl_pipeline *p) { return (uint32_t) H(GossPipeline *, p)->pso.threadExecutionWidth; }
void goss_mtl_pipeline_release(goss_mtl_pipeline *p) { if (p) CFBridgingRelease(p); }

// ---- buffers ------------------------------------------------------------------------------------------------
goss_mtl_buffer *goss_mtl_buffer_new(goss_mtl_device *dev, uint64_t length, int32_t storage) {
    @autoreleasepool {
        MTLResourceOptions o = storage == GOSS_MTL_STORAGE_PRIVATE ? MTLResourceStorageModePrivate : MTLResourceStorageModeShared;
        id<MTLDevice> d = H(GossDevice *, dev)->device;
        if (length > d.maxBufferLength) {
            set_error([NSString stringWithFormat:@"buffer of %llu bytes exceeds the device's maxBufferLength %llu",
                       (unsigned long long) length, (unsigned long long) d.maxBufferLength], nil);
            return NULL;
        }
        id<MTLBuffer> b = [d newBufferWithLength:(NSUInteger)(length ? length : 1) options:o];
        if (!b) { set_error([NSString stringWithFormat:@"cannot allocate a buffer of %llu bytes", (unsigned long long) length], nil); return NULL; }
        if (storage != GOSS_MTL_STORAGE_PRIVATE) memset(b.contents, 0, (size_t) b.length);
        return (goss_mtl_buffer *) CFBridgingRetain(b);
    }
}
goss_mtl_buffer *goss_mtl_buffer_wrap(goss_mtl_device *dev, void *ptr, uint64_t length) {
    @autoreleasepool {
        id<MTLBuffer> b = [H(GossDevice *, dev)->device newBufferWithBytesNoCopy:ptr
                                                                           length:(NSUInteger) length
                                                                          options:MTLResourceStorageModeShared
                                                                      deallocator:nil];
        if (!b) { set_error(@"newBufferWithBytesNoCopy failed (memory and length must be page-aligned)", nil); return NULL; }
        return (goss_mtl_buffer *) CFBridgingRetain(b);
    }
}
uint64_t goss_mtl_page_size(void) { return (uint64_t) getpagesize(); }
void *goss_mtl_buffer_contents(goss_mtl_buffer *b) {
    id<MTLBuffer> buf = H(id<MTLBuffer>, b);
    return buf.storageMode == MTLStorageModePrivate ? NULL : buf.contents;
}
uint64_t goss_mtl_buffer_length(goss_mtl_buffer *b) { return H(id<MTLBuffer>, b).length; }
void goss_mtl_buffer_release(goss_mtl_buffer *b) { if (b) CFBridgingRelease(b); }

// ---- command buffers ---------------------------------------------------------------------------------------
static id<MTLComputeCommandEncoder> encoder(GossCmd *c) {
    if (!c->enc) {
        c->enc = [c->cb computeCommandEncoderWithDispatchType:MTLDispatchTypeSerial];
        if (c->pso) [c->enc setComputePipelineState:c->pso];
    }
    return c->enc;
}

goss_mtl_cmd *goss_mtl_cmd_begin(goss_mtl_queue *q) {
    @autoreleasepool {
        GossCmd *c = [GossCmd new];
        c->cb = [H(id<MTLCommandQueue>, q) commandBuffer];
        if (!c->cb) { set_error(@"commandBuffer returned nil", nil); return NULL; }
        return (goss_mtl_cmd *) CFBridgingRetain(c);
    }
}
void goss_mtl_cmd_set_pipeline(goss_mtl_cmd *cmd, goss_mtl_pipeline *p) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        c->pso = H(GossPipeline *, p)->pso;
        [encoder(c) setComputePipelineState:c->pso];
    }
}
void goss_mtl_cmd_set_buffer(goss_mtl_cmd *cmd, uint32_t index, goss_mtl_buffer *b, uint64_t offset) {
    @autoreleasepool {
        [encoder(H(GossCmd *, cmd)) setBuffer:H(id<MTLBuffer>, b) offset:(NSUInteger) offset atIndex:index];
    }
}
void goss_mtl_cmd_set_bytes(goss_mtl_cmd *cmd, uint32_t index, const void *bytes, uint64_t length) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        if (length > 4096) { c->recordError = @"set_bytes: more than 4096 bytes"; return; }
        [encoder(c) setBytes:bytes length:(NSUInteger) length atIndex:index];
    }
}
void goss_mtl_cmd_set_threadgroup_memory(goss_mtl_cmd *cmd, uint32_t index, uint32_t length) {
    @autoreleasepool {
        [encoder(H(GossCmd *, cmd)) setThreadgroupMemoryLength:length atIndex:index];
    }
}
int32_t goss_mtl_cmd_dispatch(goss_mtl_cmd *cmd, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t tx, uint32_t ty, uint32_t tz) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        if (!c->pso) { c->recordError = @"dispatch without a pipeline"; set_error(c->recordError, nil); return 1; }
        if ((NSUInteger) tx * ty * tz > c->pso.maxTotalThreadsPerThreadgroup) {
            c->recordError = [NSString stringWithFormat:@"%u threads per threadgroup exceed the pipeline's maximum %lu",
                              tx * ty * tz, (unsigned long) c->pso.maxTotalThreadsPerThreadgroup];
            set_error(c->recordError, nil);
            return 1;
        }
        [encoder(c) dispatchThreadgroups:MTLSizeMake(gx, gy, gz) threadsPerThreadgroup:MTLSizeMake(tx, ty, tz)];
        return 0;
    }
}
int32_t goss_mtl_cmd_copy(goss_mtl_cmd *cmd, goss_mtl_buffer *src, uint64_t so, goss_mtl_buffer *dst, uint64_t doff, uint64_t len) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        // a blit needs its own encoder: end the compute encoder (its bindings end with it, as the header says)
        if (c->enc) { [c->enc endEncoding]; c->enc = nil; }
        c->pso = nil;
        id<MTLBlitCommandEncoder> blit = [c->cb blitCommandEncoder];
        [blit copyFromBuffer:H(id<MTLBuffer>, src) sourceOffset:(NSUInteger) so toBuffer:H(id<MTLBuffer>, dst)
            destinationOffset:(NSUInteger) doff size:(NSUInteger) len];
        [blit endEncoding];
        return 0;
    }
}
int32_t goss_mtl_cmd_commit_wait(goss_mtl_cmd *cmd) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        if (c->enc) { [c->enc endEncoding]; c->enc = nil; }
        if (c->recordError) { set_error(c->recordError, nil); return 1; }
        [c->cb commit];
        [c->cb waitUntilCompleted];
        c->seconds = c->cb.GPUEndTime - c->cb.GPUStartTime;
        if (c->cb.status == MTLCommandBufferStatusError) { set_error(@"command buffer failed", c->cb.error); return 1; }
        return 0;
    }
}
double goss_mtl_cmd_gpu_seconds(goss_mtl_cmd *cmd) { return H(GossCmd *, cmd)->seconds; }
void goss_mtl_cmd_release(goss_mtl_cmd *cmd) {
    @autoreleasepool {
        GossCmd *c = H(GossCmd *, cmd);
        if (c && c->enc) { [c->enc endEncoding]; c->enc = nil; }
        if (cmd) CFBridgingRelease(cmd);
    }
}
