/* keep_driver.c - linked into the executables of sanitizer builds only.
 *
 * Mesa's lavapipe leaks 128 bytes and is dlclose()d by the Vulkan loader
 * before LeakSanitizer runs, so the leak's stack ends in "<unknown module>"
 * and no suppression can name it (a full unwind instead deadlocks inside
 * LLVM's JIT). Keeping the driver mapped (RTLD_NODELETE) lets
 * tests/lsan.supp match it by module while every leak of wgnn's own is still
 * reported. On machines without lavapipe this does nothing. */
#include <dlfcn.h>

__attribute__((constructor)) static void keep_driver(void) {
    (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE | RTLD_LOCAL);
}
