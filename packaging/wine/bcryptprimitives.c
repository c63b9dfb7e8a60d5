/* A stand-in for Windows 10's bcryptprimitives.dll, which Wine 8 does not ship.
 *
 * cryptography's Rust core (the getrandom crate) imports ProcessPrng from it; without the DLL the
 * extension module does not load. Wine's BCryptGenRandom with the system RNG gives the same
 * guarantee ProcessPrng documents: random bytes from the OS, never failing. Test kit only. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
    while (size > 0) {
        ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
            /* ProcessPrng has no way to say it failed: dying beats handing out predictable keys. */
            ExitProcess(0xC0000001);
        }
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
