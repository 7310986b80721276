// Depot's FTS5 tokenizer: the words of `TextSearch.words(of:)`, each once, so that an FTS5 index
// answers exactly what every other store answers. ASCII text is split here (A-Z folds to a-z,
// every other ASCII character that is not a letter or digit separates); anything else goes to
// the Swift splitter. Tests compare both paths with `TextSearch.words` over random text.
#include "CDepotFTS5.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    depot_fts5_split_fn split;
} DepotTokenizer;

static int depotCreate(void *user, const char **arguments, int count, Fts5Tokenizer **out) {
    (void)arguments;
    (void)count;
    DepotTokenizer *tokenizer = (DepotTokenizer *)sqlite3_malloc(sizeof(DepotTokenizer));
    if (!tokenizer) return SQLITE_NOMEM;
    tokenizer->split = (depot_fts5_split_fn)user;
    *out = (Fts5Tokenizer *)tokenizer;
    return SQLITE_OK;
}

static void depotDelete(Fts5Tokenizer *tokenizer) { sqlite3_free(tokenizer); }

#define DEPOT_ASCII_WORDS 64

/// ASCII text: its words, each once, through `token`. Returns -1 (nothing emitted) when the text is
/// not all ASCII or holds more distinct words than the linear de-duplication keeps.
static int depotAscii(void *context, const char *text, int length, depot_fts5_token_fn token) {
    for (int i = 0; i < length; i++)
        if ((unsigned char)text[i] >= 0x80) return -1;
    char stack[512];
    char *folded = length <= (int)sizeof(stack) ? stack : (char *)sqlite3_malloc(length);
    if (!folded) return SQLITE_NOMEM;
    int starts[DEPOT_ASCII_WORDS], lengths[DEPOT_ASCII_WORDS], count = 0, rc = SQLITE_OK;
    int i = 0;
    while (i < length) {
        while (i < length) {
            unsigned char c = (unsigned char)text[i];
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) break;
            i++;
        }
        int start = i;
        while (i < length) {
            unsigned char c = (unsigned char)text[i];
            if (c >= 'A' && c <= 'Z')
                folded[i] = (char)(c + 32);
            else if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))
                folded[i] = (char)c;
            else
                break;
            i++;
        }
        int size = i - start;
        if (size == 0) break;
        int seen = 0;
        for (int w = 0; w < count && !seen; w++)
            seen = lengths[w] == size && memcmp(folded + starts[w], folded + start, size) == 0;
        if (seen) continue;
        if (count == DEPOT_ASCII_WORDS) {
            rc = -1;
            break;
        }
        starts[count] = start;
        lengths[count] = size;
        count++;
    }
    // Emitted only once the whole text is known to be handled here.
    for (int w = 0; rc == SQLITE_OK && w < count; w++)
        rc = token(context, 0, folded + starts[w], lengths[w], starts[w], starts[w] + lengths[w]);
    if (folded != stack) sqlite3_free(folded);
    return rc;
}

int depot_fts5_tokenize(depot_fts5_split_fn split, int flags, const char *text, int length, void *context,
                        depot_fts5_token_fn token) {
    // A query for diacritic-free forms starts with U+0001 (which no word holds): Swift marks them.
    if (length == 0 || text[0] != 0x01) {
        int rc = depotAscii(context, text, length, token);
        if (rc != -1) return rc;
    }
    return split(context, flags, text, length, token);
}

static int depotTokenize(Fts5Tokenizer *tokenizer, void *context, int flags, const char *text, int length,
                         depot_fts5_token_fn token) {
    return depot_fts5_tokenize(((DepotTokenizer *)tokenizer)->split, flags, text, length, context, token);
}

static fts5_api *depotApi(sqlite3 *db) {
    fts5_api *api = 0;
    sqlite3_stmt *statement = 0;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0) == SQLITE_OK) {
        sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", 0);
        sqlite3_step(statement);
    }
    sqlite3_finalize(statement);
    return api;
}

int depot_fts5_register(sqlite3 *db, const char *name, depot_fts5_split_fn split) {
    fts5_api *api = depotApi(db);
    if (!api) return SQLITE_ERROR;
    fts5_tokenizer tokenizer = {depotCreate, depotDelete, depotTokenize};
    return api->xCreateTokenizer(api, name, (void *)split, &tokenizer, 0);
}
