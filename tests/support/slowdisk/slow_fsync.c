/* A slow disk on demand: every fsync/fdatasync of the process it is preloaded into (LD_PRELOAD)
 * first sleeps DOMI_FSYNC_DELAY_US microseconds, then syncs. Only that process: the raw sqlite3
 * baseline of the same bench run keeps the machine's own disk. Built by tests/support/slowdisk. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static void delay(void) {
    static long micros = -1;
    if (micros < 0) {
        const char *text = getenv("DOMI_FSYNC_DELAY_US");
        micros = text ? atol(text) : 0;
    }
    if (micros > 0) {
        struct timespec wait = {micros / 1000000, (micros % 1000000) * 1000};
        while (nanosleep(&wait, &wait) != 0) {
        }
    }
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    delay();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    delay();
    return real(fd);
}
