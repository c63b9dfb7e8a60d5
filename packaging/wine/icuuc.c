/* A stand-in for Windows 10's icuuc.dll, which Wine 8 does not ship.
 *
 * Qt6Core imports ICU's converter API from it (QStringConverter's codecs beyond UTF-8/16/32 and
 * Latin-1), so without this DLL QtCore does not load at all. Here no converter exists: every open
 * fails with U_FILE_ACCESS_ERROR, which Qt reads as "codec not available" and falls back to its
 * own codecs, the only ones the app uses. Test kit only; never shipped. */
#include <stddef.h>
#include <stdint.h>

typedef int32_t UErrorCode;
typedef uint16_t UChar;
typedef int8_t UBool;
typedef struct UConverter UConverter;
typedef void UConverterCallback(void);

#define U_FILE_ACCESS_ERROR 4
#define U_UNSUPPORTED_ERROR 16
#define EXPORT __declspec(dllexport)

static void unsupported(UErrorCode *err) {
    if (err != NULL && *err <= 0) {
        *err = U_UNSUPPORTED_ERROR;
    }
}

EXPORT UConverter *ucnv_open(const char *name, UErrorCode *err) {
    (void)name;
    if (err != NULL && *err <= 0) {
        *err = U_FILE_ACCESS_ERROR;
    }
    return NULL;
}

EXPORT void ucnv_close(UConverter *conv) { (void)conv; }
EXPORT void ucnv_reset(UConverter *conv) { (void)conv; }
EXPORT int8_t ucnv_getMaxCharSize(const UConverter *conv) { (void)conv; return 1; }

EXPORT const char *ucnv_getName(const UConverter *conv, UErrorCode *err) {
    (void)conv;
    unsupported(err);
    return NULL;
}

EXPORT void ucnv_getToUCallBack(const UConverter *conv, UConverterCallback **action,
                                const void **context) {
    (void)conv;
    *action = NULL;
    *context = NULL;
}

EXPORT void ucnv_getFromUCallBack(const UConverter *conv, UConverterCallback **action,
                                  const void **context) {
    (void)conv;
    *action = NULL;
    *context = NULL;
}

EXPORT void ucnv_setToUCallBack(UConverter *conv, UConverterCallback *action, const void *context,
                                UConverterCallback **old_action, const void **old_context,
                                UErrorCode *err) {
    (void)conv; (void)action; (void)context; (void)old_action; (void)old_context;
    unsupported(err);
}

EXPORT void ucnv_setFromUCallBack(UConverter *conv, UConverterCallback *action,
                                  const void *context, UConverterCallback **old_action,
                                  const void **old_context, UErrorCode *err) {
    (void)conv; (void)action; (void)context; (void)old_action; (void)old_context;
    unsupported(err);
}

EXPORT void UCNV_FROM_U_CALLBACK_SUBSTITUTE(const void *context, void *args, const UChar *units,
                                            int32_t length, int32_t code_point, int reason,
                                            UErrorCode *err) {
    (void)context; (void)args; (void)units; (void)length; (void)code_point; (void)reason;
    unsupported(err);
}

EXPORT void UCNV_TO_U_CALLBACK_SUBSTITUTE(const void *context, void *args, const char *bytes,
                                          int32_t length, int reason, UErrorCode *err) {
    (void)context; (void)args; (void)bytes; (void)length; (void)reason;
    unsupported(err);
}

EXPORT void ucnv_cbToUWriteUChars(void *args, const UChar *source, int32_t length,
                                  int32_t offset, UErrorCode *err) {
    (void)args; (void)source; (void)length; (void)offset;
    unsupported(err);
}

EXPORT void ucnv_cbFromUWriteUChars(void *args, const UChar **source, const UChar *source_limit,
                                    int32_t offset, UErrorCode *err) {
    (void)args; (void)source; (void)source_limit; (void)offset;
    unsupported(err);
}

EXPORT void ucnv_toUnicode(UConverter *conv, UChar **target, const UChar *target_limit,
                           const char **source, const char *source_limit, int32_t *offsets,
                           UBool flush, UErrorCode *err) {
    (void)conv; (void)target; (void)target_limit; (void)source; (void)source_limit;
    (void)offsets; (void)flush;
    unsupported(err);
}

EXPORT void ucnv_fromUnicode(UConverter *conv, char **target, const char *target_limit,
                             const UChar **source, const UChar *source_limit, int32_t *offsets,
                             UBool flush, UErrorCode *err) {
    (void)conv; (void)target; (void)target_limit; (void)source; (void)source_limit;
    (void)offsets; (void)flush;
    unsupported(err);
}

EXPORT int32_t ucnv_toUCountPending(const UConverter *conv, UErrorCode *err) {
    (void)conv;
    unsupported(err);
    return 0;
}

EXPORT int32_t ucnv_fromUCountPending(const UConverter *conv, UErrorCode *err) {
    (void)conv;
    unsupported(err);
    return 0;
}

EXPORT const char *ucnv_getStandardName(const char *name, const char *standard, UErrorCode *err) {
    (void)name; (void)standard;
    unsupported(err);
    return NULL;
}

EXPORT const char *ucnv_getAvailableName(int32_t n) { (void)n; return NULL; }
EXPORT int32_t ucnv_countAvailable(void) { return 0; }
