/* glibc_compat.h — the shim's glibc symbols bound to their oldest versions,
 * so that a shim built on a new glibc loads into older containers (Ubuntu
 * 20.04's glibc 2.31, RHEL 8's 2.28): force-included into every file of the
 * shim (preload/CMakeLists.txt) and of the stand-in runtime, which
 * tests/bundle/test_old_glibc.py runs in a Debian 11 root too (with
 * GT_COMPAT_DLSYM: the shim defines dlsym, the stand-in calls it); never
 * into the collector or the CLI.
 *
 * Contract:
 *  - Every glibc symbol the shim imports resolves at a version no newer than
 *    GLIBC_2.17 (tests/bundle/test_old_glibc.py reads objdump -T).
 *  - glibc 2.34 moved the pthread and dl functions into libc.so.6 and gave
 *    them new versions; their original versions stay there as compat
 *    symbols, which are what older glibc's libpthread.so.0 and libdl.so.2
 *    define. The shim names both libraries (DT_NEEDED, stubs on a new
 *    glibc) so that an old loader finds those symbols in them.
 *  - stat, lstat and fstat became functions only in glibc 2.33; before, the
 *    headers called __xstat, __lxstat and __fxstat with a layout version,
 *    which every glibc still exports: the macros below do the same.
 *  - The base version per architecture: GLIBC_2.2.5 on x86_64, GLIBC_2.17
 *    on aarch64 (its first glibc); elsewhere nothing is rebound.
 */
#ifndef GPUTRACE_GLIBC_COMPAT_H
#define GPUTRACE_GLIBC_COMPAT_H

#if defined(__x86_64__)
#define GT_GLIBC_BASE "GLIBC_2.2.5"
#define GT_GLIBC_2_3_3 "GLIBC_2.3.3"
#define GT_GLIBC_2_12 "GLIBC_2.12"
#define GT_STAT_VER 1 /* _STAT_VER_LINUX */
#elif defined(__aarch64__)
#define GT_GLIBC_BASE "GLIBC_2.17"
#define GT_GLIBC_2_3_3 "GLIBC_2.17"
#define GT_GLIBC_2_12 "GLIBC_2.17"
#define GT_STAT_VER 0
#endif

#ifdef GT_GLIBC_BASE
#include <sys/stat.h>

#define GT_SYMVER(name, version) __asm__(".symver " #name "," #name "@" version)
GT_SYMVER(pthread_create, GT_GLIBC_BASE);
GT_SYMVER(pthread_key_create, GT_GLIBC_BASE);
GT_SYMVER(pthread_setspecific, GT_GLIBC_BASE);
GT_SYMVER(pthread_getspecific, GT_GLIBC_BASE);
GT_SYMVER(pthread_once, GT_GLIBC_BASE);
GT_SYMVER(pthread_attr_setstacksize, GT_GLIBC_BASE);
GT_SYMVER(pthread_mutex_timedlock, GT_GLIBC_BASE);
GT_SYMVER(pthread_sigmask, GT_GLIBC_BASE);
GT_SYMVER(pthread_setname_np, GT_GLIBC_2_12);
GT_SYMVER(pthread_condattr_setclock, GT_GLIBC_2_3_3);
GT_SYMVER(dlopen, GT_GLIBC_BASE);
GT_SYMVER(dlclose, GT_GLIBC_BASE);
GT_SYMVER(dlerror, GT_GLIBC_BASE);
GT_SYMVER(dlvsym, GT_GLIBC_BASE);
GT_SYMVER(dladdr, GT_GLIBC_BASE);
GT_SYMVER(dladdr1, GT_GLIBC_2_3_3);
#ifdef GT_COMPAT_DLSYM
GT_SYMVER(dlsym, GT_GLIBC_BASE);
#endif
GT_SYMVER(__xstat, GT_GLIBC_BASE);
GT_SYMVER(__lxstat, GT_GLIBC_BASE);
GT_SYMVER(__fxstat, GT_GLIBC_BASE);

extern int __xstat(int, const char *, struct stat *);
extern int __lxstat(int, const char *, struct stat *);
extern int __fxstat(int, int, struct stat *);
#define stat(path, buf) __xstat(GT_STAT_VER, path, buf)
#define lstat(path, buf) __lxstat(GT_STAT_VER, path, buf)
#define fstat(fd, buf) __fxstat(GT_STAT_VER, fd, buf)
#endif

#endif
