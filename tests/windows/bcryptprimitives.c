/*
 * TEST-ONLY stand-in for Windows' bcryptprimitives.dll, for running the
 * Windows build of Toolcell under wine 8 in tests/windows/smoke.sh.
 *
 * Rust's standard library imports ProcessPrng from bcryptprimitives.dll
 * (Windows 10 and later have it); wine 8 does not, so the exe fails to
 * start (exit code 53). This DLL exports only ProcessPrng and answers it
 * with RtlGenRandom (advapi32's SystemFunction036). smoke.sh builds it with
 * `x86_64-w64-mingw32-gcc -shared` and places it beside a COPY of the exe in
 * a temporary folder. It is never shipped and never needed on real Windows.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
