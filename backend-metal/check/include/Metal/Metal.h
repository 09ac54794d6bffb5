// A stand-in for Apple's <Metal/Metal.h>, for checking backend-metal/shim/goss_metal.m on Linux (backend-metal/check/check.sh):
// the Metal protocols, classes, enums and functions the shim uses, declared in Objective-C with the selectors, types
// and values of Apple's API. Every declaration here is compared with metal-api.txt (facts from Apple's metal-cpp) by
// MetalApiCheck.java, so a wrong selector or type here fails the check as one in the shim does. Declarations only:
// nothing here runs. Add what the shim starts to use (and its class or enum to ExtractMetalApi.java).
#import <Foundation/Foundation.h>

#pragma clang assume_nonnull begin

@protocol MTLDevice, MTLCommandQueue, MTLLibrary, MTLFunction, MTLComputePipelineState, MTLBuffer, MTLCommandBuffer,
    MTLComputeCommandEncoder, MTLBlitCommandEncoder;

typedef NS_OPTIONS(NSUInteger, MTLResourceOptions) {
    MTLResourceStorageModeShared = 0,
    MTLResourceStorageModeManaged = 1 << 4,
    MTLResourceStorageModePrivate = 1 << 5,
};

typedef NS_ENUM(NSUInteger, MTLStorageMode) {
    MTLStorageModeShared = 0,
    MTLStorageModeManaged = 1,
    MTLStorageModePrivate = 2,
    MTLStorageModeMemoryless = 3,
};

typedef NS_ENUM(NSUInteger, MTLDispatchType) {
    MTLDispatchTypeSerial = 0,
    MTLDispatchTypeConcurrent = 1,
};

typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus) {
    MTLCommandBufferStatusNotEnqueued = 0,
    MTLCommandBufferStatusEnqueued = 1,
    MTLCommandBufferStatusCommitted = 2,
    MTLCommandBufferStatusScheduled = 3,
    MTLCommandBufferStatusCompleted = 4,
    MTLCommandBufferStatusError = 5,
};

typedef struct {
    NSUInteger width, height, depth;
} MTLSize;

static inline MTLSize MTLSizeMake(NSUInteger width, NSUInteger height, NSUInteger depth) {
    MTLSize s = {width, height, depth};
    return s;
}

@interface MTLCompileOptions : NSObject <NSCopying>
@end

@protocol MTLDevice <NSObject>
@property (nonnull, readonly) NSString *name;
@property (readonly) uint64_t recommendedMaxWorkingSetSize;
@property (readonly) NSUInteger maxBufferLength;
- (nullable id<MTLCommandQueue>)newCommandQueue;
- (nullable id<MTLLibrary>)newLibraryWithSource:(NSString *)source options:(nullable MTLCompileOptions *)options
                                          error:(NSError **)error;
- (nullable id<MTLLibrary>)newLibraryWithURL:(NSURL *)url error:(NSError **)error;
- (nullable id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                                      error:(NSError **)error;
- (nullable id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (nullable id<MTLBuffer>)newBufferWithBytesNoCopy:(void *)pointer length:(NSUInteger)length options:(MTLResourceOptions)options
                                       deallocator:(void (^_Nullable)(void *pointer, NSUInteger length))deallocator;
@end

@protocol MTLCommandQueue <NSObject>
- (nullable id<MTLCommandBuffer>)commandBuffer;
@end

@protocol MTLFunction <NSObject>
@end

@protocol MTLLibrary <NSObject>
@property (nonnull, readonly) id<MTLDevice> device;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString *)functionName;
@end

@protocol MTLAllocation <NSObject>
@end

@protocol MTLComputePipelineState <MTLAllocation>
@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property (readonly) NSUInteger threadExecutionWidth;
@end

@protocol MTLResource <MTLAllocation>
@property (readonly) MTLStorageMode storageMode;
@end

@protocol MTLBuffer <MTLResource>
@property (readonly) NSUInteger length;
- (void *)contents;
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBuffer:(nullable id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setThreadgroupMemoryLength:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
@end

@protocol MTLBlitCommandEncoder <MTLCommandEncoder>
- (void)copyFromBuffer:(id<MTLBuffer>)sourceBuffer sourceOffset:(NSUInteger)sourceOffset toBuffer:(id<MTLBuffer>)destinationBuffer
     destinationOffset:(NSUInteger)destinationOffset size:(NSUInteger)size;
@end

@protocol MTLCommandBuffer <NSObject>
@property (readonly) CFTimeInterval GPUStartTime;
@property (readonly) CFTimeInterval GPUEndTime;
@property (readonly) MTLCommandBufferStatus status;
@property (nullable, readonly) NSError *error;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)dispatchType;
- (nullable id<MTLBlitCommandEncoder>)blitCommandEncoder;
- (void)commit;
- (void)waitUntilCompleted;
@end

extern id<MTLDevice> _Nullable MTLCreateSystemDefaultDevice(void);

#pragma clang assume_nonnull end
