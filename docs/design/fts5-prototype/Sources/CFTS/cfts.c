#include "cfts.h"
#include <stdlib.h>
#include <string.h>

int cfts_swift_only = 0;

typedef struct {
    int mode;
    cfts_split_fn split;
} CftsTokenizer;

typedef struct {
    int mode;
    cfts_split_fn split;
} CftsUser;

static int cftsCreate(void *pUser, const char **azArg, int nArg, Fts5Tokenizer **ppOut) {
    (void)azArg; (void)nArg;
    CftsUser *user = (CftsUser *)pUser;
    CftsTokenizer *t = (CftsTokenizer *)sqlite3_malloc(sizeof(CftsTokenizer));
    if (!t) return SQLITE_NOMEM;
    t->mode = user->mode;
    t->split = user->split;
    *ppOut = (Fts5Tokenizer *)t;
    return SQLITE_OK;
}

static void cftsDelete(Fts5Tokenizer *p) { sqlite3_free(p); }

/* ASCII fast path: exactly TextSearch.words(of:) for ASCII text (folding is A-Z -> a-z, every
 * ASCII character but letters and digits separates words, each word kept once). Returns -1 when
 * the text is not ASCII or has too many words for the linear de-duplication (Swift does those). */
#define CFTS_MAX_WORDS 64
static int cftsAscii(void *pCtx, const char *pText, int nText,
                     int (*xToken)(void *, int, const char *, int, int, int)) {
    for (int i = 0; i < nText; i++) if ((unsigned char)pText[i] >= 0x80) return -1;
    char stack[512];
    char *folded = nText <= (int)sizeof(stack) ? stack : (char *)sqlite3_malloc(nText);
    if (!folded) return SQLITE_NOMEM;
    int starts[CFTS_MAX_WORDS], lengths[CFTS_MAX_WORDS], count = 0, rc = SQLITE_OK;
    int i = 0;
    while (i < nText) {
        while (i < nText) {
            unsigned char c = (unsigned char)pText[i];
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) break;
            i++;
        }
        int start = i;
        while (i < nText) {
            unsigned char c = (unsigned char)pText[i];
            if (c >= 'A' && c <= 'Z') folded[i] = (char)(c + 32);
            else if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) folded[i] = (char)c;
            else break;
            i++;
        }
        int length = i - start;
        if (length == 0) break;
        int seen = 0;
        for (int w = 0; w < count && !seen; w++)
            seen = lengths[w] == length && memcmp(folded + starts[w], folded + start, length) == 0;
        if (seen) continue;
        if (count == CFTS_MAX_WORDS) { rc = -1; break; }
        starts[count] = start; lengths[count] = length; count++;
    }
    /* Emitted only once the whole text is known to be handled here. */
    for (int w = 0; rc == SQLITE_OK && w < count; w++)
        rc = xToken(pCtx, 0, folded + starts[w], lengths[w], starts[w], starts[w] + lengths[w]);
    if (folded != stack) sqlite3_free(folded);
    return rc;
}

static int cftsTokenize(Fts5Tokenizer *p, void *pCtx, int flags, const char *pText, int nText,
                        int (*xToken)(void *, int, const char *, int, int, int)) {
    CftsTokenizer *t = (CftsTokenizer *)p;
    int marked = t->mode == 1 && nText > 0 && pText[0] == 0x01;
    if (!marked && !cfts_swift_only) {
        int rc = cftsAscii(pCtx, pText, nText, xToken);
        if (rc != -1) return rc;
    }
    return t->split(t->mode, pCtx, flags, pText, nText, xToken);
}

static fts5_api *cftsApi(sqlite3 *db) {
    fts5_api *api = 0;
    sqlite3_stmt *stmt = 0;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, 0) == SQLITE_OK) {
        sqlite3_bind_pointer(stmt, 1, (void *)&api, "fts5_api_ptr", 0);
        sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    return api;
}

int cfts_register_tokenizer(sqlite3 *db, const char *name, int mode, cfts_split_fn split) {
    fts5_api *api = cftsApi(db);
    if (!api) return SQLITE_ERROR;
    CftsUser *user = (CftsUser *)malloc(sizeof(CftsUser));
    user->mode = mode;
    user->split = split;
    fts5_tokenizer tokenizer = {cftsCreate, cftsDelete, cftsTokenize};
    return api->xCreateTokenizer(api, name, user, &tokenizer, free);
}

sqlite3_destructor_type cfts_transient(void) { return SQLITE_TRANSIENT; }
