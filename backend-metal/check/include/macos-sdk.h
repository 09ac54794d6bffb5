// What macOS's SDK declares for backend-metal/shim/goss_metal.m that GNUstep Foundation and glibc do not, with Apple's
// signatures, so that the shim compiles unchanged on Linux for the check (backend-metal/check/check.sh). Included
// before the shim (clang -include); declarations only, nothing links against them.
#include <stddef.h>

typedef const void *CFTypeRef;       // CoreFoundation/CFBase.h
typedef double CFTimeInterval;       // CoreFoundation/CFDate.h
size_t strlcpy(char *dst, const char *src, size_t size); // macOS <string.h>; glibc has it only from 2.38

#ifdef __OBJC__
@class NSObject;
// Foundation/NSObject.h (ARC bridging of Objective-C objects to CoreFoundation references)
CFTypeRef CFBridgingRetain(id X) __attribute__((cf_returns_retained));
id CFBridgingRelease(CFTypeRef __attribute__((cf_consumed)) X) __attribute__((ns_returns_retained));
#endif
